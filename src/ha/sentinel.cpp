// The Sentinel router (see resplock/ha/sentinel.hpp).
#include "resplock/ha/sentinel.hpp"

#include "core/outcome.hpp"
#include "ha/decimal.hpp"

namespace resplock {

using namespace std::string_view_literals;

namespace {

// Failures of a master candidate that may pass while a failover goes on: ask the sentinels again.
bool passing(Status s) noexcept {
    switch (s) {
        case Status::read_only:
        case Status::loading:
        case Status::server_busy:
        case Status::connect_failed:
        case Status::no_host:
        case Status::closed:
        case Status::io_error:
        case Status::timeout:
            return true;
        default:
            return false;
    }
}

// Whether two nodes have the same host text and port.
bool same(const Node& a, const Node& b) noexcept {
    if (a.port != b.port) return false;
    std::size_t i = 0;
    for (; a.host[i] != '\0'; ++i) {
        if (a.host[i] != b.host[i]) return false;
    }
    return b.host[i] == '\0';
}

}  // namespace

Sentinel::Sentinel(std::string_view master_name) noexcept
    : Router(&on_connect, &on_command, &on_write) {
    (void)set_master_name(master_name);
}

bool Sentinel::add(std::string_view host, std::uint16_t port) noexcept {
    if (count_ == RESPLOCK_MAX_SENTINELS || !sentinels_[count_].set(host, port)) return false;
    ++count_;
    return true;
}

bool Sentinel::set_master_name(std::string_view name) noexcept {
    if (!Node::copy(name, name_)) return false;
    name_len_ = static_cast<std::uint8_t>(name.size());
    return true;
}

Status Sentinel::parse_master_addr(const resp::Reply& reply, Node& out) noexcept {
    if (reply.count == 0) return Status::protocol_error;
    const resp::Value& top = reply.top();
    if (top.is(resp::Type::nil_array) || top.is(resp::Type::nil_bulk)) return Status::no_host;
    if (top.is(resp::Type::error)) return classify_error(top.text());
    if (!top.is(resp::Type::array) || top.size != 2 || reply.count != 3) {
        return Status::protocol_error;
    }
    const resp::Value& host = reply.values[1];
    const resp::Value& port = reply.values[2];
    std::uint16_t number = 0;
    if (!host.is(resp::Type::bulk_string) || !port.is(resp::Type::bulk_string) ||
        !detail::parse_port(port.text(), number) || !out.set(host.text(), number)) {
        return Status::protocol_error;
    }
    return Status::ok;
}

Status Sentinel::parse_role(const resp::Reply& reply) noexcept {
    if (reply.count < 2 || !reply.top().is(resp::Type::array) || reply.top().size == 0) {
        return Status::protocol_error;
    }
    const resp::Value& role = reply.values[1];
    if (!role.is(resp::Type::bulk_string) && !role.is(resp::Type::simple_string)) {
        return Status::protocol_error;
    }
    return role.equals("master"sv) ? Status::ok : Status::read_only;
}

// Asks the sentinels in order; the first address given wins.
Status Sentinel::resolve(Connection& conn, Node& found, Deadline deadline) noexcept {
    const std::string_view args[3] = {"SENTINEL"sv, "get-master-addr-by-name"sv, master_name()};
    tried_ = 0;
    unknown_ = false;
    resolved_ = false;
    Status link = Status::connect_failed;  // why the last unreachable sentinel failed
    Status replied = Status::ok;           // what the last sentinel that answered badly said
    for (std::size_t i = 0; i < count_; ++i) {
        if (deadline.remaining(conn.port()) == 0) {
            link = Status::timeout;
            break;
        }
        tried_ = static_cast<std::uint8_t>(i + 1);
        Status s = conn.open_bare_link(sentinels_[i].host, sentinels_[i].port, deadline);
        bool spoke = false;  // the sentinel answered (whatever it said)
        if (s == Status::ok) {
            resp::Reply reply;
            s = conn.follow_up(args, 3, reply, deadline);
            spoke = !detail::reply_lost(s);
            if (spoke && reply.count != 0) s = parse_master_addr(reply, found);
            conn.close();
            if (s == Status::ok) {
                resolved_ = true;
                return s;
            }
        }
        if (!spoke) {
            // A sentinel's host name that does not resolve is one more unreachable sentinel:
            // no_host stays the answer "unknown master name".
            link = s == Status::no_host ? Status::connect_failed : s;
        } else if (s == Status::no_host) {
            unknown_ = true;
        } else {
            replied = s;
        }
    }
    if (unknown_) return Status::no_host;
    return replied != Status::ok ? replied : link;
}

// Connects to node (with the handshake) and asks it its ROLE.
Status Sentinel::confirm(Connection& conn, const Node& node, Deadline deadline) noexcept {
    Status s = conn.open_link(node.host, node.port, deadline);
    // A host name that does not resolve is one more unreachable node: no_host stays the answer
    // "unknown master name".
    if (s == Status::no_host) return Status::connect_failed;
    if (s != Status::ok) return s;
    const std::string_view role[1] = {"ROLE"sv};
    resp::Reply reply;
    // Its first values only: a master's reply lists every replica, so it grows with the set.
    s = conn.follow_up(role, 1, reply, deadline, true);
    if (s == Status::ok) s = parse_role(reply);
    if (s != Status::ok) conn.close();
    return s;
}

Status Sentinel::on_connect(Router& router, Connection& conn, Deadline deadline) noexcept {
    // The Router is this Sentinel: only Sentinel's constructor passes these functions.
    auto& self = static_cast<Sentinel&>(router);  // NOLINT(*-static-cast-downcast)
    if (self.name_len_ == 0 || self.count_ == 0) return Status::invalid_argument;
    const resplock_port_t& port = conn.port();
    bool saw_replica = false;
    Status s = Status::timeout;
    for (;;) {
        Node found;
        s = self.resolve(conn, found, deadline);
        if (s != Status::ok) break;
        s = self.confirm(conn, found, deadline);
        if (s == Status::ok) {
            self.master_ = found;
            break;
        }
        saw_replica = saw_replica || s == Status::read_only;
        if (!passing(s)) break;
        const std::uint32_t left = deadline.remaining(port);
        if (left == 0) break;
        port.sleep_ms(port.ctx, left < retry_pause_ms ? left : retry_pause_ms);
        if (deadline.remaining(port) == 0) break;
    }
    if (s != Status::ok && saw_replica && passing(s)) s = Status::read_only;
    return s;
}

Status Sentinel::on_write(Router& router, Connection& conn, Deadline deadline) noexcept {
    // The Router is this Sentinel: only Sentinel's constructor passes these functions.
    auto& self = static_cast<Sentinel&>(router);  // NOLINT(*-static-cast-downcast)
    const std::string_view args[3] = {"SENTINEL"sv, "get-master-addr-by-name"sv,
                                      self.master_name()};
    const resplock_port_t& port = conn.port();
    self.named_ = 0;  // sentinels that name the node that took the write
    self.moved_ = false;
    for (std::size_t i = 0; i < self.count_ && self.master_.port != 0; ++i) {
        // Each sentinel gets an equal share of what is left, so that one that does not answer
        // leaves time to ask the others.
        const Deadline share = Deadline::after(
            port, deadline.remaining(port) / static_cast<std::uint32_t>(self.count_ - i));
        Status s = conn.open_bare_link(self.sentinels_[i].host, self.sentinels_[i].port, share);
        resp::Reply reply;
        if (s == Status::ok) s = conn.follow_up(args, 3, reply, share);
        Node named_node;
        if (s == Status::ok) s = parse_master_addr(reply, named_node);
        conn.close();
        if (s != Status::ok) continue;  // unreachable, or no answer to count
        // A failover moved the master elsewhere: the write dies with the node's demotion.
        if (!same(named_node, self.master_)) {
            self.moved_ = true;
            return Status::not_replicated;
        }
        ++self.named_;
    }
    return self.named_ > self.count_ / 2U ? Status::ok : Status::not_replicated;
}

Status Sentinel::on_command(Router& /*router*/, Connection& conn, const std::string_view* args,
                            std::size_t count, resp::Reply& reply, Deadline deadline) noexcept {
    for (unsigned sends = 0;; ++sends) {
        const Status s = round_trip(conn, args, count, reply, deadline);
        // -READONLY: the node is a replica now and refused the write; the next send() resolves
        // the master again.
        if (s != Status::read_only || sends == RESPLOCK_MAX_REDIRECTS ||
            deadline.remaining(conn.port()) == 0) {
            return s;
        }
        conn.close();
    }
}

}  // namespace resplock
