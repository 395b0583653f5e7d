// What a request's status means for a lock, written once for every lock kind: whether its reply
// was lost or unreadable, whether it may have changed the key, what the SET and the owner script
// answered, and whether an acquisition may be tried again. The small ones a plain lock calls are
// always inlined: a Cortex-M4 firmware pays less for them inline than for their calls.
// Internal: not installed.
#ifndef RESPLOCK_OUTCOME_HPP
#define RESPLOCK_OUTCOME_HPP

#include <cstdint>

#include "resplock/core/connection.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/core/status.hpp"

namespace resplock::detail {

// A set of statuses as a bit mask, and whether `s` is in one: a single test, less code than a
// chain of comparisons.
constexpr std::uint32_t status_bit(Status s) noexcept {
    return std::uint32_t{1} << static_cast<unsigned>(s);
}
static_assert(static_cast<unsigned>(Status::no_replicas) < 32, "every status fits a 32-bit set");
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
inline __attribute__((always_inline)) Status outcome(const Connection& conn, Status s) noexcept {
    return reply_lost(s) && conn.request_sent() ? Status::unknown_outcome : s;
}

// Error replies with which the server refuses a command, a script included, before running it:
// LOADING, BUSY (another script runs), CLUSTERDOWN / TRYAGAIN (try_again), NOREPLICAS (a master
// with min-replicas-to-write that lacks replicas: it refuses every write, a script's first one
// included, so a script stopped by it wrote nothing; our scripts never catch an error).
constexpr std::uint32_t refused_unrun_set =
    status_bit(Status::loading) | status_bit(Status::server_busy) | status_bit(Status::try_again) |
    status_bit(Status::no_replicas);
inline bool refused_unrun(Status s) noexcept {
    return in(s, refused_unrun_set);
}

// Whether a request that ended with `s` (as outcome() reports it) may have changed the key
// although it brought no usable answer: its reply was lost or could not be read, or, for a
// script, it was an error (a script stops at its first error and keeps what it did before).
// The lock then keeps its token, so that release() can undo what may have been done, and claims
// no validity: it never claims a lock it does not know it holds.
inline __attribute__((always_inline)) bool may_have_run(const Connection& conn, Status s,
                                                        bool script) noexcept {
    if (s == Status::ok || !conn.request_sent()) return false;
    return s == Status::unknown_outcome || reply_malformed(s) ||
           (script && !conn.error_text().empty() && !refused_unrun(s));
}

// What the reply to SET key token NX PX ttl means: ok (+OK), busy (nil: the key exists), or
// protocol_error for anything else.
inline __attribute__((always_inline)) Status set_answer(const resp::Reply& reply) noexcept {
    const resp::Value& v = reply.top();
    if (v.is(resp::Type::nil_bulk)) return Status::busy;
    return v.is(resp::Type::simple_string) && v.equals("OK") ? Status::ok : Status::protocol_error;
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
        // -1, 0, 1 as 0, 1, 2; anything else above 2.
        const std::uint64_t answer = static_cast<std::uint64_t>(v.integer) + 1;
        if (!v.is(resp::Type::integer) || answer > 2) return Status::protocol_error;
        static_assert(static_cast<int>(Status::expired) == static_cast<int>(Status::not_owner) + 1,
                      "-1 and 0 map to consecutive statuses");
        return answer == 2 ? Status::ok
                           : static_cast<Status>(static_cast<int>(Status::not_owner) +
                                                 static_cast<int>(answer));
    }
    if (s == Status::wrong_type && key_only && conn.request_sent()) return Status::not_owner;
    return outcome(conn, s);
}

// A fencing number as the scripts return it (src/core/lua/options_acquire.lua, the semaphore's):
// a bulk string of 1 to 19 decimal digits, no leading zero, from 1 up to INT64_MAX (what INCR can
// reach). False, leaving `out` alone, for anything else.
inline bool fence_number(const resp::Value& v, std::uint64_t& out) noexcept {
    if (!v.is(resp::Type::bulk_string) || v.size == 0 || v.size > 19 || v.data[0] == '0') {
        return false;
    }
    constexpr std::uint64_t max = 9223372036854775807U;
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < v.size; ++i) {
        const char c = v.data[i];
        if (c < '0' || c > '9') return false;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        // Against constants: a division of a 64-bit variable would link the C library's 64-bit
        // division on a 32-bit target.
        if (n > max / 10 || (n == max / 10 && digit > max % 10)) return false;
        n = n * 10 + digit;
    }
    out = n;
    return true;
}

// Whether an attempt that ended with `s` may be repeated: busy, a status that shows the request
// was not executed (no connection, LOADING, BUSY, CLUSTERDOWN / TRYAGAIN, NOREPLICAS, a cluster
// still redirecting: e.g. to a master that died before the cluster noticed), or a write that
// will not last and was given back (not_replicated: after a failover the next attempt finds the
// new master). Of a release's statuses (never busy nor not_replicated), exactly those that show
// it did not run.
inline bool retryable(Status s) noexcept {
    return in(s, refused_unrun_set | status_bit(Status::busy) | status_bit(Status::timeout) |
                     status_bit(Status::closed) | status_bit(Status::io_error) |
                     status_bit(Status::connect_failed) | status_bit(Status::too_many_redirects) |
                     status_bit(Status::not_replicated));
}

}  // namespace resplock::detail

#endif  // RESPLOCK_OUTCOME_HPP
