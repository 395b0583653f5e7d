// The rules every kind of lock follows (plain, with options, reentrant, quorum), each written
// once: what a request that brought no usable answer may have done, the owner script and its
// answer, the size of a script request, random tokens, scripts sent with EVALSHA and EVAL as
// fallback, and the wait-and-retry loop. Validity (Validity in lock.hpp) is implemented in
// lock_rules.cpp. Internal: not installed.
#ifndef RESPLOCK_LOCK_RULES_HPP
#define RESPLOCK_LOCK_RULES_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/lua_scripts.hpp"
#include "core/script.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/observer.hpp"

namespace resplock::detail {

// A set of statuses as a bit mask, and whether `s` is in one: a single test, less code than a
// chain of comparisons.
constexpr std::uint32_t status_bit(Status s) noexcept {
    return std::uint32_t{1} << static_cast<unsigned>(s);
}
static_assert(static_cast<unsigned>(Status::try_again) < 32, "every status fits a 32-bit set");
inline bool in(Status s, std::uint32_t set) noexcept {
    return ((set >> static_cast<unsigned>(s)) & 1U) != 0;
}

// The reply to a request that went out was lost: the server's state is unknown.
inline bool reply_lost(Status s) noexcept {
    return in(
        s, status_bit(Status::timeout) | status_bit(Status::closed) | status_bit(Status::io_error));
}

// The reply arrived but could not be read: the request was probably executed.
inline bool reply_malformed(Status s) noexcept {
    return in(s, status_bit(Status::protocol_error) | status_bit(Status::too_large));
}

// The status a lock reports for a request that ended with `s`: unknown_outcome when the request
// went out and its reply was lost (timeout, closed, io_error), else `s` itself.
inline Status outcome(const Connection& conn, Status s) noexcept {
    return reply_lost(s) && conn.request_sent() ? Status::unknown_outcome : s;
}

// Error replies with which the server refuses a command, a script included, before running it:
// LOADING, BUSY (another script runs), CLUSTERDOWN / TRYAGAIN (try_again).
constexpr std::uint32_t refused_unrun_set =
    status_bit(Status::loading) | status_bit(Status::server_busy) | status_bit(Status::try_again);
inline bool refused_unrun(Status s) noexcept {
    return in(s, refused_unrun_set);
}

// Whether a request that ended with `s` (as outcome() reports it) may have changed the key
// although it brought no usable answer: its reply was lost or could not be read, or, for a
// script, it was an error (a script stops at its first error and keeps what it did before).
// The lock then keeps its token, so that release() can undo what may have been done, and claims
// no validity: it never claims a lock it does not know it holds.
inline bool may_have_run(const Connection& conn, Status s, bool script) noexcept {
    if (s == Status::ok || !conn.request_sent()) return false;
    return s == Status::unknown_outcome || reply_malformed(s) ||
           (script && !conn.error_text().empty() && !refused_unrun(s));
}

// Bytes of a decimal number, and of a RESP bulk string of n bytes ($n CRLF data CRLF).
constexpr std::size_t digits(std::size_t n) noexcept {
    return n < 10 ? 1 : 1 + digits(n / 10);
}
constexpr std::size_t bulk_size(std::size_t n) noexcept {
    return 1 + digits(n) + 2 + n + 2;
}

// Bytes of the EVAL form of a script call: the array header, EVAL, the script's text of
// text_len bytes, then `count` more arguments (numkeys, keys, ARGV) whose bulk strings take
// args_bytes together. The EVAL form is the longest request of a script (EVALSHA sends 40 bytes
// instead of the text), so each lock kind sizes its smallest buffer with it, and a call that
// could not send it must not start with EVALSHA (it would work only while the server caches the
// script).
constexpr std::size_t eval_size(std::size_t text_len, std::size_t count,
                                std::size_t args_bytes) noexcept {
    return 1 + digits(2 + count) + 2 + bulk_size(4) + bulk_size(text_len) + args_bytes;
}

// The clock-drift allowance a validity of ttl_ms loses (ttl/100 + 2 ms): Validity::start and the
// renewal driver's refusal of margins no renewal can outlast count it alike.
constexpr std::uint32_t drift_ms(std::uint32_t ttl_ms) noexcept {
    return ttl_ms / 100 + 2;
}

inline bool valid_ttl(std::uint32_t ttl_ms) noexcept {
    return ttl_ms >= 1 && ttl_ms <= max_ttl_ms;
}

// Fills `out` with token_len lowercase hex digits of RESPLOCK_TOKEN_BYTES bytes from the port's
// random source. Returns ok or random_failed.
Status random_token(const resplock_port_t& port, char (&out)[token_len]) noexcept;

// Whether `owner` may label a token (AcquireOptions::owner): empty (no label), or 1..max_owner_len
// bytes of A-Z a-z 0-9 . _ - (printable anywhere, never the ':' that ends it, no space).
inline bool valid_owner(std::string_view owner) noexcept {
    if (owner.size() > max_owner_len) return false;
    // A loop: std::all_of costs 120 to 160 bytes more in each Cortex-M4 object that calls this.
    for (const char c : owner) {
        // cppcheck-suppress useStlAlgorithm
        if (!owner_label_char(c)) return false;
    }
    return true;
}

// Fills `out` with a fresh token: `owner` (valid_owner, not checked here) and ':' before the
// random hex of random_token(), or that hex alone for an empty owner. Returns the token, or an
// empty view when the random source failed.
inline std::string_view owned_token(const resplock_port_t& port, std::string_view owner,
                                    char (&out)[max_token_len]) noexcept {
    char fresh[token_len];
    if (random_token(port, fresh) != Status::ok) return {};
    std::size_t n = owner.size();
    if (n != 0) {
        std::memcpy(out, owner.data(), n);
        out[n++] = ':';
    }
    std::memcpy(out + n, fresh, token_len);
    return {out, n + token_len};
}

// What the reply to SET key token NX PX ttl means: ok (+OK), busy (nil: the key exists), or
// protocol_error for anything else.
inline Status set_answer(const resp::Reply& reply) noexcept {
    const resp::Value& v = reply.top();
    if (v.is(resp::Type::nil_bulk)) return Status::busy;
    return v.is(resp::Type::simple_string) && v.equals("OK") ? Status::ok : Status::protocol_error;
}

// The owner script, owner_script (src/core/lua/owner.lua, embedded in core/lua_scripts.hpp):
// KEYS[1] = key, ARGV[1] = token, ARGV[2] = ttl. With a token it returns -1 when another value
// holds the key, 0 when the key is gone, and otherwise deletes the key (no ttl: release) or sets
// its PTTL (ttl: extend) and returns 1. With no token it returns {value, PTTL} (query). One
// script keeps one entry in the server's cache and one text here; the plain and the quorum lock
// share it. Its SHA1 is checked against the server's own SCRIPT LOAD in the integration tests.

// Sends args[0..count) as EVALSHA sha1 args[2..], and as EVAL text args[2..] when the server's
// script cache lacks it (NOSCRIPT). args[0] and args[1] are filled here; args[2] is numkeys.
Status eval(Connection& conn, const Script& script, std::string_view* args, std::size_t count,
            resp::Reply& reply, Deadline deadline) noexcept;

// Whether the EVAL form of args[0..count) (args[2..] filled) fits the connection's buffer.
inline bool eval_fits(const Connection& conn, const Script& script, const std::string_view* args,
                      std::size_t count) noexcept {
    std::size_t bytes = 0;
    for (std::size_t i = 2; i < count; ++i)
        bytes += bulk_size(args[i].size());
    return eval_size(script.text.size(), count - 2, bytes) <= conn.buffer_size();
}

// What a request to the owner script (a release or an extend) that ended with `s` means: the
// script's answer 1 (done) is ok, 0 (the key is gone) expired, -1 (another value holds it)
// not_owner, anything else protocol_error; a WRONGTYPE error to this request (not to the
// handshake) is not_owner too when the script touches KEY alone (`key_only`: KEY then holds
// another type); a script that also touches companion keys keeps wrong_type, since another key
// of the wrong type says nothing of who holds KEY; otherwise outcome().
inline Status owner_answer(const Connection& conn, Status s, const resp::Reply& reply,
                           bool key_only = true) noexcept {
    if (s == Status::ok) {
        const resp::Value& v = reply.top();
        if (!v.is(resp::Type::integer)) return Status::protocol_error;
        return v.integer == 1    ? Status::ok
               : v.integer == 0  ? Status::expired
               : v.integer == -1 ? Status::not_owner
                                 : Status::protocol_error;
    }
    if (s == Status::wrong_type && key_only && conn.request_sent()) return Status::not_owner;
    return outcome(conn, s);
}

// Whether an acquisition attempt that ended with `s` may be repeated: busy, a status that shows
// the request was not executed (no connection, LOADING, BUSY, CLUSTERDOWN / TRYAGAIN, a cluster
// still redirecting: e.g. to a master that died before the cluster noticed), or a write that
// will not last and was given back (not_replicated: after a failover the next attempt finds the
// new master).
inline bool retryable(Status s) noexcept {
    return in(s, refused_unrun_set | status_bit(Status::busy) | status_bit(Status::timeout) |
                     status_bit(Status::closed) | status_bit(Status::io_error) |
                     status_bit(Status::connect_failed) | status_bit(Status::too_many_redirects) |
                     status_bit(Status::not_replicated));
}

// What retry() repeats, as plain function pointers over a caller's context.
struct Acquirer {
    // One acquisition attempt.
    Status (*attempt)(void* ctx);
    // Called after a busy attempt when another will follow: the holder's PTTL (-2: the key is
    // already gone, -1: unknown), which bounds the pause. Null: unknown.
    std::int64_t (*holder_ttl)(void* ctx);
    // Waits up to `ms` before the next attempt; may return earlier (e.g. woken by a release).
    // Null: the port's sleep_ms.
    void (*pause)(void* ctx, std::uint32_t ms);
};

// How late a pause may end and still be followed by an attempt: a sleep that ends a tick or so
// after the deadline it aimed at. A later wake-up (a blocking call that overran) ends the wait.
inline constexpr std::uint32_t late_wake_ms = 5;

// How long after its timeout a BLPOP may return: Redis's timer tick at its default hz of 10.
inline constexpr std::uint32_t blpop_late_ms = 100;

// Calls attempt() until it returns a status retryable() rejects, or `wait_ms` has passed; returns
// that last status. Before each pause it reports a retry event for `key` to the observer of
// `conn` (whose port gives the clock and the sleep), if it has one. Between attempts it pauses for
// a jittered exponential backoff between RESPLOCK_RETRY_MIN_MS and RESPLOCK_RETRY_MAX_MS, never
// past the holder's PTTL nor the deadline. wait_ms 0 is one attempt; no attempt starts after the
// deadline (nor after a pause that ended more than late_wake_ms past it), so the whole takes at
// most wait_ms + late_wake_ms + one attempt. invalid_argument when wait_ms exceeds max_ttl_ms.
// Inlined into each caller, so that its acquirer's functions are known there: the calls are
// direct, and the stack analysis of tests/target sees them.
inline __attribute__((always_inline)) Status retry(const Connection& conn, std::string_view key,
                                                   std::uint32_t wait_ms, const Acquirer& acquirer,
                                                   void* ctx) noexcept {
    if (wait_ms > max_ttl_ms) return Status::invalid_argument;  // would wrap the deadline
    const resplock_port_t& port = conn.port();
    const Deadline deadline = Deadline::after(port, wait_ms);
    std::uint32_t backoff = RESPLOCK_RETRY_MIN_MS;
    for (std::uint32_t attempt = 1;; ++attempt) {
        const Status s = acquirer.attempt(ctx);
        if (!retryable(s) || deadline.remaining(port) == 0) return s;

        // Jitter spreads contending waiters over [backoff/2, backoff].
        std::uint32_t wait = backoff;
        std::uint8_t r = 0;
        if (port.random != nullptr && port.random(port.ctx, &r, 1) == 0) {
            wait = backoff / 2 + (backoff / 2) * r / 255U;
        }
        backoff = backoff >= RESPLOCK_RETRY_MAX_MS / 2 ? RESPLOCK_RETRY_MAX_MS : backoff * 2;
        if (s == Status::busy && acquirer.holder_ttl != nullptr) {
            // Never wait past the moment the holder's lock expires (-2: already gone).
            const std::int64_t ttl_left = acquirer.holder_ttl(ctx);
            if (ttl_left == -2) wait = 0;
            if (ttl_left >= 0 && ttl_left < wait) wait = static_cast<std::uint32_t>(ttl_left);
        }
        const std::uint32_t left = deadline.remaining(port);
        if (left == 0) return s;  // the PTTL lookup used up the wait: no attempt after it
        if (wait > left) wait = left;
        if (const Observer* observer = conn.config().observer) {
            observer->report({RESPLOCK_EVENT_retry, static_cast<resplock_status_t>(s), attempt,
                              wait, key.data(), key.size()});
        }
        if (wait == 0) continue;
        if (acquirer.pause != nullptr) {
            acquirer.pause(ctx, wait);
        } else {
            port.sleep_ms(port.ctx, wait);
        }
        if (deadline.overdue(port) > late_wake_ms) return s;  // woke up too late for another try
    }
}

}  // namespace resplock::detail

#endif  // RESPLOCK_LOCK_RULES_HPP
