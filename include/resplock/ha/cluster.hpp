// A Router for Redis Cluster: give a Cluster to a ConnectionConfig (config.router) and every
// command of that connection follows the cluster's redirections, so config.host:port may name any
// node of the cluster. Implemented in src/ha/cluster.cpp, linked only by a program that makes one.
//
//   -MOVED <slot> <host>:<port>  the slot lives on that node: the Cluster remembers it, connects
//                                to it and sends the command again there. Later commands go to the
//                                remembered node first.
//   -ASK <slot> <host>:<port>    the slot is being migrated and this key is already there: on
//                                that node, ASKING (expects +OK) and then the command, once; the
//                                remembered node does not change. The connection stays on the ASK
//                                node for a follow-up (Connection::follow_up: the WAIT of a
//                                replica-acknowledged lock counts the write there); the next
//                                command goes back to the remembered node.
//
// An empty host (`MOVED 3999 :6380`) is the node that answered, whatever the length of its name.
// A remembered node whose reply is lost (timeout, closed: frozen, powered off, failed over) or
// that cannot be reached is forgotten: the next command asks config.host:port again, which
// redirects to the slot's current master.
//
// At most RESPLOCK_MAX_REDIRECTS redirections per command, all before the command's deadline.
// A redirection is followed only because its reply shows the node did not run the command; a
// command whose reply was lost is never sent again. No slot table: one remembered node, in fixed
// storage (the host text of a redirection is at most RESPLOCK_MAX_HOST_LEN bytes).
#ifndef RESPLOCK_CLUSTER_HPP
#define RESPLOCK_CLUSTER_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/connection.hpp"
#include "resplock/core/router.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

// One redirection as the server sends it (the text of the error reply, without the '-').
struct Redirect {
    bool ask = false;         // ASK (this command only), else MOVED
    std::uint16_t slot = 0;   // 0..16383
    std::string_view host{};  // empty: the node that answered
    std::uint16_t port = 0;   // 1..65535
};

// Parses "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>" (single spaces; the port
// after the last ':', so an IPv6 host needs no brackets). Returns ok; server_error when the text
// is no redirection at all (another error reply); protocol_error for a malformed one (a slot
// over 16383 or not decimal, a missing or zero port, a port over 65535, missing or extra parts, a
// NUL or space in the host); too_large for a host over RESPLOCK_MAX_HOST_LEN bytes.
Status parse_redirect(std::string_view text, Redirect& out) noexcept;

class Cluster : public Router {
  public:
    // Starts at config.host:port of the connection it is given to.
    Cluster() noexcept;

    // The remembered node: the last MOVED target, or port 0 while there is none (the
    // connection's config.host:port is used). An empty host with a port is config.host at that
    // port (a redirection that named no host, answered by the configured node).
    const Node& node() const noexcept { return node_; }
    // The node of the ASK the last command followed, which the connection is still on (port 0:
    // none; the last command went to node()). Same empty-host rule.
    const Node& asked() const noexcept { return asked_; }
    // A node's host as a NUL-terminated name: its own, or config.host for an empty one.
    static const char* host_of(const Node& node, const Connection& conn) noexcept;

    // Forgets the remembered node: the next connect goes to config.host:port.
    void reset() noexcept { node_ = Node{}; }

    // What a Connection with this router returns from command(), beyond its own statuses:
    //   too_many_redirects: the reply was still a redirection after RESPLOCK_MAX_REDIRECTS of
    //     them (a loop, or a cluster still resharding): the command was not run where it was
    //     sent last; error_text() holds that redirection;
    //   protocol_error: a malformed redirection, or a reply to ASKING that is neither +OK nor an
    //     error (the connection is closed);
    //   too_large: a redirection to a host over RESPLOCK_MAX_HOST_LEN bytes (the connection is
    //     closed; the command was not run there);
    //   an error reply to ASKING: its status (e.g. server_error), error_text() its text.
    // connect(): the remembered node, then config.host:port if the remembered node cannot be
    // reached (connect_failed, no_host, timeout: forgotten) and the deadline allows.

  private:
    static Status on_connect(Router& self, Connection& conn, Deadline deadline) noexcept;
    static Status on_command(Router& self, Connection& conn, const std::string_view* args,
                             std::size_t count, resp::Reply& reply, Deadline deadline) noexcept;

    Node node_;
    Node asked_;
};

}  // namespace resplock

#endif  // RESPLOCK_CLUSTER_HPP
