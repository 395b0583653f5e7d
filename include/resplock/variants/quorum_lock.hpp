// A quorum lock (the Redlock scheme): one key on N independent Redis servers, held only while a
// majority of them carry this holder's token. Each request goes to every server before any reply
// is read, so an acquisition costs one round trip, not N.
//
// It survives the loss of a minority of servers, but rests on assumptions a single-server lease
// does not need: clocks that drift little against each other, process pauses shorter than the
// validity left, and servers that either keep their keys across a restart (fsync'ed persistence)
// or stay down for at least a TTL after losing them. It gives no fencing numbers.
#ifndef RESPLOCK_QUORUM_LOCK_HPP
#define RESPLOCK_QUORUM_LOCK_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

// How long a quorum request waits for each server: ttl/10, at least quorum_wait_min_ms, and never
// longer than that connection's timeout_ms. A silent server then costs a tenth of the TTL, not
// the whole validity; the floor leaves a round trip some room when the TTL is tiny.
inline constexpr std::uint32_t quorum_wait_divisor = 10;
inline constexpr std::uint32_t quorum_wait_min_ms = 10;
// Replies are read one server after another, so a reply that arrived within its server's wait
// may be read after that wait has passed (while an earlier server was awaited): it still counts,
// and reading it may take up to this long. Validity is measured from the first send, so a reply
// taken late only shortens it.
inline constexpr std::uint32_t quorum_read_grace_ms = 5;

class QuorumLock {
  public:
    // Binds the lock to `key` (copied; binary-safe) on conns[0..count): one distinct Connection
    // per server, each with its own port context (a context holds one transport connection) and
    // its own buffer of at least lock_buffer_min() bytes, all outliving the lock, and all ports
    // sharing one monotonic clock (validity is read from conns[0]'s). A count outside
    // 1..RESPLOCK_MAX_SERVERS, a null or repeated connection, two connections on one port
    // context, an empty key or one over RESPLOCK_MAX_KEY_LEN make every call return
    // invalid_argument (quorum() is 0).
    QuorumLock(Connection* const* conns, std::size_t count, std::string_view key) noexcept;

    // One attempt with a fresh random token: notes the time, sends SET key token NX PX ttl_ms to
    // every server, then reads every reply, each within its server's wait (see
    // quorum_wait_divisor; a server that does not answer in time has not granted). Held only
    // when a majority answered OK to this request and validity (ttl - elapsed - drift, counted
    // from before the first send) is still positive. Otherwise the owner-checked delete goes to
    // every server, including those whose reply was lost, before it returns, and no token is
    // kept. Returns:
    //   ok: held (granted() servers confirmed);
    //   busy: too many servers hold the key for another token for a majority to be possible;
    //   timeout: a majority granted but the validity was used up before the last reply;
    //   otherwise the failure most servers that did not grant share (ties: the first such
    //   server's): connect_failed, no_host, timeout, closed, io_error, an error-reply status
    //   (loading, no_permission, ...), protocol_error, too_large;
    //   invalid_argument (bad lock, ttl_ms outside 1..max_ttl_ms, or already held),
    //   random_failed.
    Status acquire(std::uint32_t ttl_ms) noexcept;

    // acquire() until held or `wait_ms` has passed, with the jittered backoff of
    // Lock::try_acquire. A failed attempt is repeated when its status is busy, a connection
    // failure, loading, server_busy, try_again or no_replicas. Returns acquire()'s statuses (the
    // last attempt's); invalid_argument when wait_ms exceeds max_ttl_ms.
    Status try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept;

    // acquire() / try_acquire() with options: only `owner` (the same label on every server),
    // since fencing numbers, once-per and wake need one server. Returns their statuses, and
    // invalid_argument when fence, once_per_ms or wake is set or the owner label is not valid.
    Status acquire(std::uint32_t ttl_ms, const AcquireOptions& options) noexcept;
    Status try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                       const AcquireOptions& options) noexcept;

    // Owner-checked PEXPIRE to ttl_ms on every server, each waiting no longer than its wait for
    // ttl_ms, nor the validity left, nor wait_ms. Returns ok when a majority confirmed and
    // validity, counted again from before this request, is positive; expired when the validity of
    // this hold has run out (no request is sent; after adopt() it is unknown, and the request goes
    // out) or too many servers had lost the key for a majority; not_owner when another token holds
    // it on some of those; timeout when a majority confirmed too late; otherwise the failure most
    // unconfirmed servers share (unknown_outcome for a lost reply, connection and error-reply
    // statuses), and validity ends at the earlier of the old and the new one. invalid_argument for
    // a bad lock, no token or a bad ttl_ms. The token is kept in every case, so release() can
    // remove what is left.
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms = max_span_ms) noexcept;

    // Owner-checked delete on every server (sent to all, then all replies read; each waits up to
    // its connection's timeout_ms). When a majority answered, returns ok (the key was deleted on
    // at least one), not_owner (none deleted, another token on some) or expired (gone on all
    // that answered), and forgets the token: a key left on a server that did not answer expires
    // by its TTL. Otherwise, when that failure shows the servers did not run the release (as
    // Lock::release: a connection failure before the request was sent, loading, server_busy,
    // try_again, no_replicas), the release is sent again to the servers that refused it (never to
    // one that answered or whose reply was lost), with Lock::release's backoff and within the
    // first half of the first connection's timeout (each request waits no later than the end of
    // that timeout, nor its own connection's). It then returns the failure most unanswered servers
    // share (unknown_outcome for a lost reply, connection or error-reply statuses) and keeps the
    // token for a retry. invalid_argument for a bad lock or no token. Afterwards remaining_ms()
    // is 0.
    Status release() noexcept;

    // Who holds the key, read atomically on each server in one round trip (a script returning
    // its value and PTTL). held_by_me when a majority carry this lock's token, held_by_other
    // when a majority carry one other value, else free (ttl_ms -2); ttl_ms is the shortest PTTL
    // among that majority. Returns ok when a majority answered; otherwise the failure most of
    // the others share (connection, error-reply, protocol_error statuses); invalid_argument for
    // a bad lock.
    Status query(LockInfo& info) noexcept;

    // Takes over a token obtained elsewhere (e.g. printed by `resplock acquire`), so release()
    // and extend() act for it. Validity is unknown (remaining_ms() 0) until an extend()
    // succeeds. Returns ok or invalid_argument (bad lock, empty token or over max_token_len).
    Status adopt(std::string_view token) noexcept;

    // Closes every connection (e.g. a forked child's copies of the sockets); the next call
    // reconnects.
    void close() noexcept;

    // Milliseconds this holder may still rely on the lock: ttl - (now - start of the acquire or
    // extend) - drift, drift = ttl/100 + 2 ms. 0 when not held.
    std::uint32_t remaining_ms() const noexcept;
    bool held() const noexcept { return remaining_ms() > 0; }

    // The token of the current hold; empty when there is none.
    std::string_view token() const noexcept { return hold_.token(); }
    std::string_view key() const noexcept { return hold_.key(); }
    // Confirmations needed: count/2 + 1 (0 for an invalid lock).
    std::size_t quorum() const noexcept { return count_ == 0 ? 0U : count_ / 2 + 1; }
    // Servers that confirmed the last acquire or extend.
    std::size_t granted() const noexcept { return granted_; }

  private:
    enum class Op : std::uint8_t { set, extend, release, query };
    static bool servers_valid(Connection* const* conns, std::size_t count) noexcept;
    // What a query found on one server: its value (null data: none) and PTTL.
    struct Seen {
        std::string_view value;
        std::int64_t ttl_ms = 0;
    };
    // One request on every server: sends to all, then reads all, each before its own deadline
    // of wait_ms (0: its timeout_ms); for a script, those answering NOSCRIPT get its text in a
    // second pass. Leaves each server's outcome in status[]: ok, busy (SET not done), expired,
    // not_owner, or a failure; for a query, ok with seen[] filled. With `to`, only the servers i
    // with to[i] set get the request; the others' status[i] is left as it is.
    void round(Op op, std::string_view* args, std::size_t count, std::uint32_t wait_ms,
               Status (&status)[RESPLOCK_MAX_SERVERS], Seen* seen = nullptr,
               const bool* to = nullptr) noexcept;
    // The release request with each server waiting up to wait_ms (0: its timeout_ms), to the
    // servers `to` names (null: every one).
    void remove(std::uint32_t wait_ms, Status (&status)[RESPLOCK_MAX_SERVERS],
                const bool* to = nullptr) noexcept;
    std::uint32_t wait_for(std::uint32_t ttl_ms) const noexcept;
    Status most_common_failure(const Status (&status)[RESPLOCK_MAX_SERVERS]) const noexcept;

    Connection* conns_[RESPLOCK_MAX_SERVERS];
    std::size_t count_ = 0;  // 0: invalid
    Hold hold_;              // no key unless the servers are valid
    std::size_t granted_ = 0;
};

}  // namespace resplock

#endif  // RESPLOCK_QUORUM_LOCK_HPP
