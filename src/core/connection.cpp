#include "resplock/core/connection.hpp"

#include "core/port_status.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/core/router.hpp"

namespace resplock {

using namespace std::string_view_literals;

namespace {

using detail::port_status;

// The first words of the error replies with a status of their own: those of auth_required to
// wrong_type, in the order of those statuses; then NOREPLICAS (no_replicas); every word after it
// is try_again.
constexpr std::string_view error_words =
    "NOAUTH WRONGPASS NOPERM NOSCRIPT READONLY LOADING BUSY "
    "OOM WRONGTYPE NOREPLICAS CLUSTERDOWN TRYAGAIN ";
static_assert(static_cast<int>(Status::wrong_type) - static_cast<int>(Status::auth_required) == 8,
              "error_words follows the status list");

// A NUL-terminated string as a view, counted here up to `limit` bytes (the buffer's size: a longer
// one could not be sent anyway). std::string_view's own constructor calls strlen, and so does an
// unbounded loop once the compiler sees the idiom: that would pull the C library's strlen
// (hundreds of bytes on a Cortex-M) into a firmware.
std::string_view text_of(const char* s, std::size_t limit) noexcept {
    std::size_t n = 0;
    while (n < limit && s[n] != '\0')
        ++n;
    return {s, n};
}

}  // namespace

Status classify_error(std::string_view message) noexcept {
    int index = static_cast<int>(Status::auth_required);
    // How many bytes of the current word in error_words match the message so far; `mismatch`
    // once a byte differs (no message is that long). A loop of its own rather than memcmp: the C
    // library's would come into every firmware for this one call.
    constexpr std::size_t mismatch = ~std::size_t{0};
    std::size_t matched = 0;
    for (const char c : error_words) {
        if (c != ' ') {
            const bool same = matched < message.size() && message[matched] == c;
            matched = same ? matched + 1 : mismatch;
            continue;
        }
        if (matched == message.size() || (matched < message.size() && message[matched] == ' ')) {
            constexpr int last_in_order = static_cast<int>(Status::wrong_type);
            if (index <= last_in_order) return static_cast<Status>(index);
            return index == last_in_order + 1 ? Status::no_replicas : Status::try_again;
        }
        matched = 0;
        ++index;
    }
    return Status::server_error;
}

// values_ are written by the parser before anything reads them: zeroing them would cost flash.
// NOLINTBEGIN(cppcoreguidelines-pro-type-member-init)
// cppcheck-suppress uninitMemberVar
Connection::Connection(const resplock_port_t& port, const ConnectionConfig& config, char* buffer,
                       std::size_t buffer_size) noexcept
    : port_(port),
      config_(config),
      buf_(buffer),
      size_(buffer_size),
      parser_(values_, RESPLOCK_MAX_REPLY_VALUES) {}
// NOLINTEND(cppcoreguidelines-pro-type-member-init)

void Connection::close() noexcept {
    if (connected_) port_.close(port_.ctx);
    connected_ = false;
}

Status Connection::broken(Status s) noexcept {
    close();
    return s;
}

Status Connection::command(const std::string_view* args, std::size_t count, resp::Reply& reply,
                           Deadline deadline) noexcept {
    if (config_.router != nullptr) return routed(args, count, reply, deadline);
    const Status s = send(args, count, deadline);
    return s != Status::ok ? s : receive(reply, deadline);
}

// Out of line, so that the router's longer call costs the plain path no stack.
Status Connection::routed(const std::string_view* args, std::size_t count, resp::Reply& reply,
                          Deadline deadline) noexcept {
    return config_.router->command(*this, args, count, reply, deadline);
}

namespace {

// connect(), spelled out in send() too: a frame of its own would sit on the deepest call path of
// every request that reconnects.
inline __attribute__((always_inline)) Status link(Connection& conn, Deadline deadline) noexcept {
    const ConnectionConfig& config = conn.config();
    if (config.router != nullptr) return config.router->connect(conn, deadline);
    return conn.open_link(config.host, config.port, deadline);
}

}  // namespace

Status Connection::send(const std::string_view* args, std::size_t count,
                        Deadline deadline) noexcept {
    request_sent_ = false;
    if (args == nullptr || count == 0) return Status::invalid_argument;
    // Bytes waiting before a request is sent answer no request of ours (a late reply), and a
    // server that closed the connection while it was idle shows up here too: start afresh.
    if (connected_ && port_.recv(port_.ctx, reinterpret_cast<std::uint8_t*>(buf_), 1, 0) != 0) {
        close();
    }
    if (!connected_) {
        const Status s = link(*this, deadline);
        request_sent_ = false;
        if (s != Status::ok) return s;
    }
    return transmit(args, count, deadline);
}

Status Connection::connect(Deadline deadline) noexcept {
    return link(*this, deadline);
}

// Inlined into open_link(), its one caller: a frame of its own would sit on the deepest call
// path of every request that reconnects.
inline __attribute__((always_inline)) Status Connection::handshake(Deadline deadline) noexcept {
    resp::Reply reply;
    if (config_.password != nullptr) {
        // AUTH user password, or AUTH password: the last two of {AUTH, AUTH, password}.
        std::string_view auth[3] = {"AUTH"sv, "AUTH"sv, text_of(config_.password, size_)};
        const bool user = config_.username != nullptr;
        if (user) auth[1] = text_of(config_.username, size_);
        Status s = transmit(auth + (user ? 0 : 1), user ? 3 : 2, deadline);
        if (s == Status::ok) s = receive(reply, deadline);
        // Any error reply to AUTH (WRONGPASS, or "invalid password" from servers before ACLs)
        // means the credentials were refused, unless the server is still loading.
        if (s != Status::ok && error_reply_) {
            return s == Status::loading ? s : Status::auth_failed;
        }
        if (s != Status::ok) return s;
    }
    if (config_.db != 0) {
        char digits[10];
        const std::size_t len = resp::format_decimal(config_.db, digits);
        const std::string_view select[2] = {"SELECT"sv, {digits, len}};
        const Status s = transmit(select, 2, deadline);
        return s != Status::ok ? s : receive(reply, deadline);
    }
    return Status::ok;
}

Status Connection::open_link(const char* host, std::uint16_t port, Deadline deadline) noexcept {
    Status s = open_bare_link(host, port, deadline);
    if (s != Status::ok) return s;
    s = handshake(deadline);
    if (s == Status::ok && config_.observer != nullptr)
        s = config_.observer->connected(*this, deadline);
    return s != Status::ok ? broken(s) : s;
}

Status Connection::open_bare_link(const char* host, std::uint16_t port,
                                  Deadline deadline) noexcept {
    close();
    const std::uint32_t left = deadline.remaining(port_);
    if (left == 0) return Status::timeout;
    const std::int32_t r = port_.connect(port_.ctx, host, port, left);
    if (r != RESPLOCK_PORT_OK) return port_status(r);
    connected_ = true;
    return Status::ok;
}

Status Connection::transmit(const std::string_view* args, std::size_t count,
                            Deadline deadline) noexcept {
    error_reply_ = false;  // the request overwrites the buffer
    std::size_t len = 0;
    const Status s = resp::encode_command(args, count, buf_, size_, &len);
    if (s != Status::ok) return s;
    std::size_t off = 0;
    while (off < len) {
        // Each failure leaves the loop with its status: one call closes the connection for all.
        const std::uint32_t left = deadline.remaining(port_);
        Status failed = Status::timeout;
        if (left == 0) return broken(failed);
        const std::int32_t n = port_.send(
            port_.ctx, reinterpret_cast<const std::uint8_t*>(buf_ + off), len - off, left);
        failed = n < 0 ? port_status(n) : Status::io_error;
        if (n < 0 || static_cast<std::size_t>(n) > len - off) return broken(failed);
        if (n > 0) request_sent_ = true;
        off += static_cast<std::size_t>(n);
    }
    return Status::ok;
}

Status Connection::receive(resp::Reply& reply, Deadline deadline, bool prefix) noexcept {
    reply = {};

    parser_.reset(prefix);
    std::size_t used = 0;
    // Each failure leaves the loop with its status: one call closes the connection for all.
    Status s = Status::ok;
    for (;;) {
        if (used == size_) used = parser_.compact(buf_, used);
        s = Status::too_large;
        if (used == size_) break;
        const std::uint32_t left = deadline.remaining(port_);
        s = Status::timeout;
        if (left == 0) break;
        const std::int32_t n =
            port_.recv(port_.ctx, reinterpret_cast<std::uint8_t*>(buf_ + used), size_ - used, left);
        if (n < 0) {
            s = port_status(n);
            break;
        }
        if (n == 0) continue;
        s = Status::io_error;
        if (static_cast<std::size_t>(n) > size_ - used) break;
        used += static_cast<std::size_t>(n);
        s = parser_.parse(buf_, used);
        if (s == Status::incomplete) continue;
        if (s != Status::ok) break;
        // One request, one reply: bytes beyond it mean the stream is out of step.
        if (parser_.consumed() != used) {
            s = Status::protocol_error;
            break;
        }
        reply = parser_.reply();
        error_reply_ = reply.top().is(resp::Type::error);
        if (error_reply_) return classify_error(reply.top().text());
        return Status::ok;
    }
    return broken(s);
}

}  // namespace resplock
