// Redis Cluster redirections (see resplock/ha/cluster.hpp).
#include "resplock/ha/cluster.hpp"

#include "ha/decimal.hpp"
#include "resplock/core/event.h"
#include "resplock/core/observer.hpp"

namespace resplock {

using namespace std::string_view_literals;

namespace {

constexpr std::uint32_t slot_count = 16384;

// text[from, from + n), n cut to what is there; from <= text.size(). (string_view::substr() would
// bring the library's out_of_range throw into a firmware.)
std::string_view slice(std::string_view text, std::size_t from,
                       std::size_t n = std::string_view::npos) noexcept {
    const std::size_t left = text.size() - from;
    return {text.data() + from, n < left ? n : left};
}

}  // namespace

Status parse_redirect(std::string_view text, Redirect& out) noexcept {
    Redirect r;
    if (slice(text, 0, 6) == "MOVED "sv) {
        text = slice(text, 6);
    } else if (slice(text, 0, 4) == "ASK "sv) {
        r.ask = true;
        text = slice(text, 4);
    } else {
        return Status::server_error;
    }
    const std::size_t space = text.find(' ');
    if (space == std::string_view::npos) return Status::protocol_error;
    std::uint32_t slot = 0;
    if (!detail::parse_decimal(slice(text, 0, space), slot_count - 1, slot)) {
        return Status::protocol_error;
    }
    const std::string_view address = slice(text, space + 1);
    const std::size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return Status::protocol_error;
    std::uint16_t port = 0;
    if (!detail::parse_port(slice(address, colon + 1), port)) return Status::protocol_error;
    const std::string_view host = slice(address, 0, colon);
    // A loop, not std::any_of: less flash on a Cortex-M.
    for (const char c : host) {
        // cppcheck-suppress useStlAlgorithm
        if (c == ' ' || c == '\0') return Status::protocol_error;
    }
    if (host.size() > RESPLOCK_MAX_HOST_LEN) return Status::too_large;
    r.slot = static_cast<std::uint16_t>(slot);
    r.host = host;
    r.port = port;
    out = r;
    return Status::ok;
}

Cluster::Cluster() noexcept : Router(&Cluster::on_connect, &Cluster::on_command) {}

Status Cluster::on_connect(Router& self, Connection& conn, Deadline deadline) noexcept {
    // The Router is this Cluster: only Cluster's constructor passes these functions.
    Node& home = static_cast<Cluster&>(self).node_;  // NOLINT(*-static-cast-downcast)
    if (home.port != 0) {
        const Status s = open(conn, home.host, home.port, deadline);
        if (s != Status::connect_failed && s != Status::no_host) return s;
        home = Node{};  // gone (e.g. a failed master): ask the configured node again
    }
    return open(conn, conn.config().host, conn.config().port, deadline);
}

Status Cluster::on_command(Router& self, Connection& conn, const std::string_view* args,
                           std::size_t count, resp::Reply& reply, Deadline deadline) noexcept {
    // The Router is this Cluster: only Cluster's constructor passes these functions.
    Node& home = static_cast<Cluster&>(self).node_;  // NOLINT(*-static-cast-downcast)
    Node ask;  // the target of an ASK to follow next (port 0: none)
    for (std::uint32_t redirects = 0;;) {
        // The node that answers, for a redirection that names no host.
        const char* here = ask.host;
        Status s = Status::ok;
        if (ask.port != 0) {
            // ASKING then the command, both on the ASK node; the connection is closed after
            // either, so that the next command goes back to the remembered node.
            static constexpr std::string_view asking[1] = {"ASKING"sv};
            s = open(conn, ask.host, ask.port, deadline);
            if (s == Status::ok) s = exchange(conn, asking, 1, reply, deadline);
            if (s == Status::ok && !reply.top().equals("OK"sv)) s = Status::protocol_error;
            if (s == Status::ok) s = exchange(conn, args, count, reply, deadline);
            ask.port = 0;
            conn.close();
        } else {
            s = round_trip(conn, args, count, reply, deadline);
            here = home.port != 0 ? home.host : conn.config().host;  // where send() connected
        }
        if (s != Status::server_error) return s;
        const std::string_view text = conn.error_text();
        Redirect r;
        const Status parsed = parse_redirect(text, r);
        if (parsed == Status::server_error) return s;  // an error reply of its own
        if (parsed != Status::ok) {
            conn.close();
            return parsed;
        }
        if (++redirects > RESPLOCK_MAX_REDIRECTS) return Status::too_many_redirects;
        Node& target = r.ask ? ask : home;
        // A host of at most RESPLOCK_MAX_HOST_LEN bytes without NUL (parse_redirect) and a
        // non-zero port: set() takes it; an empty host is the node that answered.
        if (r.host.empty()) {
            target.set(here, r.port);
        } else {
            target.set(r.host, r.port);
        }
        if (const Observer* observer = conn.config().observer) {
            observer->report({RESPLOCK_EVENT_redirect, RESPLOCK_STATUS_ok, r.slot, redirects,
                              text.data(), text.size()});
        }
        if (!r.ask) conn.close();  // the next send() connects to the remembered node
    }
}

}  // namespace resplock
