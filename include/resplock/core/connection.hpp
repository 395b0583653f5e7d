// One connection to one Redis server: a caller-owned buffer, one round trip at a time, the AUTH /
// SELECT handshake, and reconnection after any fault. Knows nothing of locks.
#ifndef RESPLOCK_CONNECTION_HPP
#define RESPLOCK_CONNECTION_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/port.h"
#include "resplock/core/resp.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

class Observer;
class Router;

struct ConnectionConfig {
    const char* host = "127.0.0.1";  // NUL-terminated name or address; must outlive the Connection
    std::uint16_t port = 6379;
    const char* username = nullptr;  // ACL user name (AUTH user password); null: AUTH password
    const char* password = nullptr;  // null: no AUTH is sent
    std::uint32_t db = 0;            // SELECT db after connecting when non-zero
    // Budget of one call: reconnect, handshake and round trip(s). Values above max_span_ms are
    // taken as max_span_ms.
    std::uint32_t timeout_ms = 2000;
    // Optional: reports connect, reconnect and the retries of the locks over this connection,
    // and sends a client name on each connect (see "resplock/core/observer.hpp"). Must outlive
    // the Connection. Null: none (the default).
    const Observer* observer = nullptr;
    // Optional: decides which node the connection talks to (a Redis Cluster's redirections, a
    // master found through Sentinel; see "resplock/core/router.hpp"); host and port are then
    // not used. Must outlive the Connection and serve only it. Null: always host:port.
    Router* router = nullptr;
};

// Longest span the library measures on the port's 32-bit clock (2^31 - 1 ms, about 24.8 days):
// a longer one could not be told from a span in the past. Longer timeouts are cut to it.
inline constexpr std::uint32_t max_span_ms = 0x7fffffffU;

// Wrap-safe deadline on the port's 32-bit millisecond clock.
struct Deadline {
    std::uint32_t at_ms;

    // `ms` from now; more than max_span_ms counts as max_span_ms.
    __attribute__((always_inline)) static Deadline after(const resplock_port_t& port,
                                                         std::uint32_t ms) noexcept {
        return after(port.now_ms(port.ctx), ms);
    }
    // `ms` from the port time now_ms (a reading the caller needs as well: one clock read).
    static Deadline after(std::uint32_t now_ms, std::uint32_t ms) noexcept {
        return {now_ms + (ms < max_span_ms ? ms : max_span_ms)};
    }
    // Milliseconds left (0 once passed).
    __attribute__((always_inline)) std::uint32_t remaining(
        const resplock_port_t& port) const noexcept {
        const auto left = static_cast<std::int32_t>(at_ms - port.now_ms(port.ctx));
        return left > 0 ? static_cast<std::uint32_t>(left) : 0U;
    }
    // Milliseconds since the deadline passed (0 while it has not).
    __attribute__((always_inline)) std::uint32_t overdue(
        const resplock_port_t& port) const noexcept {
        const auto late = static_cast<std::int32_t>(port.now_ms(port.ctx) - at_ms);
        return late > 0 ? static_cast<std::uint32_t>(late) : 0U;
    }
};

class Connection {
  public:
    // `buffer` holds each request and then its reply; it bounds the largest reply. The port and
    // config are copied; the buffer, the port's context and config.host/username/password must
    // outlive the Connection. No I/O happens until the first call.
    Connection(const resplock_port_t& port, const ConnectionConfig& config, char* buffer,
               std::size_t buffer_size) noexcept;
    ~Connection() { close(); }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Sends one command (an array of bulk strings) and reads its reply, connecting first if
    // needed, all before `deadline`. The reply's views stay valid until the next call. An open
    // connection is first checked without waiting: if the server closed it while it was idle,
    // or bytes that answer no request are waiting, it is replaced by a new one. With a
    // config.router, the router runs the command instead (and may follow redirections).
    // Returns:
    //   ok: a reply that is not an error;
    //   server_error, auth_required, auth_failed, no_permission, no_script, read_only, loading,
    //   server_busy, out_of_memory, wrong_type, try_again, no_replicas: an error reply
    //   (reply.top() holds its text; see classify_error());
    //   timeout, closed, io_error, protocol_error (malformed reply, or bytes after it), too_large
    //   (reply larger than the buffer): the connection is closed and the next call reconnects;
    //   request_sent() tells whether the server may have received the command;
    //   no_host, connect_failed, and the handshake's failures (timeout, an error reply to SELECT
    //   classified as above, auth_failed for any error reply to AUTH but LOADING): the command
    //   was not sent, and request_sent() is false;
    //   too_large with request_sent() false: the request does not fit the buffer (not sent);
    //   invalid_argument: no argument given.
    Status command(const std::string_view* args, std::size_t count, resp::Reply& reply,
                   Deadline deadline) noexcept;

    // command() in two steps, so that one caller can send to several servers before reading
    // any reply; command() is send() then receive(). A router only picks the node these connect
    // to: a redirection in the reply is returned as the error reply it is. send() checks the idle
    // connection, reconnects if needed, encodes and sends, all before `deadline`. Returns ok (the
    // command is out), or command()'s statuses for those stages: invalid_argument, too_large (does
    // not fit: not sent), no_host, connect_failed, the handshake's failures, and timeout / closed /
    // io_error while sending (the connection is closed; request_sent() tells whether any byte
    // went out).
    Status send(const std::string_view* args, std::size_t count, Deadline deadline) noexcept;
    // Reads the reply to the command send() sent, before `deadline`, and classifies it. Call it
    // once after each send() that returned ok, and only then: the connection holds one request
    // in flight. Returns command()'s statuses for the reply: ok, an error-reply status, or
    // timeout, closed, io_error, protocol_error, too_large (the connection is then closed).
    // With `prefix`, a reply of any length is read (see resp::Parser::reset): the reply holds its
    // first RESPLOCK_MAX_REPLY_VALUES values, and too_large means only that one value dropped on
    // the way did not fit the buffer.
    Status receive(resp::Reply& reply, Deadline deadline, bool prefix = false) noexcept;

    // One more request on the link that carried the last one, and its reply: never reconnects
    // and never goes through the router, so it reaches the very node that answered (a WAIT counts
    // only the writes of its own connection). With `prefix`, as receive(). Returns receive()'s
    // statuses, too_large / invalid_argument as send(), or closed with request_sent() false when
    // that link is gone (closed since, or never opened).
    Status follow_up(const std::string_view* args, std::size_t count, resp::Reply& reply,
                     Deadline deadline, bool prefix = false) noexcept {
        request_sent_ = false;
        if (!connected_) {
            error_reply_ = false;
            return Status::closed;
        }
        const Status s = transmit(args, count, deadline);
        return s != Status::ok ? s : receive(reply, deadline, prefix);
    }

    // After a write this connection carried and the server granted (a lock taken or renewed):
    // whether the node that took it is still the one the router writes to, before `deadline`.
    // ok without a router, or when the router has no such check (a Cluster); a Sentinel asks
    // the sentinels (see "resplock/ha/sentinel.hpp") and returns not_replicated when they name
    // another master or cannot tell: the write will not last. Defined in
    // "resplock/core/router.hpp".
    Status confirm_write(Deadline deadline) noexcept;

    // command() with a deadline of config().timeout_ms from now.
    Status command(const std::string_view* args, std::size_t count, resp::Reply& reply) noexcept {
        return command(args, count, reply, Deadline::after(port_, config_.timeout_ms));
    }

    // Connects and runs the handshake now (it otherwise happens on the first command), to
    // config.host:port or where config.router says. Returns ok, or the statuses of command()'s
    // connect and handshake stage.
    Status connect(Deadline deadline) noexcept;

    // Closes the transport; the next call reconnects.
    void close() noexcept;

    // The text of the error reply the last command received (e.g. "ERR unknown command"), or
    // empty if it received none. A view into the buffer, valid until the next command.
    std::string_view error_text() const noexcept {
        return error_reply_ ? values_[0].text() : std::string_view();
    }

    bool connected() const noexcept { return connected_; }
    // Whether any byte of the last command reached the transport (its outcome may be unknown).
    bool request_sent() const noexcept { return request_sent_; }
    const resplock_port_t& port() const noexcept { return port_; }
    const ConnectionConfig& config() const noexcept { return config_; }
    std::size_t buffer_size() const noexcept { return size_; }

    // The link API: for a Router (resplock/core/router.hpp), which picks the node a connection
    // talks to, and for the Observer, which runs on every new link. Applications use connect(),
    // command() and close().
    //
    // Opens a link to host:port (closing any earlier one) and runs the handshake on it: AUTH,
    // SELECT, the Observer's part. `host` must stay valid during the call only. Returns connect()'s
    // statuses; the link is closed on any failure.
    Status open_link(const char* host, std::uint16_t port, Deadline deadline) noexcept;
    // The same without the handshake: a bare link to host:port (e.g. to a Sentinel, which takes
    // neither the master's AUTH nor SELECT). A request right after either goes out with
    // follow_up(): no look at the idle link first, so never a reconnect.
    Status open_bare_link(const char* host, std::uint16_t port, Deadline deadline) noexcept;
    // Records that a link passed its handshake and was announced; returns whether one had been
    // before (the Observer reports reconnect, else connect). Called by the Observer only.
    bool note_link() noexcept {
        const bool before = linked_before_;
        linked_before_ = true;
        return before;
    }

  private:
    // command() through config.router.
    Status routed(const std::string_view* args, std::size_t count, resp::Reply& reply,
                  Deadline deadline) noexcept;
    // Encodes and sends a request on the current link, as it is.
    Status transmit(const std::string_view* args, std::size_t count, Deadline deadline) noexcept;
    // AUTH and SELECT on a new link.
    Status handshake(Deadline deadline) noexcept;
    // Closes the link after a fault and returns `s`.
    Status broken(Status s) noexcept;

    // The flags first (a short byte load reaches 31 B), the reply's values last: every field
    // stays within a short load's reach (see Hold).
    bool connected_ = false;
    bool request_sent_ = false;
    bool error_reply_ = false;
    bool linked_before_ = false;  // note_link(): the next link is a reconnect
    resplock_port_t port_;
    ConnectionConfig config_;
    char* buf_;
    std::size_t size_;
    resp::Parser parser_;
    resp::Value values_[RESPLOCK_MAX_REPLY_VALUES];
};

// The status an error reply maps to, from its first word (NOAUTH, WRONGPASS, NOPERM, NOSCRIPT,
// READONLY, LOADING, BUSY, OOM, WRONGTYPE, NOREPLICAS; CLUSTERDOWN and TRYAGAIN are try_again);
// server_error for any other.
Status classify_error(std::string_view message) noexcept;

}  // namespace resplock

#endif  // RESPLOCK_CONNECTION_HPP
