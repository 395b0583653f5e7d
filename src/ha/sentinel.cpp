// The Sentinel router (see resplock/ha/sentinel.hpp).
#include "resplock/ha/sentinel.hpp"

#include "core/outcome.hpp"
#include "core/port_status.hpp"
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

// One round's answers: each sentinel's status (ok: `named` holds the node it named; incomplete:
// not answered yet), when the round started and when its outcome was first settled.
struct Sentinel::Answers {
    Status status[RESPLOCK_MAX_SENTINELS]{};
    Node named[RESPLOCK_MAX_SENTINELS];
    std::uint32_t started_at = 0;
    std::uint32_t settled_at = 0;
    bool settled = false;

    // How many answered, named `node` (master_), or named another node.
    struct Count {
        std::size_t answered = 0;
        std::size_t same = 0;
        std::size_t other = 0;
    };
    Count count(std::size_t n, const Node& node) const noexcept {
        Count c;
        for (std::size_t i = 0; i < n; ++i) {
            if (status[i] == Status::incomplete) continue;
            ++c.answered;
            if (status[i] != Status::ok) continue;
            if (same(named[i], node)) {
                ++c.same;
            } else {
                ++c.other;
            }
        }
        return c;
    }
};

// ---------------------------------------------------------------------------------------------
// Link

void Sentinel::Link::close() noexcept {
    if (open_) port_.close(port_.ctx);
    open_ = false;
    pending_ = false;
}

Status Sentinel::Link::send(const Node& to, const std::string_view* args, std::size_t count,
                            const resplock_port_t& clock, Deadline deadline) noexcept {
    // Bytes waiting before a request answer none of ours (a late reply), and a sentinel that
    // closed the link while it was idle shows up here too: start afresh.
    if (open_ && port_.recv(port_.ctx, reinterpret_cast<std::uint8_t*>(buf_), 1, 0) != 0) close();
    pending_ = false;
    used_ = 0;
    std::size_t len = 0;
    Status s = resp::encode_command(args, count, buf_, sizeof buf_, &len);
    if (s != Status::ok) return s;
    if (!open_) {
        const std::uint32_t left = deadline.remaining(clock);
        if (left == 0) return Status::timeout;
        const std::int32_t r = port_.connect(port_.ctx, to.host, to.port, left);
        // A host name that does not resolve is one more unreachable sentinel.
        if (r != RESPLOCK_PORT_OK) {
            return r == RESPLOCK_PORT_NO_HOST ? Status::connect_failed : detail::port_status(r);
        }
        open_ = true;
    }
    for (std::size_t off = 0; off < len;) {
        const std::uint32_t left = deadline.remaining(clock);
        const std::int32_t n =
            left == 0 ? 0
                      : port_.send(port_.ctx, reinterpret_cast<const std::uint8_t*>(buf_ + off),
                                   len - off, left);
        if (n <= 0 || static_cast<std::size_t>(n) > len - off) {
            close();
            return n < 0 ? detail::port_status(n) : Status::timeout;
        }
        off += static_cast<std::size_t>(n);
    }
    pending_ = true;
    return Status::ok;
}

Status Sentinel::Link::poll(Node& named) noexcept {
    for (;;) {
        Status s = Status::too_large;
        if (used_ < sizeof buf_) {
            const std::int32_t n = port_.recv(
                port_.ctx, reinterpret_cast<std::uint8_t*>(buf_ + used_), sizeof buf_ - used_, 0);
            if (n == 0) return Status::incomplete;  // nothing more yet
            s = n < 0 ? detail::port_status(n) : Status::io_error;
            if (n > 0 && static_cast<std::size_t>(n) <= sizeof buf_ - used_) {
                used_ = static_cast<std::uint16_t>(used_ + n);
                // A short reply parsed from its start each time: no state to keep between polls.
                resp::Value values[3];
                resp::Parser parser(values, 3);
                s = parser.parse(buf_, used_);
                if (s == Status::incomplete) continue;
                if (s == Status::ok && parser.consumed() != used_) s = Status::protocol_error;
                if (s == Status::ok) {
                    pending_ = false;
                    return parse_master_addr(parser.reply(), named);
                }
            }
        }
        close();  // a failed or unreadable reply: the link starts afresh next time
        return s;
    }
}

// ---------------------------------------------------------------------------------------------
// Set-up

Sentinel::Sentinel(std::string_view master_name) noexcept
    : Router(&on_connect, &on_command, &on_write) {
    (void)set_master_name(master_name);
}

void Sentinel::close_links() noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
        if (links_[i] != nullptr) links_[i]->close();
    }
}

bool Sentinel::add(std::string_view host, std::uint16_t port, Link* link) noexcept {
    if (count_ == RESPLOCK_MAX_SENTINELS || !sentinels_[count_].set(host, port)) return false;
    links_[count_] = link;
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

// ---------------------------------------------------------------------------------------------
// Rounds

void Sentinel::ask(Connection& conn, Answers& answers, Stop stop, Deadline deadline) noexcept {
    const resplock_port_t& clock = conn.port();
    answers.started_at = clock.now_ms(clock.ctx);
    answers.settled = false;
    for (std::size_t i = 0; i < count_; ++i)
        answers.status[i] = Status::incomplete;
    if (linked()) {
        ask_all(clock, answers, stop, deadline);
        return;
    }
    const std::string_view args[3] = {"SENTINEL"sv, "get-master-addr-by-name"sv, master_name()};
    for (std::size_t i = 0; i < count_ && !stop(*this, answers, clock); ++i) {
        // Each sentinel gets an equal share of what is left, so that one that does not answer
        // leaves time to ask the others.
        const Deadline share = Deadline::after(
            clock, deadline.remaining(clock) / static_cast<std::uint32_t>(count_ - i));
        Status s = conn.open_bare_link(sentinels_[i].host, sentinels_[i].port, share);
        // A sentinel's host name that does not resolve is one more unreachable sentinel.
        if (s == Status::no_host) s = Status::connect_failed;
        resp::Reply reply;
        if (s == Status::ok) {
            s = conn.follow_up(args, 3, reply, share);
            if (s == Status::ok || (!detail::reply_lost(s) && reply.count != 0)) {
                s = parse_master_addr(reply, answers.named[i]);
            }
        }
        conn.close();
        answers.status[i] = s;
    }
}

void Sentinel::ask_all(const resplock_port_t& clock, Answers& answers, Stop stop,
                       Deadline deadline) noexcept {
    const std::string_view args[3] = {"SENTINEL"sv, "get-master-addr-by-name"sv, master_name()};
    std::size_t pending = 0;
    for (std::size_t i = 0; i < count_; ++i) {
        // A link that must connect gets an equal share of what is left: a host that drops
        // connection attempts leaves time for the others.
        const Deadline share = Deadline::after(
            clock, deadline.remaining(clock) / static_cast<std::uint32_t>(count_ - i));
        const Status s = links_[i]->send(sentinels_[i], args, 3, clock, share);
        if (s == Status::ok) {
            ++pending;
        } else {
            answers.status[i] = s;
        }
    }
    // The replies as they come, none waited for while another may have arrived.
    while (pending != 0 && !stop(*this, answers, clock)) {
        bool progress = false;
        for (std::size_t i = 0; i < count_; ++i) {
            if (!links_[i]->pending_) continue;
            const Status s = links_[i]->poll(answers.named[i]);
            if (s == Status::incomplete) continue;
            answers.status[i] = s;
            --pending;
            progress = true;
        }
        if (progress) continue;
        if (deadline.remaining(clock) == 0) break;
        clock.sleep_ms(clock.ctx, 1);
    }
    // A reply still awaited would answer a later request: those links start afresh, and the
    // sentinel counts as silent.
    for (std::size_t i = 0; i < count_; ++i) {
        if (!links_[i]->pending_) continue;
        links_[i]->close();
        answers.status[i] = Status::timeout;
    }
}

bool Sentinel::linked() const noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
        if (links_[i] == nullptr) return false;
    }
    return count_ != 0;
}

// Asks the sentinels; the first address given wins (after a round that found master_ moved, a
// node other than master_ is preferred among the answers at hand).
Status Sentinel::resolve(Connection& conn, Node& found, Deadline deadline) noexcept {
    unknown_ = false;
    resolved_ = false;
    Answers answers;
    ask(
        conn, answers,
        [](const Sentinel& self, Answers& a, const resplock_port_t&) noexcept {
            for (std::size_t i = 0; i < self.count_; ++i) {
                if (a.status[i] == Status::ok) return true;
            }
            return false;
        },
        deadline);
    tried_ = 0;
    Status link = Status::connect_failed;  // why the last unreachable sentinel failed
    Status replied = Status::ok;           // what the last sentinel that answered badly said
    const Node* first = nullptr;
    for (std::size_t i = 0; i < count_; ++i) {
        const Status s = answers.status[i];
        if (s == Status::incomplete) continue;  // not asked: an answer came before
        tried_ = static_cast<std::uint8_t>(i + 1);
        if (s == Status::ok) {
            if (first == nullptr || (moved_ && same(*first, master_))) first = &answers.named[i];
        } else if (s == Status::no_host) {
            unknown_ = true;
        } else if (detail::reply_lost(s) || s == Status::connect_failed) {
            link = s;
        } else {
            replied = s;
        }
    }
    if (linked()) tried_ = count_;
    if (first != nullptr) {
        found = *first;
        resolved_ = true;
        return Status::ok;
    }
    if (unknown_) return Status::no_host;
    if (replied != Status::ok) return replied;
    return deadline.remaining(conn.port()) == 0 && link == Status::connect_failed ? Status::timeout
                                                                                  : link;
}

Status Sentinel::still_master(Connection& conn, Deadline deadline) noexcept {
    named_ = 0;
    moved_ = false;
    if (master_.port == 0) return Status::not_replicated;
    Answers answers;
    ask(
        conn, answers,
        [](const Sentinel& self, Answers& a, const resplock_port_t& clock) noexcept {
            const Answers::Count c = a.count(self.count_, self.master_);
            if (c.other != 0) return true;  // moved: settled
            if (c.answered == self.count_) return true;
            // Settled once a majority named the node, or can no longer: the others then get as
            // long again as that took, and at least confirm_grace_ms, to name another node (and
            // to be counted in the figures a message shows).
            const std::size_t half = self.count_ / 2U;
            if (c.same <= half && c.answered - c.same <= self.count_ - (half + 1)) return false;
            const std::uint32_t now = clock.now_ms(clock.ctx);
            if (!a.settled) {
                a.settled = true;
                a.settled_at = now;
            }
            std::uint32_t grace = a.settled_at - a.started_at;
            if (grace < confirm_grace_ms) grace = confirm_grace_ms;
            return now - a.settled_at >= grace;
        },
        deadline);
    const Answers::Count c = answers.count(count_, master_);
    named_ = static_cast<std::uint8_t>(c.same);
    // A failover moved the master elsewhere: a write dies with the node's demotion.
    moved_ = c.other != 0;
    checked_at_ = conn.port().now_ms(conn.port().ctx);
    return !moved_ && c.same > count_ / 2U ? Status::ok : Status::not_replicated;
}

// ---------------------------------------------------------------------------------------------
// The router's hooks

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
            self.moved_ = false;
            // A fresh resolution counts as a check of the node until the next one is due.
            self.checked_at_ = port.now_ms(port.ctx);
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
    const Status s = self.still_master(conn, deadline);
    // Named elsewhere: what follows (the give-back of a grant) goes to the current master.
    if (self.moved_) conn.close();
    return s;
}

Status Sentinel::on_command(Router& router, Connection& conn, const std::string_view* args,
                            std::size_t count, resp::Reply& reply, Deadline deadline) noexcept {
    // The Router is this Sentinel: only Sentinel's constructor passes these functions.
    auto& self = static_cast<Sentinel&>(router);  // NOLINT(*-static-cast-downcast)
    const resplock_port_t& port = conn.port();
    // The node of an open link not checked for recheck_ms: the sentinels first, with a quarter
    // of the time. Named elsewhere, the link goes and the send below resolves the new master.
    if (conn.connected() && self.master_.port != 0 &&
        port.now_ms(port.ctx) - self.checked_at_ >= recheck_ms) {
        (void)self.still_master(conn, Deadline::after(port, deadline.remaining(port) / 4));
        if (self.moved_) conn.close();
    }
    for (unsigned sends = 0;; ++sends) {
        const Status s = round_trip(conn, args, count, reply, deadline);
        // -READONLY: the node is a replica now and refused the write; the next send() resolves
        // the master again.
        if (s != Status::read_only || sends == RESPLOCK_MAX_REDIRECTS ||
            deadline.remaining(port) == 0) {
            return s;
        }
        conn.close();
    }
}

}  // namespace resplock
