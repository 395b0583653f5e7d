// The fair lock: waiters queue in arrival order and a release hands the lock straight to the first
// live waiter. KEY stays a string holding the holder's token (a plain Lock on the same key sees a
// fair holder as busy and the other way round; the plain owner script releases and extends it).
// Next to KEY the server keeps, in KEY's cluster slot (BASE is companion_prefix(KEY), see
// resplock/core/companion.hpp):
//   BASE:q        a list of the waiters' tokens, in arrival order;
//   BASE:w        a hash: token -> "expiry:ttl:fence", the entry's expiry on the server's clock
//                 (TIME), the TTL that waiter asked for and whether it asked for a fencing number;
//   BASE:f:TOKEN  one waiter's wake list: the hand-off pushes one item into it;
//   BASE:fence    the last fencing number handed out (the plain lock's KEY:fence: plain and fair
//                 holders draw from one sequence), written only by grants that ask for one.
// One script (EVALSHA, EVAL fallback) does each step: an attempt that joins or refreshes the
// queue when busy, leaving the queue, and the release that hands over. A release (or an attempt
// that finds KEY gone) sets KEY to the first waiter whose entry has not expired, with the TTL it
// asked for, and pushes one item to that waiter's wake list only (its fencing number when it asked
// for one); entries that expired are dropped on the way. The waiter, blocked in BLPOP on its wake
// list, returns with the lock held.
//
// The waiter's validity after a wake-up counts from the send time of its last attempt, which the
// server answered "busy" and so ran before the hand-off; a BLPOP's own send time is never used,
// since a wake pushed before it was sent answers it at once. Each BLPOP is bounded by
// fair_refresh_max_ms, by a quarter of the TTL asked for, by the holder's PTTL last seen (minus
// Redis's timer tick) and by the wait; the attempt that follows refreshes the entry. An entry
// lives for twice the first two bounds plus the tick (2.1 s at most): a waiter that died is handed
// the lock only before then, and a lock handed to a waiter that never picks it up expires by its
// TTL like any other. A live waiter whose refresh comes later than its entry's expiry loses its
// place and joins again at the end.
//
// Every grant, taken by an attempt or handed over, passes the write check of the plain lock
// (Lock::set_replicas: the replicas' WAIT; through a router, its confirmation that the node is
// still the master). The BLPOP that takes a hand-off is the waiter's own write after the
// hand-off's, so its WAIT covers both. A grant that fails the check is given back with release()
// (handing the lock on) and the wait goes on with the same token, joining the queue anew.
#ifndef RESPLOCK_FAIR_LOCK_HPP
#define RESPLOCK_FAIR_LOCK_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/companion.hpp"
#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

// Longest span a waiter blocks between two refreshes of its queue entry.
inline constexpr std::uint32_t fair_refresh_max_ms = 1000;

// Smallest connection buffer that fits every request of a FairLock with a key of
// RESPLOCK_MAX_KEY_LEN bytes (the longest is the EVAL of its script). A smaller buffer works for
// shorter keys; a request that does not fit is refused unsent with too_large.
std::size_t fair_buffer_min() noexcept;

class FairLock {
  public:
    // Binds the lock to `key` (copied). An empty key or one over RESPLOCK_MAX_KEY_LEN bytes makes
    // every call return invalid_argument.
    FairLock(Connection& conn, std::string_view key) noexcept;

    // One attempt, one round trip, without joining the queue: ok (held), busy (held by another,
    // or KEY was free but a waiter queued first: the attempt handed it to that waiter), and the
    // statuses of Lock::acquire (not_replicated: the write check failed and the grant was given
    // back). After unknown_outcome, protocol_error or too_large the token is kept with no
    // validity, so release() can undo what the script may have done. `fence`, when not null,
    // receives the grant's fencing number on ok (see AcquireOptions::fence: the same rule and
    // the same counter, BASE:fence); it is then asked for, and a grant without a valid number is
    // protocol_error.
    Status acquire(std::uint32_t ttl_ms, std::uint64_t* fence = nullptr) noexcept;

    // Waits up to wait_ms in the queue: the first attempt joins it when the lock is busy, then
    // the waiter blocks on its wake list (refreshing its entry at bounded intervals) until a
    // release hands it the lock. wait_ms 0 is acquire(). Returns ok (held), busy (the wait ran
    // out; the entry was removed, and a lock handed over meanwhile is taken, returning ok), and
    // acquire()'s statuses; connection failures before a request was sent, LOADING / BUSY /
    // CLUSTERDOWN / TRYAGAIN / NOREPLICAS replies and a failed write check (not_replicated, the
    // grant given back) are retried within the wait, and the last one is returned when it runs
    // out. Falls back to sleeping between attempts when the server refuses BLPOP.
    // invalid_argument when wait_ms exceeds max_ttl_ms. `fence` as acquire().
    Status try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                       std::uint64_t* fence = nullptr) noexcept;

    // Owner-checked release that hands the lock to the first live waiter (or deletes KEY when
    // none is queued). Statuses, and the retries of a release the server did not run within the
    // connection's timeout, as Lock::release; also wrong_type (a companion key holds another
    // type: the token is kept) and too_large (the request does not fit the buffer: not sent).
    Status release() noexcept;

    // Owner-checked PEXPIRE with the plain lock's script. Statuses and validity as Lock::extend.
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms = max_span_ms) noexcept {
        return lock_.extend(ttl_ms, wait_ms);
    }

    // Who holds KEY and its PTTL, in one round trip (the plain lock's query).
    Status query(LockInfo& info) noexcept { return lock_.query(info); }

    // Takes over a token obtained elsewhere (e.g. printed by `resplock acquire --fair`), with no
    // local validity until extend() succeeds. ok or invalid_argument.
    Status adopt(std::string_view token) noexcept;

    // An owner label in front of the tokens of the next acquisitions, as AcquireOptions::owner
    // (copied; empty: none). Returns ok, or invalid_argument for a label that is not 1..
    // max_owner_len bytes of A-Z a-z 0-9 . _ - (nothing changes).
    Status set_owner(std::string_view owner) noexcept;

    // Replica acknowledgement after every grant (taken or handed over) and every extend, as
    // Lock::set_replicas. Returns ok or invalid_argument (over Lock::max_replicas).
    Status set_replicas(std::uint32_t replicas) noexcept { return lock_.set_replicas(replicas); }
    // How many replicas acknowledged the last WAIT (Lock::replicas_acknowledged).
    std::uint32_t replicas_acknowledged() const noexcept { return lock_.replicas_acknowledged(); }

    std::uint32_t remaining_ms() const noexcept { return lock_.remaining_ms(); }
    bool held() const noexcept { return lock_.held(); }
    std::string_view token() const noexcept { return lock_.token(); }
    std::string_view key() const noexcept { return lock_.key(); }
    Connection& connection() const noexcept { return lock_.connection(); }

  private:
    struct Wait;
    class Names;
    // One run of the queue's script with `op` for this wait's token.
    Status attempt(char op, Wait& w) noexcept;
    // After a grant whose request was sent at sent_at: the write check (Lock::confirm_grant),
    // which gives the grant back with release() when it fails. Its answer is kept in the wait.
    Status granted(Wait& w, std::uint32_t sent_at) noexcept;
    // The pause between attempts: a block on the wake list once queued, else a sleep.
    static Status pause(void* wait, std::uint32_t ms, Deadline until) noexcept;
    std::string_view base() const noexcept { return {base_, base_len_}; }

    char base_[RESPLOCK_MAX_KEY_LEN + companion_prefix_extra];
    std::size_t base_len_;
    // The key, the token and the validity: a plain Lock's, whose scripts extend and query a fair
    // holder's key as any other (bound to no key when base_len_ is 0).
    Lock lock_;
    char owner_[max_owner_len + 1];  // + 1: never an array of 0 bytes
    std::size_t owner_len_ = 0;
};

}  // namespace resplock

#endif  // RESPLOCK_FAIR_LOCK_HPP
