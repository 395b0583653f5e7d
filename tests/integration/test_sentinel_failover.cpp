// Planned failovers (SENTINEL FAILOVER) of the standard Sentinel deployment (a master, two
// replicas, three sentinels, quorum 2, all on 127.0.0.1) while locks are held. The sentinels name
// the promoted replica about a second after the failover begins, but the former master stays a
// master about 10 s more, until they make it a replica: what lands there meanwhile is lost with
// its data. A renewal there must not count: `resplock run` must never let COMMAND go on once
// another client can take the lock through the sentinels. Locks must be granted again on the new
// master, replica-acknowledged ones too.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "sentinel_client.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::Clock;
using support::log_times;
using support::RedisServer;
using support::Result;
using support::seconds_since;
using support::SentinelTopology;
using support::sleep_ms;
using support::wait_until;

Result cli(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {RESPLOCK_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    return support::run(argv, {}, 30);
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

// CLOCK_REALTIME in ns: the clock of date(1), which COMMAND uses for its log.
long long realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

double seconds_between(long long from_ns, long long to_ns) {
    return static_cast<double>(to_ns - from_ns) / 1e9;
}

bool is_master(RedisServer& server) {
    return server.cli({"ROLE"}).rfind("master\n", 0) == 0;
}

// A temporary folder for COMMAND's log, removed with it even when a check fails.
struct ScratchDir {
    std::string path;
    ScratchDir() {
        char tmpl[] = "/tmp/resplock-sentinel-failover-XXXXXX";
        if (mkdtemp(tmpl) != nullptr) path = tmpl;
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ~ScratchDir() {
        if (path.empty()) return;
        unlink((path + "/log").c_str());
        rmdir(path.c_str());
    }
};

// Exit codes of repeated attempts, with the first message of each.
struct Attempts {
    std::map<int, int> count;
    std::map<int, std::string> first_err;
    void add(const Result& r) {
        if (count[r.code]++ == 0) first_err[r.code] = trimmed(r.err);
    }
    void print() const {
        for (const auto& c : count) {
            std::printf(
                "        exit %d x%d%s%s\n", c.first, c.second,
                first_err.at(c.first).empty() ? "" : ", first: ", first_err.at(c.first).c_str());
        }
    }
};

// `resplock --ttl TTL run KEY -- COMMAND` through the sentinels, COMMAND a line with the time
// (date +%s%N) every 0.5 s for about 20 s; SENTINEL FAILOVER 2.5 s after the run took the lock;
// from then on a second client runs `resplock acquire KEY` through the sentinels until it gets
// the lock. No line of COMMAND may come after the start of the attempt that got it (the earliest
// moment the second client could hold the lock). The run either exits 70 (lock lost: COMMAND
// stopped) or keeps the lock by renewing it on the new master, where the key replicated before
// the failover still carries its token, and exits 0 once COMMAND is done.
void no_two_holders_across_a_planned_failover(const std::string& key, const std::string& ttl) {
    SentinelTopology t;
    REQUIRE(t.ok());
    RedisServer& former = t.master();
    const ScratchDir dir;
    REQUIRE(!dir.path.empty());
    const std::string log = dir.path + "/log";
    const std::string writer = "i=0; while [ $i -lt 40 ]; do echo \"w $(date +%s%N)\" >> '" + log +
                               "'; sleep 0.5; i=$((i+1)); done";
    support::Process run;
    REQUIRE(run.start(
        {RESPLOCK_CLI, "--url", t.url(), "--ttl", ttl, "run", key, "--", "sh", "-c", writer}));
    const bool holding = wait_until(
        [&] {
            return !former.cli({"GET", key}).empty() && !log_times(log, "w").empty();
        },
        10);
    if (!holding) {
        const Result r = run.wait(0);
        std::printf("      the run did not take the lock (exit %d): %s", r.code, r.err.c_str());
        REQUIRE(holding);
    }
    const auto held = Clock::now();
    // The run's token on both replicas before one of them takes over.
    CHECK_EQ(former.cli({"WAIT", "2", "5000"}), "2");
    REQUIRE(t.wait_settled());
    const double left = 2.5 - seconds_since(held);
    if (left > 0) sleep_ms(static_cast<long>(left * 1000));
    const long long failover_at = realtime_ns();
    REQUIRE(t.start_failover());

    // The second client. Meanwhile: when sentinel 0 first names another master, when the former
    // master becomes a replica, and when the key's TTL on the new master first goes up (a renewal
    // of the run landed there: replication from the former master stopped at the promotion).
    Attempts attempts;
    long long taken_at = 0;  // start of the attempt that got the lock
    long long named_at = 0;
    long long demoted_at = 0;
    long long renewed_at = 0;
    RedisServer* promoted = nullptr;
    long last_pttl = -3;
    while (seconds_between(failover_at, realtime_ns()) < 40) {
        const long long now = realtime_ns();
        if (named_at == 0) {
            const std::uint16_t named = t.resolved_port(0);
            for (std::size_t i = 0; i < t.replicas() && named != former.port(); ++i) {
                if (t.replica(i).port() == named) promoted = &t.replica(i);
            }
            if (promoted != nullptr) named_at = now;
        }
        if (demoted_at == 0 && !is_master(former)) demoted_at = now;
        if (promoted != nullptr && renewed_at == 0) {
            const long pttl = std::atol(promoted->cli({"PTTL", key}).c_str());
            if (last_pttl > 0 && pttl > last_pttl + 300) renewed_at = now;
            last_pttl = pttl;
        }
        const long long attempt_at = realtime_ns();
        const Result a = cli({"--url", t.url(), "acquire", key});
        attempts.add(a);
        if (a.code == 0) {
            taken_at = attempt_at;
            break;
        }
        sleep_ms(100);
    }
    // The sentinels make the former master a replica about 10 s after they named the new one.
    if (demoted_at == 0 && wait_until([&] { return !is_master(former); }, 30)) {
        demoted_at = realtime_ns();
    }
    const Result r = run.wait(90);
    const std::vector<long long> writes = log_times(log, "w");

    const auto since_failover = [&](long long at) {
        return at == 0 ? -1.0 : seconds_between(failover_at, at);
    };
    std::printf(
        "      after the failover began (s): sentinel 0 named another master %.1f, a "
        "renewal reached it %.1f, the former master was a replica %.1f (-1: not seen)\n",
        since_failover(named_at), since_failover(renewed_at), since_failover(demoted_at));
    std::printf("      the second client's attempts:\n");
    attempts.print();
    REQUIRE(taken_at != 0);
    REQUIRE(!writes.empty());
    const long long last_write = *std::max_element(writes.begin(), writes.end());
    std::printf(
        "      another client took the lock %.1f s after the failover began; COMMAND's "
        "last line %.1f s after it began; the run exited %d%s%s",
        since_failover(taken_at), since_failover(last_write), r.code, r.err.empty() ? "\n" : ": ",
        r.err.c_str());
    if (!CHECK(last_write < taken_at)) {
        const long long late =
            std::count_if(writes.begin(), writes.end(), [&](long long w) { return w > taken_at; });
        std::printf(
            "      two holders: COMMAND wrote %lld lines, for %.1f s, after another "
            "client had the lock\n",
            late, seconds_between(taken_at, last_write));
    }
    // Either the run lost the lock and stopped COMMAND (70), or it kept it throughout (0): then
    // its renewals went on on the master the sentinels name.
    CHECK(r.code == 70 || r.code == 0);
    if (r.code == 0) CHECK(renewed_at != 0);
}

}  // namespace

// TTL 6 s: renewals every 2 s; the key replicated before the failover expires on the new master
// some 4 to 6 s after it, while the former master is still a master.
TEST(a_run_never_shares_its_lock_across_a_planned_failover) {
    no_two_holders_across_a_planned_failover("sentinel:failover-run", "6000");
}

// TTL 3 s: the key expires on the new master long before the former master is demoted.
TEST(a_run_with_a_short_ttl_never_shares_its_lock_across_a_planned_failover) {
    no_two_holders_across_a_planned_failover("sentinel:failover-run-short", "3000");
}

// The library: an extend sent to the former master after the sentinels named the new one must
// not claim validity it does not have on the new master. Either it reaches the new master (its
// TTL there is the new one) or it returns not_replicated and the lock's validity does not grow.
// Once the former master is a replica, an extend reaches the new master and counts.
TEST(an_extend_after_a_planned_failover_counts_only_on_the_new_master) {
    SentinelTopology t;
    REQUIRE(t.ok());
    RedisServer& former = t.master();
    support::SentinelClient client(t);
    REQUIRE(client.added);
    const std::string key = "sentinel:failover-extend";
    resplock::Lock lock(client.conn, key);
    const resplock::Status acquired = lock.acquire(30000);
    REQUIRE_EQ(acquired, resplock::Status::ok);
    CHECK_EQ(former.cli({"WAIT", "2", "5000"}), "2");
    REQUIRE(t.failover());
    RedisServer& promoted = t.master();
    REQUIRE(&promoted != &former);
    // The sentinels name the new master; the former one still is one (for about 10 s more).
    REQUIRE(is_master(former));
    CHECK_EQ(promoted.cli({"GET", key}), std::string(lock.token()));
    const std::uint32_t before = lock.remaining_ms();
    const resplock::Status extended = lock.extend(60000);
    const long pttl = std::atol(promoted.cli({"PTTL", key}).c_str());
    std::printf(
        "      extend after the failover: %s; validity %u ms before, %u ms after; "
        "PTTL on the new master %ld ms\n",
        resplock::to_string(extended), before, lock.remaining_ms(), pttl);
    if (extended == resplock::Status::ok) {
        CHECK(pttl > 30000);  // the new master has the new TTL
    } else {
        CHECK_EQ(extended, resplock::Status::not_replicated);
        CHECK(lock.remaining_ms() <= before);
    }
    // The former master demoted and every link up again: the lock's next extend counts.
    REQUIRE(t.wait_settled(40));
    CHECK_EQ(lock.extend(60000), resplock::Status::ok);
    CHECK(lock.remaining_ms() > 30000);
    CHECK(std::atol(promoted.cli({"PTTL", key}).c_str()) > 30000);
    CHECK_EQ(lock.release(), resplock::Status::ok);
    CHECK_EQ(promoted.cli({"EXISTS", key}), "0");
}

// Liveness with replica acknowledgement (--replicas 2: WAIT for both replicas). After a planned
// failover the new master has both replicas again once the sentinels demoted the former master
// (about 10 s after they named the new one); from then on `acquire --replicas 2` must succeed.
// Bound: 30 s after every sentinel named the new master.
TEST(replica_acknowledged_locks_are_granted_again_after_a_planned_failover) {
    SentinelTopology t;
    REQUIRE(t.ok());
    RedisServer& former = t.master();
    const Result before =
        cli({"--url", t.url(), "--replicas", "2", "acquire", "sentinel:acked-before"});
    CHECK_EQ(before.code, 0);
    if (before.code != 0) std::printf("      before the failover: %s", before.err.c_str());
    REQUIRE(t.failover());
    const auto named = Clock::now();
    Attempts attempts;
    double granted_after = -1;
    std::string token;
    while (seconds_since(named) < 40) {
        const Result a = cli(
            {"--url", t.url(), "--replicas", "2", "--wait", "10000", "acquire", "sentinel:acked"});
        attempts.add(a);
        if (a.code == 0) {
            granted_after = seconds_since(named);
            token = trimmed(a.out);
            break;
        }
        sleep_ms(200);
    }
    std::printf("      attempts after every sentinel named the new master:\n");
    attempts.print();
    std::printf("      the former master is %s\n",
                is_master(former) ? "still a master" : "a replica");
    REQUIRE(granted_after >= 0);
    std::printf("      granted %.1f s after every sentinel named the new master\n", granted_after);
    CHECK(granted_after < 30);
    CHECK_EQ(t.master().cli({"GET", "sentinel:acked"}), token);
    for (std::size_t i = 0; i < t.replicas(); ++i)
        CHECK_EQ(t.replica(i).cli({"GET", "sentinel:acked"}), token);
}

// The fair lock across a planned failover. A holds the lock (`--fair --ttl 6000 run`, COMMAND a
// line every 0.1 s for 8 s); B and C queue behind it (`--fair --wait 30000 run`, COMMAND a line
// every 0.1 s for 1 s); SENTINEL FAILOVER 2.5 s after A took the lock. The former master stays a
// master for seconds: a waiter left there would be granted the lock once A's copy of the key
// expires there, while A still holds it on the new master. No two holders' lines may interleave
// in the log; B and C must both get the lock within their wait; the time from A's last line to
// the next holder's first is printed (the hand-off after a failover, a figure, not a bound).
TEST(fair_waiters_follow_a_planned_failover_and_never_share_the_lock) {
    SentinelTopology t;
    REQUIRE(t.ok());
    RedisServer& former = t.master();
    const ScratchDir dir;
    REQUIRE(!dir.path.empty());
    const std::string log = dir.path + "/log";
    const std::string key = "sentinel:fair-failover";
    const auto writer = [&](const char* tag, int lines) {
        return "i=0; while [ $i -lt " + std::to_string(lines) + " ]; do echo \"" + tag +
               " $(date +%s%N)\" >> '" + log + "'; sleep 0.1; i=$((i+1)); done";
    };
    support::Process a;
    REQUIRE(a.start({RESPLOCK_CLI, "--url", t.url(), "--fair", "--ttl", "6000", "run", key, "--",
                     "sh", "-c", writer("a", 80)}));
    REQUIRE(wait_until([&] { return !log_times(log, "a").empty(); }, 10));
    const auto held = Clock::now();
    support::Process b;
    support::Process c;
    REQUIRE(b.start({RESPLOCK_CLI, "--url", t.url(), "--fair", "--ttl", "6000", "--wait", "30000",
                     "run", key, "--", "sh", "-c", writer("b", 10)}));
    REQUIRE(wait_until([&] { return former.cli({"LLEN", "{" + key + "}:q"}) == "1"; }, 10));
    REQUIRE(c.start({RESPLOCK_CLI, "--url", t.url(), "--fair", "--ttl", "6000", "--wait", "30000",
                     "run", key, "--", "sh", "-c", writer("c", 10)}));
    REQUIRE(wait_until([&] { return former.cli({"LLEN", "{" + key + "}:q"}) == "2"; }, 10));
    CHECK_EQ(former.cli({"WAIT", "2", "5000"}), "2");
    const double left = 2.5 - seconds_since(held);
    if (left > 0) sleep_ms(static_cast<long>(left * 1000));
    const long long failover_at = realtime_ns();
    REQUIRE(t.start_failover());
    const Result ra = a.wait(60);
    const Result rb = b.wait(60);
    const Result rc = c.wait(60);

    // Each holder's span, from its first line to its last, in the order they held the lock.
    struct Span {
        char tag;
        long long first;
        long long last;
    };
    std::vector<Span> spans;
    for (const char* tag : {"a", "b", "c"}) {
        const std::vector<long long> w = log_times(log, tag);
        if (!w.empty()) spans.push_back({tag[0], w.front(), w.back()});
    }
    std::sort(spans.begin(), spans.end(),
              [](const Span& x, const Span& y) { return x.first < y.first; });
    std::printf("      exits: a %d, b %d, c %d\n", ra.code, rb.code, rc.code);
    for (const Span& s : spans) {
        std::printf("      %c held from %.2f s to %.2f s after the failover began\n", s.tag,
                    seconds_between(failover_at, s.first), seconds_between(failover_at, s.last));
    }
    for (std::size_t i = 1; i < spans.size(); ++i) {
        if (!CHECK(spans[i].first > spans[i - 1].last)) {
            std::printf("      two holders: %c wrote while %c still held the lock\n", spans[i].tag,
                        spans[i - 1].tag);
        }
    }
    CHECK_EQ(spans.size(), std::size_t{3});
    CHECK(ra.code == 0 || ra.code == 70);
    CHECK_EQ(rb.code, 0);
    CHECK_EQ(rc.code, 0);
    if (!rb.err.empty()) std::printf("      b: %s", rb.err.c_str());
    if (!rc.err.empty()) std::printf("      c: %s", rc.err.c_str());
    if (spans.size() >= 2 && spans[0].tag == 'a') {
        std::printf("      the next holder's first line came %.2f s after a's last\n",
                    seconds_between(spans[0].last, spans[1].first));
    }
}
