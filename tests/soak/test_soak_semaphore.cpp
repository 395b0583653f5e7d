// Semaphore chaos, about RESPLOCK_SOAK_SECONDS / 3 (default 20 s) in two halves: 16 sem_holder
// processes on one semaphore key with limit 4, first in the plain mode, then in the fair mode (the
// plain contenders are stopped at half time and replaced one by one with fair ones, so both kinds
// meet on the key for a moment). Every 0.3-1.5 s this test SIGKILLs a contender (mostly one that
// holds a lease or one that waits for one) and starts a replacement. It checks:
//   - from the contenders' own logs (both halves together): no more than 4 hold intervals, each
//     from a grant's reply to the moment its holder stopped relying on it, overlap at any instant;
//   - a killed holder's lease ends, on the server's clock (its score in KEY's sorted set, which
//     the script removes once it has ended), within its TTL + 300 ms of the kill; a
//     killed fair waiter's queue entry expires within its entry lifetime, and the waiter is handed
//     no lease after that (one handed before leaves within its TTL + 300 ms);
//   - progress: each half grants a reasonable number of leases; in the fair half, no call of a
//     contender that survived it saw more other contenders' grants before its own (or before its
//     wait ran out) than the 15 other contenders that can be ahead of it in a first-come,
//     first-served queue, and no contender that joined the queue later was granted before it;
//   - once every process is gone, every key of the semaphore has a TTL, and none is left once the
//     TTLs ran out.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resp_probe.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/config.h"
#include "sem_common.hpp"
#include "soak_common.hpp"

namespace {

using Fields = std::vector<std::string>;

Fields split(const std::string& line) {
    Fields f;
    std::istringstream in(line);
    for (std::string w; in >> w;)
        f.push_back(w);
    return f;
}

long long num(const std::string& s) {
    return std::strtoll(s.c_str(), nullptr, 10);
}

unsigned long long unum(const std::string& s) {
    return std::strtoull(s.c_str(), nullptr, 10);
}

// ---------------------------------------------------------------------------------------------
// The logs

// One try_acquire call as the log tells it.
struct Call {
    long pid = 0;
    bool fair = false;
    long long call_us = 0;
    long long end_us = -1;  // the grant's reply (A's begin_us), or B's end_us
    bool granted = false;
    bool busy = false;
    unsigned long long fence = 0;
};

// One lease as its holder relied on it: from `begin` to `end`.
struct Interval {
    long pid = 0;
    std::string token;
    bool fair = false;
    long long begin = 0;
    long long valid_until = 0;
    long long end = -1;   // set by an R record
    bool closed = false;  // an R or L record: its holder was not killed while relying on it
};

struct LogAnalysis {
    std::vector<std::string> problems;  // malformed or impossible records
    std::vector<Call> calls;
    std::vector<Interval> holds;
    int grants[2] = {0, 0};  // plain, fair
    int busy[2] = {0, 0};
    int extends = 0, released = 0, lapsed = 0, extend_failed = 0, other_failures = 0;
    std::map<int, int> release_status;
};

// Reads one mode's log into `a` (the logs of both modes may go to one analysis).
void read_log(const std::vector<std::string>& lines, bool fair, LogAnalysis& a) {
    static const std::map<std::string, std::size_t> sizes = {
        {"S", 4}, {"W", 5}, {"A", 8}, {"E", 5}, {"R", 4}, {"L", 4}, {"X", 4}, {"B", 4}, {"U", 4}};
    std::map<long, std::size_t> open_call;        // pid -> its call in a.calls
    std::map<std::string, std::size_t> by_token;  // token -> its interval in a.holds
    for (const std::string& line : lines) {
        const Fields f = split(line);
        const auto size = sizes.find(f.empty() ? "" : f[0]);
        if (size == sizes.end() || f.size() != size->second) {
            a.problems.push_back("malformed record: " + line);
            continue;
        }
        const std::string& type = f[0];
        const long pid = static_cast<long>(num(f[1]));
        if (type == "S") continue;
        if (type == "W") {
            if (open_call.count(pid) != 0) a.problems.push_back("call without an outcome: " + line);
            Call c;
            c.pid = pid;
            c.fair = fair;
            c.call_us = num(f[2]);
            open_call[pid] = a.calls.size();
            a.calls.push_back(c);
            continue;
        }
        if (type == "A" || type == "B" || type == "U") {
            const auto it = open_call.find(pid);
            if (it == open_call.end()) {
                a.problems.push_back("outcome without its call: " + line);
                continue;
            }
            Call& c = a.calls[it->second];
            open_call.erase(it);
            if (type == "B") {
                c.busy = true;
                c.end_us = num(f[3]);
                ++a.busy[fair ? 1 : 0];
                continue;
            }
            if (type == "U") {
                ++a.other_failures;
                continue;
            }
            if (num(f[7]) != c.call_us) a.problems.push_back("grant of another call: " + line);
            c.granted = true;
            c.end_us = num(f[3]);
            c.fence = unum(f[6]);
            if (by_token.count(f[2]) != 0) a.problems.push_back("token granted twice: " + line);
            Interval h;
            h.pid = pid;
            h.token = f[2];
            h.fair = fair;
            h.begin = num(f[3]);
            h.valid_until = num(f[4]);
            if (h.valid_until <= h.begin) a.problems.push_back("granted without validity: " + line);
            by_token[h.token] = a.holds.size();
            a.holds.push_back(h);
            ++a.grants[fair ? 1 : 0];
            continue;
        }
        const auto it = by_token.find(f[2]);
        if (it == by_token.end() || a.holds[it->second].pid != pid) {
            a.problems.push_back("record without its grant: " + line);
            continue;
        }
        Interval& h = a.holds[it->second];
        if (type == "E") {
            ++a.extends;
            h.valid_until = num(f[3]);
        } else if (type == "R") {
            ++a.released;
            h.end = num(f[3]);
            h.closed = true;
            if (h.end >= h.valid_until)
                a.problems.push_back("relied on a lease past its validity: " + line);
        } else if (type == "L") {
            ++(f[3] == "lapsed" ? a.lapsed : a.extend_failed);
            h.closed = true;
        } else {
            ++a.release_status[static_cast<int>(num(f[3]))];
        }
    }
    for (Interval& h : a.holds) {
        if (h.end < 0) h.end = h.valid_until;
    }
}

// The deepest overlap of the hold intervals: +1 at each begin, -1 at each end (ends first at
// equal times: an interval is over at its end).
struct Depth {
    int deepest = 0;
    long long at = 0;     // the begin that reached it first
    int over_limit = 0;   // begins that took the depth past the limit
    std::string example;  // the intervals inside at the first such begin
};

Depth sweep(const std::vector<Interval>& holds, int limit) {
    Depth d;
    std::vector<std::pair<long long, int>> events;
    for (const Interval& h : holds) {
        events.emplace_back(h.begin, 1);
        events.emplace_back(h.end, -1);
    }
    std::sort(events.begin(), events.end());
    int inside = 0;
    long long first_over = -1;
    for (const auto& e : events) {
        inside += e.second;
        if (inside > d.deepest) {
            d.deepest = inside;
            d.at = e.first;
        }
        if (e.second > 0 && inside > limit) {
            ++d.over_limit;
            if (first_over < 0) first_over = e.first;
        }
    }
    if (first_over >= 0) {
        for (const Interval& h : holds) {
            if (h.begin <= first_over && h.end > first_over) {
                d.example += " " + h.token + " [" + std::to_string(h.begin) + ", " +
                             std::to_string(h.end) + "]";
            }
        }
    }
    return d;
}

// First come, first served, from the fair calls that started at or after `from_us` (when every
// contender was a fair one) and ended with a grant or a wait run out. A queued waiter has at most
// the other contenders ahead of it (contenders - 1; a replacement started later queues behind
// it), and each of them is granted at most once before it: once granted, a contender queues again
// behind it. So a call sees at most contenders - 1 grants to others (with smaller fencing numbers
// than its own grant's: the numbers follow the server's order of the grants) between its start
// and its end (every grant counts, whichever call it ended); and a contender whose call started
// later than `join_us` after this call's start (it then joined the queue behind it) is never
// granted before it. Both assume each waiter refreshes its entry in time: one stalled past its
// entry's lifetime loses its place and queues again at the end.
struct Fairness {
    int calls = 0;                  // completed fair calls looked at
    int max_passed = 0;             // grants to others during one of them
    int overtakes = 0;              // later callers granted first
    std::string example;            // the first overtake, or the call with max_passed
    long long longest_wait_us = 0;  // of a granted call
};

Fairness fairness(const std::vector<Call>& calls, long long from_us, long long join_us) {
    Fairness r;
    std::vector<const Call*> granted;
    for (const Call& c : calls) {
        if (c.granted) granted.push_back(&c);
    }
    for (const Call& c : calls) {
        if (!c.fair || c.call_us < from_us || (!c.granted && !c.busy)) continue;
        ++r.calls;
        if (c.granted) r.longest_wait_us = std::max(r.longest_wait_us, c.end_us - c.call_us);
        int passed = 0;
        for (const Call* g : granted) {
            if (g->pid == c.pid || g->end_us <= c.call_us || g->end_us >= c.end_us) continue;
            if (c.granted && g->fence > c.fence) continue;
            ++passed;
        }
        if (passed > r.max_passed) {
            r.max_passed = passed;
            if (r.overtakes == 0) {
                r.example = "pid " + std::to_string(c.pid) + " call at " +
                            std::to_string(c.call_us) + " saw " + std::to_string(passed) +
                            " grants to others";
            }
        }
        if (!c.granted) continue;
        for (const Call* g : granted) {
            if (g->pid == c.pid || g->call_us <= c.call_us + join_us || g->fence > c.fence)
                continue;
            if (r.overtakes++ == 0) {
                r.example = "pid " + std::to_string(g->pid) + " called at " +
                            std::to_string(g->call_us) + " and was granted fence " +
                            std::to_string(g->fence) + " before pid " + std::to_string(c.pid) +
                            " (called at " + std::to_string(c.call_us) + ", fence " +
                            std::to_string(c.fence) + ")";
            }
        }
    }
    return r;
}

// ---------------------------------------------------------------------------------------------
// A killed contender's traces on the server

// What happens to the tokens of one killed contender (all start with `prefix`), judged from
// polls of KEY's members: each must leave KEY within its TTL + margin of the kill, plus the time
// its queue entry still had (a fair waiter's entry may be handed a lease until it expires; a
// lease handed later is a fault).
struct Watch {
    long pid = 0;
    std::string prefix;
    int kind = 0;  // 0 a holder, 1 a waiter, 2 neither
    long long kill_us = 0;
    long long kill_rt_ms = 0;     // the kill on the server's clock (the host's realtime clock)
    long long ttl_ms = 0;         // the longest TTL the victim asked for in its last call
    long long entry_left_ms = 0;  // what its queue entry had left at the kill (0: none)
    bool polled = false;
    std::set<std::string> at_kill;           // members present at the first poll
    std::map<std::string, long long> score;  // member -> its last score (expiry, server ms)
    long long first_score_rt = -1;           // a lease held at the kill: its expiry then
    int handed = 0;                          // members first seen after the kill
    bool done = false;
    long long delay_us = -1;     // kill to the first poll without a member
    long long lateness_ms = -1;  // that poll after the latest expiry seen (-1: none seen)
    std::string failure;
};

void observe(Watch& w, long long now_us, long long now_rt_ms,
             const std::vector<std::pair<std::string, long long>>& members, long long margin_ms) {
    if (w.done) return;
    bool present = false;
    for (const auto& [member, score] : members) {
        if (member.compare(0, w.prefix.size(), w.prefix) != 0) continue;
        // Counted while live on the server's clock: an ended lease still in the set (no script
        // ran since it ended, which is what removes it) holds no place.
        if (score > now_rt_ms) present = true;
        if (!w.polled) {
            w.at_kill.insert(member);
            if (w.first_score_rt < 0) w.first_score_rt = score;
        } else if (w.at_kill.count(member) == 0 && w.score.count(member) == 0) {
            ++w.handed;
            if (now_rt_ms > w.kill_rt_ms + w.entry_left_ms + margin_ms && w.failure.empty()) {
                w.failure = member + " handed a lease " + std::to_string(now_rt_ms - w.kill_rt_ms) +
                            " ms after its contender was killed, its entry had " +
                            std::to_string(w.entry_left_ms) + " ms left";
            }
        }
        w.score[member] = score;
    }
    w.polled = true;
    const long long limit_us = w.kill_us + (w.entry_left_ms + w.ttl_ms + margin_ms) * 1000;
    if (present && now_us > limit_us) {
        if (w.failure.empty()) {
            w.failure = w.prefix + "* still in KEY " + std::to_string((now_us - w.kill_us) / 1000) +
                        " ms after the kill (TTL " + std::to_string(w.ttl_ms) + " ms, entry left " +
                        std::to_string(w.entry_left_ms) + " ms)";
        }
        w.done = true;
        return;
    }
    // Gone, and its entry (if any) can no longer be handed a lease.
    if (!present && now_rt_ms >= w.kill_rt_ms + w.entry_left_ms) {
        w.done = true;
        w.delay_us = now_us - w.kill_us;
        for (const auto& kv : w.score)
            w.lateness_ms = std::max(w.lateness_ms, now_rt_ms - kv.second);
    }
}

// The entry lifetime the library gives a fair waiter asking for ttl_ms (fair_lock.hpp: entries
// expire 2 refresh spans and Redis's 100 ms tick after their last refresh; a span is a quarter
// of the TTL, at most 1 s).
long long entry_ms(long long ttl_ms) {
    const long long refresh = std::max(1LL, std::min(ttl_ms / 4, 1000LL));
    return 2 * refresh + 100;
}

// Keys of the semaphore that have no TTL (PTTL -1), from (key, PTTL) pairs.
std::vector<std::string> without_ttl(const std::vector<std::pair<std::string, long long>>& keys) {
    std::vector<std::string> out;
    for (const auto& [key, pttl] : keys) {
        if (pttl == -1) out.push_back(key);
    }
    return out;
}

// Every check above, on hand-made input: each can fail.
TEST(checkers_find_faults) {
    // Five holds at once with a limit of 4; then touching intervals (end == begin) that do not.
    LogAnalysis a;
    read_log({"S 1 plain 4", "W 1 0 500 1000", "A 1 t1 100 1100 500 10 0", "W 2 0 500 1000",
              "A 2 t2 110 1100 500 11 0", "W 3 0 500 1000", "A 3 t3 120 1100 500 12 0",
              "W 4 0 500 1000", "A 4 t4 130 1100 500 13 0", "W 5 0 500 1000",
              "A 5 t5 140 1100 500 14 0", "R 5 t5 150", "X 5 t5 0"},
             false, a);
    CHECK(a.problems.empty());
    Depth d = sweep(a.holds, 4);
    CHECK_EQ(d.deepest, 5);
    CHECK_EQ(d.over_limit, 1);
    CHECK_EQ(d.at, 140LL);
    LogAnalysis b;
    read_log(
        {"W 1 0 500 1000", "A 1 t1 100 200 500 1 0", "W 2 0 500 1000", "A 2 t2 200 300 500 2 0"},
        true, b);
    CHECK_EQ(sweep(b.holds, 1).deepest, 1);
    // A killed holder's interval runs to its last validity, an extend included.
    LogAnalysis c;
    read_log({"W 1 0 500 1000", "A 1 t1 100 200 500 1 0", "E 1 t1 400 500", "W 2 0 500 1000",
              "A 2 t2 300 900 500 2 0"},
             true, c);
    CHECK_EQ(sweep(c.holds, 1).deepest, 2);
    // Impossible records.
    LogAnalysis e;
    read_log({"A 1 t1 100 200 500 1 0", "W 2 0 500 1000", "A 2 t2 100 200 500 1 0", "R 2 t2 300",
              "E 3 zz 5 5", "Q"},
             true, e);
    CHECK_EQ(e.problems.size(), std::size_t{4});

    // Fairness: pid 2 called 200 ms after pid 1 and was granted first: an overtake.
    std::vector<Call> calls = {{1, true, 1000, 5000, true, false, 20},
                               {2, true, 200000, 3000, true, false, 10}};
    calls[1].end_us = 300000;
    calls[0].end_us = 500000;
    Fairness f = fairness(calls, 0, 100000);
    CHECK_EQ(f.overtakes, 1);
    CHECK_EQ(f.max_passed, 1);
    // Granted in order of their calls: none; nor is a call that started within join_us.
    calls[1].fence = 30;
    f = fairness(calls, 0, 100000);
    CHECK_EQ(f.overtakes, 0);
    CHECK_EQ(f.max_passed, 0);
    calls[1].fence = 10;
    calls[1].call_us = 50000;
    CHECK_EQ(fairness(calls, 0, 100000).overtakes, 0);
    // A waiter whose wait ran out while 16 others were granted.
    std::vector<Call> many = {{1, true, 0, 1000000, false, true, 0}};
    for (int i = 0; i < 16; ++i)
        many.push_back({2 + i, true, 10, 100 + i, true, false, static_cast<unsigned>(i + 1)});
    CHECK_EQ(fairness(many, 0, 100000).max_passed, 16);

    // A killed holder: its lease leaves KEY in time (no failure), or lingers past TTL + margin.
    Watch w;
    w.prefix = "c7:";
    w.kill_us = 1000000;
    w.kill_rt_ms = 50000;
    w.ttl_ms = 500;
    observe(w, 1010000, 50010, {{"c7:aa", 50400}, {"c8:bb", 50900}}, 300);
    CHECK(!w.done);
    observe(w, 1420000, 50420, {{"c8:bb", 50900}}, 300);
    CHECK(w.done);
    CHECK(w.failure.empty());
    CHECK_EQ(w.delay_us, 420000LL);
    CHECK_EQ(w.lateness_ms, 20LL);
    Watch late = w;
    late.done = false;
    late.polled = false;
    late.score.clear();
    late.at_kill.clear();
    observe(late, 1010000, 50010, {{"c7:aa", 50400}}, 300);
    observe(late, 1810000, 50810, {{"c7:aa", 52000}}, 300);  // prolonged after the kill
    CHECK(late.done);
    CHECK(!late.failure.empty());
    // Ended on the server's clock but not yet removed (no script ran since): no place held.
    Watch ended = w;
    ended.done = false;
    ended.polled = false;
    ended.score.clear();
    ended.at_kill.clear();
    observe(ended, 1010000, 50010, {{"c7:aa", 50400}}, 300);
    observe(ended, 1810000, 50810, {{"c7:aa", 50400}}, 300);
    CHECK(ended.done);
    CHECK(ended.failure.empty());
    // A killed waiter handed a lease after its entry had expired.
    Watch waiter;
    waiter.prefix = "c9:";
    waiter.kill_us = 1000000;
    waiter.kill_rt_ms = 50000;
    waiter.ttl_ms = 500;
    waiter.entry_left_ms = 200;
    observe(waiter, 1010000, 50010, {}, 300);
    CHECK(!waiter.done);  // the entry may still be handed a lease
    observe(waiter, 1600000, 50600, {{"c9:cc", 51100}}, 300);
    CHECK_EQ(waiter.handed, 1);
    CHECK(!waiter.failure.empty());

    CHECK_EQ(without_ttl({{"a", 100}, {"b", -1}, {"c", -2}}).size(), std::size_t{1});
    CHECK_EQ(entry_ms(300), 250LL);
    CHECK_EQ(entry_ms(8000), 2100LL);
}

// ---------------------------------------------------------------------------------------------
// The run

double env_seconds() {
    const char* s = std::getenv("RESPLOCK_SOAK_SECONDS");
    const double v = s != nullptr ? std::atof(s) : 60.0;
    return (v > 0 ? v : 60.0) / 3;  // a third of the lock's soak time: 20 s by default
}

void sleep_us(long long us) {
    if (us <= 0) return;
    const timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
    nanosleep(&ts, nullptr);
}

long long realtime_ms() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// True once the process has exited, without reaping it (Process::wait does that).
bool has_exited(pid_t pid) {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
}

std::string companion(const char* suffix) {
    char out[RESPLOCK_MAX_KEY_LEN + resplock::companion_prefix_extra];
    const std::size_t n = resplock::companion_prefix(semsoak::key, out);
    return std::string(out, n) + suffix;
}

// The logs as read so far, and what each contender did last.
struct LiveLog {
    soak::RespProbe& probe;
    std::vector<std::string> lines[2];  // plain, fair
    std::map<long, Fields> last;        // pid -> its last record
    std::map<long, long long> ttl;      // pid -> the longest TTL of its last call
    std::set<long> started;

    void refresh() {
        for (int m = 0; m < 2; ++m) {
            const std::vector<std::string> more =
                probe.strings({"LRANGE", m == 0 ? semsoak::log_plain : semsoak::log_fair,
                               std::to_string(lines[m].size()), "-1"});
            for (const std::string& line : more) {
                lines[m].push_back(line);
                const Fields f = split(line);
                if (f.size() < 2) continue;
                const long pid = static_cast<long>(num(f[1]));
                if (f[0] == "S") started.insert(pid);
                if (f[0] == "W" && f.size() > 3) ttl[pid] = num(f[3]);
                if (f[0] == "E" && f.size() > 4) ttl[pid] = std::max(ttl[pid], num(f[4]));
                last[pid] = f;
            }
        }
    }
};

TEST(sixteen_contenders_with_random_kills) {
    const double seconds = env_seconds();
    const double scale = seconds / 20.0;  // the progress floors shrink with the time
    std::random_device seed_source;
    const unsigned seed = seed_source();
    std::mt19937 rng(seed);
    auto uniform = [&](long long lo, long long hi) {
        return std::uniform_int_distribution<long long>(lo, hi)(rng);
    };
    constexpr long long margin_ms = 300;
    std::printf("semaphore chaos: %.0f s, %d contenders, limit %u, seed %u\n", seconds,
                semsoak::contenders, semsoak::limit, seed);

    support::RedisServer server;
    REQUIRE(server.running());
    soak::RespProbe probe(server.port());
    REQUIRE(probe.ok());
    LiveLog log{probe, {}, {}, {}, {}};
    const std::string port_arg = std::to_string(server.port());
    const std::string entries_key = companion(":w");

    struct Slot {
        std::unique_ptr<support::Process> proc;
        long long started_us = 0;
        bool fair = false;
        bool stopping = false;  // sent SIGTERM: its exit is expected
        long long stop_us = 0;
        support::Result wait(double more_s) {
            return proc->wait(static_cast<double>(soak::boot_us() - started_us) / 1e6 + more_s);
        }
    };
    std::vector<Slot> slots(semsoak::contenders);
    auto spawn = [&](Slot& s, bool fair) {
        s.proc = std::make_unique<support::Process>();
        s.started_us = soak::boot_us();
        s.fair = fair;
        s.stopping = false;
        CHECK(s.proc->start(
            {SEM_HOLDER, port_arg, fair ? "fair" : "plain", std::to_string(semsoak::limit)}));
    };
    for (Slot& s : slots)
        spawn(s, false);

    std::vector<Watch> watches;
    int kills[2][3] = {};  // [plain, fair][holder, waiter, neither]
    int unexpected_exits = 0;
    std::vector<std::string> entry_failures;
    long long longest_entry_left = 0;
    // Kills a slot's contender, starts watching its traces on the server, and replaces it.
    auto kill_slot = [&](Slot& s, bool replace_fair) {
        const long pid = static_cast<long>(s.proc->pid());
        const long long kill_us = soak::boot_us();
        const long long kill_rt = realtime_ms();
        kill(static_cast<pid_t>(pid), SIGKILL);
        s.wait(5);
        log.refresh();
        Watch w;
        w.pid = pid;
        w.prefix = "c" + std::to_string(pid) + ":";
        w.kill_us = kill_us;
        w.kill_rt_ms = kill_rt;
        const auto last = log.last.find(pid);
        const std::string type = last == log.last.end() ? "" : last->second[0];
        w.kind = type == "A" || type == "E" || type == "R" || type == "L" ? 0 : type == "W" ? 1 : 2;
        ++kills[s.fair ? 1 : 0][w.kind];
        w.ttl_ms = log.ttl.count(pid) != 0 ? log.ttl[pid] : semsoak::max_ttl_ms;
        // Its queue entry, if any: "expiry:ttl:limit", expiry on the server's clock.
        const soak::RespValue entries = probe.call({"HGETALL", entries_key});
        for (std::size_t i = 0; i + 1 < entries.items.size(); i += 2) {
            if (entries.items[i].text.compare(0, w.prefix.size(), w.prefix) != 0) continue;
            const long long left = num(entries.items[i + 1].text) - kill_rt;
            w.entry_left_ms = std::max(w.entry_left_ms, left);
            longest_entry_left = std::max(longest_entry_left, left);
            if (left > entry_ms(w.ttl_ms) + 20) {
                entry_failures.push_back(entries.items[i].text + ": entry has " +
                                         std::to_string(left) + " ms left, its lifetime is " +
                                         std::to_string(entry_ms(w.ttl_ms)) + " ms");
            }
        }
        watches.push_back(w);
        spawn(s, replace_fair);
    };
    // One poll of KEY's members, given to every watch still open.
    auto poll = [&] {
        const soak::RespValue z = probe.call({"ZRANGE", semsoak::key, "0", "-1", "WITHSCORES"});
        const long long now_us = soak::boot_us();
        const long long now_rt = realtime_ms();
        std::vector<std::pair<std::string, long long>> members;
        for (std::size_t i = 0; i + 1 < z.items.size(); i += 2)
            members.emplace_back(z.items[i].text, num(z.items[i + 1].text));
        log.refresh();
        for (Watch& w : watches) {
            // An extend logged after the kill's read of the log may have raised the TTL.
            if (log.ttl.count(w.pid) != 0) w.ttl_ms = std::max(w.ttl_ms, log.ttl[w.pid]);
            observe(w, now_us, now_rt, members, margin_ms);
        }
    };
    // Reaps contenders that exited; a stopping one is replaced by a fair one.
    auto reap = [&](bool fair_phase) {
        for (Slot& s : slots) {
            if (!has_exited(s.proc->pid())) continue;
            const support::Result r = s.wait(5);
            if (!s.stopping || r.code != 0) {
                ++unexpected_exits;
                std::printf("contender exited by itself: code %d, stderr: %s\n", r.code,
                            r.err.c_str());
            }
            spawn(s, fair_phase);
        }
    };

    const long long start_us = soak::boot_us();
    const long long half_us = start_us + static_cast<long long>(seconds / 2 * 1e6);
    const long long end_us = start_us + static_cast<long long>(seconds * 1e6);
    long long next_kill = start_us + uniform(300000, 1500000);
    long long all_fair_us = -1;  // from then on every contender is a fair one
    bool fair_phase = false;
    int turn = 0;  // which kind of contender the next kill takes
    while (soak::boot_us() < end_us) {
        sleep_us(10000);
        poll();
        reap(fair_phase);
        const long long now = soak::boot_us();
        if (!fair_phase && now >= half_us) {
            // Half time: the plain contenders release and exit, each replaced by a fair one.
            fair_phase = true;
            turn = 0;
            for (Slot& s : slots) {
                kill(s.proc->pid(), SIGTERM);
                s.stopping = true;
                s.stop_us = now;
            }
        }
        if (fair_phase && all_fair_us < 0) {
            // Still in a call after 1 s (a plain waiter waits up to 3 s): killed.
            for (Slot& s : slots) {
                if (s.stopping && now - s.stop_us > 1000000) kill_slot(s, true);
            }
            if (std::all_of(slots.begin(), slots.end(), [](const Slot& s) { return s.fair; }))
                all_fair_us = soak::boot_us();
        }
        if (now < next_kill) continue;
        // The kinds of victim take turns, each phase from the start, so that every kind is
        // killed in every phase whatever the seed: one that holds a lease, one that waits for
        // a place, again, then anyone. A turn whose kind has nobody right now waits up to
        // 500 ms for one before it takes anyone.
        std::vector<std::size_t> holding, waiting, anyone;
        for (std::size_t i = 0; i < slots.size(); ++i) {
            if (slots[i].stopping) continue;
            anyone.push_back(i);
            const auto it = log.last.find(static_cast<long>(slots[i].proc->pid()));
            if (it == log.last.end()) continue;
            const Fields& f = it->second;
            if ((f[0] == "A" && f.size() > 4 && num(f[4]) > now + 30000) ||
                (f[0] == "E" && f.size() > 3 && num(f[3]) > now + 30000)) {
                holding.push_back(i);
            } else if (f[0] == "W" && f.size() > 2 && num(f[2]) < now - 50000) {
                waiting.push_back(i);
            }
        }
        const int kind = turn % 5 == 4 ? 2 : turn % 2;
        const std::vector<std::size_t>* pool = kind == 0   ? &holding
                                               : kind == 1 ? &waiting
                                                           : &anyone;
        if (pool->empty() && now - next_kill < 500000) continue;
        if (pool->empty()) pool = &anyone;
        if (pool->empty()) continue;
        kill_slot(slots[(*pool)[static_cast<std::size_t>(
                      uniform(0, static_cast<long long>(pool->size()) - 1))]],
                  fair_phase);
        ++turn;
        next_kill = soak::boot_us() + uniform(300000, 1500000);
    }
    const long long run_end_us = soak::boot_us();

    // The contenders keep the semaphore busy (their scripts remove ended leases) until every
    // watch is settled; then they stop: SIGTERM (release and exit), SIGKILL after 1.5 s.
    const long long settle_by =
        soak::boot_us() + (semsoak::max_ttl_ms + 2 * margin_ms + 2200) * 1000;
    while (soak::boot_us() < settle_by &&
           std::any_of(watches.begin(), watches.end(), [](const Watch& w) { return !w.done; })) {
        sleep_us(10000);
        poll();
        reap(true);
    }
    for (Slot& s : slots) {
        kill(s.proc->pid(), SIGTERM);
        s.stopping = true;
    }
    const long long stop_by = soak::boot_us() + 1500000;
    int killed_at_stop = 0;
    for (Slot& s : slots) {
        while (!has_exited(s.proc->pid()) && soak::boot_us() < stop_by)
            sleep_us(10000);
        if (!has_exited(s.proc->pid())) {
            kill(s.proc->pid(), SIGKILL);
            ++killed_at_stop;
        }
        const support::Result r = s.wait(5);
        if (r.code != 0 && r.code != 128 + SIGKILL) {
            ++unexpected_exits;
            std::printf("contender stopped with code %d, stderr: %s\n", r.code, r.err.c_str());
        }
    }
    log.refresh();

    // Every process is gone: each key of the semaphore has a TTL; once they ran out, none is left.
    auto scan = [&] {
        std::vector<std::pair<std::string, long long>> keys;
        std::string cursor = "0";
        do {
            const soak::RespValue r =
                probe.call({"SCAN", cursor, "MATCH", "*chaos:sem*", "COUNT", "1000"});
            if (r.items.size() != 2) break;
            cursor = r.items[0].text;
            for (const soak::RespValue& k : r.items[1].items)
                keys.emplace_back(k.text, probe.integer({"PTTL", k.text}));
        } while (cursor != "0");
        return keys;
    };
    const std::vector<std::pair<std::string, long long>> keys_at_stop = scan();
    long long longest_pttl = 0;
    for (const auto& kv : keys_at_stop)
        longest_pttl = std::max(longest_pttl, kv.second);
    const std::vector<std::string> no_ttl_at_stop = without_ttl(keys_at_stop);
    sleep_us((longest_pttl + 200) * 1000);
    const std::vector<std::pair<std::string, long long>> keys_after = scan();
    const std::vector<std::string> no_ttl_after = without_ttl(keys_after);

    // The logs.
    LogAnalysis a;
    read_log(log.lines[0], false, a);
    read_log(log.lines[1], true, a);
    const Depth depth = sweep(a.holds, static_cast<int>(semsoak::limit));
    std::vector<Interval> fair_holds, plain_holds;
    for (const Interval& h : a.holds)
        (h.fair ? fair_holds : plain_holds).push_back(h);
    const Fairness fair = fairness(a.calls, all_fair_us < 0 ? LLONG_MAX : all_fair_us, 100000);

    int holder_watches = 0, handed = 0;
    long long max_delay_us = 0, max_lateness = -1, max_left_at_kill = 0;
    std::vector<std::string> reclaim_failures;
    for (const Watch& w : watches) {
        if (!w.failure.empty())
            reclaim_failures.push_back("pid " + std::to_string(w.pid) + ": " + w.failure);
        else if (!w.done)
            reclaim_failures.push_back("pid " + std::to_string(w.pid) + ": never settled");
        handed += w.handed;
        if (w.kind != 0 || !w.done) continue;
        ++holder_watches;
        max_delay_us = std::max(max_delay_us, w.delay_us);
        max_lateness = std::max(max_lateness, w.lateness_ms);
        if (w.first_score_rt >= 0)
            max_left_at_kill = std::max(max_left_at_kill, w.first_score_rt - w.kill_rt_ms);
    }

    std::printf("run: %.1f s; log records: %zu plain, %zu fair\n",
                static_cast<double>(run_end_us - start_us) / 1e6, log.lines[0].size(),
                log.lines[1].size());
    std::printf("grants: %d plain, %d fair; waits run out: %d plain, %d fair; other failures: %d\n",
                a.grants[0], a.grants[1], a.busy[0], a.busy[1], a.other_failures);
    std::printf("extends: %d, failed extends: %d, released while valid: %d, lapsed: %d\n",
                a.extends, a.extend_failed, a.released, a.lapsed);
    for (const auto& [status, n] : a.release_status)
        std::printf("release() -> %s: %d\n",
                    resplock::to_string(static_cast<resplock::Status>(status)), n);
    std::printf("deepest overlap: %d (plain alone %d, fair alone %d), begins over the limit: %d\n",
                depth.deepest, sweep(plain_holds, 4).deepest, sweep(fair_holds, 4).deepest,
                depth.over_limit);
    std::printf(
        "kills: plain %d holders, %d waiters, %d other; fair %d holders, %d waiters, %d "
        "other; %d at the end\n",
        kills[0][0], kills[0][1], kills[0][2], kills[1][0], kills[1][1], kills[1][2],
        killed_at_stop);
    std::printf(
        "killed holders' leases: longest kill-to-gone %.0f ms (TTL left at the kill up to "
        "%lld ms), gone at most %lld ms after their expiry\n",
        static_cast<double>(max_delay_us) / 1000, max_left_at_kill, max_lateness);
    std::printf("killed waiters: longest entry left %lld ms, handed a lease after death: %d\n",
                longest_entry_left, handed);
    std::printf(
        "fair calls (all fair from %.1f s): %d, most grants to others during one: %d "
        "(bound %d), later callers granted first: %d, longest granted wait %.0f ms\n",
        all_fair_us < 0 ? -1.0 : static_cast<double>(all_fair_us - start_us) / 1e6, fair.calls,
        fair.max_passed, semsoak::contenders - 1, fair.overtakes,
        static_cast<double>(fair.longest_wait_us) / 1000);
    if (!fair.example.empty()) std::printf("  fairness: %s\n", fair.example.c_str());
    std::printf("keys at the stop: %zu (longest PTTL %lld ms), after their TTLs: %zu\n",
                keys_at_stop.size(), longest_pttl, keys_after.size());
    for (const auto& [key, pttl] : keys_at_stop)
        std::printf("  at the stop: %s, PTTL %lld ms\n", key.c_str(), pttl);
    if (depth.over_limit > 0)
        std::printf("  overlap at %lld:%s\n", depth.at, depth.example.c_str());
    for (std::size_t i = 0; i < a.problems.size() && i < 20; ++i)
        std::printf("  problem: %s\n", a.problems[i].c_str());
    for (const std::string& f : reclaim_failures)
        std::printf("  reclaim: %s\n", f.c_str());
    for (const std::string& f : entry_failures)
        std::printf("  entry: %s\n", f.c_str());
    for (const std::string& k : no_ttl_at_stop)
        std::printf("  no TTL at the stop: %s\n", k.c_str());
    for (const std::string& k : no_ttl_after)
        std::printf("  no TTL after: %s\n", k.c_str());

    CHECK(depth.deepest <= static_cast<int>(semsoak::limit));
    CHECK_EQ(depth.over_limit, 0);
    CHECK(a.problems.empty());
    CHECK(reclaim_failures.empty());
    CHECK(entry_failures.empty());
    CHECK(no_ttl_at_stop.empty());
    CHECK(no_ttl_after.empty());
    CHECK(keys_after.empty());
    CHECK_EQ(unexpected_exits, 0);
    CHECK(all_fair_us > 0);
    CHECK(fair.max_passed <= semsoak::contenders - 1);
    CHECK_EQ(fair.overtakes, 0);
    // Not vacuous: the places were used, and enough of every kind of event happened.
    CHECK_EQ(depth.deepest, static_cast<int>(semsoak::limit));
    auto at_least = [&](double floor_at_20s) {
        return std::max(2, static_cast<int>(floor_at_20s * scale));
    };
    CHECK(a.grants[0] > at_least(30));
    CHECK(a.grants[1] > at_least(30));
    auto kills_at_least = [&](double floor_at_20s) {
        return std::max(1, static_cast<int>(floor_at_20s * scale));
    };
    CHECK(holder_watches >= kills_at_least(4));
    CHECK(kills[0][1] >= kills_at_least(2));
    CHECK(kills[1][1] >= kills_at_least(2));
    CHECK(a.extends >= at_least(5));
    CHECK(a.lapsed >= at_least(3));
    CHECK(fair.calls >= at_least(20));
}

}  // namespace
