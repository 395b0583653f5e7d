// `resplock --fair` against a real redis-server: acquire, status, extend, release and run with the
// fair lock, its refusals, and mutual exclusion of 8 contending `resplock run --fair` processes
// that the test SIGKILLs at random, holders and waiters alike. Each COMMAND writes a start and an
// end line (with resplock's process id and the wall-clock time) to one log; no start may fall
// inside another holder's span, which ends at its end line or, for a holder killed before it,
// at the moment the test killed its resplock.
#include <signal.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_server.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::read_file;
using support::Result;

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

Result cli(std::vector<std::string> args) {
    args.insert(args.begin(), {RESPLOCK_CLI, "-u", server().url()});
    return support::run(args, {}, 30);
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

long long wall_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

TEST(server_started) {
    REQUIRE(server().running());
}

TEST(acquire_status_extend_and_release_with_fair) {
    server().cli({"DEL", "cli:fair"});
    const Result a = cli({"acquire", "--fair", "--ttl", "20000", "cli:fair"});
    REQUIRE_EQ(a.code, 0);
    const std::string token = trimmed(a.out);
    CHECK_EQ(server().cli({"GET", "cli:fair"}), token);
    const Result s = cli({"status", "--fair", "cli:fair"});
    CHECK_EQ(s.code, 0);
    CHECK(s.out.rfind("held ", 0) == 0);
    CHECK_EQ(cli({"acquire", "--fair", "cli:fair"}).code, 75);
    // A plain client sees it held too.
    CHECK_EQ(cli({"acquire", "cli:fair"}).code, 75);
    CHECK_EQ(cli({"extend", "--fair", "--ttl", "40000", "cli:fair", token}).code, 0);
    CHECK(std::atoll(server().cli({"PTTL", "cli:fair"}).c_str()) > 30000);
    CHECK_EQ(cli({"release", "--fair", "cli:fair", token}).code, 0);
    CHECK_EQ(server().cli({"EXISTS", "cli:fair"}), std::string("0"));
}

TEST(fair_refuses_options_it_does_not_take) {
    for (const std::vector<std::string>& options :
         {std::vector<std::string>{"--wake"}, std::vector<std::string>{"--once-per", "1s"}}) {
        std::vector<std::string> args{"acquire", "--fair"};
        args.insert(args.end(), options.begin(), options.end());
        args.emplace_back("cli:fair:opt");
        const Result r = cli(args);
        CHECK_EQ(r.code, 64);
        CHECK(r.err.find("--fair") != std::string::npos);
    }
    CHECK_EQ(server().cli({"EXISTS", "cli:fair:opt"}), std::string("0"));
}

// Like the plain lock, the fair lock takes a fencing number from KEY's counter ({KEY}:fence, one
// sequence with the plain lock's), an owner label in its token, and --replicas (no replica here:
// the grant is given back, exit 69, and says how many acknowledged).
TEST(fair_takes_fence_owner_and_replicas) {
    server().cli({"DEL", "cli:fair:fo", "{cli:fair:fo}:fence"});
    const Result plain = cli({"--fence", "acquire", "cli:fair:fo"});
    REQUIRE_EQ(plain.code, 0);
    const std::string plain_line = trimmed(plain.out);
    const unsigned long long first =
        std::strtoull(plain_line.c_str() + plain_line.find(' ') + 1, nullptr, 10);
    CHECK_EQ(cli({"release", "cli:fair:fo", plain_line.substr(0, plain_line.find(' '))}).code, 0);
    const Result r = cli({"--fair", "--fence", "--owner", "dev-7", "acquire", "cli:fair:fo"});
    REQUIRE_EQ(r.code, 0);
    const std::string line = trimmed(r.out);
    const std::string token = line.substr(0, line.find(' '));
    const unsigned long long second = std::strtoull(line.c_str() + line.find(' ') + 1, nullptr, 10);
    CHECK(second > first);
    CHECK_EQ(std::to_string(second), server().cli({"GET", "{cli:fair:fo}:fence"}));
    CHECK_EQ(token.rfind("dev-7:", 0), std::size_t{0});
    CHECK_EQ(server().cli({"GET", "cli:fair:fo"}), token);
    const Result status = cli({"--fair", "status", "cli:fair:fo"});
    CHECK(status.out.find("dev-7") != std::string::npos);
    CHECK_EQ(cli({"--fair", "release", "cli:fair:fo", token}).code, 0);

    const Result unacknowledged = cli({"--fair", "--replicas", "1", "acquire", "cli:fair:fo"});
    CHECK_EQ(unacknowledged.code, 69);
    CHECK(unacknowledged.err.find("0 of 1 replicas") != std::string::npos);
    CHECK_EQ(server().cli({"EXISTS", "cli:fair:fo"}), std::string("0"));  // given back
    server().cli({"DEL", "{cli:fair:fo}:fence"});
}

TEST(run_with_fair_takes_the_lock_handed_over_by_release) {
    server().cli({"DEL", "cli:fair:run"});
    const Result a = cli({"acquire", "--fair", "--ttl", "20000", "cli:fair:run"});
    REQUIRE_EQ(a.code, 0);
    support::Process waiter;
    REQUIRE(waiter.start({RESPLOCK_CLI, "-u", server().url(), "run", "--fair", "--wait", "10000",
                          "cli:fair:run", "--", "sh", "-c", "echo ran"}));
    REQUIRE(support::wait_until(
        [] {
            return server().cli({"LLEN", "{cli:fair:run}:q"}) == "1";
        },
        10));
    CHECK_EQ(cli({"release", "--fair", "cli:fair:run", trimmed(a.out)}).code, 0);
    const Result w = waiter.wait(20);
    CHECK_EQ(w.code, 0);
    CHECK_EQ(w.out, std::string("ran\n"));
    CHECK_EQ(server().cli({"EXISTS", "cli:fair:run", "{cli:fair:run}:q", "{cli:fair:run}:w"}),
             std::string("0"));
}

// Whether the child `pid` has ended (a zombie, not yet reaped).
bool exited(pid_t pid) {
    const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const std::size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

struct Span {
    long long start = 0;
    long long end = -1;  // -1: no end line (killed)
};

// COMMAND deletes KEY and exits 0, long before the first renewal: the release finds the lock
// lost, and resplock exits 70, naming COMMAND's status.
TEST(run_with_fair_exits_70_when_the_release_finds_the_lock_lost) {
    const Result r = cli({"--fair", "--ttl", "30000", "run", "fair:lost", "--", "sh", "-c",
                          "redis-cli -h 127.0.0.1 -p " + std::to_string(server().port()) +
                              " DEL fair:lost >/dev/null; exit 0"});
    CHECK_EQ(r.code, 70);
    if (!CHECK(r.err.find("lock lost") != std::string::npos &&
               r.err.find("status 0") != std::string::npos)) {
        std::printf("      stderr: %s", r.err.c_str());
    }
    CHECK_EQ(server().cli({"EXISTS", "fair:lost"}), std::string("0"));
}

TEST(eight_fair_runs_killed_at_random_never_overlap) {
    server().cli({"DEL", "cli:fair:chaos"});
    const std::string log = "/tmp/resplock-fair-chaos-" + std::to_string(getpid()) + ".log";
    std::remove(log.c_str());
    const std::string script = "echo \"S $PPID $(date +%s%N)\" >> " + log +
                               "; sleep 0.1; echo \"E $PPID $(date +%s%N)\" >> " + log;
    const std::vector<std::string> args = {
        RESPLOCK_CLI, "-u",    server().url(),   "run", "--fair", "--ttl", "1000",
        "--wait",     "30000", "cli:fair:chaos", "--",  "sh",     "-c",    script};
    constexpr int slots = 8;
    std::unique_ptr<support::Process> procs[slots];
    std::map<long long, long long> killed_at;  // resplock pid -> wall-clock time of its SIGKILL
    std::mt19937 rng(12345);
    int kills = 0, runs = 0, failed_runs = 0;
    const auto start = support::Clock::now();
    while (support::seconds_since(start) < 18) {
        for (auto& p : procs) {
            if (p) {
                const pid_t pid = p->pid();
                if (!exited(pid)) continue;
                const Result r = p->wait(5);
                if (!killed_at.count(pid) && r.code != 0) {
                    ++failed_runs;
                    std::printf("      run failed (%d): %s", r.code, r.err.c_str());
                }
                p.reset();
            }
            p = std::make_unique<support::Process>();
            if (p->start(args)) ++runs;
        }
        support::sleep_ms(200 + static_cast<long>(rng() % 300));
        // Kill one: the current holder half of the time (the last start line without an end),
        // else any of the eight.
        long long victim = -1;
        if (rng() % 2 == 0) {
            const std::string text = read_file(log);
            const std::size_t s = text.rfind("S ");
            if (s != std::string::npos && text.find("E ", s) == std::string::npos) {
                victim = std::atoll(text.c_str() + s + 2);
            }
        }
        if (victim < 0) victim = procs[rng() % slots]->pid();
        for (auto& p : procs) {
            if (p && p->pid() == victim && !killed_at.count(victim)) {
                killed_at[victim] = wall_ns();
                ::kill(static_cast<pid_t>(victim), SIGKILL);
                ++kills;
            }
        }
    }
    for (auto& p : procs)
        if (p) (void)p->wait(40);

    // Parse the log: "S pid ns" and "E pid ns".
    std::map<long long, Span> spans;  // by pid (each run's resplock has its own pid)
    const std::string text = read_file(log);
    std::size_t at = 0;
    int lines = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        char kind = 0;
        long long pid = 0, ns = 0;
        if (std::sscanf(text.c_str() + at, "%c %lld %lld", &kind, &pid, &ns) == 3) {
            ++lines;
            if (kind == 'S') spans[pid].start = ns;
            if (kind == 'E') spans[pid].end = ns;
        }
        at = end + 1;
    }
    std::vector<Span> list;
    int unended = 0;
    for (auto& [pid, span] : spans) {
        if (span.end < 0) {
            ++unended;
            const auto k = killed_at.find(pid);
            // A holder that was never killed always writes its end line.
            CHECK(k != killed_at.end());
            span.end = k != killed_at.end() ? k->second : span.start;
        }
        list.push_back(span);
    }
    std::sort(list.begin(), list.end(),
              [](const Span& a, const Span& b) { return a.start < b.start; });
    int overlaps = 0;
    for (std::size_t i = 1; i < list.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (list[i].start < list[j].end) ++overlaps;
        }
    }
    std::printf("      %d runs, %d killed (%d while holding), %zu holds, %d failed runs\n", runs,
                kills, unended, list.size(), failed_runs);
    CHECK_EQ(overlaps, 0);
    CHECK_EQ(failed_runs, 0);
    CHECK(list.size() >= 20);
    CHECK(unended >= 1);
    std::remove(log.c_str());
}

}  // namespace
