// Replica-acknowledged locks against a real master and one replica on 127.0.0.1: WAIT met (one
// replica asked for) and unmet (two asked for: the lock is released, the key is gone), an extend
// not acknowledged, the same for the semaphore's leases (a fair hand-off included), the Renewer and
// `resplock run` treating an unacknowledged renewal as a failed one, and the CLI's exit 69 with how
// many replicas acknowledged.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <stdlib.h>

#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/renewer.hpp"
#include "resplock/variants/semaphore.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::Renewer;
using resplock::Status;

namespace {

// Fresh directories for the servers' files (a master writes its snapshot for the replica's first
// sync, and the replica writes what it received), removed at exit after the servers stopped:
// this object is made before them, so it is destroyed after them.
struct ScratchDirs {
    char dirs[2][32] = {};
    int used = 0;
    ~ScratchDirs() {
        for (int i = 0; i < used; ++i) {
            std::error_code ignored;
            std::filesystem::remove_all(dirs[i], ignored);
        }
    }
};

const char* scratch_dir() {
    static ScratchDirs scratch;
    char* d = scratch.dirs[scratch.used];
    std::snprintf(d, sizeof scratch.dirs[0], "/tmp/resplock-replicas-XXXXXX");
    if (mkdtemp(d) == nullptr) return ".";
    ++scratch.used;
    return d;
}

support::RedisServer& master() {
    static const char* const dir = scratch_dir();  // its cleaner is made before the server
    static support::RedisServer s{"--dir", dir};
    return s;
}

// Whether the replica's link to the master is up (it has synced and acknowledges writes).
bool linked(const support::RedisServer& replica) {
    return replica.cli({"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
}

support::RedisServer& replica() {
    static const std::string master_port = std::to_string(master().port());
    static const char* const dir = scratch_dir();
    static support::RedisServer s({"--replicaof", "127.0.0.1", master_port.c_str(), "--dir", dir});
    static const bool up = support::wait_until([] { return linked(s); }, 20);
    CHECK(up);  // every test after this one fails too without a synced replica
    return s;
}

struct Client {
    resplock_posix_t ctx;
    resplock_port_t port = support::posix_port(ctx);
    ConnectionConfig config;
    char buf[512];
    Connection conn;

    explicit Client(std::uint32_t timeout_ms = 1000, char* buffer = nullptr, std::size_t size = 0)
        : config(make(timeout_ms)),
          conn(port, config, buffer != nullptr ? buffer : buf,
               buffer != nullptr ? size : sizeof buf) {}
    static ConnectionConfig make(std::uint32_t timeout_ms) {
        ConnectionConfig c;
        c.port = master().port();
        c.timeout_ms = timeout_ms;
        return c;
    }
    std::uint32_t now() const { return port.now_ms(port.ctx); }
};

long long wait_calls() {
    const std::string stats = master().cli({"INFO", "commandstats"});
    const std::size_t at = stats.find("cmdstat_wait:calls=");
    return at == std::string::npos ? 0 : std::atoll(stats.c_str() + at + 19);
}

support::Result cli(const std::vector<std::string>& args) {
    std::vector<std::string> all{RESPLOCK_CLI, "-u", master().url()};
    all.insert(all.end(), args.begin(), args.end());
    return support::run(all, {}, 30);
}

}  // namespace

TEST(wait_met_holds_and_the_replica_has_the_key) {
    (void)replica();
    Client c;
    Lock lock(c.conn, "replicas:met");
    REQUIRE(lock.set_replicas(1) == Status::ok);
    REQUIRE(lock.acquire(10000) == Status::ok);
    CHECK(lock.held());
    CHECK_EQ(lock.replicas_acknowledged(), 1U);
    // Acknowledged: the replica has applied the SET.
    CHECK(replica().cli({"GET", "replicas:met"}) == lock.token());
    CHECK_EQ(lock.extend(10000), Status::ok);
    CHECK_EQ(lock.replicas_acknowledged(), 1U);
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(wait_unmet_releases_and_the_key_is_gone) {
    (void)replica();
    Client c(600);
    Lock lock(c.conn, "replicas:unmet");
    REQUIRE(lock.set_replicas(2) == Status::ok);
    CHECK_EQ(lock.acquire(10000), Status::not_replicated);
    CHECK_EQ(lock.replicas_acknowledged(), 1U);
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    CHECK(master().cli({"EXISTS", "replicas:unmet"}) == "0");
    // try_acquire stops at the first unacknowledged attempt.
    CHECK_EQ(lock.try_acquire(10000, 2000), Status::not_replicated);
    CHECK(master().cli({"EXISTS", "replicas:unmet"}) == "0");
}

TEST(extend_unmet_keeps_no_more_than_the_old_validity) {
    (void)replica();
    Client c(600);
    Lock lock(c.conn, "replicas:extend");
    REQUIRE(lock.acquire(5000) == Status::ok);
    REQUIRE(lock.set_replicas(2) == Status::ok);
    const std::uint32_t before = lock.remaining_ms();
    CHECK_EQ(lock.extend(60000), Status::not_replicated);
    CHECK_EQ(lock.replicas_acknowledged(), 1U);
    CHECK(lock.remaining_ms() <= before);
    CHECK(lock.remaining_ms() > 0U);
    // The master did extend the key; the lock still owns it and can release it.
    CHECK(master().cli({"GET", "replicas:extend"}) == lock.token());
    CHECK(std::atoll(master().cli({"PTTL", "replicas:extend"}).c_str()) > 5000);
    CHECK_EQ(lock.release(), Status::ok);
}

// A Client whose buffer fits the semaphore's script.
struct SemClient : Client {
    char big[4096];
    explicit SemClient(std::uint32_t timeout_ms = 1000) : Client(timeout_ms, big, sizeof big) {
        REQUIRE(resplock::semaphore_buffer_min() <= sizeof big);
    }
};

TEST(semaphore_wait_met_and_unmet) {
    (void)replica();
    SemClient a, b(600);
    resplock::Semaphore met(a.conn, "replicas:sem", 2), unmet(b.conn, "replicas:sem", 2);
    REQUIRE(met.set_replicas(1) == Status::ok);
    REQUIRE(unmet.set_replicas(2) == Status::ok);
    REQUIRE(met.acquire(10000) == Status::ok);
    CHECK_EQ(met.replicas_acknowledged(), 1U);
    // Acknowledged: the replica has the lease.
    CHECK(replica().cli({"ZSCORE", "replicas:sem", std::string(met.token())}) != "");
    CHECK_EQ(met.extend(10000), Status::ok);
    CHECK_EQ(unmet.acquire(10000), Status::not_replicated);
    CHECK_EQ(unmet.replicas_acknowledged(), 1U);
    CHECK(!unmet.held());
    CHECK(unmet.token().empty());
    // Given back: only the acknowledged lease is left.
    CHECK(master().cli({"ZCARD", "replicas:sem"}) == "1");
    // An extend not acknowledged keeps no more than the old validity.
    REQUIRE(met.set_replicas(2) == Status::ok);
    const std::uint32_t before = met.remaining_ms();
    CHECK_EQ(met.extend(60000), Status::not_replicated);
    CHECK(met.remaining_ms() <= before);
    CHECK(met.remaining_ms() > 0U);
    CHECK_EQ(met.release(), Status::ok);
    CHECK(master().cli({"EXISTS", "replicas:sem"}) == "0");
}

TEST(semaphore_fair_hand_off_is_acknowledged) {
    (void)replica();
    SemClient a, b;
    resplock::Semaphore holder(a.conn, "replicas:semfair", 1, true),
        waiter(b.conn, "replicas:semfair", 1, true);
    REQUIRE(waiter.set_replicas(1) == Status::ok);
    REQUIRE(holder.acquire(10000) == Status::ok);
    Status got = Status::busy;
    std::thread t([&] { got = waiter.try_acquire(10000, 5000); });
    // Once the waiter is queued, the release hands the lease over.
    CHECK(support::wait_until(
        [] {
            return master().cli({"LLEN", "{replicas:semfair}:q"}) == "1";
        },
        5));
    CHECK_EQ(holder.release(), Status::ok);
    t.join();
    CHECK_EQ(got, Status::ok);
    CHECK_EQ(waiter.replicas_acknowledged(), 1U);
    CHECK(replica().cli({"ZSCORE", "replicas:semfair", std::string(waiter.token())}) != "");
    CHECK_EQ(waiter.release(), Status::ok);
}

TEST(renewer_retries_unacknowledged_renewals_until_the_lock_is_lost) {
    (void)replica();
    Client c(300);
    Lock lock(c.conn, "replicas:renewer");
    REQUIRE(lock.acquire(900) == Status::ok);
    REQUIRE(lock.set_replicas(2) == Status::ok);
    Renewer r;
    struct Seen {
        int calls = 0;
        Status why = Status::ok;
    } seen;
    REQUIRE(r.watch(
                lock, 900,
                [](void* user, void*, Status why) {
                    auto& s = *static_cast<Seen*>(user);
                    ++s.calls;
                    s.why = why;
                },
                &seen) == Status::ok);
    const long long waits_before = wait_calls();
    const auto start = std::chrono::steady_clock::now();
    while (seen.calls == 0 && support::seconds_since(start) < 5) {
        const std::uint32_t next = r.tick(c.now());
        std::this_thread::sleep_for(std::chrono::milliseconds(next < 10 ? next : 10));
    }
    CHECK_EQ(seen.calls, 1);
    CHECK(seen.why == Status::expired);
    // More than one renewal was tried (each followed by its WAIT) before the lock ran out.
    const long long waits = wait_calls() - waits_before;
    std::printf("    %lld unacknowledged renewals\n", waits);
    CHECK(waits >= 2);
    (void)lock.release();
}

TEST(renewer_keeps_an_acknowledged_lock) {
    (void)replica();
    Client c(300);
    Lock lock(c.conn, "replicas:renewed");
    REQUIRE(lock.set_replicas(1) == Status::ok);
    REQUIRE(lock.acquire(600) == Status::ok);
    Renewer r;
    int lost = 0;
    REQUIRE(r.watch(
                lock, 600, [](void* user, void*, Status) { ++*static_cast<int*>(user); }, &lost) ==
            Status::ok);
    const auto start = std::chrono::steady_clock::now();
    while (support::seconds_since(start) < 1.5) {
        const std::uint32_t next = r.tick(c.now());
        std::this_thread::sleep_for(std::chrono::milliseconds(next < 10 ? next : 10));
    }
    CHECK_EQ(lost, 0);
    CHECK(lock.held());
    CHECK(replica().cli({"GET", "replicas:renewed"}) == lock.token());
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(cli_exit_69_says_how_many_replicas_acknowledged) {
    (void)replica();
    const support::Result ok = cli({"--replicas", "1", "acquire", "replicas:cli"});
    CHECK_EQ(ok.code, 0);
    CHECK(replica().cli({"GET", "replicas:cli"}) + "\n" == ok.out);
    const support::Result unmet =
        cli({"--replicas", "2", "--timeout", "600", "acquire", "replicas:cli2"});
    CHECK_EQ(unmet.code, 69);
    std::printf("    %s", unmet.err.c_str());
    CHECK(unmet.err.find("1 of 2 replicas acknowledged") != std::string::npos);
    CHECK(unmet.err.find("released") != std::string::npos);
    CHECK(master().cli({"EXISTS", "replicas:cli2"}) == "0");
    const std::string token = ok.out.substr(0, ok.out.size() - 1);
    const support::Result ext =
        cli({"--replicas", "2", "--timeout", "600", "extend", "replicas:cli", token});
    CHECK_EQ(ext.code, 69);
    CHECK(ext.err.find("1 of 2 replicas acknowledged") != std::string::npos);
    CHECK_EQ(cli({"release", "replicas:cli", token}).code, 0);
    // The fair lock takes it too: its grant is on the replica once acquire returns.
    const support::Result fair = cli({"--replicas", "1", "--fair", "acquire", "replicas:cli3"});
    CHECK_EQ(fair.code, 0);
    CHECK(replica().cli({"GET", "replicas:cli3"}) + "\n" == fair.out);
    CHECK_EQ(
        cli({"--fair", "release", "replicas:cli3", fair.out.substr(0, fair.out.size() - 1)}).code,
        0);
}

// COMMAND ends well within the lock's first validity while no replica acknowledges the renewals
// (the replica is stopped once the lock is held): the lock was never lost, so the run ends when
// COMMAND does, releases the lock and exits with COMMAND's status, instead of going on renewing
// until the validity runs out and reporting the lock lost.
TEST(cli_run_ends_with_command_though_renewals_go_unacknowledged) {
    support::RedisServer& rep = replica();
    struct Resume {
        support::RedisServer& server;
        ~Resume() {
            if (server.paused()) server.resume();
            CHECK(support::wait_until([&] { return linked(server); }, 20));
        }
    } resume{rep};
    const support::CommandScratch scratch;
    REQUIRE(!scratch.dir.empty());
    support::Process run;
    REQUIRE(
        run.start({RESPLOCK_CLI, "-u", master().url(), "--replicas", "1", "--ttl", "9000", "run",
                   "replicas:run-ends", "--", "sh", "-c", scratch.command("exec sleep 5")}));
    // Stopped once COMMAND runs: the acquisition was acknowledged.
    REQUIRE(support::wait_until([&] { return scratch.has_started(); }, 10));
    REQUIRE(rep.pause());
    const support::Result r = run.wait(30);
    std::printf("    exit %d after %.1f s (COMMAND: 5 s; the lock's validity: 9 s): %s\n", r.code,
                r.secs, r.err.c_str());
    CHECK_EQ(r.code, 0);
    CHECK(master().cli({"EXISTS", "replicas:run-ends"}) == "0");
}

// Last: it stops the replica. Once the lock is held, no replica acknowledges the renewals, and
// run stops COMMAND when the lock runs out.
TEST(cli_run_stops_command_when_renewals_go_unacknowledged) {
    support::RedisServer& rep = replica();
    const support::CommandScratch scratch;
    REQUIRE(!scratch.dir.empty());
    support::Process run;
    REQUIRE(run.start({RESPLOCK_CLI, "-u", master().url(), "--replicas", "1", "--ttl", "1500",
                       "--timeout", "500", "run", "replicas:run", "--", "sh", "-c",
                       scratch.command("exec sleep 20")}));
    // Killed once COMMAND runs: the acquisition was acknowledged.
    REQUIRE(support::wait_until([&] { return scratch.has_started(); }, 10));
    rep.kill();
    const support::Result r = run.wait(30);
    std::printf("    %s", r.err.c_str());
    CHECK_EQ(r.code, 70);
    CHECK(r.secs < 15);
}
