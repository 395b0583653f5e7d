// The write check after a granted acquisition or extend: WAIT for replicas (Lock::set_replicas),
// then the router's confirmation. Its own object, reached from the core only through the pointer
// that set_replicas() or a Router installs, so a firmware with neither links none of it.
#include "core/lock_rules.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/router.hpp"

namespace resplock {

using namespace std::string_view_literals;

Status Lock::set_replicas(std::uint32_t replicas) noexcept {
    if (replicas > max_replicas) return Status::invalid_argument;
    replicas_ = static_cast<std::uint8_t>(replicas);
    acknowledged_ = 0;
    check_ = replicas != 0 || conn_.config().router != nullptr ? &Lock::settle : nullptr;
    return Status::ok;
}

Lock::WriteCheck Lock::write_check() noexcept {
    return &Lock::settle;
}

namespace {

// WAIT `replicas` on the connection that carried the write (Connection::follow_up: no
// reconnect, no redirection; WAIT counts only the writes of its own connection), with a timeout
// of half of what is left before `deadline` (the rest is for its reply, sent once the timeout
// ends), never 0: WAIT 0 blocks for ever. Returns ok when at least `replicas` acknowledged,
// not_replicated when fewer did, when no count came back (reply lost, not sent, or the link that
// carried the write is gone) or when no time was left; an error reply's status; protocol_error
// for a reply that is not a count. `acknowledged` receives the count (0 without one).
Status wait_for(Connection& conn, std::uint8_t replicas, Deadline deadline,
                std::uint8_t& acknowledged) noexcept {
    acknowledged = 0;
    const std::uint32_t timeout_ms = deadline.remaining(conn.port()) / 2;
    if (timeout_ms == 0) return Status::not_replicated;
    char count_text[10];
    char wait_text[10];
    const std::string_view args[3] = {"WAIT"sv,
                                      {count_text, resp::format_decimal(replicas, count_text)},
                                      {wait_text, resp::format_decimal(timeout_ms, wait_text)}};
    resp::Reply reply;
    const Status s = conn.follow_up(args, 3, reply, deadline);
    if (s == Status::ok) {
        const resp::Value& v = reply.top();
        if (!v.is(resp::Type::integer) || v.integer < 0) return Status::protocol_error;
        acknowledged = static_cast<std::uint8_t>(
            v.integer < Lock::max_replicas ? v.integer : std::int64_t{Lock::max_replicas});
        return v.integer < replicas ? Status::not_replicated : Status::ok;
    }
    // No count came back (or the WAIT never went out): none is known to have acknowledged.
    // Anything else is an error reply (refused by an ACL, sent to a replica, ...): its status.
    return detail::reply_lost(s) || !conn.request_sent() ? Status::not_replicated : s;
}

}  // namespace

Status Lock::settle(Lock& lock, std::uint32_t sent_at, std::uint32_t ttl_ms,
                    std::uint32_t wait_ms) noexcept {
    // The deadline of the request just answered: the WAIT and the confirmation fit inside it.
    const Deadline deadline = Deadline::after(sent_at, wait_ms);
    Status s = lock.replicas_ != 0
                   ? wait_for(lock.conn_, lock.replicas_, deadline, lock.acknowledged_)
                   : Status::ok;
    if (s == Status::ok) s = lock.conn_.confirm_write(deadline);
    if (s == Status::ok) return s;
    if (ttl_ms == 0) {
        // An acquisition that will not last is not held. Give it back, so that no other party
        // waits for its TTL; the token stays only if this release failed.
        (void)lock.release();
    } else {
        // The extend ran but may be lost: rely on no more than the validity the lock had before
        // it, nor than the new TTL.
        lock.validity_.renewal_unconfirmed(sent_at, ttl_ms);
    }
    lock.conn_.close();
    return s;
}

}  // namespace resplock
