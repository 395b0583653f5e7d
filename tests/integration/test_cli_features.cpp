// The resplock tool's lock variants against real redis-servers: --fence, --once-per, --wake, a
// quorum lock over several --url (five servers, some of them killed), and `status` on a key that
// a reentrant lock holds.
#include <time.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/reentrant_lock.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::seconds_since;
using support::sleep_ms;

using Clock = std::chrono::steady_clock;
using support::Result;

Result cli(std::vector<std::string> args, const support::Env& env = {}) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return support::run(args, env, 30);
}

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

// The random part of a token the tool prints (after its owner label and ':').
std::string random_part(const std::string& token) {
    const std::size_t colon = token.rfind(':');
    return colon == std::string::npos ? token : token.substr(colon + 1);
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

// The token and the fencing number of `acquire --fence`'s "TOKEN FENCE" line.
struct Fenced {
    std::string token;
    unsigned long long fence = 0;
};

Fenced parse_fenced(const std::string& out) {
    const std::string line = trim(out);
    const std::size_t space = line.find(' ');
    if (space == std::string::npos) return {};
    return {line.substr(0, space), std::strtoull(line.c_str() + space + 1, nullptr, 10)};
}

// Five servers for the quorum cases, started once.
std::vector<std::unique_ptr<support::RedisServer>>& quorum_servers() {
    static std::vector<std::unique_ptr<support::RedisServer>> servers = [] {
        std::vector<std::unique_ptr<support::RedisServer>> v;
        for (int i = 0; i < 5; ++i)
            v.push_back(std::make_unique<support::RedisServer>());
        return v;
    }();
    return servers;
}

// "--url A --url B ..." for the servers [0, n).
std::vector<std::string> quorum_urls(std::size_t n) {
    std::vector<std::string> args;
    for (std::size_t i = 0; i < n; ++i) {
        args.push_back("--url");
        args.push_back(quorum_servers()[i]->url());
    }
    return args;
}

std::vector<std::string> join(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace

TEST_TAGGED(acquire_fence_prints_token_and_increasing_number, "slow_launcher_ok") {
    const std::string u = server().url();
    unsigned long long last = 0;
    for (int i = 0; i < 3; ++i) {
        const Result r = cli({"-u", u, "--fence", "acquire", "clif:fence"});
        REQUIRE(r.code == 0);
        const Fenced f = parse_fenced(r.out);
        CHECK_EQ(random_part(f.token).size(), std::size_t{32});
        CHECK_EQ(server().cli({"GET", "clif:fence"}), f.token);
        CHECK(f.fence > last);
        CHECK_EQ(std::to_string(f.fence), server().cli({"GET", "{clif:fence}:fence"}));
        last = f.fence;
        CHECK_EQ(cli({"-u", u, "release", "clif:fence", f.token}).code, 0);
    }
    // A busy attempt takes no number.
    const Result held = cli({"-u", u, "--fence", "acquire", "clif:fence"});
    REQUIRE(held.code == 0);
    const Fenced h = parse_fenced(held.out);
    CHECK(h.fence > last);
    CHECK_EQ(cli({"-u", u, "--fence", "acquire", "clif:fence"}).code, 75);
    CHECK_EQ(server().cli({"GET", "{clif:fence}:fence"}), std::to_string(h.fence));
    CHECK_EQ(cli({"-u", u, "release", "clif:fence", h.token}).code, 0);
    // All 64 bits are printed: a counter far above the clock is followed by one, digit for digit.
    server().cli({"SET", "{clif:fence}:fence", "9223372036854775806"});
    const Result high = cli({"-u", u, "--fence", "acquire", "clif:fence"});
    REQUIRE(high.code == 0);
    const std::string line = trim(high.out);
    CHECK_EQ(line.substr(line.find(' ') + 1), std::string("9223372036854775807"));
    CHECK_EQ(cli({"-u", u, "release", "clif:fence", line.substr(0, line.find(' '))}).code, 0);
    server().cli({"DEL", "{clif:fence}:fence"});
}

TEST_TAGGED(run_fence_exports_fence_and_token, "slow_launcher_ok") {
    const std::string u = server().url();
    const Result r = cli({"-u", u, "--fence", "run", "clif:runfence", "--", "sh", "-c",
                          "echo \"$RESPLOCK_TOKEN $RESPLOCK_FENCE\""});
    CHECK_EQ(r.code, 0);
    const Fenced f = parse_fenced(r.out);
    CHECK(f.fence >= 1);
    CHECK_EQ(std::to_string(f.fence), server().cli({"GET", "{clif:runfence}:fence"}));
    CHECK_EQ(random_part(f.token).size(), std::size_t{32});
    // RESPLOCK_FENCE carries all 64 bits.
    server().cli({"SET", "{clif:runfence}:fence", "9000000000000000000"});
    const Result high = cli(
        {"-u", u, "--fence", "run", "clif:runfence", "--", "sh", "-c", "echo \"$RESPLOCK_FENCE\""});
    CHECK_EQ(high.code, 0);
    CHECK_EQ(trim(high.out), std::string("9000000000000000001"));
    server().cli({"DEL", "{clif:runfence}:fence"});
    // Without --fence, no RESPLOCK_FENCE.
    const Result plain = cli(
        {"-u", u, "run", "clif:runfence", "--", "sh", "-c", "echo \"[${RESPLOCK_FENCE-unset}]\""});
    CHECK_EQ(trim(plain.out), std::string("[unset]"));
}

TEST(run_once_per_runs_once_per_interval) {
    const std::string u = server().url();
    const std::vector<std::string> run = {"-u",  u,           "--once-per", "1500",
                                          "run", "clif:once", "--",         "true"};
    CHECK_EQ(cli(run).code, 0);
    // Released at once, yet the interval is not over: busy, COMMAND not run.
    const Result again =
        cli({"-u", u, "--once-per", "1500", "run", "clif:once", "--", "sh", "-c", "echo ran"});
    CHECK_EQ(again.code, 75);
    CHECK(again.out.empty());
    CHECK(again.err.find("--once-per") != std::string::npos);
    const long long pttl = std::atoll(server().cli({"PTTL", "{clif:once}:once"}).c_str());
    CHECK(pttl > 0 && pttl <= 1500);
    // Waiting past the interval runs it again.
    const auto start = Clock::now();
    CHECK_EQ(
        cli({"-u", u, "--once-per", "1500", "--wait", "5000", "run", "clif:once", "--", "true"})
            .code,
        0);
    CHECK(seconds_since(start) < 4.0);
}

TEST(wake_waiter_gets_the_lock_when_the_holder_releases) {
    const std::string u = server().url();
    const Result held = cli({"-u", u, "--ttl", "20000", "acquire", "clif:wake"});
    REQUIRE(held.code == 0);
    const std::string token = trim(held.out);
    support::Process waiter;
    REQUIRE(
        waiter.start({RESPLOCK_CLI, "-u", u, "--wake", "--wait", "10000", "acquire", "clif:wake"}));
    sleep_ms(500);
    CHECK_EQ(cli({"-u", u, "--wake", "release", "clif:wake", token}).code, 0);
    const auto start = Clock::now();
    const Result w = waiter.wait(15);
    CHECK_EQ(w.code, 0);
    CHECK(seconds_since(start) < 5.0);  // far before the holder's 20 s TTL
    CHECK_EQ(server().cli({"GET", "clif:wake"}), trim(w.out));
    const std::string blpop = server().cli({"INFO", "commandstats"});
    CHECK(blpop.find("cmdstat_blpop") != std::string::npos);
    CHECK_EQ(cli({"-u", u, "release", "clif:wake", trim(w.out)}).code, 0);
}

TEST_TAGGED(variant_options_are_refused_where_they_do_not_apply, "slow_launcher_ok") {
    const std::string u = server().url();
    CHECK_EQ(cli({"-u", u, "--fence", "status", "clif:x"}).code, 64);
    CHECK_EQ(cli({"-u", u, "--once-per", "10", "release", "clif:x", "t"}).code, 64);
    CHECK_EQ(cli({"-u", u, "--once-per", "0", "acquire", "clif:x"}).code, 64);
    CHECK_EQ(cli({"-u", u, "--wake=1", "acquire", "clif:x"}).code, 64);
    const Result q = cli(join(quorum_urls(3), {"--fence", "acquire", "clif:x"}));
    CHECK_EQ(q.code, 64);
    CHECK(q.err.find("one server only") != std::string::npos ||
          q.err.find("with one server") != std::string::npos);
    std::vector<std::string> six = quorum_urls(5);
    six.push_back("--url");
    six.push_back(server().url());
    six.push_back("acquire");
    six.push_back("clif:x");
    CHECK_EQ(cli(six).code, 64);
}

TEST_TAGGED(quorum_acquire_status_release_over_five_servers, "slow_launcher_ok") {
    const Result r = cli(join(quorum_urls(5), {"--ttl", "10000", "acquire", "clif:q"}));
    REQUIRE(r.code == 0);
    const std::string token = trim(r.out);
    for (auto& s : quorum_servers())
        CHECK_EQ(s->cli({"GET", "clif:q"}), token);
    const Result st = cli(join(quorum_urls(5), {"status", "clif:q"}));
    CHECK_EQ(st.code, 0);
    CHECK(st.out.rfind("held ", 0) == 0);
    // Busy for anyone else.
    CHECK_EQ(cli(join(quorum_urls(5), {"acquire", "clif:q"})).code, 75);
    CHECK_EQ(cli(join(quorum_urls(5), {"release", "clif:q", token})).code, 0);
    for (auto& s : quorum_servers())
        CHECK_EQ(s->cli({"EXISTS", "clif:q"}), std::string("0"));
    CHECK_EQ(cli(join(quorum_urls(5), {"status", "clif:q"})).code, 1);
}

TEST_TAGGED(quorum_comma_list_and_run, "slow_launcher_ok") {
    std::string list;
    for (std::size_t i = 0; i < 3; ++i)
        list += (i ? "," : "") + quorum_servers()[i]->url();
    const Result r =
        cli({"--url", list, "run", "clif:qrun", "--", "sh", "-c", "echo \"$RESPLOCK_TOKEN\""});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(random_part(trim(r.out)).size(), std::size_t{32});
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK_EQ(quorum_servers()[i]->cli({"EXISTS", "clif:qrun"}), std::string("0"));
    }
    // REDIS_URL may hold the list too.
    const Result env = cli({"acquire", "clif:qenv"}, {{"REDIS_URL", list}});
    CHECK_EQ(env.code, 0);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK_EQ(quorum_servers()[i]->cli({"GET", "clif:qenv"}), trim(env.out));
    }
}

// COMMAND deletes KEY on every server and exits 0, long before the first renewal: the release
// finds the lock lost, and resplock exits 70, naming COMMAND's status.
TEST_TAGGED(quorum_run_exits_70_when_the_release_finds_the_lock_lost, "slow_launcher_ok") {
    std::string script;
    for (std::size_t i = 0; i < 3; ++i) {
        script += "redis-cli -h 127.0.0.1 -p " + std::to_string(quorum_servers()[i]->port()) +
                  " DEL clif:qlost >/dev/null; ";
    }
    const Result r = cli(join(quorum_urls(3), {"--ttl", "30000", "run", "clif:qlost", "--", "sh",
                                               "-c", script + "exit 0"}));
    CHECK_EQ(r.code, 70);
    if (!CHECK(r.err.find("lock lost") != std::string::npos &&
               r.err.find("status 0") != std::string::npos)) {
        std::printf("      stderr: %s", r.err.c_str());
    }
    for (std::size_t i = 0; i < 3; ++i)
        CHECK_EQ(quorum_servers()[i]->cli({"EXISTS", "clif:qlost"}), std::string("0"));
}

TEST(quorum_survives_a_minority_down_and_refuses_a_majority_down) {
    auto& s = quorum_servers();
    s[3]->kill();
    s[4]->kill();
    const Result two_down = cli(join(quorum_urls(5), {"--timeout", "500", "acquire", "clif:qk"}));
    CHECK_EQ(two_down.code, 0);
    for (std::size_t i = 0; i < 3; ++i)
        CHECK_EQ(s[i]->cli({"GET", "clif:qk"}), trim(two_down.out));
    CHECK_EQ(cli(join(quorum_urls(5), {"release", "clif:qk", trim(two_down.out)})).code, 0);

    s[2]->kill();
    const Result three_down =
        cli(join(quorum_urls(5), {"--timeout", "500", "acquire", "clif:qk3"}));
    CHECK_EQ(three_down.code, 69);
    CHECK(three_down.out.empty());
    for (std::size_t i = 0; i < 2; ++i)
        CHECK_EQ(s[i]->cli({"EXISTS", "clif:qk3"}), "0");
    for (std::size_t i = 2; i < 5; ++i)
        REQUIRE(s[i]->restart());
}

TEST(status_shows_a_reentrant_hold_as_held) {
    // A reentrant lock keeps a hash at its key, where the plain lock expects a string.
    resplock_posix_t net;
    resplock::ConnectionConfig config;
    config.port = server().port();
    char buf[512];
    resplock::Connection conn(support::posix_port(net), config, buf, sizeof buf);
    resplock::ReentrantLock lock(conn, "clif:reentrant", "owner-1");
    REQUIRE(lock.acquire(20000) == resplock::Status::ok);
    REQUIRE(lock.acquire(20000) == resplock::Status::ok);  // entered twice
    const Result r = cli({"-u", server().url(), "status", "clif:reentrant"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.err, std::string());
    REQUIRE(r.out.rfind("held ", 0) == 0);
    const long long ttl = std::atoll(r.out.c_str() + 5);
    CHECK(ttl > 15000 && ttl <= 20000);
    // And busy for a plain acquire, which leaves it alone.
    CHECK_EQ(cli({"-u", server().url(), "acquire", "clif:reentrant"}).code, 75);
    CHECK(lock.release() == resplock::Status::ok);
    CHECK(lock.release() == resplock::Status::ok);
    const Result gone = cli({"-u", server().url(), "status", "clif:reentrant"});
    CHECK_EQ(gone.code, 1);
    CHECK_EQ(gone.out, std::string("free\n"));
}
