// The lock: one key on one server, owned through a random token kept in the object.
// Acquire is SET key token NX PX ttl; release and extend are owner-checked Lua scripts sent with
// EVALSHA and, when the server's script cache lacks them, EVAL.
#ifndef RESPLOCK_LOCK_HPP
#define RESPLOCK_LOCK_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/hold.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

enum class LockState : std::uint8_t { free, held_by_me, held_by_other };

struct LockInfo {
    LockState state = LockState::free;
    std::int64_t ttl_ms = -2;  // the key's PTTL: remaining ms, -1 if it has no TTL, -2 if absent
};

// Smallest connection buffer that fits every request a Lock sends with a key of
// RESPLOCK_MAX_KEY_LEN bytes and any token and TTL (the longest is the EVAL of the extend script).
std::size_t lock_buffer_min() noexcept;

// Options of one acquisition (fencing numbers, once per interval, wake on release, an owner
// label): defined in "resplock/core/lock_options.hpp".
struct AcquireOptions;

class Lock {
  public:
    // Binds the lock to `key` (copied; binary-safe). An empty key, or one longer than
    // RESPLOCK_MAX_KEY_LEN, is not truncated: every call then returns invalid_argument.
    Lock(Connection& conn, std::string_view key) noexcept;

    // One attempt: SET key token NX PX ttl_ms with a fresh random token, one round trip.
    // Returns ok (held: the server answered OK to this request), busy (someone holds it),
    // invalid_argument (bad key, ttl_ms outside 1..max_ttl_ms, or this object already holds a
    // lock that has not expired locally), random_failed, unknown_outcome (the request went out
    // but its reply was lost), protocol_error / too_large (the reply was malformed or not the
    // expected one), not_replicated (see set_replicas(): through a router or with replicas
    // asked for, the write was not confirmed and was given back), any connect/handshake status
    // of Connection::command, or an error-reply status (try_again: CLUSTERDOWN or TRYAGAIN;
    // no_replicas: NOREPLICAS, a master short of the replicas min-replicas-to-write asks for: the
    // SET did not run). After unknown_outcome, protocol_error or too_large the lock is not held,
    // but the token is kept (remaining_ms() 0) so release() can remove a key the server may have
    // set; otherwise it expires by its TTL.
    Status acquire(std::uint32_t ttl_ms) noexcept;

    // Attempts until acquired or `wait_ms` has passed: jittered exponential backoff between
    // RESPLOCK_RETRY_MIN_MS and RESPLOCK_RETRY_MAX_MS, never sleeping past the holder's PTTL
    // nor the deadline. wait_ms 0 is exactly one attempt. Connection failures before a request
    // was sent, loading / server_busy / try_again / no_replicas replies and too_many_redirects
    // (the server did not run the SET), and not_replicated (the acquisition was given back; after a
    // failover the next attempt finds the new master) are retried within the wait; the last one is
    // returned when it runs out. Returns acquire()'s statuses; busy when the wait ran out with the
    // lock still held; invalid_argument when wait_ms exceeds max_ttl_ms.
    Status try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept;

    // Owner-checked delete. Returns ok (released), not_owner (another token or a key of another
    // type holds it), expired (the key was gone), invalid_argument (no token), unknown_outcome
    // (reply lost), protocol_error / too_large (reply malformed), or connection/error-reply
    // statuses. A release the server did not run (connection failures before the request was
    // sent, loading / server_busy / try_again / no_replicas replies, too_many_redirects) is tried
    // again with try_acquire()'s backoff during the first half of the connection's timeout, and
    // the last such status is returned when that has passed; every request of the release shares
    // one deadline, the connection's timeout from the call, which bounds the whole release. A
    // release that may have run (unknown_outcome, protocol_error, too_large) or was answered is
    // never repeated. The token is forgotten on ok, not_owner and expired, and kept otherwise so
    // the release can be retried; after any release remaining_ms() is 0. Sent even when local
    // validity has run out, since the key may still carry this token.
    Status release() noexcept;

    // Owner-checked PEXPIRE to ttl_ms. Returns ok (local validity restarts from this request),
    // not_owner, expired (the key was gone, or local validity had already run out: then no
    // request is sent), invalid_argument, unknown_outcome, protocol_error, too_large, or
    // connection/error-reply statuses. Waits for the reply no longer than the connection's
    // timeout, nor the local validity left, nor wait_ms: a renewal confirmed too late would be of
    // no use, so it then returns timeout or unknown_outcome. After unknown_outcome,
    // protocol_error or too_large the renewal may or may not have run: validity then ends at the
    // earlier of the old and the new one.
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms = max_span_ms) noexcept;

    // Who holds the key, and its PTTL, atomically in one round trip. Returns ok,
    // invalid_argument, or connection/error-reply statuses.
    Status query(LockInfo& info) noexcept;

    // acquire() / try_acquire() / release() with options (see AcquireOptions, in
    // "resplock/core/lock_options.hpp"); a firmware that does not call them links none of their
    // code (each function is its own section, dropped at link time when unused). `fence`
    // receives the fencing number, only on ok, when options.fence is set (it must then not be
    // null). Without fence and once_per_ms, acquire() is the plain one; try_acquire() is too
    // unless wake is set. With them, one script does the whole attempt in one round trip, and
    // busy also means the once-per marker exists; its busy reply carries the PTTL that bounds
    // the wait. Statuses are those of the plain calls, plus invalid_argument (fence null,
    // once_per_ms over max_ttl_ms) and too_large (the EVAL would not fit the connection's
    // buffer: nothing is sent). After an error reply to the script the token is kept with no
    // validity, as after unknown_outcome: the script may have stopped after its SET (e.g. an
    // ACL without +time). release(options) with wake also wakes one waiter, and is retried and
    // bounded as release() is; without wake it is release().
    Status acquire(std::uint32_t ttl_ms, const AcquireOptions& options,
                   std::uint64_t* fence = nullptr) noexcept;
    Status try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms, const AcquireOptions& options,
                       std::uint64_t* fence = nullptr) noexcept;
    Status release(const AcquireOptions& options) noexcept;

    // Takes over a token obtained elsewhere (e.g. printed by `resplock acquire`), so release()
    // and extend() can act for it. Its local validity is unknown (remaining_ms() is 0) until an
    // extend() succeeds. Returns ok or invalid_argument (empty or over max_token_len bytes).
    Status adopt(std::string_view token) noexcept;

    // Milliseconds this holder may still rely on the lock: ttl - (now - time the acquire or
    // extend request was sent) - drift, where drift = ttl/100 + 2 ms. 0 when not held.
    std::uint32_t remaining_ms() const noexcept { return hold_.validity().remaining(conn_.port()); }
    __attribute__((always_inline)) bool held() const noexcept { return remaining_ms() > 0; }

    // Replica acknowledgement (linked only by a program that calls this or uses a Router): with
    // `replicas` >= 1, every acquisition that succeeds (acquire and try_acquire, with or without
    // options) and every extend that succeeds is followed by WAIT replicas <ms>, its timeout half
    // of what is left of the call's deadline (the rest is for its reply). The call then succeeds
    // only if at least `replicas` replicas acknowledged; otherwise an acquisition releases the lock
    // again (owner-checked, within the connection's timeout; the token is kept only if that release
    // failed) and an extend keeps no more validity than the lock had before it (the earlier of the
    // old end and the new one), and both return not_replicated; an error reply to WAIT returns its
    // status, and a reply that is not a count protocol_error, with the same clean-up. The WAIT runs
    // on the very connection that carried the write (Connection::follow_up): if that link is gone,
    // the write counts as not acknowledged. Through a router the write must also be confirmed by it
    // (Connection::confirm_write: a Sentinel's master must still be the one the sentinels name),
    // with the same clean-up and not_replicated when it is not, whether or not replicas were asked
    // for. 0 turns it off (the default). Returns ok, or invalid_argument (over max_replicas:
    // nothing changes).
    Status set_replicas(std::uint32_t replicas) noexcept;
    // How many replicas acknowledged the last WAIT (0 before any, when its reply was not a count,
    // or when no time was left to send it), at most max_replicas.
    std::uint32_t replicas_acknowledged() const noexcept { return acknowledged_; }
    static constexpr std::uint32_t max_replicas = 255;

    // What follows a granted acquisition or extend (ttl_ms 0: an acquisition) sent at sent_at
    // with wait_ms to go, when the write needs confirming: the WAIT of set_replicas(), then the
    // router's Connection::confirm_write(); when either fails, an acquisition is given back, an
    // extend keeps no more validity than the lock had before it, and the connection is closed so
    // that the next command finds its node afresh (through a router: the current master).
    // Installed as a pointer by set_replicas() and, for every lock on its connection, by a
    // Router, so that a firmware with neither links none of it.
    using WriteCheck = Status (*)(Lock& lock, std::uint32_t sent_at, std::uint32_t ttl_ms,
                                  std::uint32_t wait_ms) noexcept;
    static WriteCheck write_check() noexcept;

    // The token of the current or last attempted hold; empty when there is none.
    std::string_view token() const noexcept { return hold_.token(); }
    std::string_view key() const noexcept { return hold_.key(); }
    Connection& connection() const noexcept { return conn_; }
    // The key, token and validity, for a lock kind built on a Lock (FairLock: its queue's script
    // grants and hands over the lock that extend() and query() then act on).
    Hold& hold() noexcept { return hold_; }
    // For a lock kind built on a Lock, whose own script granted hold() by a request sent at
    // sent_at (FairLock): the write check an acquisition runs (set_replicas(), a router), within
    // the connection's timeout, with `give_back(owner)` (that kind's release) in place of
    // release() when it fails. Returns ok when no check is installed, else the check's answer.
    using GiveBack = Status (*)(void* owner) noexcept;
    Status confirm_grant(std::uint32_t sent_at, GiveBack give_back, void* owner) noexcept;

  private:
    struct Attempt;      // one attempt of try_acquire() or release()
    struct OptionsWait;  // one wait of try_acquire() with options

    // try_acquire(ttl_ms, wait_ms); with `release`, release()'s attempts for wait_ms instead,
    // each awaited up to detail::release_deadline() from now (ttl_ms unused).
    Status repeat(std::uint32_t ttl_ms, std::uint32_t wait_ms, bool release) noexcept;
    // One release request, awaited up to `until`.
    Status release_once(Deadline until) noexcept;

    // The owner script with key() and the first `argc` of token() and ttl as arguments: 0 query,
    // 1 release, 2 extend; its reply awaited up to `until`.
    Status run_script(std::size_t argc, std::string_view ttl, resp::Reply& reply,
                      Deadline until) noexcept;
    Status owner_result(Status s, const resp::Reply& reply, bool key_only = true) noexcept;
    // SET key token NX PX ttl_ms, one attempt of acquire() with `token` (fresh, and labelled
    // when AcquireOptions::owner asks for it).
    Status set(std::uint32_t ttl_ms, std::string_view token) noexcept;
    // After an acquisition request with `token`, sent at sent_at, that returned s (ok, or an
    // outcome that may have set the key): keeps the token; on ok starts the validity and runs
    // the write check, whose answer it returns.
    Status keep(std::string_view token, std::uint32_t ttl_ms, std::uint32_t sent_at,
                Status s) noexcept;
    // One attempt of try_acquire() with options that need the acquire script, and its pause.
    Status options_attempt(OptionsWait& w) noexcept;
    static Status options_pause(void* wait, std::uint32_t ms, Deadline until) noexcept;
    // After an acquisition (ttl_ms 0) or an extend to ttl_ms, sent at sent_at with wait_ms to
    // go, that returned s: s, or, when s is ok and a write check is installed, its answer.
    Status confirmed(Status s, std::uint32_t sent_at, std::uint32_t ttl_ms,
                     std::uint32_t wait_ms) noexcept {
        return s == Status::ok && check_ != nullptr ? check_(*this, sent_at, ttl_ms, wait_ms) : s;
    }
    // The write check: the replicas' WAIT, then the router's confirmation.
    static Status settle(Lock& lock, std::uint32_t sent_at, std::uint32_t ttl_ms,
                         std::uint32_t wait_ms) noexcept;

    // Every field before hold_ and its arrays, within a short load's reach (see Hold).
    Connection& conn_;
    // Null unless set_replicas() asked for acknowledgements or the connection has a router: a
    // pointer, so that a firmware with neither links none of it.
    WriteCheck check_ = nullptr;
    std::uint8_t replicas_ = 0;
    std::uint8_t acknowledged_ = 0;
    Hold hold_;
};

// Releases the lock (if it has a token) when the guard goes out of scope. Never throws; the
// release is bounded by the connection's timeout.
class LockGuard {
  public:
    explicit LockGuard(Lock& lock) noexcept : lock_(lock) {}
    ~LockGuard() {
        if (!lock_.token().empty()) (void)lock_.release();
    }
    LockGuard(const LockGuard&) = delete;
    LockGuard& operator=(const LockGuard&) = delete;

  private:
    Lock& lock_;
};

}  // namespace resplock

#endif  // RESPLOCK_LOCK_HPP
