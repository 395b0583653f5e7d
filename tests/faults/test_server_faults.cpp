// Server faults against real redis-servers over the POSIX port: a server killed and restarted in
// the middle of a lock loop, SCRIPT FLUSH and FLUSHALL, maxmemory with noeviction, CLIENT PAUSE,
// a read-only replica, a script running too long (BUSY) and a server loading its dataset. Each
// must give a clear status within the call's timeout, never a false "held", and recover with the
// same Connection and Lock objects once the server is back.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "check.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"

namespace {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
using Clock = std::chrono::steady_clock;

// Slack on every time bound: the machine running the tests may be busy.
constexpr long long margin_ms = 300;

long long ms_since(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

void sleep_ms(long ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Polls `done` every 10 ms until it is true or `timeout_ms` has passed.
bool wait_until(const std::function<bool()>& done, long long timeout_ms) {
    const auto start = Clock::now();
    while (!done()) {
        if (ms_since(start) > timeout_ms) return false;
        sleep_ms(10);
    }
    return true;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}
bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// One connection to a server on 127.0.0.1 over the POSIX port.
struct Client {
    resplock_posix_t ctx{};
    resplock_port_t port = support::posix_port(ctx);
    ConnectionConfig config;
    char buf[512];
    Connection conn;

    Client(std::uint16_t server_port, std::uint32_t timeout_ms)
        : config(make(server_port, timeout_ms)), conn(port, config, buf, sizeof buf) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    static ConnectionConfig make(std::uint16_t server_port, std::uint32_t timeout_ms) {
        ConnectionConfig c;
        c.host = "127.0.0.1";
        c.port = server_port;
        c.timeout_ms = timeout_ms;
        return c;
    }
};

// A call's status and how long it took.
struct Timed {
    Status status;
    long long ms;
};

template <typename F>
Timed timed(F&& call) {
    const auto start = Clock::now();
    const Status s = call();
    return {s, ms_since(start)};
}

// True when the call finished within `budget_ms` (plus margin); prints the time otherwise.
bool within(const Timed& t, long long budget_ms) {
    if (t.ms <= budget_ms + margin_ms) return true;
    std::printf("      took %lld ms, budget %lld ms\n", t.ms, budget_ms);
    return false;
}

// Not held, nothing claimed: what every call the server did not answer OK must leave behind.
bool not_held(const Lock& lock) {
    return !lock.held() && lock.remaining_ms() == 0;
}

// Redis's own count of cached scripts (independent of the script's digest).
int cached_scripts(const support::RedisServer& srv) {
    const std::string info = srv.cli({"INFO", "memory"});
    const std::string field = "number_of_cached_scripts:";
    const std::size_t at = info.find(field);
    return at == std::string::npos ? -1 : std::atoi(info.c_str() + at + field.size());
}

#ifdef RESPLOCK_CLI
// Runs the resplock command and waits for it.
support::Result resplock_cli(std::vector<std::string> args) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return support::run(args, {}, 20);
}

// Exactly one line, starting with "resplock: ".
bool one_error_line(const std::string& err) {
    return starts_with(err, "resplock: ") && err.back() == '\n' && err.find('\n') == err.size() - 1;
}
#endif

// A private directory for a server's dump file, removed with the file at the end.
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/resplock-faults-XXXXXX";
        const char* d = mkdtemp(tmpl);
        path = d != nullptr ? d : "";
    }
    ~TempDir() {
        if (path.empty()) return;
        unlink((path + "/dump.rdb").c_str());
        rmdir(path.c_str());
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

// The statuses a call may give when its server has been killed: the reply was lost on the
// connection it had, or a new connection was refused.
bool server_gone(Status s) {
    return s == Status::unknown_outcome || s == Status::closed || s == Status::connect_failed;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Killed and restarted

TEST(server_killed_and_restarted_during_a_lock_loop) {
    support::RedisServer srv;
    REQUIRE(srv.running());
    const std::uint16_t port = srv.port();
    constexpr std::uint32_t timeout_ms = 500;
    constexpr std::uint32_t ttl_ms = 1000;
    Client c(port, timeout_ms);
    Lock lock(c.conn, "sf:loop");

    std::atomic<bool> killed{false};
    Clock::time_point killed_at{};
    std::thread killer([&] {
        sleep_ms(300);
        srv.kill();
        killed_at = Clock::now();
        killed = true;
    });

    // A holder's life in steps: acquire, extend, release. A failed release is retried while the
    // lock may still be held; once its local validity is over, the loop acquires again.
    enum { acquire, extend, release } next = acquire;
    int cycles_before = 0, calls_after = 0, acquires_after = 0, refused_after = 0, lost_after = 0;
    const auto start = Clock::now();
    while (ms_since(start) < 6000) {
        const bool after = killed.load();
        if (after && ms_since(killed_at) > ttl_ms + 500) break;
        const std::uint32_t before = lock.remaining_ms();
        Timed t{Status::ok, 0};
        if (next == acquire && lock.held()) next = release;
        if (next == acquire) {
            t = timed([&] { return lock.acquire(ttl_ms); });
            if (t.status == Status::ok) {
                CHECK(lock.held());
                next = extend;
            } else {
                CHECK(not_held(lock));
                // unknown_outcome keeps the token: remove what the server may have set.
                next = lock.token().empty() ? acquire : release;
            }
            if (after) ++acquires_after;
        } else if (next == extend) {
            t = timed([&] { return lock.extend(ttl_ms); });
            // A failed renewal claims nothing new: only the last OK's validity remains.
            if (t.status != Status::ok) CHECK(lock.remaining_ms() <= before);
            next = release;
        } else {
            t = timed([&] { return lock.release(); });
            if (t.status == Status::ok) CHECK(not_held(lock) && lock.token().empty());
            if (t.status != Status::ok) CHECK(lock.remaining_ms() <= before);
            next = acquire;
            if (t.status == Status::ok && !after) ++cycles_before;
        }
        CHECK(within(t, timeout_ms));
        if (after) {
            ++calls_after;
            if (!CHECK(server_gone(t.status))) std::printf("      %s\n", to_string(t.status));
            if (t.status == Status::connect_failed) ++refused_after;
            if (t.status == Status::unknown_outcome || t.status == Status::closed) ++lost_after;
        } else if (!CHECK(t.status == Status::ok || server_gone(t.status))) {
            std::printf("      %s\n", to_string(t.status));  // before the kill, or racing it
        }
        sleep_ms(10);
    }
    killer.join();
    std::printf(
        "      %d cycles before the kill; after it %d calls (%d acquires): %d refused, "
        "%d reply lost\n",
        cycles_before, calls_after, acquires_after, refused_after, lost_after);
    CHECK(cycles_before >= 3);
    CHECK(acquires_after >= 1);
    CHECK(refused_after >= 1);

    // Same port, empty data set: persistence is off, so the key held before the kill is gone.
    // That is the documented weakness of a lease on one server: a holder whose server restarts
    // without persistence may still believe it holds a lock that a second client can now take.
    REQUIRE(srv.restart());
    CHECK_EQ(srv.port(), port);
    CHECK_EQ(srv.cli({"EXISTS", "sf:loop"}), std::string("0"));

    // The same objects recover: a token left from a failed step finds its key gone.
    if (!lock.token().empty()) {
        const Timed t = timed([&] { return lock.release(); });
        CHECK_EQ(t.status, Status::expired);
        CHECK(within(t, timeout_ms));
    }
    CHECK(not_held(lock));
    const Timed t = timed([&] { return lock.acquire(5000); });
    CHECK_EQ(t.status, Status::ok);
    CHECK(within(t, timeout_ms));
    CHECK(lock.held());
    CHECK_EQ(srv.cli({"GET", "sf:loop"}), std::string(lock.token()));
    CHECK_EQ(lock.extend(20000), Status::ok);
    CHECK(std::atoll(srv.cli({"PTTL", "sf:loop"}).c_str()) > 15000);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(srv.cli({"EXISTS", "sf:loop"}), std::string("0"));
}

TEST(restart_without_persistence_lets_a_second_holder_in) {
    support::RedisServer srv;
    REQUIRE(srv.running());
    constexpr std::uint32_t timeout_ms = 500;
    Client a(srv.port(), timeout_ms), b(srv.port(), timeout_ms), idle(srv.port(), timeout_ms);
    Lock la(a.conn, "sf:lost"), lb(b.conn, "sf:lost"), watcher(idle.conn, "sf:lost");
    REQUIRE_EQ(la.acquire(30000), Status::ok);
    LockInfo info;
    REQUIRE_EQ(watcher.query(info), Status::ok);  // leaves a connection open across the restart
    CHECK(info.state == LockState::held_by_other);

    srv.kill();
    const std::uint32_t before = la.remaining_ms();
    Timed t = timed([&] { return la.extend(30000); });
    // The connection the dead server closed is noticed before sending; the reconnect is refused,
    // so nothing reached any server.
    CHECK_EQ(t.status, Status::connect_failed);
    CHECK(within(t, timeout_ms));
    CHECK(la.remaining_ms() <= before);  // the failed renewal claims nothing
    t = timed([&] { return lb.acquire(30000); });
    CHECK_EQ(t.status, Status::connect_failed);
    CHECK(within(t, timeout_ms));
    CHECK(not_held(lb));
#ifdef RESPLOCK_CLI
    const support::Result r = resplock_cli({"-u", srv.url(), "acquire", "sf:lost"});
    CHECK_EQ(r.code, 69);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "cannot connect"));
#endif

    REQUIRE(srv.restart());
    CHECK_EQ(srv.cli({"EXISTS", "sf:lost"}), std::string("0"));
    // The documented single-server weakness, shown: the first holder's local validity still
    // runs (its lease was granted by the server before the crash), yet the restarted server,
    // which lost the key, grants the lock to a second client.
    CHECK(la.held());
    CHECK_EQ(lb.acquire(30000), Status::ok);
    CHECK(lb.held());
    CHECK_EQ(srv.cli({"GET", "sf:lost"}), std::string(lb.token()));
    // The first holder learns it on its next owner-checked call, and cannot touch the new key.
    CHECK_EQ(la.extend(30000), Status::not_owner);
    CHECK(not_held(la));
    CHECK_EQ(srv.cli({"GET", "sf:lost"}), std::string(lb.token()));

    // A connection left idle across the restart still has the socket the old server closed; the
    // library notices before sending and reconnects, so the acquire reaches the new server.
    t = timed([&] { return watcher.acquire(30000); });
    CHECK_EQ(t.status, Status::busy);
    CHECK(within(t, timeout_ms));
    CHECK(not_held(watcher));
    CHECK(watcher.token().empty());
    CHECK_EQ(srv.cli({"GET", "sf:lost"}), std::string(lb.token()));
    CHECK_EQ(lb.release(), Status::ok);
}

// ---------------------------------------------------------------------------------------------
// SCRIPT FLUSH and FLUSHALL

TEST(script_flush_mid_run_falls_back_to_eval) {
    support::RedisServer srv;
    REQUIRE(srv.running());
    Client c(srv.port(), 2000);
    Lock lock(c.conn, "sf:flush");
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    LockInfo info;
    // Before every script call the cache is emptied; NOSCRIPT never reaches the caller.
    CHECK_EQ(srv.cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(cached_scripts(srv), 0);
    CHECK_EQ(lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(cached_scripts(srv), 1);  // loaded again by the EVAL fallback

    CHECK_EQ(srv.cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.extend(20000), Status::ok);
    CHECK(std::atoll(srv.cli({"PTTL", "sf:flush"}).c_str()) > 15000);
    CHECK(lock.remaining_ms() > 15000);

    CHECK_EQ(srv.cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(srv.cli({"EXISTS", "sf:flush"}), std::string("0"));
    CHECK(not_held(lock));
}

TEST(flushall_while_holding_is_expired_then_acquire_works) {
    support::RedisServer srv;
    REQUIRE(srv.running());
    Client c(srv.port(), 2000);
    Lock lock(c.conn, "sf:flushall");

    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(srv.cli({"FLUSHALL"}), std::string("OK"));
    CHECK_EQ(lock.extend(10000), Status::expired);
    CHECK(not_held(lock));
    CHECK(lock.token().empty());
    CHECK_EQ(srv.cli({"EXISTS", "sf:flushall"}), std::string("0"));  // extend created nothing

    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(srv.cli({"FLUSHALL"}), std::string("OK"));
    CHECK_EQ(lock.release(), Status::expired);
    CHECK(not_held(lock));
    CHECK(lock.token().empty());

    // A new acquire after the flush, on the same objects.
    CHECK_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(srv.cli({"GET", "sf:flushall"}), std::string(lock.token()));
    CHECK_EQ(lock.extend(10000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
}

// ---------------------------------------------------------------------------------------------
// maxmemory with noeviction

TEST(out_of_memory_refuses_acquire_but_lets_the_holder_finish) {
    support::RedisServer srv({"--maxmemory", "2mb", "--maxmemory-policy", "noeviction",
                              "--enable-debug-command", "local"});
    REQUIRE(srv.running());
    constexpr std::uint32_t timeout_ms = 2000;
    Client c(srv.port(), timeout_ms);
    Lock before(c.conn, "sf:oom:before"), fresh(c.conn, "sf:oom:new");
    REQUIRE_EQ(before.acquire(30000), Status::ok);

    // DEBUG POPULATE ignores maxmemory: about 4 MB of keys puts the server over its 2 MB limit.
    CHECK_EQ(srv.cli({"DEBUG", "POPULATE", "20000", "sf:fill", "100"}), std::string("OK"));
    REQUIRE(starts_with(srv.cli({"SET", "sf:probe", "x"}), "OOM "));

    Timed t = timed([&] { return fresh.acquire(10000); });
    CHECK_EQ(t.status, Status::out_of_memory);
    CHECK(within(t, timeout_ms));
    CHECK(starts_with(c.conn.error_text(), "OOM "));
    CHECK(not_held(fresh));
    CHECK(fresh.token().empty());
    CHECK_EQ(srv.cli({"EXISTS", "sf:oom:new"}), std::string("0"));
    CHECK_EQ(fresh.try_acquire(10000, 300), Status::out_of_memory);  // not retried: not transient
    CHECK(not_held(fresh));

    // Redis refuses only "deny-oom" commands (SET) when over the limit. A script without flags
    // is checked command by command, and GET, PTTL, PEXPIRE and DEL are not deny-oom: the holder
    // can still query, renew and release (even loading the script by EVAL after NOSCRIPT).
    CHECK_EQ(srv.cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    LockInfo info;
    CHECK_EQ(before.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(before.extend(20000), Status::ok);
    const long long pttl = std::atoll(srv.cli({"PTTL", "sf:oom:before"}).c_str());
    CHECK(pttl > 15000 && pttl <= 20000);
    CHECK_EQ(before.release(), Status::ok);
    CHECK_EQ(srv.cli({"EXISTS", "sf:oom:before"}), std::string("0"));

#ifdef RESPLOCK_CLI
    const support::Result r = resplock_cli({"-u", srv.url(), "acquire", "sf:oom:cli"});
    CHECK_EQ(r.code, 69);  // the server cannot serve the lock now
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "out of memory") && contains(r.err, "OOM command not allowed"));
    CHECK_EQ(r.out, std::string());
#endif

    // Memory back under the limit: the same objects acquire again.
    CHECK_EQ(srv.cli({"FLUSHALL"}), std::string("OK"));
    t = timed([&] { return fresh.acquire(10000); });
    CHECK_EQ(t.status, Status::ok);
    CHECK(fresh.held());
    CHECK_EQ(srv.cli({"GET", "sf:oom:new"}), std::string(fresh.token()));
    CHECK_EQ(fresh.release(), Status::ok);
}

// ---------------------------------------------------------------------------------------------
// CLIENT PAUSE

TEST(client_pause_write_shorter_than_timeout_delays_acquire) {
    support::RedisServer srv;
    REQUIRE(srv.running());
    Client c(srv.port(), 3000);
    Lock lock(c.conn, "sf:pause:long");
    CHECK_EQ(srv.cli({"CLIENT", "PAUSE", "800", "WRITE"}), std::string("OK"));
    const auto paused = Clock::now();
    const Timed t = timed([&] { return lock.acquire(10000); });
    CHECK_EQ(t.status, Status::ok);
    // The SET waited for the pause to end (the redis-cli call itself took part of the 800 ms).
    CHECK(ms_since(paused) >= 750);
    CHECK(within(t, 3000));
    CHECK(lock.held());
    CHECK_EQ(srv.cli({"GET", "sf:pause:long"}), std::string(lock.token()));
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(client_pause_write_longer_than_timeout_is_unknown_outcome) {
    support::RedisServer srv;
    REQUIRE(srv.running());
    constexpr std::uint32_t timeout_ms = 300;
    Client c(srv.port(), timeout_ms);
    Lock lock(c.conn, "sf:pause:short");
    CHECK_EQ(srv.cli({"CLIENT", "PAUSE", "2500", "WRITE"}), std::string("OK"));
    const auto paused = Clock::now();
    Timed t = timed([&] { return lock.acquire(10000); });
    CHECK_EQ(t.status, Status::unknown_outcome);
    CHECK(t.ms >= timeout_ms - 5);
    CHECK(within(t, timeout_ms));
    CHECK(not_held(lock));
    CHECK(!lock.token().empty());  // kept, so release() can remove what the server may have set
    // try_acquire does not retry a request whose outcome is unknown.
    t = timed([&] { return lock.try_acquire(10000, 2000); });
    CHECK_EQ(t.status, Status::unknown_outcome);
    CHECK(within(t, timeout_ms));
    CHECK(not_held(lock));
    // Reads are not paused by WRITE, but the owner script (not flagged no-writes) is.
    CHECK_EQ(srv.cli({"PTTL", "sf:pause:short"}), std::string("-2"));
    LockInfo info;
    t = timed([&] { return lock.query(info); });
    CHECK_EQ(t.status, Status::timeout);
    CHECK(within(t, timeout_ms));

#ifdef RESPLOCK_CLI
    const support::Result r =
        resplock_cli({"-u", srv.url(), "--timeout", "200", "acquire", "sf:pause:cli"});
    CHECK_EQ(r.code, 69);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "outcome unknown"));
#endif

    // Redis drops a paused command whose client has gone, so when the pause ends the key was
    // never set; the kept token then finds nothing to release.
    REQUIRE(wait_until([&] { return ms_since(paused) > 2600; }, 4000));
    CHECK_EQ(srv.cli({"EXISTS", "sf:pause:short"}), std::string("0"));
    CHECK_EQ(srv.cli({"EXISTS", "sf:pause:cli"}), std::string("0"));
    CHECK_EQ(lock.release(), Status::expired);
    CHECK_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(srv.cli({"GET", "sf:pause:short"}), std::string(lock.token()));
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(client_pause_all_blocks_every_call_until_it_ends) {
    support::RedisServer srv;
    REQUIRE(srv.running());
    constexpr std::uint32_t timeout_ms = 300;
    Client c(srv.port(), timeout_ms);
    Lock holder(c.conn, "sf:pause:all"), other(c.conn, "sf:pause:all:other");
    REQUIRE_EQ(holder.acquire(30000), Status::ok);
    CHECK_EQ(srv.cli({"CLIENT", "PAUSE", "2000", "ALL"}), std::string("OK"));
    const auto paused = Clock::now();
    LockInfo info;
    Timed t = timed([&] { return holder.query(info); });
    CHECK_EQ(t.status, Status::timeout);
    CHECK(within(t, timeout_ms));
    const std::uint32_t before = holder.remaining_ms();
    t = timed([&] { return holder.extend(30000); });
    CHECK_EQ(t.status, Status::unknown_outcome);
    CHECK(within(t, timeout_ms));
    CHECK(holder.remaining_ms() <= before);
    t = timed([&] { return other.acquire(10000); });
    CHECK_EQ(t.status, Status::unknown_outcome);
    CHECK(within(t, timeout_ms));
    CHECK(not_held(other));

    REQUIRE(wait_until([&] { return ms_since(paused) > 2100; }, 4000));
    CHECK_EQ(srv.cli({"EXISTS", "sf:pause:all:other"}), std::string("0"));
    CHECK_EQ(holder.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(holder.extend(30000), Status::ok);
    CHECK_EQ(holder.release(), Status::ok);
    CHECK_EQ(other.release(), Status::expired);
    CHECK_EQ(other.acquire(10000), Status::ok);
    CHECK_EQ(other.release(), Status::ok);
}

TEST(try_acquire_waits_across_a_pause) {
    support::RedisServer srv;
    REQUIRE(srv.running());
    Client a(srv.port(), 2000), b(srv.port(), 2000);
    Lock holder(a.conn, "sf:pause:wait"), waiter(b.conn, "sf:pause:wait");
    REQUIRE_EQ(holder.acquire(400), Status::ok);
    REQUIRE_EQ(waiter.acquire(10000), Status::busy);
    // ALL also blocks the PTTL the waiter reads between attempts.
    CHECK_EQ(srv.cli({"CLIENT", "PAUSE", "800", "ALL"}), std::string("OK"));
    const auto paused = Clock::now();
    const Timed t = timed([&] { return waiter.try_acquire(10000, 3000); });
    CHECK_EQ(t.status, Status::ok);
    CHECK(ms_since(paused) >= 750);
    CHECK(within(t, 3000 + 2000));
    CHECK(waiter.held());
    CHECK_EQ(srv.cli({"GET", "sf:pause:wait"}), std::string(waiter.token()));
    CHECK_EQ(holder.release(), Status::not_owner);
    CHECK_EQ(waiter.release(), Status::ok);
}

// ---------------------------------------------------------------------------------------------
// Read-only replica

TEST(read_only_replica_refuses_every_write) {
    support::RedisServer master({"--repl-diskless-sync-delay", "0"});
    REQUIRE(master.running());
    const std::string master_port = std::to_string(master.port());
    support::RedisServer replica({"--replicaof", "127.0.0.1", master_port.c_str()});
    REQUIRE(replica.running());
    REQUIRE(wait_until(
        [&] {
            return contains(replica.cli({"INFO", "replication"}), "master_link_status:up");
        },
        10000));

    constexpr std::uint32_t timeout_ms = 2000;
    Client m(master.port(), timeout_ms), r(replica.port(), timeout_ms);
    Lock on_master(m.conn, "sf:ro");
    REQUIRE_EQ(on_master.acquire(30000), Status::ok);
    const std::string token(on_master.token());
    REQUIRE(wait_until([&] { return replica.cli({"GET", "sf:ro"}) == token; }, 5000));

    // A fresh acquire on the replica: SET is refused.
    Lock fresh(r.conn, "sf:ro:new");
    Timed t = timed([&] { return fresh.acquire(10000); });
    CHECK_EQ(t.status, Status::read_only);
    CHECK(within(t, timeout_ms));
    CHECK(starts_with(r.conn.error_text(), "READONLY "));
    CHECK(not_held(fresh));
    CHECK(fresh.token().empty());
    CHECK_EQ(fresh.try_acquire(10000, 300), Status::read_only);
    CHECK_EQ(replica.cli({"EXISTS", "sf:ro:new"}), std::string("0"));

    // The owner's token, used on the replica (a client pointed at the wrong node): the script's
    // GET matches, its DEL / PEXPIRE is refused inside the script, and Redis 7 passes the
    // READONLY error on with the script's name appended.
    Lock adopted(r.conn, "sf:ro");
    REQUIRE_EQ(adopted.adopt(token), Status::ok);
    t = timed([&] { return adopted.release(); });
    CHECK_EQ(t.status, Status::read_only);
    CHECK(within(t, timeout_ms));
    CHECK(starts_with(r.conn.error_text(), "READONLY "));
    CHECK_EQ(adopted.token(), std::string_view(token));  // kept, so the release can be retried
    t = timed([&] { return adopted.extend(60000); });
    CHECK_EQ(t.status, Status::read_only);
    CHECK(not_held(adopted));
    // Reads work on a replica.
    LockInfo info;
    CHECK_EQ(adopted.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    // Nothing changed on the master.
    CHECK_EQ(master.cli({"GET", "sf:ro"}), token);
    CHECK(std::atoll(master.cli({"PTTL", "sf:ro"}).c_str()) <= 30000);
    // A script that finds nothing to change never writes, so the replica answers it: a release
    // of a key the replica does not have is expired, not read_only.
    Lock absent(r.conn, "sf:ro:absent");
    REQUIRE_EQ(absent.adopt("no-such-token"), Status::ok);
    CHECK_EQ(absent.release(), Status::expired);

#ifdef RESPLOCK_CLI
    support::Result res = resplock_cli({"-u", replica.url(), "acquire", "sf:ro:cli"});
    CHECK_EQ(res.code, 69);  // the server cannot serve the lock now
    CHECK(one_error_line(res.err));
    CHECK(contains(res.err, "read-only replica") && contains(res.err, "READONLY"));
    CHECK_EQ(res.out, std::string());
    res = resplock_cli({"-u", replica.url(), "release", "sf:ro", token});
    CHECK_EQ(res.code, 69);  // the server cannot serve the lock now
    CHECK(one_error_line(res.err));
    CHECK(contains(res.err, "read-only replica"));
    CHECK_EQ(master.cli({"GET", "sf:ro"}), token);
#endif

    // Promoted (REPLICAOF NO ONE), the same node and the same objects work.
    CHECK_EQ(replica.cli({"REPLICAOF", "NO", "ONE"}), std::string("OK"));
    CHECK_EQ(adopted.extend(30000), Status::ok);
    CHECK(adopted.held());
    CHECK_EQ(adopted.release(), Status::ok);
    CHECK_EQ(replica.cli({"EXISTS", "sf:ro"}), std::string("0"));
    CHECK_EQ(fresh.acquire(10000), Status::ok);
    CHECK_EQ(replica.cli({"GET", "sf:ro:new"}), std::string(fresh.token()));
    CHECK_EQ(fresh.release(), Status::ok);
}

// ---------------------------------------------------------------------------------------------
// BUSY and LOADING

TEST(long_running_script_is_server_busy_until_killed) {
    support::RedisServer srv({"--busy-reply-threshold", "100"});
    REQUIRE(srv.running());
    constexpr std::uint32_t timeout_ms = 1000;
    Client c(srv.port(), timeout_ms);
    Lock before(c.conn, "sf:busy:before"), lock(c.conn, "sf:busy");
    REQUIRE_EQ(before.acquire(30000), Status::ok);

    support::Process script;
    REQUIRE(script.start({"redis-cli", "-h", "127.0.0.1", "-p", std::to_string(srv.port()), "EVAL",
                          "while true do end", "0"}));
    REQUIRE(wait_until([&] { return starts_with(srv.cli({"PING"}), "BUSY "); }, 5000));

    Timed t = timed([&] { return lock.acquire(10000); });
    CHECK_EQ(t.status, Status::server_busy);
    CHECK(within(t, timeout_ms));
    CHECK(starts_with(c.conn.error_text(), "BUSY "));
    CHECK(not_held(lock));
    CHECK(lock.token().empty());
    t = timed([&] { return lock.try_acquire(10000, 500); });
    CHECK_EQ(t.status, Status::server_busy);  // retried (the SET did not run) until the wait ended
    CHECK(t.ms >= 450);
    CHECK(within(t, 500 + timeout_ms));
    CHECK(not_held(lock));

    const std::uint32_t remaining = before.remaining_ms();
    t = timed([&] { return before.extend(30000); });
    CHECK_EQ(t.status, Status::server_busy);
    CHECK(within(t, timeout_ms));
    CHECK(before.remaining_ms() <= remaining);
    CHECK_EQ(before.release(), Status::server_busy);
    CHECK(!before.token().empty());  // kept for a retry

#ifdef RESPLOCK_CLI
    const support::Result r = resplock_cli({"-u", srv.url(), "acquire", "sf:busy:cli"});
    CHECK_EQ(r.code, 69);  // the server cannot serve the lock now
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "running a script") && contains(r.err, "BUSY"));
#endif

    CHECK_EQ(srv.cli({"SCRIPT", "KILL"}), std::string("OK"));
    const support::Result killed = script.wait(5);
    CHECK(killed.code != -1);  // the script's client got its answer and exited
    CHECK(contains(killed.out + killed.err, "killed"));

    CHECK_EQ(before.release(), Status::ok);
    CHECK_EQ(srv.cli({"EXISTS", "sf:busy:before"}), std::string("0"));
    CHECK_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(srv.cli({"GET", "sf:busy"}), std::string(lock.token()));
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(loading_server_is_loading_and_try_acquire_waits_for_it) {
    TempDir dir;
    REQUIRE(!dir.path.empty());
    support::RedisServer srv({"--dir", dir.path.c_str(), "--enable-debug-command", "local"});
    REQUIRE(srv.running());
    constexpr std::uint32_t timeout_ms = 1000;
    Client c(srv.port(), timeout_ms);
    Lock before(c.conn, "sf:load:before"), lock(c.conn, "sf:load");
    REQUIRE_EQ(before.acquire(30000), Status::ok);

    // A reload long enough to watch: 3000 keys at 0.5 ms each, answering clients (with LOADING)
    // every 1 KB read. Both settings are Redis's own (hidden) test knobs.
    CHECK_EQ(srv.cli({"DEBUG", "POPULATE", "3000", "sf:fill", "10"}), std::string("OK"));
    CHECK_EQ(srv.cli({"CONFIG", "SET", "key-load-delay", "500"}), std::string("OK"));
    CHECK_EQ(srv.cli({"CONFIG", "SET", "loading-process-events-interval-bytes", "1024"}),
             std::string("OK"));
    support::Process reload;
    REQUIRE(reload.start(
        {"redis-cli", "-h", "127.0.0.1", "-p", std::to_string(srv.port()), "DEBUG", "RELOAD"}));
    REQUIRE(wait_until([&] { return starts_with(srv.cli({"PING"}), "LOADING "); }, 5000));

    Timed t = timed([&] { return lock.acquire(10000); });
    CHECK_EQ(t.status, Status::loading);
    CHECK(within(t, timeout_ms));
    CHECK(not_held(lock));
    CHECK(lock.token().empty());
    const std::uint32_t remaining = before.remaining_ms();
    t = timed([&] { return before.extend(30000); });
    CHECK_EQ(t.status, Status::loading);
    CHECK(before.remaining_ms() <= remaining);

    // try_acquire treats LOADING as transient and retries until the data set is in.
    t = timed([&] { return lock.try_acquire(10000, 8000); });
    CHECK_EQ(t.status, Status::ok);
    CHECK(within(t, 8000 + timeout_ms));
    CHECK(lock.held());
    const support::Result r = reload.wait(10);
    CHECK_EQ(r.code, 0);
    CHECK(contains(r.out, "OK"));

    // DEBUG RELOAD saved before loading: the earlier lock survived it with its token.
    CHECK_EQ(srv.cli({"GET", "sf:load:before"}), std::string(before.token()));
    CHECK_EQ(before.extend(30000), Status::ok);
    CHECK_EQ(before.release(), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
}
