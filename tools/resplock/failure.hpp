// A failed call in words: Target (what the tool talks to, as messages name it), describe() (why
// a call failed, from its status, the server's error text and TLS), exit_for() (its exit code,
// refining exit_code() with what the server and TLS said) and fail(), which reports it as
// "resplock: <command> <key>: <why>".
#ifndef RESPLOCK_TOOL_FAILURE_HPP
#define RESPLOCK_TOOL_FAILURE_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "resplock/core/connection.hpp"
#include "resplock/core/status.hpp"
#include "resplock/ha/sentinel.hpp"
#include "url.hpp"
#ifdef RESPLOCK_CLI_TLS
#include "resplock/ports/mbedtls.h"
#endif

namespace resplock_cli {

// What the tool talks to, for messages ("127.0.0.1:6379", "[::1]:6379"; never the password).
struct Target {
    const char* host;
    char where[max_host_len + 16];  // a quorum's list of servers is cut to fit
    std::uint32_t timeout_ms;
    std::size_t buffer_size;           // of each connection, for a reply too large for it
    const resplock::Connection* conn;  // for the server's error text; null for a quorum
    // A quorum's connections cannot tell afterwards whether the request reached a server, but
    // none can have before one of them completed its set-up (connect, AUTH, SELECT, CLIENT
    // SETNAME): the set-ups so far, counted by the tool's observer. Null for one server.
    const std::atomic<unsigned>* set_ups;
    // --replicas: how many were asked for, and how many the last WAIT counted:
    // acknowledged(waiter), where waiter is the lock or semaphore that waited (both null: none).
    std::uint32_t replicas;
    const void* waiter;
    std::uint32_t (*acknowledged)(const void* waiter);
    // redis-sentinel://: what the last resolution found (sentinels tried, name unknown); else null
    const resplock::Sentinel* sentinel;
#ifdef RESPLOCK_CLI_TLS
    const resplock_mbedtls_t* tls;  // rediss://: why a TLS connection failed
    bool client_cert;               // --cert given
#endif
};

// The exit code of a failed call: exit_code(s), except that a server certificate that failed
// verification, or a command refused inside the lock's script, is refused permission (77).
int exit_for(resplock::Status s, const Target& t);

// Whether the request of the last call may have reached the server (or a server of the quorum):
// false only when it surely did not, e.g. a reply to the connection's set-up was malformed or
// too large, or the request did not fit the buffer.
bool request_may_have_gone(const Target& t);

// Room for every text describe() writes (failure.cpp checks the longest fits).
constexpr std::size_t why_max = 1024;

// Why a call failed, in words, for "resplock: <what>: <why>"; out holds why_max characters.
void describe(resplock::Status s, const Target& t, char* out, std::size_t cap);

// Reports a failed call as "resplock: <command> <key>: <why>" and returns its exit code.
int fail(resplock::Status s, const char* command, const char* key, const Target& t);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_FAILURE_HPP
