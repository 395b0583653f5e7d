// A Router that finds the master of a Redis Sentinel deployment and follows its failovers.
//
// Connecting asks the sentinels in the order they were added `SENTINEL get-master-addr-by-name
// NAME` (on a bare connection: no AUTH, no SELECT), connects to the address the first one gives
// (with the connection's AUTH, SELECT and Observer) and confirms with `ROLE` that the node is a
// master. A node that is not (yet) one, or that cannot be reached, is asked again after a short
// pause: sentinels lag behind a failover for a moment. Every connect resolves afresh, so a lost
// connection finds the current master. A command refused with -READONLY (the node was demoted to
// a replica: the write did not happen) closes the connection, resolves again and is re-sent, at
// most RESPLOCK_MAX_REDIRECTS times. Everything happens within the one deadline of the call.
//
// A write counts only while the node that took it is the master the sentinels name: after a
// lock is granted or renewed (Connection::confirm_write), every configured sentinel is asked
// again (each with an equal share of the time left); the write is confirmed when more than half
// of them name that node and none names another, and is otherwise not_replicated (the lock then
// treats it as lost: see Lock::set_replicas). This catches the old master of a planned failover
// (SENTINEL FAILOVER), which stays a master for seconds after its replica was promoted; it
// cannot catch a write in the moment between the promotion and the sentinels noticing it (about
// a second; Lock::set_replicas closes that), nor a master cut off from the sentinels (see
// docs/ha.md). The check leaves the connection closed: each confirmed write costs a connection
// to each sentinel and, at the next command, a new connection to the master.
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

    // master_name: as the sentinels know it (`sentinel monitor NAME ...`); copied. A name that is
    // empty, longer than RESPLOCK_MAX_HOST_LEN bytes or holds a NUL leaves the router without one:
    // every connect then fails with invalid_argument.
    explicit Sentinel(std::string_view master_name = {}) noexcept;

    // Adds a sentinel (asked after those added before). False, adding nothing, when
    // RESPLOCK_MAX_SENTINELS are there already, or for an empty or too long host, or port 0.
    bool add(std::string_view host, std::uint16_t port) noexcept;
    // Replaces the master name (same rules as the constructor's); false if refused.
    bool set_master_name(std::string_view name) noexcept;

    std::string_view master_name() const noexcept { return {name_, name_len_}; }
    std::size_t count() const noexcept { return count_; }
    const Node& sentinel(std::size_t i) const noexcept { return sentinels_[i]; }

    // What the last resolution found, for messages. tried(): how many sentinels it asked, in
    // order from the first (a sentinel that could not be reached counts). name_unknown(): some
    // sentinel answered that it does not know the master name. resolved(): a sentinel gave an
    // address. master(): the node the last connect reached and confirmed (port 0: none yet).
    std::size_t tried() const noexcept { return tried_; }
    bool name_unknown() const noexcept { return unknown_; }
    bool resolved() const noexcept { return resolved_; }
    const Node& master() const noexcept { return master_; }
    // What the last confirmation of a write found: how many sentinels named master() (in order,
    // until one named another node), and whether one named another node (a failover moved the
    // master). A write counts when more than count() / 2 named it and none another.
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
    static Status on_connect(Router& self, Connection& conn, Deadline deadline) noexcept;
    static Status on_command(Router& self, Connection& conn, const std::string_view* args,
                             std::size_t count, resp::Reply& reply, Deadline deadline) noexcept;
    static Status on_write(Router& self, Connection& conn, Deadline deadline) noexcept;
    Status resolve(Connection& conn, Node& found, Deadline deadline) noexcept;
    Status confirm(Connection& conn, const Node& node, Deadline deadline) noexcept;

    Node sentinels_[RESPLOCK_MAX_SENTINELS];
    Node master_;
    char name_[RESPLOCK_MAX_HOST_LEN + 1] = {};
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
