// The `run` supervisor: COMMAND in a process group of its own, watched over by a guardian process
// (guardian.hpp). The lock stays held, and renewed, until every process of that group has ended,
// not only COMMAND: a script's subprocesses and background jobs stay in its group unless they
// leave it (setsid, setpgid, daemons). Signals sent to resplock are passed on to the group, and
// so is the stop when the lock is lost: SIGTERM, a grace period, SIGKILL, all before the lock's
// validity ends. It knows the lock only through RunLock, a table of plain functions, so one
// supervisor serves every lock kind.
#ifndef RESPLOCK_TOOL_SUPERVISOR_HPP
#define RESPLOCK_TOOL_SUPERVISOR_HPP

#include <cstdint>
#include <string_view>

#include "failure.hpp"
#include "resplock/core/port.h"
#include "resplock/core/status.hpp"

namespace resplock_cli {

// The lock `run` holds, whatever its kind: what the supervisor does with it, as functions of
// `lock` (an object of the caller's that outlives supervise()).
struct RunLock {
    void* lock;
    // Renew for ttl_ms, waiting up to wait_ms for the reply (called from the renewal thread).
    resplock::Status (*extend)(void* lock, std::uint32_t ttl_ms, std::uint32_t wait_ms);
    std::uint32_t (*remaining_ms)(const void* lock);  // validity left
    std::string_view (*token)(const void* lock);      // empty once the lock knows it is not held
    resplock::Status (*release)(void* lock);          // owner-checked
    void (*close_in_child)(void* lock);  // in a forked child: close its copies of the sockets
};

// What to run, and what COMMAND is told about the lock.
struct RunRequest {
    const char* key;        // KEY, exported as RESPLOCK_KEY
    const char* key_shown;  // KEY as messages show it
    char** argv;            // COMMAND [ARGS...], null-terminated
    std::uint32_t ttl_ms;   // of each renewal; sets the grace and the kill allowance
    bool fence;             // export fence_value as RESPLOCK_FENCE
    std::uint64_t fence_value;
};

// Runs COMMAND while holding `lock` (held, with validity left) and renewing it every ttl_ms/3 on
// a thread over `port`'s clock; releases it once COMMAND's group has ended. Returns COMMAND's exit
// status (128+N if it died of signal N); 70 if the lock was lost, whatever COMMAND returned (a
// renewal reported it and the group was stopped, or the release found the key gone or another's:
// the message gives COMMAND's own status); or 126 if COMMAND could not be started (the lock is
// released then). `t` names the server in messages.
int supervise(const RunLock& lock, const RunRequest& run, const Target& t,
              const resplock_port_t& port);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_SUPERVISOR_HPP
