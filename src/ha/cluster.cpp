// Redis Cluster redirections (see resplock/ha/cluster.hpp).
#include "resplock/ha/cluster.hpp"

#include "core/outcome.hpp"
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

const char* Cluster::host_of(const Node& node, const Connection& conn) noexcept {
    return node.host[0] != '\0' ? node.host : conn.config().host;
}

Status Cluster::on_connect(Router& self, Connection& conn, Deadline deadline) noexcept {
    // The Router is this Cluster: only Cluster's constructor passes these functions.
    auto& cluster = static_cast<Cluster&>(self);  // NOLINT(*-static-cast-downcast)
    Node& home = cluster.node_;
    cluster.asked_ = Node{};
    if (home.port != 0) {
        const Status s = conn.open_link(host_of(home, conn), home.port, deadline);
        if (s != Status::connect_failed && s != Status::no_host && s != Status::timeout) return s;
        // Gone or frozen (e.g. a failed master): ask the configured node again, now if time is
        // left, else on the next call.
        home = Node{};
    }
    return conn.open_link(conn.config().host, conn.config().port, deadline);
}

Status Cluster::on_command(Router& self, Connection& conn, const std::string_view* args,
                           std::size_t count, resp::Reply& reply, Deadline deadline) noexcept {
    // The Router is this Cluster: only Cluster's constructor passes these functions.
    auto& cluster = static_cast<Cluster&>(self);  // NOLINT(*-static-cast-downcast)
    Node& home = cluster.node_;
    Node& ask = cluster.asked_;
    // The link stayed on the node of the last ASK, for a follow-up there (a WAIT): a new command
    // goes back to the remembered node.
    if (ask.port != 0) conn.close();
    bool asking = false;  // the next try follows an ASK to `ask`
    ask = Node{};
    for (std::uint32_t redirects = 0;;) {
        Status s = Status::ok;
        const Node& here = asking ? ask : home;  // the node that answers (port 0: configured)
        if (asking) {
            // ASKING then the command, both on the ASK node.
            static constexpr std::string_view asking_args[1] = {"ASKING"sv};
            s = conn.open_link(host_of(ask, conn), ask.port, deadline);
            if (s == Status::ok) s = conn.follow_up(asking_args, 1, reply, deadline);
            if (s == Status::ok && !reply.top().equals("OK"sv)) {
                conn.close();
                s = Status::protocol_error;
            }
            if (s == Status::ok) s = conn.follow_up(args, count, reply, deadline);
        } else {
            s = round_trip(conn, args, count, reply, deadline);
            // A reply lost on the remembered node (frozen, failed over): ask the configured node
            // next time. The command itself is not sent again: it may have run.
            if (detail::reply_lost(s)) home = Node{};
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
        if (r.host.empty()) {
            // The node that answered; an empty host stands for the configured one (which may be
            // longer than a Node holds).
            target = Node{here.port != 0 ? here : Node{}};
            target.port = r.port;
        } else {
            // At most RESPLOCK_MAX_HOST_LEN bytes without NUL (parse_redirect): set() takes it.
            target.set(r.host, r.port);
        }
        asking = r.ask;
        if (const Observer* observer = conn.config().observer) {
            observer->report({RESPLOCK_EVENT_redirect, RESPLOCK_STATUS_ok, r.slot, redirects,
                              text.data(), text.size()});
        }
        if (!r.ask) {
            ask = Node{};
            conn.close();  // the next send() connects to the remembered node
        }
    }
}

}  // namespace resplock
