// Redis Sentinel with real processes on 127.0.0.1, deployed the standard way: a master, two
// replicas and three sentinels (quorum 2). The library and the tool find the master through the
// sentinels and lock on it; a forced failover (SENTINEL FAILOVER) in the middle of a
// `resplock run` keeps its lock (the renewals follow the new master) and a lock taken before it is
// released after it; unreachable sentinels and an unknown master name fail with exit 69 and a
// message naming them; a dead first sentinel is skipped.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ha/sentinel.hpp"
#include "sentinel_client.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::RedisServer;
using support::Result;
using support::SentinelTopology;
using support::wait_until;

Result cli(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {RESPLOCK_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    return support::run(argv, {}, 30);
}

bool one_message(const std::string& err) {
    return err.rfind("resplock: ", 0) == 0 && !err.empty() && err.back() == '\n' &&
           err.find('\n') == err.size() - 1;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

// A temporary folder, removed with what it holds even when a check fails.
struct ScratchDir {
    std::string path;
    ScratchDir() {
        char tmpl[] = "/tmp/resplock-sentinel-run-XXXXXX";
        if (mkdtemp(tmpl) != nullptr) path = tmpl;
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ~ScratchDir() {
        if (path.empty()) return;
        unlink((path + "/done").c_str());
        rmdir(path.c_str());
    }
};

// The topology shared by the tests that do not fail over.
SentinelTopology& shared() {
    static SentinelTopology t;
    return t;
}

// How many replicas the server's ROLE lists (-1 if it is not a master). redis-cli prints the
// reply one element a line: "master", the offset, then host, port and offset of each replica.
int role_replicas(RedisServer& server) {
    const std::string out = server.cli({"ROLE"});
    if (out.rfind("master\n", 0) != 0) return -1;
    const long lines = std::count(out.begin(), out.end(), '\n') + 1;
    return static_cast<int>((lines - 2) / 3);
}

// Through the sentinels of `t`: the library's Lock acquires, extends and releases on the master;
// the tool's acquire, status, release and `run KEY -- true` exit 0.
void locks_through(SentinelTopology& t, const std::string& key) {
    support::SentinelClient client(t);
    REQUIRE(client.added);
    resplock::Lock lock(client.conn, key);
    const resplock::Status acquired = lock.acquire(10000);
    CHECK_EQ(acquired, resplock::Status::ok);
    if (acquired == resplock::Status::ok) {
        CHECK_EQ(client.sentinel.master().port, t.master().port());
        CHECK_EQ(t.master().cli({"GET", key}), std::string(lock.token()));
        CHECK_EQ(lock.extend(10000), resplock::Status::ok);
        CHECK_EQ(lock.release(), resplock::Status::ok);
        CHECK_EQ(t.master().cli({"EXISTS", key}), "0");
    }

    const Result a = cli({"--url", t.url(), "acquire", key});
    CHECK_EQ(a.code, 0);
    if (a.code != 0) std::printf("      acquire stderr: %s", a.err.c_str());
    if (a.code == 0) {
        CHECK_EQ(t.master().cli({"GET", key}), trimmed(a.out));
        CHECK_EQ(cli({"--url", t.url(), "release", key, trimmed(a.out)}).code, 0);
    }
    // status of a key set on the master directly.
    REQUIRE_EQ(t.master().cli({"SET", key, "0123456789abcdef0123456789abcdef", "PX", "10000"}),
               "OK");
    const Result s = cli({"--url", t.url(), "status", key});
    CHECK_EQ(s.code, 0);
    if (s.code != 0) std::printf("      status stderr: %s", s.err.c_str());
    CHECK(contains(s.out, "held"));
    REQUIRE_EQ(t.master().cli({"DEL", key}), "1");
    const Result r = cli({"--url", t.url(), "run", key, "--", "true"});
    CHECK_EQ(r.code, 0);
    if (r.code != 0) std::printf("      run stderr: %s", r.err.c_str());
    CHECK_EQ(t.master().cli({"EXISTS", key}), "0");
}

}  // namespace

// The ROLE reply of a master with two replicas holds 12 values (4, plus 4 per replica): the
// standard deployment's master must be confirmed however long that reply is.
TEST(a_master_with_two_replicas_is_confirmed_and_locked_on) {
    SentinelTopology& t = shared();
    REQUIRE(t.ok());
    REQUIRE_EQ(role_replicas(t.master()), 2);
    locks_through(t, "sentinel:two-replicas");
}

// Five replicas: a ROLE reply of 24 values (about 250 bytes).
TEST(a_master_with_five_replicas_is_confirmed_and_locked_on) {
    SentinelTopology t;
    REQUIRE(t.ok());
    REQUIRE(t.add_replicas(3));
    REQUIRE_EQ(role_replicas(t.master()), 5);
    locks_through(t, "sentinel:five-replicas");
}

TEST(library_resolves_the_master_and_locks_on_it) {
    SentinelTopology& t = shared();
    REQUIRE(t.ok());
    resplock::Sentinel sentinel(t.name());
    for (std::size_t i = 0; i < t.sentinels(); ++i)
        REQUIRE(sentinel.add("127.0.0.1", t.sentinel_port(i)));
    resplock_posix_t ctx;
    const resplock_port_t port = support::posix_port(ctx);
    resplock::ConnectionConfig config;
    config.router = &sentinel;
    config.host = "no.such.host.invalid";  // not used with a router
    char buf[512];
    resplock::Connection conn(port, config, buf, sizeof buf);
    resplock::Lock lock(conn, "sentinel:lib");
    REQUIRE_EQ(lock.acquire(10000), resplock::Status::ok);
    CHECK_EQ(sentinel.master().port, t.master().port());
    CHECK_EQ(sentinel.tried(), std::size_t{1});
    CHECK_EQ(t.master().cli({"GET", "sentinel:lib"}), std::string(lock.token()));
    CHECK_EQ(lock.release(), resplock::Status::ok);
    CHECK_EQ(t.master().cli({"EXISTS", "sentinel:lib"}), "0");
}

TEST(cli_acquires_and_releases_through_the_sentinels) {
    SentinelTopology& t = shared();
    REQUIRE(t.ok());
    const Result a = cli({"--url", t.url(), "acquire", "sentinel:cli"});
    REQUIRE_EQ(a.code, 0);
    const std::string token = trimmed(a.out);
    CHECK_EQ(t.master().cli({"GET", "sentinel:cli"}), token);
    // REDIS_URL may hold it too, and --url lists split around it, not inside it.
    const Result s =
        support::run({RESPLOCK_CLI, "status", "sentinel:cli"}, {{"REDIS_URL", t.url()}});
    CHECK_EQ(s.code, 0);
    CHECK(contains(s.out, "held"));
    const Result r = cli({"--url", t.url(), "release", "sentinel:cli", token});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(t.master().cli({"EXISTS", "sentinel:cli"}), "0");
}

TEST(a_dead_first_sentinel_is_skipped) {
    SentinelTopology& t = shared();
    REQUIRE(t.ok());
    const std::uint16_t dead = support::free_port();
    const std::string url = t.url("127.0.0.1:" + std::to_string(dead));
    const Result a = cli({"--url", url, "acquire", "sentinel:dead-first"});
    REQUIRE_EQ(a.code, 0);
    CHECK_EQ(t.master().cli({"GET", "sentinel:dead-first"}), trimmed(a.out));
    CHECK_EQ(cli({"--url", url, "release", "sentinel:dead-first", trimmed(a.out)}).code, 0);
}

// Sentinel i stopped (SIGSTOP: a hung host, whose kernel still accepts connections that nobody
// answers) for the life of the guard, continued however the test ends.
struct FrozenSentinel {
    SentinelTopology& t;
    std::size_t i;
    bool stopped;
    FrozenSentinel(SentinelTopology& topology, std::size_t index)
        : t(topology), i(index), stopped(topology.pause_sentinel(index)) {}
    FrozenSentinel(const FrozenSentinel&) = delete;
    FrozenSentinel& operator=(const FrozenSentinel&) = delete;
    ~FrozenSentinel() {
        if (stopped) t.resume_sentinel(i);
    }
};

// One frozen sentinel of three, the first the URL lists or the last: acquire, status and release
// go on as before (the others are a majority), and a run that held its lock before the freeze
// keeps it to the end. The time each command took is printed (a figure, not a bound).
TEST(a_frozen_sentinel_costs_nothing_while_the_others_answer) {
    SentinelTopology& t = shared();
    REQUIRE(t.ok());
    for (const std::size_t frozen : {std::size_t{0}, t.sentinels() - 1}) {
        const std::string key = "sentinel:frozen-" + std::to_string(frozen);
        support::Process run;
        REQUIRE(run.start({RESPLOCK_CLI, "--url", t.url(), "--ttl", "1500", "run", key + ":run",
                           "--", "sleep", "4"}));
        REQUIRE(support::wait_until(
            [&] {
                return !t.master().cli({"GET", key + ":run"}).empty();
            },
            10));
        const FrozenSentinel guard(t, frozen);
        REQUIRE(guard.stopped);
        for (int i = 0; i < 3; ++i) {
            const auto start = std::chrono::steady_clock::now();
            const Result a = cli({"--url", t.url(), "acquire", key});
            const double acquired_s = support::seconds_since(start);
            CHECK_EQ(a.code, 0);
            if (a.code != 0) std::printf("      acquire stderr: %s", a.err.c_str());
            const Result st = cli({"--url", t.url(), "status", key});
            CHECK_EQ(st.code, a.code == 0 ? 0 : 1);
            const auto released_from = std::chrono::steady_clock::now();
            const Result r = cli({"--url", t.url(), "release", key, trimmed(a.out)});
            CHECK(a.code != 0 || r.code == 0);
            std::printf("      sentinel %zu frozen: acquire %.2f s, release %.2f s\n", frozen,
                        acquired_s, support::seconds_since(released_from));
        }
        const Result held = run.wait(20);
        CHECK_EQ(held.code, 0);
        if (held.code != 0) std::printf("      run stderr: %s", held.err.c_str());
        CHECK_EQ(t.master().cli({"EXISTS", key}), "0");
    }
}

TEST(a_write_too_few_sentinels_confirm_is_given_back_and_says_so) {
    // One dead sentinel and one live one: the live one names the master, but that is not more
    // than half of the two configured, so no write counts (a failover could have happened
    // unseen). Exit 69, the lock given back, and the message says why (no failover claimed).
    SentinelTopology& t = shared();
    REQUIRE(t.ok());
    const std::uint16_t dead = support::free_port();
    const std::string url = "redis-sentinel://127.0.0.1:" + std::to_string(dead) +
                            ",127.0.0.1:" + std::to_string(t.sentinel_port(0)) + "#mymaster";
    const Result r = cli({"--url", url, "acquire", "sentinel:one-of-two"});
    CHECK_EQ(r.code, 69);
    CHECK(one_message(r.err));
    CHECK(contains(r.err, "only 1 of 2 sentinels confirmed"));
    CHECK(!contains(r.err, "failover"));
    if (!contains(r.err, "only 1 of 2")) std::printf("      stderr: %s\n", r.err.c_str());
    CHECK_EQ(t.master().cli({"EXISTS", "sentinel:one-of-two"}), "0");
}

TEST(unreachable_sentinels_exit_69_naming_them) {
    const std::uint16_t p1 = support::free_port();
    const std::uint16_t p2 = support::free_port();
    const std::string url = "redis-sentinel://127.0.0.1:" + std::to_string(p1) +
                            ",127.0.0.1:" + std::to_string(p2) + "#mymaster";
    const Result r = cli({"--url", url, "acquire", "sentinel:none"});
    CHECK_EQ(r.code, 69);
    CHECK(one_message(r.err));
    CHECK(contains(r.err, "no sentinel reachable"));
    CHECK(contains(r.err, "127.0.0.1:" + std::to_string(p1)));
    CHECK(contains(r.err, "127.0.0.1:" + std::to_string(p2)));
    if (!one_message(r.err)) std::printf("      stderr: %s\n", r.err.c_str());
}

TEST(an_unknown_master_name_exits_69_naming_it) {
    SentinelTopology& t = shared();
    REQUIRE(t.ok());
    const std::string url = "redis-sentinel://127.0.0.1:" + std::to_string(t.sentinel_port(0)) +
                            ",127.0.0.1:" + std::to_string(t.sentinel_port(1)) + "#no-such-master";
    const Result r = cli({"--url", url, "acquire", "sentinel:unknown"});
    CHECK_EQ(r.code, 69);
    CHECK(one_message(r.err));
    CHECK(contains(r.err, "'no-such-master'"));
    CHECK(contains(r.err, "unknown"));
    if (!one_message(r.err)) std::printf("      stderr: %s\n", r.err.c_str());
}

TEST(failover_during_run_keeps_the_lock_and_release_follows_the_new_master) {
    SentinelTopology t;
    REQUIRE(t.ok());
    RedisServer& former = t.master();
    // A lock taken before the failover, released after it.
    const Result a = cli({"--url", t.url(), "--ttl", "120000", "acquire", "sentinel:before"});
    if (a.code != 0) std::printf("      acquire stderr: %s\n", a.err.c_str());
    REQUIRE_EQ(a.code, 0);
    const std::string token = trimmed(a.out);
    // A run whose lock must survive: renewed every ttl/3 (15 s), COMMAND ends when `done` exists.
    const ScratchDir dir;
    REQUIRE(!dir.path.empty());
    const std::string done = dir.path + "/done";
    support::Process run;
    REQUIRE(run.start({RESPLOCK_CLI, "--url", t.url(), "--ttl", "45000", "run", "sentinel:run",
                       "--", "sh", "-c", "while [ ! -e '" + done + "' ]; do sleep 0.1; done"}));
    if (!wait_until([&] { return !former.cli({"GET", "sentinel:run"}).empty(); }, 10)) {
        std::printf("      run stderr: %s\n", run.wait(1).err.c_str());
        REQUIRE(false);
    }
    const std::string run_token = former.cli({"GET", "sentinel:run"});
    // Both keys on both replicas before one of them takes over.
    CHECK_EQ(former.cli({"WAIT", "2", "5000"}), "2");
    for (std::size_t i = 0; i < t.replicas(); ++i) {
        REQUIRE(wait_until(
            [&] {
                return t.replica(i).cli({"GET", "sentinel:run"}) == run_token;
            },
            5));
    }
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(t.failover());
    std::printf("      failover took %.1f s\n", support::seconds_since(t0));
    RedisServer& promoted = t.master();
    REQUIRE(&promoted != &former);
    // A replica is the master now; the run's next renewals must reach it (the former master is
    // made a replica by the sentinels a few seconds later, which closes the run's connection).
    // A renewal shows as the key's TTL going up again.
    long last = std::atol(promoted.cli({"PTTL", "sentinel:run"}).c_str());
    CHECK(last > 0);
    const bool renewed = wait_until(
        [&] {
            const long now = std::atol(promoted.cli({"PTTL", "sentinel:run"}).c_str());
            const bool up = now > last + 1000;
            last = now;
            return up;
        },
        45);
    CHECK(renewed);
    std::printf("      renewal on the new master %.1f s after the failover began\n",
                support::seconds_since(t0));
    CHECK_EQ(promoted.cli({"GET", "sentinel:run"}), run_token);
    // COMMAND ends: the run exits 0 (its lock held throughout) and releases on the new master.
    std::FILE* f = std::fopen(done.c_str(), "w");
    if (f != nullptr) std::fclose(f);
    const Result r = run.wait(150);  // counted from the start of the run
    CHECK_EQ(r.code, 0);
    if (r.code != 0) std::printf("      run stderr: %s\n", r.err.c_str());
    CHECK_EQ(promoted.cli({"EXISTS", "sentinel:run"}), "0");
    // The lock taken before the failover: released through the new master.
    const Result rel = cli({"--url", t.url(), "release", "sentinel:before", token});
    CHECK_EQ(rel.code, 0);
    if (rel.code != 0) std::printf("      release stderr: %s\n", rel.err.c_str());
    CHECK_EQ(promoted.cli({"EXISTS", "sentinel:before"}), "0");
}
