// The write check of every lock kind that can demand replica acknowledgement: after a granted
// acquisition or renewal, WAIT for the replicas asked for, then the router's confirmation
// (Connection::confirm_write: a Sentinel's master must still be the one the sentinels name); when
// either fails, an acquisition is given back and a renewal keeps no more validity than the hold
// had before it. Internal: not installed.
#ifndef RESPLOCK_WRITE_CHECK_HPP
#define RESPLOCK_WRITE_CHECK_HPP

#include <cstdint>

#include "resplock/core/connection.hpp"
#include "resplock/core/hold.hpp"
#include "resplock/core/status.hpp"

namespace resplock::detail {

// WAIT `replicas` (when not 0) on the connection that carried the write (Connection::follow_up:
// no reconnect, no redirection; WAIT counts only the writes of its own connection), with a
// timeout of half of what is left before `deadline` (the rest is for its reply), never 0 (WAIT 0
// blocks for ever); then the router's confirmation. Returns ok when both pass; not_replicated
// when fewer replicas acknowledged, when no count came back (reply lost, not sent, the link that
// carried the write gone, no time left) or when the router does not confirm; an error reply's
// status; protocol_error for a WAIT reply that is not a count. `acknowledged` receives the count
// (0 without one), at most 255.
Status check_write(Connection& conn, std::uint8_t replicas, Deadline deadline,
                   std::uint8_t& acknowledged) noexcept;

// After a granted acquisition (ttl_ms 0) or a renewal to ttl_ms of `lock`, whose request was sent
// at sent_at with wait_ms to go: check_write() within that request's deadline. When it fails, an
// acquisition is released again (lock.release(): the token stays only if that release failed),
// a renewal keeps no more validity than it had (the earlier of the old end and the new one), and
// the connection is closed so that the next command finds its node afresh (through a router:
// the current master). Returns check_write()'s answer.
template <class L>
Status settle(L& lock, Connection& conn, Hold& hold, std::uint8_t replicas,
              std::uint8_t& acknowledged, std::uint32_t sent_at, std::uint32_t ttl_ms,
              std::uint32_t wait_ms) noexcept {
    const Status s = check_write(conn, replicas, Deadline::after(sent_at, wait_ms), acknowledged);
    if (s == Status::ok) return s;
    if (ttl_ms == 0) {
        (void)lock.release();
    } else {
        hold.validity().renewal_unconfirmed(sent_at, ttl_ms);
    }
    conn.close();
    return s;
}

}  // namespace resplock::detail

#endif  // RESPLOCK_WRITE_CHECK_HPP
