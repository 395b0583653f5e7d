#include "core/retry.hpp"

namespace resplock::detail {

using namespace std::string_view_literals;

Status block(Connection& conn, std::string_view list, std::uint32_t ms, Deadline until,
             bool& refused, resp::Value* popped) noexcept {
    const resplock_port_t& port = conn.port();
    // Seconds with three decimals: never 0 (ms >= 1), which would block forever.
    char seconds[16];
    std::size_t len = resp::format_decimal(ms / 1000, seconds, 10);
    seconds[len++] = '.';
    const std::uint32_t frac = ms % 1000;
    seconds[len++] = static_cast<char>('0' + frac / 100);
    seconds[len++] = static_cast<char>('0' + frac / 10 % 10);
    seconds[len++] = static_cast<char>('0' + frac % 10);
    const std::string_view args[3] = {"BLPOP"sv, list, {seconds, len}};
    const std::uint32_t longest = ms + blpop_late_ms + conn.config().timeout_ms;
    const std::uint32_t left = until.remaining(port);
    resp::Reply reply;
    const Status s =
        conn.command(args, 3, reply, Deadline::after(port, longest < left ? longest : left));
    if (s == Status::ok) {
        const resp::Value* v = reply.values;
        // [list, value]: pushed by a release (nil: the block timed out).
        if (reply.count != 3 || !v[0].is(resp::Type::array) || v[0].size != 2 ||
            !v[1].is(resp::Type::bulk_string) || !v[1].equals(list)) {
            return Status::busy;
        }
        if (popped != nullptr) *popped = v[2];
        return Status::ok;
    }
    if (conn.request_sent() && !conn.error_text().empty()) refused = true;
    return s;
}

}  // namespace resplock::detail
