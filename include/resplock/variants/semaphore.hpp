// The counting semaphore: at most `limit` holders of one key at once. Each holder takes a lease of
// its own: a random token (with an owner label when set_owner() gave one) and a TTL. On the
// server, in KEY's cluster slot (BASE is companion_prefix(KEY), see resplock/core/companion.hpp):
//   KEY           a sorted set: member = a holder's token, score = its lease's expiry in ms on the
//                 server's clock (TIME in the script; no device's clock is ever used). KEY's PTTL
//                 follows its latest lease, so a semaphore nobody holds vanishes by itself;
//   BASE:fence    the last fencing number handed out, living at least as long as every lease;
//   BASE:wake     the list a waiter of the plain mode blocks on: a release leaves one item that
//                 lives 1 s (as Lock::release with AcquireOptions::wake);
//   BASE:q        the fair mode's queue: the waiters' tokens, in arrival order;
//   BASE:w        its entries: a hash, token -> "expiry:ttl:limit" (expiry on the server's clock);
//   BASE:f:TOKEN  one fair waiter's wake list: a hand-off pushes the lease's fencing number to it.
// One script (src/variants/lua/semaphore.lua, EVALSHA with EVAL fallback) does every step, and
// first removes the leases that ended (ZREMRANGEBYSCORE KEY -inf now): a holder that dies without
// releasing frees its place when its TTL ends, and a lease not renewed is no longer counted.
//
// Admission: an attempt is granted a lease when fewer live leases than the caller's own limit exist
// and no live waiter is queued (a queued waiter is handed free places first, even by the attempt of
// a client in the plain mode: nobody jumps the queue). Each grant returns a fencing number, the
// larger of BASE:fence + 1 and the server's clock in microseconds, as AcquireOptions::fence does
// (docs/variants.md, "Fencing numbers"): the numbers strictly increase per key while BASE:fence
// lives, whichever holder gets them.
//
// Clients that state different limits for one key: each admission checks the limit of the one
// admitted (its own, or for a hand-off the one its queue entry carries), so the count of live
// leases never exceeds the largest limit a current holder stated: every current holder was
// present when the latest of them was admitted, and that admission left at most its own limit. A
// client with a smaller limit is not admitted while its limit is reached, even where a larger one
// would be; a client with a larger limit may fill the places up to its own. Keep one limit per
// key unless that is what you want.
//
// Fair mode (fair = true): try_acquire() joins the queue when busy, then blocks on its own wake
// list; a release (or any attempt that finds places free) hands free places to the first live
// waiters, each with the TTL it asked for, while the head's own limit allows (the queue is strictly
// first come, first served: a head that does not fit holds up the ones behind it). The waiter's
// BLPOP returns with its lease held and its fencing number. The timing rules are those of FairLock
// (resplock/variants/fair_lock.hpp): blocks of at most fair_refresh_max_ms and a quarter of the
// TTL, entries that expire 2 refresh spans and Redis's 100 ms timer tick after their last refresh,
// validity counted from the send time of the last attempt answered busy.
//
// Not guaranteed: a lease ends by the server's clock, and a holder relies on it for its TTL less
// the drift allowance from its own send time (Validity), exactly as with the plain lock: a holder
// that pauses longer than its validity may find its place taken; only a resource that checks the
// fencing numbers refuses it then. A restart without persistence or a failover to a replica that
// missed the last writes forgets leases (more than `limit` may then hold).
#ifndef RESPLOCK_SEMAPHORE_HPP
#define RESPLOCK_SEMAPHORE_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/companion.hpp"
#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/hold.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

// What query() reads, in one round trip.
struct SemaphoreInfo {
    std::uint32_t count = 0;    // live leases
    bool mine = false;          // this object's token holds one of them
    std::int64_t ttl_ms = -2;   // ms that lease has left on the server's clock; -2 when not mine
    std::uint32_t waiters = 0;  // live entries in the fair queue
};

// One live lease, as holders() shows it.
struct SemaphoreHolder {
    std::string_view owner;          // its owner label (set_owner()), empty for none; the text
                                     // lives only until the visit returns
    std::uint32_t remaining_ms = 0;  // ms it has left on the server's clock
};

// Smallest connection buffer that fits every request of a Semaphore with a key of
// RESPLOCK_MAX_KEY_LEN bytes and the longest owner label (the longest is the EVAL of its script). A
// smaller buffer works for shorter keys; a request that does not fit is refused unsent with
// too_large.
std::size_t semaphore_buffer_min() noexcept;

class Semaphore {
  public:
    // Largest limit accepted.
    static constexpr std::uint32_t max_limit = 65535;

    // Binds the semaphore to `key` (copied), admitting at most `limit` holders (1..max_limit) as
    // this client states it. An empty key, one over RESPLOCK_MAX_KEY_LEN bytes or a limit out of
    // range makes every call return invalid_argument.
    Semaphore(Connection& conn, std::string_view key, std::uint32_t limit,
              bool fair = false) noexcept;

    // Labels the tokens of the next acquisitions (as AcquireOptions::owner: "owner:hex"), so that
    // ZRANGE KEY 0 -1 shows which devices hold places. Empty: no label. ok, or invalid_argument
    // (over max_owner_len bytes, or a byte other than A-Z a-z 0-9 . _ -).
    Status set_owner(std::string_view owner) noexcept;

    // One attempt, one round trip, never queued: ok (a lease is held, and *fence, when fence is
    // not null, receives its fencing number), busy (the caller's limit is reached, or a live
    // waiter is queued), invalid_argument (bad key or limit, ttl_ms outside 1..max_ttl_ms, or
    // this object holds a lease that has not expired locally), random_failed, and the statuses
    // of Lock::acquire; too_large also when the request would not fit the connection's buffer
    // (see semaphore_buffer_min(): nothing is sent, and no token kept). After unknown_outcome,
    // protocol_error, a reply too large, or an error reply from the script, the token is kept
    // with no validity, so that release() can undo what the script may have done.
    Status acquire(std::uint32_t ttl_ms, std::uint64_t* fence = nullptr) noexcept;

    // Attempts until granted or wait_ms has passed, through the retry loop of every lock kind:
    // each busy answer carries the time until the earliest lease ends, which bounds the pause. In
    // the plain mode a waiter blocks on BASE:wake (woken by a release) or sleeps; in the fair mode
    // the first attempt joins the queue and the waiter blocks on its own wake list until a lease
    // is handed to it, leaving the queue when the wait runs out (a lease handed over meanwhile is
    // taken: ok). wait_ms 0 is acquire(). Statuses as acquire(); busy when the wait ran out;
    // invalid_argument when wait_ms exceeds max_ttl_ms. Falls back to sleeping when the server
    // refuses BLPOP.
    Status try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                       std::uint64_t* fence = nullptr) noexcept;

    // Removes this object's lease (owner-checked: only its own token) and hands the place to the
    // queue's first live waiter, or wakes one plain waiter. ok (removed), expired (the lease had
    // already ended), not_owner (an answer the script never gives: -1, as the owner script's
    // "held by another"), invalid_argument (no token), unknown_outcome, protocol_error, too_large,
    // or connection/error-reply statuses (wrong_type: KEY or a companion holds another type). A
    // release the server did not run is retried as Lock::release is, within the connection's
    // timeout. The token is forgotten on ok and expired, and kept otherwise so the release can be
    // retried; after any release remaining_ms() is 0.
    Status release() noexcept;

    // Moves this object's live lease to end ttl_ms from now (the server's now); a lease that has
    // ended is never revived. ok (validity restarts from this request), expired (no live lease,
    // or local validity had already run out: then nothing is sent), not_owner (as release()),
    // not_replicated (set_replicas()), and the statuses and validity
    // rules of Lock::extend (the reply awaited no longer than the timeout, the validity left and
    // wait_ms; after an unknown outcome the validity ends at the earlier of the old and the new).
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms = max_span_ms) noexcept;

    // The live leases, whether this object's token holds one and for how long, and the live
    // waiters queued, in one round trip. ok, invalid_argument, protocol_error, or
    // connection/error-reply statuses.
    Status query(SemaphoreInfo& info) noexcept;

    // Replica acknowledgement, as Lock::set_replicas: with `replicas` >= 1, every grant
    // (acquire(), try_acquire(), a fair hand-off) and every extend that succeeds is followed by
    // WAIT replicas <ms> on the connection that carried the write, within the call's deadline
    // (for a hand-off: the connection's timeout from the moment it arrived; the BLPOP that took
    // it is a write of this connection after the hand-off's, so the WAIT covers both), and the
    // call succeeds only if at least `replicas` replicas acknowledged. Otherwise a grant is
    // released again (owner-checked, handing the place on; the token stays only if that release
    // failed) and an extend keeps no more validity than the lease had before it; both return
    // not_replicated (or the WAIT's error status, or protocol_error for a reply that is no
    // count). Through a router the write must also be confirmed by it, with the same clean-up,
    // whether or not replicas were asked for. 0 turns it off (the default). ok, or
    // invalid_argument (over Lock::max_replicas: nothing changes).
    Status set_replicas(std::uint32_t replicas) noexcept;
    // How many replicas acknowledged the last WAIT (0 before any, or without a count).
    std::uint32_t replicas_acknowledged() const noexcept { return acknowledged_; }

    // Calls visit(ctx, holder) for each live lease, the first to end first: its owner label
    // (never its token, which would let the reader release it) and the ms it has left. The leases
    // come in pages of (RESPLOCK_MAX_REPLY_VALUES - 1) / 2 per round trip, all within the
    // connection's timeout: a lease granted, renewed or released between two pages may be
    // shown twice or not at all (query() counts them in one step). ok (every page read),
    // invalid_argument (bad key or limit, null visit), protocol_error, busy (the timeout ran
    // out first: the leases visited so far are correct), or connection/error-reply statuses.
    // `visit` must not use this connection: the label it receives lives in its buffer.
    using HolderVisit = void (*)(void* ctx, const SemaphoreHolder& holder) noexcept;
    Status holders(HolderVisit visit, void* ctx) noexcept;

    // Takes over a token obtained elsewhere, so that release() and extend() can act for it, with
    // no local validity until extend() succeeds. ok or invalid_argument (a bad key or limit, an
    // empty token or one over max_token_len bytes).
    Status adopt(std::string_view token) noexcept;

    // Milliseconds this holder may still rely on its lease (as Lock::remaining_ms).
    std::uint32_t remaining_ms() const noexcept { return hold_.validity().remaining(conn_.port()); }
    bool held() const noexcept { return remaining_ms() > 0; }
    // The token of the current or last attempted lease; empty when there is none.
    std::string_view token() const noexcept { return hold_.token(); }
    // The key; empty when the key or the limit was refused.
    std::string_view key() const noexcept { return hold_.key(); }
    // The limit this client states (0 when it was refused).
    std::uint32_t limit() const noexcept { return limit_; }
    bool fair() const noexcept { return fair_; }
    Connection& connection() const noexcept { return conn_; }

  private:
    struct Wait;
    class Names;
    // One run of the script with `op` for this wait's token.
    Status attempt(char op, Wait& w) noexcept;
    // The pause between attempts: a block on a wake list when one may be pushed, else a sleep.
    static Status pause(void* wait, std::uint32_t ms, Deadline until) noexcept;
    // After a grant (ttl_ms 0) or an extend to ttl_ms of the lease `names` were made for, sent at
    // sent_at with wait_ms to go: ok, or, when replicas or a router ask for it, the write
    // check's answer (detail::settle()).
    Status confirmed(const Names& names, std::uint32_t sent_at, std::uint32_t ttl_ms,
                     std::uint32_t wait_ms) noexcept;
    // release() for the token `names` were made for.
    Status give_back(const Names& names) noexcept;
    // The write check of a grant to this wait's token, received at sent_at: its answer, kept in
    // `w` for try_acquire() to return.
    Status granted(Wait& w, std::uint32_t sent_at) noexcept;
    // The script with op r, e, q or h for the current token (its companion key `names`) and the
    // given ttl (h: the first position) and entry_ms (h: the page's size) arguments; its reply
    // awaited until `until`.
    Status run(const Names& names, char op, std::string_view ttl, resp::Reply& reply,
               Deadline until, std::string_view entry = "0") noexcept;
    std::string_view base() const noexcept { return {base_, base_len_}; }
    // The connection's timeout from now: how long a release, a query or holders() may take.
    Deadline timeout() const noexcept {
        return Deadline::after(conn_.port(), conn_.config().timeout_ms);
    }

    Connection& conn_;
    Hold hold_;
    char base_[RESPLOCK_MAX_KEY_LEN + companion_prefix_extra];
    std::size_t base_len_;
    std::uint32_t limit_;
    bool fair_;
    char owner_[max_owner_len + 1];  // + 1: never an array of 0 bytes
    std::size_t owner_len_ = 0;
    std::uint8_t replicas_ = 0;
    std::uint8_t acknowledged_ = 0;
};

}  // namespace resplock

#endif  // RESPLOCK_SEMAPHORE_HPP
