// The wait of every lock kind: attempts until granted or the caller's wait runs out, with a
// pause between them (a backoff sleep, or a block on a wake list that a release pushes to).
// Internal: not installed.
#ifndef RESPLOCK_RETRY_HPP
#define RESPLOCK_RETRY_HPP

#include <cstdint>
#include <string_view>

#include "core/outcome.hpp"
#include "core/word_math.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/core/validity.hpp"

namespace resplock::detail {

// What retry() repeats, as plain function pointers over a caller's context.
struct Acquirer {
    // One acquisition attempt.
    Status (*attempt)(void* ctx);
    // Called after a busy attempt when another will follow: the holder's PTTL (-2: the key is
    // already gone, -1: unknown), which bounds the pause. Null: unknown.
    std::int64_t (*holder_ttl)(void* ctx);
    // Null, or after a busy attempt: the pause to take instead of the backoff (a queued waiter
    // comes back at the interval that keeps its place in the queue).
    std::uint32_t (*busy_pause)(void* ctx);
    // Waits up to `ms` before the next attempt, in a wait that ends at `until`; may return
    // earlier (e.g. woken by a release). Returns ok when the lock was handed to this caller
    // during the pause (the wait then ends with ok), anything else to go on. Null: the port's
    // sleep_ms.
    Status (*pause)(void* ctx, std::uint32_t ms, Deadline until);
};

// How late a pause may end and still be followed by an attempt: a sleep that ends a tick or so
// after the deadline it aimed at. A later wake-up (a blocking call that overran) ends the wait.
inline constexpr std::uint32_t late_wake_ms = 5;

// How long after its timeout a BLPOP may return: Redis's timer tick at its default hz of 10.
inline constexpr std::uint32_t blpop_late_ms = 100;

// Calls attempt() until it returns a status retryable() rejects, or `wait_ms` has passed; returns
// that last status (ok too when a pause reports a hand-over). Before each pause it reports a retry
// event for `key` to the observer of `conn` (whose port gives the clock and the sleep), if it has
// one. Between attempts it pauses for a jittered exponential backoff between
// RESPLOCK_RETRY_MIN_MS and RESPLOCK_RETRY_MAX_MS (or busy_pause() after busy), never past the
// holder's PTTL nor the deadline. wait_ms 0 is one attempt; no attempt starts after the deadline
// (nor after a pause that ended more than late_wake_ms past it), so the whole takes at most
// wait_ms + late_wake_ms + one attempt. invalid_argument when wait_ms exceeds max_ttl_ms.
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
#if defined(__ARM_ARCH_6M__) && RESPLOCK_RETRY_MIN_MS <= 512 && RESPLOCK_RETRY_MAX_MS <= 512
            // The backoff is at most 512 ms: backoff / 2 * r is at most 256 * 255, below 65535.
            wait = backoff / 2 + quotient_255_below_65535(backoff / 2 * r);
#else
            wait = backoff / 2 + quotient_255(backoff / 2 * r);
#endif
        }
        backoff = backoff >= RESPLOCK_RETRY_MAX_MS / 2 ? RESPLOCK_RETRY_MAX_MS : backoff * 2;
        if (s == Status::busy) {
            if (acquirer.busy_pause != nullptr) wait = acquirer.busy_pause(ctx);
            // Never wait past the moment the holder's lock expires (-2: already gone).
            const std::int64_t ttl_left =
                acquirer.holder_ttl != nullptr ? acquirer.holder_ttl(ctx) : -1;
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
        if (acquirer.pause == nullptr) {
            port.sleep_ms(port.ctx, wait);
        } else if (acquirer.pause(ctx, wait, deadline) == Status::ok) {
            return Status::ok;  // handed over while it waited
        }
        if (deadline.overdue(port) > late_wake_ms) return s;  // woke up too late for another try
    }
}

// The bound of a release's retries, the same for every lock kind (see retry_release()): the
// deadline of every attempt's request, the connection's timeout from the start of the release;
// and retry()'s wait, the first half of that timeout, after which no attempt starts.
inline __attribute__((always_inline)) Deadline release_deadline(const Connection& conn) noexcept {
    return Deadline::after(conn.port(), conn.config().timeout_ms);
}
inline __attribute__((always_inline)) std::uint32_t release_retry_ms(
    const Connection& conn) noexcept {
    // Half of any 32-bit timeout is at most max_span_ms, the longest wait retry() takes.
    return conn.config().timeout_ms / 2;
}

// A release of any lock kind, retried as an acquisition is: calls `release(until)`, one release
// request of the lock kind awaited up to `until`, until it returns a status retryable() rejects or
// retry()'s wait has passed, with retry()'s backoff between the attempts (and its retry events
// for `key`). Of a release's statuses, retryable() takes exactly those that show the request did
// not run: LOADING, BUSY, CLUSTERDOWN / TRYAGAIN, NOREPLICAS, too_many_redirects, or no
// connection before it was sent; a release that may have run (unknown_outcome, a malformed reply)
// or was answered is never repeated. The whole stays within the connection's timeout
// (release_deadline(), release_retry_ms()): every attempt shares one deadline, timeout_ms from the
// start, and none starts after the first half of it (nor late_wake_ms past that), so that each has
// at least half the timeout for its round trip. Returns the last attempt's status.
template <class Release>
inline __attribute__((always_inline)) Status retry_release(const Connection& conn,
                                                           std::string_view key,
                                                           Release& release) noexcept {
    struct Context {
        Release& release;
        Deadline until;
    };
    Context context{release, release_deadline(conn)};
    static constexpr Acquirer acquirer = {[](void* ctx) {
                                              auto& c = *static_cast<Context*>(ctx);
                                              return c.release(c.until);
                                          },
                                          nullptr, nullptr, nullptr};
    return retry(conn, key, release_retry_ms(conn), acquirer, &context);
}

// How long a waiter that pauses `ms` may block so that the block, ending up to blpop_late_ms
// after its timeout, still ends before `until` and before the holder's PTTL `holder_ttl` (-1:
// unknown): `ms`, or less, or 0 when there is no time to block at all.
inline std::uint32_t block_span(const resplock_port_t& port, std::uint32_t ms, Deadline until,
                                std::int64_t holder_ttl) noexcept {
    std::uint32_t bound = until.remaining(port);
    if (holder_ttl >= 0 && holder_ttl < bound) bound = static_cast<std::uint32_t>(holder_ttl);
    if (ms + blpop_late_ms <= bound) return ms;
    return bound > blpop_late_ms ? bound - blpop_late_ms : 0;
}

// The block of a waiter that a release wakes: BLPOP `list` with a timeout of `ms` (at least 1),
// given in seconds with three decimals. Redis ends a BLPOP timeout only at its next cron tick, up
// to blpop_late_ms late; the reply is awaited up to the connection's timeout after that, and never
// past `until`. Returns ok when a value was popped from `list`, busy when the block timed out (or
// the reply named no such value), else the command's status; sets `refused` when the server
// answered with an error (NOPERM from an ACL, an old server refusing a decimal timeout): the
// caller then sleeps for the rest of its wait. On ok, `popped` (when not null) receives the value
// popped, which points into the connection's buffer until its next command.
Status block(Connection& conn, std::string_view list, std::uint32_t ms, Deadline until,
             bool& refused, resp::Value* popped = nullptr) noexcept;

}  // namespace resplock::detail

#endif  // RESPLOCK_RETRY_HPP
