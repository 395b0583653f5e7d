// The reentrant lock: an owner that already holds the lock may acquire it again. The server keeps
// a hash at the lock key: field <owner id> -> hold count, and the empty field "" -> the largest TTL
// any holder asked for (an owner id is 1..max_token_len bytes, so it can never be ""). Each
// operation is one short Lua script sent with EVALSHA and, when the server's cache lacks it, EVAL.
//
// Objects, processes or RPC hops that pass one owner id between them share one hold: each acquire
// adds 1 to the count, each release takes 1 away, and the key is deleted when the count reaches 0.
// A plain Lock and a ReentrantLock on the same key exclude each other.
#ifndef RESPLOCK_REENTRANT_LOCK_HPP
#define RESPLOCK_REENTRANT_LOCK_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

struct ReentrantInfo {
    // held_by_me: this object's owner id has a count; held_by_other: another owner id, or a value
    // of another type (e.g. a plain Lock's token), holds the key.
    LockState state = LockState::free;
    std::uint32_t count = 0;   // this owner id's count on the server (0 unless held_by_me)
    std::int64_t ttl_ms = -2;  // the key's PTTL: remaining ms, -1 if it has no TTL, -2 if absent
};

// Smallest connection buffer that fits every request a ReentrantLock sends with a key of
// RESPLOCK_MAX_KEY_LEN bytes, an owner id of max_token_len bytes and any TTL (the longest is the
// EVAL of the acquire script). A smaller buffer works for shorter keys and owner ids: a request
// that does not fit is refused unsent with too_large.
std::size_t reentrant_buffer_min() noexcept;

class ReentrantLock {
  public:
    // Binds the lock to `key` and `owner` (both copied; binary-safe). `owner` is the id shared by
    // the cooperating holders, 1..max_token_len bytes; empty: the object makes a random one on its
    // first acquire and keeps it for its lifetime. An empty key, a key longer than
    // RESPLOCK_MAX_KEY_LEN or an owner longer than max_token_len is not truncated: every call then
    // returns invalid_argument.
    ReentrantLock(Connection& conn, std::string_view key, std::string_view owner = {}) noexcept;

    // One attempt, one round trip. Takes the lock when the key is absent (count 1, PTTL ttl_ms),
    // or enters it again when this owner id already holds it (count + 1). Either way the PTTL
    // becomes the larger of ttl_ms and the largest TTL any holder asked for since the key was
    // created, and local validity restarts from this request with that TTL.
    // Returns ok (the server confirmed this very request, and the write check passed: see
    // set_replicas()), busy (another owner id or a value of another type holds the key; a hold
    // this object believed it had is then lost), not_replicated (the write check failed: the
    // acquisition's count was given back with release()),
    // invalid_argument (bad key or owner id, ttl_ms outside 1..max_ttl_ms), random_failed,
    // unknown_outcome (the request went out but its reply was lost), protocol_error / too_large
    // (the reply was malformed or not the expected one; too_large unsent: the request does not
    // fit the connection's buffer), any connect/handshake status of Connection::command, or an
    // error-reply status. After unknown_outcome, protocol_error or too_large on a first acquire,
    // the lock is not held but token() stays set so release() can undo a count the server may
    // have added; on a re-entry, the hold already confirmed keeps its validity (the script never
    // shortens the PTTL) and the possible extra count is left to expire with the key.
    Status acquire(std::uint32_t ttl_ms) noexcept;

    // Attempts until acquired or `wait_ms` has passed: jittered exponential backoff between
    // RESPLOCK_RETRY_MIN_MS and RESPLOCK_RETRY_MAX_MS, never sleeping past the holder's PTTL (it
    // comes with the busy reply, so waiting costs no extra request) nor the deadline. wait_ms 0
    // is exactly one attempt. Failures that show the request was not executed (no connection,
    // LOADING, BUSY, CLUSTERDOWN / TRYAGAIN, NOREPLICAS) and a failed write check
    // (not_replicated: given back) are retried within the wait. Returns acquire()'s statuses;
    // busy when the wait ran out with the lock still held; invalid_argument when wait_ms exceeds
    // max_ttl_ms.
    Status try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept;

    // Owner-checked decrement: takes 1 from this owner id's count and deletes the key when the
    // count reaches 0. Returns ok either way (count() gives what is left), not_owner (another
    // owner id or a value of another type holds the key), expired (the key was gone),
    // invalid_argument (bad key, or no hold or unknown acquisition to release), unknown_outcome
    // (reply lost), protocol_error / too_large, or connection/error-reply statuses. On ok this
    // object still holds the lock (validity unchanged) while it has acquired more times than
    // released and the count is not 0. After unknown_outcome, protocol_error or too_large the
    // decrement may or may not have run: the level counts as released (repeating the release
    // could take a level twice) and remaining_ms() is 0, since the key may be gone; a later
    // extend() re-establishes validity if levels remain. A release the server did not run
    // (connection failures before the request was sent, loading, server_busy, try_again,
    // no_replicas, too_many_redirects) changes nothing: it is retried as Lock::release is, within
    // the connection's timeout, and may be repeated after it returns.
    Status release() noexcept;

    // Owner-checked PEXPIRE to the larger of ttl_ms and the largest TTL any holder asked for
    // (ttl_ms becomes that largest TTL if it is larger). Returns ok (local validity restarts from
    // this request with the TTL applied), not_owner, expired (the key was gone, or local validity
    // had already run out: then no request is sent), invalid_argument (bad key or ttl_ms, no
    // hold), unknown_outcome, protocol_error, too_large, or connection/error-reply statuses. Waits
    // for the reply no longer than the connection's timeout, nor the local validity left, nor
    // wait_ms. After unknown_outcome, protocol_error or too_large the old validity stands: the
    // script never sets a PTTL shorter than the one the key had. not_replicated: the write check
    // failed (see set_replicas()); the validity is then no more than it was.
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms = max_span_ms) noexcept;

    // Replica acknowledgement and the router's confirmation, as Lock::set_replicas: after every
    // acquisition (a first one or a re-entry) and every extend the server granted, WAIT for
    // `replicas` replicas (when not 0), then, through a router, its confirmation that the node
    // is still the master. When either fails, the acquisition's count is given back (release():
    // a re-entry leaves the earlier levels held with no more validity than they had), an extend
    // keeps no more validity than it had, and the call returns not_replicated (or the WAIT's
    // error status). Returns ok, or invalid_argument (over Lock::max_replicas).
    Status set_replicas(std::uint32_t replicas) noexcept;
    // How many replicas acknowledged the last WAIT (0 before any, or without a count).
    std::uint32_t replicas_acknowledged() const noexcept { return acknowledged_; }

    // Who holds the key, this owner id's count, and the PTTL, atomically in one round trip.
    // Returns ok, invalid_argument, protocol_error, or connection/error-reply statuses.
    Status query(ReentrantInfo& info) noexcept;

    // Milliseconds this holder may still rely on the lock: ttl - (now - time the confirming
    // acquire or extend request was sent) - drift, where ttl is the TTL the server applied and
    // drift = ttl/100 + 2 ms. 0 when not held.
    std::uint32_t remaining_ms() const noexcept { return hold_.validity().remaining(conn_.port()); }
    bool held() const noexcept { return remaining_ms() > 0; }
    // This owner id's count on the server from the last reply that carried it (acquire,
    // release, query); 0 after a reply showing the key lost.
    std::uint32_t count() const noexcept { return count_; }
    // The owner id: the one given, or the random one made by the first acquire; empty before it.
    std::string_view owner() const noexcept { return hold_.token(); }
    // The owner id while this object holds the lock or an acquisition's outcome is unknown;
    // empty otherwise (e.g. once every level this object acquired has been released).
    std::string_view token() const noexcept {
        return levels_ > 0 || unsure_ ? owner() : std::string_view();
    }
    std::string_view key() const noexcept { return hold_.key(); }
    Connection& connection() const noexcept { return conn_; }

  private:
    Status attempt(std::uint32_t ttl_ms, std::int64_t& holder_ttl) noexcept;
    Status run(std::size_t script, const std::string_view* extra, std::size_t extra_count,
               resp::Reply& reply, Deadline deadline) noexcept;
    Status owner_result(Status s, const resp::Reply& reply, std::int64_t& value) noexcept;
    void drop() noexcept;
    // The write check after a grant (ttl_ms 0; `before`: the validity the earlier levels had) or
    // an extend to ttl_ms, whose request was sent at sent_at with wait_ms to go.
    Status confirmed(std::uint32_t sent_at, std::uint32_t ttl_ms, std::uint32_t wait_ms,
                     const Validity& before) noexcept;

    Connection& conn_;
    Hold hold_;            // the key, the owner id as its token, and the validity
    bool unsure_ = false;  // a first acquisition's outcome is unknown
    std::uint8_t replicas_ = 0;
    std::uint8_t acknowledged_ = 0;
    std::uint32_t levels_ = 0;  // confirmed acquisitions by this object not yet released
    std::uint32_t count_ = 0;
};

}  // namespace resplock

#endif  // RESPLOCK_REENTRANT_LOCK_HPP
