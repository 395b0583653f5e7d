// A Router that finds the master of a Redis Sentinel deployment and follows its failovers.
//
// Connecting asks the sentinels `SENTINEL get-master-addr-by-name NAME` (on a bare connection: no
// AUTH, no SELECT), connects to the address the first one gives (with the connection's AUTH,
// SELECT and Observer) and confirms with `ROLE` that the node is a master. A node that is not
// (yet) one, or that cannot be reached, is asked again after a short pause: sentinels lag behind a
// failover for a moment. Every connect resolves afresh, so a lost connection finds the current
// master. A command refused with -READONLY (the node was demoted to a replica: the write did not
// happen) closes the connection, resolves again and is re-sent, at most RESPLOCK_MAX_REDIRECTS
// times. Everything happens within the one deadline of the call.
//
// A write counts only while the node that took it is the master the sentinels name: after a
// lock is granted or renewed (Connection::confirm_write), the sentinels are asked again; the
// write is confirmed when more than half of the configured sentinels name that node and none
// that answered names another, and is otherwise not_replicated (the lock then treats it as lost:
// see Lock::set_replicas). This catches the old master of a planned failover (SENTINEL
// FAILOVER), which stays a master for seconds after its replica was promoted; it cannot catch a
// write in the moment between the promotion and the sentinels noticing it (about a second;
// Lock::set_replicas closes that), nor a master cut off from the sentinels (see docs/ha.md).
// Between writes, a command sent more than recheck_ms after the last confirmation asks the
// sentinels first (with at most a quarter of the command's time): when one names another node,
// the connection moves to the current master before the command goes out, so that a waiter
// (whose busy attempts write nothing to confirm) follows a failover within about recheck_ms.
//
// Two ways to reach the sentinels:
//   - Over the connection itself (the default): the sentinels are asked one after another, each
//     with an equal share of the time left, and the connection to the master is closed for it
//     (the next command reconnects). A sentinel that does not answer (a hung host that accepts
//     connections) costs its share of every resolution and confirmation.
//   - Over links of their own (add() with a Link: a transport of its own for each sentinel):
//     every sentinel is asked at once and the links stay open between rounds. A resolution takes
//     the first good answer; a confirmation ends when every sentinel answered, at once when one
//     names another node, and otherwise once a majority named the node (or can no longer) and
//     the others had as long again as that took (at least confirm_grace_ms).
//     A frozen or black-holed sentinel then costs nothing while a majority of those listed
//     answers (a link's connect still takes up to an equal share of the time left when the
//     sentinel's host drops connection attempts), and the master's connection stays open.
//
//     resplock::Sentinel sentinel("mymaster");
//     sentinel.add("10.0.0.2", 26379);
//     sentinel.add("10.0.0.3", 26379);
//     resplock::ConnectionConfig config;
//     config.router = &sentinel;  // config.host and config.port are then not used
//
// The sentinels' host names and the master name are copied into the object (fixed storage: up to
// RESPLOCK_MAX_SENTINELS sentinels, each host and the name up to RESPLOCK_MAX_HOST_LEN bytes); the
// caller's strings need not outlive the calls that pass them. One Sentinel serves one Connection.
//
// Statuses of connect() (and of a command that had to connect), besides the connection's own:
//   connect_failed (or timeout): no sentinel could be reached (a sentinel's host name that does
//       not resolve counts as unreachable); tried() tells how many were tried;
//   no_host: the sentinels that answered do not know the master name (name_unknown() is true);
//   another status of a sentinel's reply (an error reply such as auth_required, protocol_error
//       for a reply of the wrong shape): no sentinel gave an address and the last one that
//       answered said this;
//   read_only: a node was found but never confirmed as master before the deadline;
//   a failure to connect to the master (connect_failed, also for a host name that does not
//       resolve; timeout, ...) that lasted until the deadline, or its handshake's failure
//       (auth_failed, no_permission: at once, no retry);
//   an error reply to ROLE other than LOADING / BUSY (e.g. no_permission): at once.
// command() returns the command's statuses; read_only after RESPLOCK_MAX_REDIRECTS re-sends.
#ifndef RESPLOCK_SENTINEL_HPP
#define RESPLOCK_SENTINEL_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/core/router.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

class Sentinel final : public Router {
  public:
    // Pause between two resolutions while the sentinels point at a node that is not a master
    // (or cannot be reached), cut to what is left of the deadline.
    static constexpr std::uint32_t retry_pause_ms = 100;
    // How long after the last confirmation a command asks the sentinels again before it goes
    // out (see above).
    static constexpr std::uint32_t recheck_ms = 1000;
    // Over links: the least time the sentinels that have not answered get once a confirmation's
    // outcome is settled (as long again as settling took, when that is longer).
    static constexpr std::uint32_t confirm_grace_ms = 10;

    // A link of its own to one sentinel (see add()): the port of a transport context that serves
    // nothing else (a port holds one connection: never the master connection's own), and room
    // for one request and its reply. Caller-owned, it must outlive the Sentinel; its connection
    // is closed by the Sentinel's destructor or its own.
    class Link {
      public:
        explicit Link(const resplock_port_t& port) noexcept : port_(port) {}
        ~Link() { close(); }
        Link(const Link&) = delete;
        Link& operator=(const Link&) = delete;

      private:
        friend class Sentinel;
        // Connects if needed (a link the peer closed, or with bytes that answer nothing, starts
        // afresh) and sends args, before `deadline` on `clock` (the connection's port: the
        // router's one clock). ok, or the status of the failure (the link is then closed).
        Status send(const Node& to, const std::string_view* args, std::size_t count,
                    const resplock_port_t& clock, Deadline deadline) noexcept;
        // Reads what has arrived of the reply, without waiting: incomplete while more is to
        // come; else the reply's status, parsed into `named` by parse_master_addr() (the link is
        // closed unless the reply was whole and alone).
        Status poll(Node& named) noexcept;
        void close() noexcept;

        resplock_port_t port_;
        std::uint16_t used_ = 0;  // bytes of the reply read so far
        bool open_ = false;
        bool pending_ = false;  // a request is out, its reply not yet read
        // The longest request: SENTINEL get-master-addr-by-name with a name of
        // RESPLOCK_MAX_HOST_LEN bytes; the longest reply of interest: an address of that length.
        char buf_[RESPLOCK_MAX_HOST_LEN + 64]{};
    };

    // master_name: as the sentinels know it (`sentinel monitor NAME ...`); copied. A name that is
    // empty, longer than RESPLOCK_MAX_HOST_LEN bytes or holds a NUL leaves the router without one:
    // every connect then fails with invalid_argument.
    explicit Sentinel(std::string_view master_name = {}) noexcept;
    ~Sentinel() { close_links(); }
    Sentinel(const Sentinel&) = delete;
    Sentinel& operator=(const Sentinel&) = delete;

    // Adds a sentinel, with a Link of its own or none (null). The sentinels are asked all at once
    // when every one of them has a Link, else one after another over the connection (see
    // above). False, adding nothing, when RESPLOCK_MAX_SENTINELS are there already, or for an
    // empty or too long host, or port 0.
    bool add(std::string_view host, std::uint16_t port, Link* link = nullptr) noexcept;
    // Replaces the master name (same rules as the constructor's); false if refused.
    bool set_master_name(std::string_view name) noexcept;
    // Closes the links' connections (the destructor does too); a link reconnects when next used.
    void close_links() noexcept;

    std::string_view master_name() const noexcept { return {name_, name_len_}; }
    std::size_t count() const noexcept { return count_; }
    const Node& sentinel(std::size_t i) const noexcept { return sentinels_[i]; }

    // What the last resolution found, for messages. tried(): how many sentinels it asked (in
    // order from the first; over links, all of them; a sentinel that could not be reached
    // counts). name_unknown(): some sentinel answered that it does not know the master name.
    // resolved(): a sentinel gave an address. master(): the node the last connect reached and
    // confirmed (port 0: none yet).
    std::size_t tried() const noexcept { return tried_; }
    bool name_unknown() const noexcept { return unknown_; }
    bool resolved() const noexcept { return resolved_; }
    const Node& master() const noexcept { return master_; }
    // What the last confirmation of a write found: how many sentinels named master(), and
    // whether one named another node (a failover moved the master). A write counts when more
    // than count() / 2 named it and none another.
    std::size_t confirmations() const noexcept { return named_; }
    bool master_moved() const noexcept { return moved_; }

    // The parts of a resolution, over replies already received (exposed for tests and fuzzing).
    // The reply to SENTINEL get-master-addr-by-name: ok (a [host, port] array: copied into
    // `out`), no_host (nil: the name is unknown), else protocol_error or the error reply's status.
    static Status parse_master_addr(const resp::Reply& reply, Node& out) noexcept;
    // The reply to ROLE (its first values at least: it may have been read as a prefix): ok if
    // its first element is "master", read_only for another role, protocol_error for any other
    // shape.
    static Status parse_role(const resp::Reply& reply) noexcept;

  private:
    // The sentinels' answers to one round of SENTINEL get-master-addr-by-name.
    struct Answers;
    // Whether the answers so far settle a round (a Stop of ask_all()).
    using Stop = bool (*)(const Sentinel& self, Answers& answers,
                          const resplock_port_t& clock) noexcept;

    static Status on_connect(Router& self, Connection& conn, Deadline deadline) noexcept;
    static Status on_command(Router& self, Connection& conn, const std::string_view* args,
                             std::size_t count, resp::Reply& reply, Deadline deadline) noexcept;
    static Status on_write(Router& self, Connection& conn, Deadline deadline) noexcept;
    // Whether every sentinel has a Link.
    bool linked() const noexcept;
    // One round: every sentinel asked at once over its link (linked()), or one after another
    // over conn, each with an equal share of the time left; until `stop` says the answers
    // settle it, every sentinel answered, or `deadline`.
    void ask(Connection& conn, Answers& answers, Stop stop, Deadline deadline) noexcept;
    void ask_all(const resplock_port_t& clock, Answers& answers, Stop stop,
                 Deadline deadline) noexcept;
    Status resolve(Connection& conn, Node& found, Deadline deadline) noexcept;
    Status confirm(Connection& conn, const Node& node, Deadline deadline) noexcept;
    // Whether the sentinels still name master_ (a confirmation round): ok, or not_replicated
    // (moved_ tells whether one named another node).
    Status still_master(Connection& conn, Deadline deadline) noexcept;

    Node sentinels_[RESPLOCK_MAX_SENTINELS];
    Link* links_[RESPLOCK_MAX_SENTINELS] = {};
    Node master_;
    char name_[RESPLOCK_MAX_HOST_LEN + 1] = {};
    std::uint32_t checked_at_ = 0;  // port time of the last round or resolution
    std::uint8_t name_len_ = 0;
    std::uint8_t count_ = 0;
    std::uint8_t tried_ = 0;
    std::uint8_t named_ = 0;
    bool unknown_ = false;
    bool resolved_ = false;
    bool moved_ = false;
};

}  // namespace resplock

#endif  // RESPLOCK_SENTINEL_HPP
