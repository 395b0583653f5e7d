// The WAIT and the router's confirmation after a write (see write_check.hpp). Linked only by a
// program that asks for replicas or uses a router.
#include "core/write_check.hpp"

#include "core/outcome.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/core/router.hpp"

namespace resplock::detail {

using namespace std::string_view_literals;

namespace {

constexpr std::uint8_t max_acknowledged = 255;

Status wait_for(Connection& conn, std::uint8_t replicas, Deadline deadline,
                std::uint8_t& acknowledged) noexcept {
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
            v.integer < max_acknowledged ? v.integer : std::int64_t{max_acknowledged});
        return v.integer < replicas ? Status::not_replicated : Status::ok;
    }
    // No count came back (or the WAIT never went out): none is known to have acknowledged.
    // Anything else is an error reply (refused by an ACL, sent to a replica, ...): its status.
    return reply_lost(s) || !conn.request_sent() ? Status::not_replicated : s;
}

}  // namespace

Status check_write(Connection& conn, std::uint8_t replicas, Deadline deadline,
                   std::uint8_t& acknowledged) noexcept {
    acknowledged = 0;
    const Status s = replicas != 0 ? wait_for(conn, replicas, deadline, acknowledged) : Status::ok;
    return s == Status::ok ? conn.confirm_write(deadline) : s;
}

}  // namespace resplock::detail
