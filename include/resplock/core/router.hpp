// Which node a Connection talks to when that is not one fixed server: a Redis Cluster's
// redirections (MOVED / ASK) and a master found through Redis Sentinel. Optional, like the
// Observer: a Connection without a Router pays one null check per connect and one per command. This
// is only the interface the Connection calls; the routers themselves live in "resplock/ha/"
// (src/ha/), linked only by a program that makes one.
#ifndef RESPLOCK_ROUTER_HPP
#define RESPLOCK_ROUTER_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/core/status.hpp"

namespace resplock {

// A node's address as a router keeps it: the host text copied into fixed storage.
struct Node {
    char host[RESPLOCK_MAX_HOST_LEN + 1] = {};  // NUL-terminated
    std::uint16_t port = 0;

    // Copies host (no NUL inside, 1..RESPLOCK_MAX_HOST_LEN bytes) and port (non-zero). Returns
    // false, leaving the node unchanged, for anything else.
    bool set(std::string_view name, std::uint16_t number) noexcept {
        if (number == 0 || !copy(name, host)) return false;
        port = number;
        return true;
    }

    // Copies `name` into `to` (RESPLOCK_MAX_HOST_LEN + 1 bytes), NUL-terminated, when it is
    // 1..RESPLOCK_MAX_HOST_LEN bytes without NUL; returns false, writing nothing, otherwise.
    // Also for other names a router keeps (a Sentinel's master name).
    static bool copy(std::string_view name, char* to) noexcept {
        if (name.empty() || name.size() > RESPLOCK_MAX_HOST_LEN) return false;
        // A loop, not std::any_of: less flash on a Cortex-M.
        for (const char c : name) {
            // cppcheck-suppress useStlAlgorithm
            if (c == '\0') return false;
        }
        for (std::size_t i = 0; i < name.size(); ++i)
            to[i] = name[i];
        to[name.size()] = '\0';
        return true;
    }
};

class Router {
  public:
    Router(const Router&) = delete;
    Router& operator=(const Router&) = delete;

    // Called by Connection::connect() in place of connecting to config.host:config.port: picks
    // the node and connects to it (Connection::open_link), all before `deadline`. Returns
    // connect()'s statuses.
    Status connect(Connection& conn, Deadline deadline) noexcept {
        return connect_(*this, conn, deadline);
    }
    // Called by Connection::command() in its place: the round trip of args (conn.send() then
    // conn.receive()), and whatever the reply asks for before the command counts as done (e.g.
    // a redirection: the same args again on another node), all before `deadline`. Returns
    // command()'s statuses, plus any the router documents (e.g. too_many_redirects).
    Status command(Connection& conn, const std::string_view* args, std::size_t count,
                   resp::Reply& reply, Deadline deadline) noexcept {
        return command_(*this, conn, args, count, reply, deadline);
    }

    // Called by Connection::confirm_write(), after a write this connection carried was granted:
    // ok when the node conn talked to is still the one to write to, before `deadline`; else
    // not_replicated (the write will not last). ok for a router without such a check.
    Status confirm_write(Connection& conn, Deadline deadline) noexcept {
        return confirm_ != nullptr ? confirm_(*this, conn, deadline) : Status::ok;
    }
    // The check every Lock on this router's connection runs after a granted acquisition or
    // extend (Lock::write_check: the WAIT it asked for, then confirm_write()).
    Lock::WriteCheck lock_check() const noexcept { return lock_check_; }

  protected:
    using ConnectFn = Status (*)(Router& self, Connection& conn, Deadline deadline) noexcept;
    using CommandFn = Status (*)(Router& self, Connection& conn, const std::string_view* args,
                                 std::size_t count, resp::Reply& reply, Deadline deadline) noexcept;
    Router(ConnectFn on_connect, CommandFn on_command, ConnectFn on_write = nullptr) noexcept
        : connect_(on_connect),
          command_(on_command),
          confirm_(on_write),
          lock_check_(Lock::write_check()) {}
    ~Router() = default;

    // One request and its reply as send() then receive(): connects first (this router's
    // connect) when the link is down, but never follows a redirection.
    static Status round_trip(Connection& conn, const std::string_view* args, std::size_t count,
                             resp::Reply& reply, Deadline deadline) noexcept {
        const Status s = conn.send(args, count, deadline);
        return s != Status::ok ? s : conn.receive(reply, deadline);
    }

  private:
    ConnectFn connect_;
    CommandFn command_;
    ConnectFn confirm_;
    Lock::WriteCheck lock_check_;
};

inline Status Connection::confirm_write(Deadline deadline) noexcept {
    return config_.router != nullptr ? config_.router->confirm_write(*this, deadline) : Status::ok;
}

}  // namespace resplock

#endif  // RESPLOCK_ROUTER_HPP
