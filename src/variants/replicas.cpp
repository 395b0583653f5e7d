// Replica-acknowledged locks: WAIT after a granted acquisition or extend (Lock::set_replicas).
// Its own object, reached from the core only through the pointer set_replicas() installs, so a
// firmware that never asks for acknowledgements links none of it.
#include "core/lock_rules.hpp"
#include "resplock/core/lock.hpp"

namespace resplock {

using namespace std::string_view_literals;

Status Lock::set_replicas(std::uint32_t replicas) noexcept {
    if (replicas > max_replicas) return Status::invalid_argument;
    // A firmware that never calls this keeps replicate_ null: the core then never reads these.
    replicas_ = static_cast<std::uint8_t>(replicas);
    acknowledged_ = 0;
    replicate_ = replicas != 0 ? &Lock::replicated : nullptr;
    return Status::ok;
}

Status Lock::replicated(Lock& lock, std::uint32_t sent_at, std::uint32_t ttl_ms,
                        std::uint32_t wait_ms) noexcept {
    Connection& conn = lock.conn_;
    const resplock_port_t& port = conn.port();
    // The deadline of the request just answered: the WAIT and its reply fit inside it.
    const Deadline deadline = Deadline::after(sent_at, wait_ms);
    lock.acknowledged_ = 0;
    // WAIT's own timeout takes half of what is left, so that its reply (sent by the server once
    // the timeout ends) still arrives inside the call's deadline. Never 0: WAIT 0 blocks for ever.
    const std::uint32_t timeout_ms = deadline.remaining(port) / 2;
    Status s = Status::not_replicated;  // no time left for a WAIT: nothing acknowledged
    if (timeout_ms != 0) {
        char count_text[10];
        char wait_text[10];
        const std::string_view args[3] = {
            "WAIT"sv,
            {count_text, resp::format_decimal(lock.replicas_, count_text)},
            {wait_text, resp::format_decimal(timeout_ms, wait_text)}};
        resp::Reply reply;
        s = conn.command(args, 3, reply, deadline);
        if (s == Status::ok) {
            const resp::Value& v = reply.top();
            if (!v.is(resp::Type::integer) || v.integer < 0) {
                s = Status::protocol_error;
            } else {
                lock.acknowledged_ = static_cast<std::uint8_t>(
                    v.integer < max_replicas ? v.integer : std::int64_t{max_replicas});
                if (v.integer < lock.replicas_) s = Status::not_replicated;
            }
        } else if (detail::reply_lost(s) || !conn.request_sent()) {
            // No count came back (or the WAIT never went out): none is known to have acknowledged.
            s = Status::not_replicated;
        }
        // Anything else is an error reply (refused by an ACL, sent to a replica, ...) or a
        // malformed one: its own status.
    }
    if (s == Status::ok) return s;
    if (ttl_ms == 0) {
        // An acquisition not acknowledged: the lock is not held. Give it back, so that no other
        // party waits for its TTL; the token stays only if this release failed.
        (void)lock.release();
    } else {
        // The extend ran on the master but may be lost with it: rely on no more than the
        // validity the lock had before it, nor than the new TTL.
        lock.validity_.renewal_unconfirmed(sent_at, ttl_ms);
    }
    return s;
}

}  // namespace resplock
