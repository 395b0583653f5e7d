// The commands and the set-up around them (see commands.hpp; status is status.cpp's): the lock
// kinds (and the semaphore of --limit) behind one set of templates, what busy, not_owner and
// unknown_outcome mean to each command, and the connections: one server (with TLS when built in) or
// a quorum of up to RESPLOCK_MAX_SERVERS.
#include "commands.hpp"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

#include "args.hpp"
#include "exit_codes.hpp"
#include "failure.hpp"
#include "list.hpp"
#include "messages.hpp"
#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/core/status.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/fair_lock.hpp"
#include "resplock/variants/lock_ref.hpp"
#include "resplock/variants/quorum_lock.hpp"
#include "resplock/variants/semaphore.hpp"
#include "routing.hpp"
#include "status.hpp"
#include "supervisor.hpp"
#include "tls.hpp"
#include "url.hpp"

namespace resplock_cli {

using resplock::Status;

namespace {

// The connection buffer: holds one request, then its reply (the semaphore's requests are the
// longest; run() checks that it fits every kind's).
char io_buffer[4096];  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): no heap

// ---------------------------------------------------------------------------------------------
// The lock kinds the tool drives: one server (resplock::Lock, with the acquisition options, or
// resplock::FairLock with --fair) or a quorum over several (resplock::QuorumLock); and with
// --limit a counting semaphore (resplock::Semaphore, fair with --fair), whose lease the commands
// take, give back and renew as a lock. The commands below are written once for all four.

resplock::AcquireOptions acquire_options(const Options& o) {
    resplock::AcquireOptions options;
    options.fence = o.fence;
    options.once_per_ms = o.once_per_ms;
    options.wake = o.wake;
    options.owner = o.owner;  // empty: plain random tokens
    return options;
}

// Without any option set this is the plain try_acquire.
Status take(resplock::Lock& lock, const Options& o, std::uint64_t& fence) {
    return lock.try_acquire(o.ttl_ms, o.wait_ms, acquire_options(o), &fence);
}
Status take(resplock::FairLock& lock, const Options& o, std::uint64_t& fence) {
    return lock.try_acquire(o.ttl_ms, o.wait_ms, o.fence ? &fence : nullptr);
}
Status take(resplock::QuorumLock& lock, const Options& o, std::uint64_t& /*fence*/) {
    return lock.try_acquire(o.ttl_ms, o.wait_ms, acquire_options(o));
}
// Every lease carries a fencing number; --fence only shows it.
Status take(resplock::Semaphore& semaphore, const Options& o, std::uint64_t& fence) {
    return semaphore.try_acquire(o.ttl_ms, o.wait_ms, &fence);
}

// A lock of any kind as the commands give it back, and as `run`'s supervisor holds it (through a
// LockRef made from it): the lock kind's own members, except that a plain lock taken with --wake
// is released with the acquisition options, so that the release wakes a waiter (a fair lock's
// release hands the lock to its first live waiter by itself). close() closes the lock's sockets,
// for a forked child's copies of them (the parent keeps its own).
class Held {
  public:
    template <class L>
    Held(L& lock, const Options& o) noexcept : lock_(resplock::LockRef::to(lock)), o_(o) {
        if constexpr (std::is_same_v<L, resplock::Lock>) {
            if (o.wake) waking_ = &lock;
        }
    }

    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
        return lock_.extend(ttl_ms, wait_ms);
    }
    Status release() noexcept {
        return waking_ != nullptr ? waking_->release(acquire_options(o_)) : lock_.release();
    }
    std::uint32_t remaining_ms() const noexcept { return lock_.remaining_ms(); }
    std::string_view token() const noexcept { return lock_.token(); }
    std::string_view key() const noexcept { return lock_.key(); }
    void close() noexcept { lock_.close(); }

  private:
    resplock::LockRef lock_;
    resplock::Lock* waking_ = nullptr;  // the plain lock, when --wake was given
    const Options& o_;
};

// ---------------------------------------------------------------------------------------------
// Failures that mean something particular to a command

// What the messages call what the tool takes: a lock, or with --limit a semaphore's lease.
const char* taken(const Options& o) {
    return o.limit != 0 ? "lease" : "lock";
}

// After a failed acquisition the lock keeps its token when the request may have set the key (its
// reply was lost or malformed, or the acquisition script failed after its SET, e.g. an ACL
// without +time under --fence). The tool never hands that token to anyone, so it gives back what
// it may have taken (owner-checked: it never deletes another holder's key) rather than leave it
// for the whole TTL. Writes what became of it to out ("" when there was nothing to give back).
template <class L>
void undo_acquire(L& lock, const Options& o, char* out, std::size_t cap) {
    out[0] = '\0';
    if (lock.token().empty()) return;
    const Status r = Held(lock, o).release();
    if (r == Status::ok) {
        (void)std::snprintf(out, cap, "the %s it had taken was released", taken(o));
    } else if (r == Status::not_owner || r == Status::expired) {
        (void)std::snprintf(out, cap, "the key does not carry its token: nothing to release");
    } else {
        (void)std::snprintf(out, cap,
                            "the %s may have been taken and could not be released: it expires "
                            "by its TTL (%u ms)",
                            taken(o), o.ttl_ms);
    }
}

// acquire or run found the lock busy; `undone` says what became of a token it may have left.
void report_busy(const Options& o, const char* undone) {
    const char* key = o.key_shown.text;
    const char* sep = undone[0] != '\0' ? "; " : "";
    if (o.command == Command::run && o.once_per_ms != 0) {
        report(
            "run %s: not run: the lock is held, or was taken less than %u ms ago "
            "(--once-per)%s%s",
            key, o.once_per_ms, sep, undone);
        return;
    }
    // The semaphore is busy when its places are held (or promised to waiters queued first).
    const char* what = o.limit != 0 ? "semaphore is full" : "lock is busy";
    char why[48] = "held by someone else";
    if (o.limit != 0) (void)std::snprintf(why, sizeof why, "--limit %u", o.limit);
    if (o.wait_ms == 0) {
        report("%s %s: %s (%s)%s%s", o.command_name, key, what, why, sep, undone);
    } else {
        report("%s %s: %s (%s; gave up after waiting %u ms)%s%s", o.command_name, key, what, why,
               o.wait_ms, sep, undone);
    }
}

// Acquisition failures of acquire and run, with what busy and unknown_outcome mean there.
template <class L>
int fail_acquire(L& lock, Status s, const Options& o, const Target& t) {
    const char* key = o.key_shown.text;
    // Read the server's error text, and whether the request went out, before the release sends
    // anything.
    const int code = s == Status::busy ? o.busy_exit : exit_for(s, t);  // -E, else 75
    char why[why_max];
    describe(s, t, why, sizeof why);
    const bool sent = request_may_have_gone(t);
    char undone[160];
    undo_acquire(lock, o, undone, sizeof undone);
    if (s == Status::not_replicated && undone[0] == '\0') {
        // The lock (or semaphore) released what too few replicas acknowledged.
        (void)std::snprintf(undone, sizeof undone, "the %s it had taken was released", taken(o));
    }
    if (s == Status::busy) {
        report_busy(o, undone);
        return code;
    }
    if (undone[0] == '\0' && sent &&
        (s == Status::unknown_outcome || s == Status::protocol_error || s == Status::too_large)) {
        // The request went out, no clean answer came back, and no token is left to release with
        // (a quorum lock forgets it once it has tried to take back what it set). A request that
        // never went out (why says so) took nothing.
        report("%s %s: %s; the %s may have been taken and will expire by its TTL (%u ms)",
               o.command_name, key, why, taken(o), o.ttl_ms);
        return code;
    }
    report("%s %s: %s%s%s", o.command_name, key, why, undone[0] != '\0' ? "; " : "", undone);
    return code;
}

// release/extend: not_owner and expired are answers, not faults.
int fail_owner(Status s, const Options& o, const Target& t) {
    const char* key = o.key_shown.text;
    if (o.limit != 0 && (s == Status::not_owner || s == Status::expired)) {
        report("%s %s: token holds no live lease (it expired or was released)", o.command_name,
               key);
        return exit_not_owner;
    }
    if (s == Status::not_owner) {
        report("%s %s: token does not own the lock (another holder has it)", o.command_name, key);
        return exit_not_owner;
    }
    if (s == Status::expired) {
        report("%s %s: token does not own the lock (the key is gone: expired or released)",
               o.command_name, key);
        return exit_not_owner;
    }
    if (s == Status::unknown_outcome) {
        char why[why_max];
        describe(s, t, why, sizeof why);
        if (o.command == Command::release) {
            report("%s %s: %s; the %s may still be held until its TTL ends", o.command_name, key,
                   why, taken(o));
        } else {
            report("%s %s: %s; its TTL may or may not have been reset", o.command_name, key, why);
        }
        return exit_unavailable;
    }
    return fail(s, o.command_name, key, t);
}

// ---------------------------------------------------------------------------------------------
// Commands

template <class L>
int cmd_acquire(L& lock, const Options& o, const Target& t) {
    // A closed stdout must give an error we can act on (release), not a silent SIGPIPE death.
    (void)signal(SIGPIPE, SIG_IGN);
    std::uint64_t fence = 0;
    const Status s = take(lock, o, fence);
    if (s != Status::ok) return fail_acquire(lock, s, o, t);
    const std::string_view token = lock.token();
    if (o.fence) {
        std::printf("%.*s %llu\n", static_cast<int>(token.size()), token.data(),
                    static_cast<unsigned long long>(fence));
    } else {
        std::printf("%.*s\n", static_cast<int>(token.size()), token.data());
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
        const int err = errno;
        const Status r = Held(lock, o).release();
        report("acquire %s: cannot write the token to stdout: %s; %s", o.key_shown.text,
               std::strerror(err),
               r == Status::ok ? "lock released" : "the lock expires by its TTL");
        return exit_io;
    }
    return exit_ok;
}

template <class L>
int cmd_release(L& lock, const Options& o, const Target& t) {
    Status s = lock.adopt(o.operands[1]);
    if (s == Status::ok) s = Held(lock, o).release();
    return s == Status::ok ? exit_ok : fail_owner(s, o, t);
}

template <class L>
int cmd_extend(L& lock, const Options& o, const Target& t) {
    Status s = lock.adopt(o.operands[1]);
    if (s == Status::ok) s = lock.extend(o.ttl_ms);
    return s == Status::ok ? exit_ok : fail_owner(s, o, t);
}

template <class L>
int cmd_run(L& lock, const Options& o, const Target& t, const resplock_port_t& port) {
    std::uint64_t fence = 0;
    const Status s = take(lock, o, fence);
    if (s != Status::ok) return fail_acquire(lock, s, o, t);
    if (!lock.held()) {
        // A TTL so short that nothing of it is left to rely on: do not start COMMAND.
        (void)Held(lock, o).release();
        report(
            "run %s: lock lost (its %u ms TTL ran out before COMMAND could start); not "
            "running COMMAND",
            o.key_shown.text, o.ttl_ms);
        return exit_lost;
    }
    Held held(lock, o);
    // -c CMD: /bin/sh -c CMD. exec*() take char* for historical reasons and write nothing, and
    // CMD is a string of argv.
    // NOLINTBEGIN(cppcoreguidelines-pro-type-const-cast)
    char* shell_argv[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"),
                          const_cast<char*>(o.shell_command), nullptr};
    // NOLINTEND(cppcoreguidelines-pro-type-const-cast)
    char** argv = o.shell_command != nullptr ? shell_argv : o.run_argv;
    const RunRequest request{o.operands[0], o.key_shown.text, argv, o.ttl_ms, o.fence,
                             fence,         o.limit};
    return supervise(resplock::LockRef::to(held), request, t, port);
}

// One server: the key is a plain lock's string, whichever kind took it.
template <class L>
int status_of(L& lock, resplock::Connection* const* /*conns*/, const Options& o, const Target& t) {
    return status_single(lock.connection(), lock.key(), o, t);
}
int status_of(resplock::QuorumLock& lock, resplock::Connection* const* conns, const Options& o,
              const Target& t) {
    return status_quorum(lock, conns, o, t);
}
int status_of(resplock::Semaphore& semaphore, resplock::Connection* const* /*conns*/,
              const Options& o, const Target& t) {
    return status_semaphore(semaphore, o, t);
}

template <class L>
int dispatch(L& lock, resplock::Connection* const* conns, const Options& o, const Target& t,
             const resplock_port_t& port) {
    switch (o.command) {
        case Command::acquire:
            return cmd_acquire(lock, o, t);
        case Command::release:
            return cmd_release(lock, o, t);
        case Command::extend:
            return cmd_extend(lock, o, t);
        case Command::status:
            return status_of(lock, conns, o, t);
        case Command::run:
            return cmd_run(lock, o, t, port);
        case Command::list:  // run_single() lists before any lock is made
        case Command::none:
            break;
    }
    return exit_usage;
}

// ---------------------------------------------------------------------------------------------
// Connections

// How many times a connection of the tool completed its set-up (Target::set_ups), counted from
// the connect and reconnect events, which the observer reports only then.
std::atomic<unsigned> set_ups{0};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

void count_set_up(void* /*user*/, const resplock::Event* event) {
    const resplock::EventKind kind = resplock::kind_of(*event);
    if (kind == resplock::EventKind::connect || kind == resplock::EventKind::reconnect) {
        set_ups.fetch_add(1);
    }
}

// The observer of every connection: counts the set-ups, and names the client with the owner
// label, unless --no-client-name or no label. A server that refuses CLIENT SETNAME (an ACL without
// client|setname) is no error: the tool goes on silently.
const resplock::Observer* observer(const Options& o) {
    // NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
    static resplock::Observer observer(&count_set_up);
    // The owner label's characters are all valid in a client name.
    if (o.client_name && o.owner[0] != '\0') (void)observer.set_client_name(o.owner);
    return &observer;
}

// The connection to ep, the index-th of the `count` servers of the command line.
resplock::ConnectionConfig connection_config(const Endpoint& ep, const Options& o, int index,
                                             int count) {
    resplock::ConnectionConfig config;
    config.router = router_for(ep, o, index, count);
    config.observer = observer(o);
    config.host = ep.host;
    config.port = ep.port;
    config.username = ep.has_username ? ep.username : nullptr;
    config.password = ep.has_password ? ep.password : nullptr;
    config.db = ep.db;
    config.timeout_ms = o.timeout_ms;
    return config;
}

// "a quorum of N servers (host:port, [v6]:port, ...)", cut to fit target.where.
void name_quorum(Target& target, const Endpoint* eps, int count) {
    int used = std::snprintf(target.where, sizeof target.where, "a quorum of %d servers (", count);
    for (int i = 0; i < count; ++i) {
        const auto n = static_cast<std::size_t>(used);
        if (n < sizeof target.where) {
            used += std::snprintf(target.where + n, sizeof target.where - n,
                                  eps[i].ipv6 ? "%s[%s]:%u" : "%s%s:%u", i == 0 ? "" : ", ",
                                  eps[i].host, static_cast<unsigned>(eps[i].port));
        }
    }
    const auto n = static_cast<std::size_t>(used);
    if (n < sizeof target.where)
        (void)std::snprintf(target.where + n, sizeof target.where - n, ")");
}

// A quorum lock over the servers of eps[0..count).
int run_quorum(const Options& o, Endpoint* eps, int count, const resplock_port_t& port) {
    if (o.fence || o.once_per_ms != 0 || o.wake || o.fair || o.replicas != 0) {
        report(
            "--fence, --once-per, --wake, --fair and --replicas work with one server only, not "
            "with a quorum of %d (several --url)",
            count);
        return exit_usage;
    }
    for (int i = 0; i < count; ++i) {
        if (eps[i].tls) {
            report("rediss:// (TLS) is not supported in a quorum lock (several --url)");
            return exit_usage;
        }
    }
    // NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
    static char buffers[RESPLOCK_MAX_SERVERS][sizeof io_buffer];
    // One transport context per server: a port context holds one connection.
    // NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
    static resplock_posix_t contexts[RESPLOCK_MAX_SERVERS];
    resplock_port_t ports[RESPLOCK_MAX_SERVERS];
    std::optional<resplock::Connection> conns[RESPLOCK_MAX_SERVERS];
    resplock::Connection* list[RESPLOCK_MAX_SERVERS] = {};
    for (int i = 0; i < count; ++i) {
        (void)resplock_posix_port_init(&contexts[i], nullptr, &ports[i]);  // fails on null only
        conns[i].emplace(ports[i], connection_config(eps[i], o, i, count), buffers[i],
                         sizeof buffers[i]);
        list[i] = &*conns[i];
    }
    Target target{};
    name_quorum(target, eps, count);
    target.host = eps[0].host;
    target.timeout_ms = o.timeout_ms;
    target.buffer_size = sizeof buffers[0];
    target.conn = nullptr;  // several servers: no single error text
    target.set_ups = &set_ups;
    resplock::QuorumLock lock(list, static_cast<std::size_t>(count), o.operands[0]);
    return dispatch(lock, list, o, target, port);
}

// --replicas N for a lock or a semaphore (in 1..max_replicas, or 0: off, as args checked), and
// where messages read how many acknowledged.
template <class L>
void ask_replicas(L& lock, const Options& o, Target& target) {
    (void)lock.set_replicas(o.replicas);
    target.replicas = o.replicas;
    target.waiter = &lock;
    target.acknowledged = [](const void* waiter) {
        return static_cast<const L*>(waiter)->replicas_acknowledged();
    };
}

// A lock on the one server ep, over `port` (wrapped in TLS for rediss://).
int run_single(const Options& o, const Endpoint& ep, resplock_port_t port) {
    Target target{};
    if (ep.sentinel) {
        (void)std::snprintf(target.where, sizeof target.where, "Sentinel master %.*s",
                            RESPLOCK_MAX_HOST_LEN, Masked(ep.master_name).text);
    } else {
        (void)std::snprintf(target.where, sizeof target.where, ep.ipv6 ? "[%s]:%u" : "%s:%u",
                            ep.host, static_cast<unsigned>(ep.port));
    }
    target.host = ep.host;
    target.timeout_ms = o.timeout_ms;
    target.buffer_size = sizeof io_buffer;
#ifdef RESPLOCK_CLI_TLS
    static resplock_mbedtls_t tls;
    target.tls = nullptr;
    target.client_cert = o.cert != nullptr;
    if (ep.tls) {
        const int r = setup_tls(o, port, tls, port);
        if (r >= 0) return r;
        target.tls = &tls;
    }
#endif
    if (o.command == Command::list)
        return list_locks(o, ep, connection_config(ep, o, 0, 1), port, target);
    resplock::Connection conn(port, connection_config(ep, o, 0, 1), io_buffer, sizeof io_buffer);
    target.conn = &conn;
    target.sentinel = sentinel_for(0);
    resplock::Connection* const list[1] = {&conn};
    if (o.limit != 0) {
        // KEY's length, the limit and the owner label were checked (args.cpp).
        resplock::Semaphore semaphore(conn, o.operands[0], o.limit, o.fair);
        (void)semaphore.set_owner(o.owner);
        ask_replicas(semaphore, o, target);
        return dispatch(semaphore, list, o, target, port);
    }
    if (o.fair) {
        resplock::FairLock lock(conn, o.operands[0]);  // KEY's length was checked (args.cpp)
        (void)lock.set_owner(o.owner);
        ask_replicas(lock, o, target);
        return dispatch(lock, list, o, target, port);
    }
    resplock::Lock lock(conn, o.operands[0]);
    ask_replicas(lock, o, target);
    return dispatch(lock, list, o, target, port);
}

}  // namespace

int run(int argc, char** argv) {
    Options o;
    int r = parse_args(argc, argv, o);
    if (r < 0) r = complete_options(o, std::getenv("REDIS_URL"));
    if (r >= 0) return r;
    char host[256] = {};
    const bool named = gethostname(host, sizeof host - 1) == 0;  // host[255] stays NUL
    default_owner(o, named ? host : nullptr);
    const std::size_t needed =
        std::max({resplock::lock_options_buffer_min(), resplock::fair_buffer_min(),
                  resplock::semaphore_buffer_min()});
    if (needed > sizeof io_buffer) {
        report("internal error: the %zu-byte buffer is below the library's minimum of %zu",
               sizeof io_buffer, needed);
        return exit_protocol;
    }
    static Endpoint eps[RESPLOCK_MAX_SERVERS];
    for (int i = 0; i < o.url_count; ++i) {
        r = endpoint_from(o.urls[i], o.url_source, o.password_file, eps[i]);
        if (r < 0) r = check_tls(o, eps[i], o.url_source);
        if (r >= 0) return r;
    }
    if (r = check_distinct(eps, o.url_count, o.url_source); r >= 0) return r;
    static resplock_posix_t posix;
    resplock_port_t port;
    (void)resplock_posix_port_init(&posix, nullptr, &port);  // fails on null arguments only
    if (o.url_count > 1) return run_quorum(o, eps, o.url_count, port);
    return run_single(o, eps[0], port);
}

}  // namespace resplock_cli
