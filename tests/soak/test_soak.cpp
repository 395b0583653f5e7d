// Soak, in two halves of RESPLOCK_SOAK_SECONDS (default 60).
//
// contention: 8 soak_holder processes contend on 4 keys with TTLs of 200-800 ms while this test
// SIGKILLs one of them every 0.5-2 s (mostly ones that hold a lock) and starts a replacement.
// After each kill the victim's token must leave its key within the longest TTL (+ margin). At the
// end the holders' own log, written through Redis, must show that no two holders of a key were
// ever within their validity at once.
//
// run_holders_with_process_trees: 6 `resplock run` processes contend on 3 keys; each COMMAND is
// a shell with background jobs and a subshell, whose soak_writer processes append timestamped
// entries to one log file while they hold the lock. This test SIGKILLs, SIGTERMs and stalls
// (SIGSTOP, then SIGCONT after less or more than the TTL) resplock processes at random. No entry
// of one hold may fall within another hold of the same key, in time or in the file's order.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/ports/posix.h"
#include "soak_common.hpp"

namespace {

using Fields = std::vector<std::string>;
using resplock::Status;

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

// One hold as the log tells it: from `start` (right after the acquire's OK) to `end`, the last
// moment its holder could have relied on it: the R record's time when it released while valid,
// else (lapsed, failed extend, killed) the end of its last known validity.
struct Hold {
    std::string key;
    std::string token;
    long long start = 0;
    long long valid_until = 0;
    long long end = -1;   // set by an R record
    bool closed = false;  // an R or L record: the holder was not killed while relying on it
};

struct Analysis {
    std::vector<std::string> problems;  // overlaps and impossible records
    int overlaps = 0;
    std::map<std::string, int> acquired;  // per key
    int extends = 0, released = 0, lapsed = 0, extend_failed = 0, contended = 0, busy = 0;
    int other_failures = 0;
    std::map<int, int> release_status;
    std::set<std::string> tokens;        // every token the log mentions
    long long min_slack_us = LLONG_MAX;  // smallest gap between one hold's end and the next start
    // The same after killed holders, whose keys only the server's TTL frees: the margin the
    // library's validity keeps (ttl/100 + 2 ms and the request's latency).
    long long min_killed_slack_us = LLONG_MAX;
};

// Checks the log: per key, no two holds with different tokens may overlap.
Analysis analyse(const std::vector<std::string>& log) {
    Analysis a;
    std::map<std::string, Hold> holds;  // by token
    for (const std::string& line : log) {
        const Fields f = split(line);
        const std::string type = f.empty() ? "" : f[0];
        static const std::map<std::string, std::size_t> sizes = {
            {"S", 2}, {"A", 8}, {"B", 3}, {"E", 5}, {"R", 5}, {"L", 5}, {"X", 5}, {"U", 5}};
        const auto size = sizes.find(type);
        const std::size_t want = size == sizes.end() ? 0 : size->second;
        if (want == 0 || f.size() != want) {
            a.problems.push_back("malformed record: " + line);
            continue;
        }
        if (type == "S") continue;
        if (type == "B") {
            ++a.busy;
            continue;
        }
        const std::string& token = f[3];
        a.tokens.insert(token);
        if (type == "U") {
            ++a.other_failures;
            continue;
        }
        if (type == "A") {
            if (holds.count(token) != 0) a.problems.push_back("token acquired twice: " + line);
            Hold& h = holds[token];
            h.key = f[2];
            h.token = token;
            h.start = num(f[4]);
            h.valid_until = num(f[5]);
            ++a.acquired[h.key];
            if (f[7] == "1") ++a.contended;
            continue;
        }
        auto it = holds.find(token);
        if (it == holds.end() || it->second.key != f[2]) {
            a.problems.push_back("record without its acquire: " + line);
            continue;
        }
        Hold& h = it->second;
        if (type == "E") {
            ++a.extends;
            h.valid_until = num(f[4]);
        } else if (type == "R") {
            ++a.released;
            h.end = num(f[4]);
            h.closed = true;
            if (h.end >= h.valid_until)
                a.problems.push_back("relied on the lock past its validity: " + line);
        } else if (type == "L") {
            ++(f[4] == "lapsed" ? a.lapsed : a.extend_failed);
            h.closed = true;
        } else {
            ++a.release_status[static_cast<int>(num(f[4]))];
        }
    }

    std::map<std::string, std::vector<Hold>> by_key;
    for (auto& [token, h] : holds) {
        if (h.end < 0) h.end = h.valid_until;
        by_key[h.key].push_back(h);
    }
    for (auto& [key, list] : by_key) {
        std::sort(list.begin(), list.end(),
                  [](const Hold& x, const Hold& y) { return x.start < y.start; });
        // Against the hold that reaches furthest so far, not only the previous one: a long hold
        // may cover several later ones.
        const Hold* reach = nullptr;
        for (const Hold& h : list) {
            if (reach != nullptr && h.start < reach->end) {
                ++a.overlaps;
                a.problems.push_back(key + ": " + h.token + " [" + std::to_string(h.start) + ", " +
                                     std::to_string(h.end) + "] overlaps " + reach->token + " [" +
                                     std::to_string(reach->start) + ", " +
                                     std::to_string(reach->end) + "]");
            } else if (reach != nullptr) {
                a.min_slack_us = std::min(a.min_slack_us, h.start - reach->end);
                if (!reach->closed)
                    a.min_killed_slack_us = std::min(a.min_killed_slack_us, h.start - reach->end);
            }
            if (reach == nullptr || h.end > reach->end) reach = &h;
        }
    }
    return a;
}

// The checker must be able to fail: hand-made logs with and without overlaps.
TEST(checker_finds_overlaps) {
    // b starts while killed a (no R record) is still within its validity.
    Analysis r = analyse({"A 1 k a 1000 2000 800 0", "A 2 k b 1500 2500 800 1"});
    CHECK_EQ(r.overlaps, 1);
    // a released at 1400, before b started, though a's validity ran to 2000.
    r = analyse(
        {"A 1 k a 1000 2000 800 0", "R 1 k a 1400", "X 1 k a 0", "A 2 k b 1500 2500 800 1"});
    CHECK_EQ(r.overlaps, 0);
    CHECK_EQ(r.min_slack_us, 100LL);
    CHECK_EQ(r.min_killed_slack_us, LLONG_MAX);
    CHECK(r.problems.empty());
    // An extend carries a's validity into b's hold; a then lapses.
    r = analyse(
        {"A 1 k a 1000 1400 800 0", "E 1 k a 1800", "L 1 k a lapsed", "A 2 k b 1500 2500 800 0"});
    CHECK_EQ(r.overlaps, 1);
    // The same times on different keys do not conflict.
    r = analyse({"A 1 k a 1000 2000 800 0", "A 2 j b 1500 2500 800 0"});
    CHECK_EQ(r.overlaps, 0);
    // b starts 5 us after killed a's validity, then lapses: no overlap.
    r = analyse({"A 1 k a 1000 2000 800 0", "A 2 k b 2005 2500 800 0", "L 2 k b lapsed"});
    CHECK_EQ(r.overlaps, 0);
    CHECK_EQ(r.min_killed_slack_us, 5LL);
    CHECK(r.problems.empty());
    // A long hold covers two later ones that do not overlap each other: both are found.
    r = analyse({"A 1 k a 0 1000 800 0", "A 2 k b 100 200 800 0", "A 3 k c 300 400 800 0"});
    CHECK_EQ(r.overlaps, 2);
    // A release claimed after validity ended, a record with no acquire, and garbage.
    r = analyse({"A 1 k a 1000 2000 800 0", "R 1 k a 2100", "E 9 k zz 5", "Q"});
    CHECK_EQ(r.problems.size(), 3U);
    CHECK_EQ(r.overlaps, 0);
}

// The test's own connection to the server, for GET.
struct Client {
    resplock_posix_t ctx;
    resplock_port_t port = support::posix_port(ctx);
    resplock::ConnectionConfig config;
    char buf[512];
    std::unique_ptr<resplock::Connection> conn;

    explicit Client(std::uint16_t server_port) {
        config.port = server_port;
        config.timeout_ms = 5000;
        conn = std::make_unique<resplock::Connection>(port, config, buf, sizeof buf);
    }

    // The key's value ("" when absent); false when the GET itself failed.
    bool get(const std::string& key, std::string& value) {
        const std::string_view args[2] = {"GET", key};
        resplock::resp::Reply reply;
        if (conn->command(args, 2, reply) != Status::ok) return false;
        value = reply.top().is(resplock::resp::Type::bulk_string) ? std::string(reply.top().text())
                                                                  : std::string();
        return true;
    }
};

// The log as read so far, and each holder's last record.
struct LogReader {
    const support::RedisServer& server;
    std::vector<std::string> lines;
    std::map<long, Fields> last;    // by pid
    std::map<long, Fields> last_a;  // by pid: its last A record
    std::set<std::string> tokens;   // every token logged so far (A and U records)
    std::set<long> started;         // pids that logged S

    void refresh() {
        const std::string out =
            server.cli({"LRANGE", soak::log_key, std::to_string(lines.size()), "-1"});
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) {
            if (line.empty()) continue;
            lines.push_back(line);
            const Fields f = split(line);
            if (f.size() < 2) continue;
            const long pid = static_cast<long>(num(f[1]));
            if (f[0] == "S") {
                started.insert(pid);
                continue;
            }
            last[pid] = f;
            if (f[0] == "A") last_a[pid] = f;
            if ((f[0] == "A" || f[0] == "U") && f.size() > 3) tokens.insert(f[3]);
        }
    }
};

double env_seconds() {
    const char* s = std::getenv("RESPLOCK_SOAK_SECONDS");
    const double v = s != nullptr ? std::atof(s) : 60.0;
    return v > 0 ? v : 60.0;
}

void sleep_us(long long us) {
    if (us <= 0) return;
    const timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
    nanosleep(&ts, nullptr);
}

// True once the process has exited, without reaping it (Process::wait does that).
bool has_exited(pid_t pid) {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
}

TEST(contention) {
    const double seconds = env_seconds() / 2;  // the other half is for the `resplock run` holders
    const double scale = seconds / 60.0;       // plausibility floors shrink with the time
    std::random_device seed_source;
    const unsigned seed = seed_source();
    std::mt19937 rng(seed);
    std::printf("soak: %.0f s, 8 holders, 4 keys, seed %u\n", seconds, seed);

    support::RedisServer server;
    REQUIRE(server.running());
    Client client(server.port());
    LogReader log{server, {}, {}, {}, {}, {}};
    const std::string port_arg = std::to_string(server.port());

    // Process::wait's timeout counts from the process's start, hence the start times.
    struct Holder {
        std::unique_ptr<support::Process> proc;
        long long started_us;
        support::Result wait(double more_s) {
            return proc->wait(static_cast<double>(soak::boot_us() - started_us) / 1e6 + more_s);
        }
    };
    std::vector<Holder> holders;
    int unexpected_exits = 0;
    auto spawn = [&] {
        Holder h{std::make_unique<support::Process>(), soak::boot_us()};
        CHECK(h.proc->start({SOAK_HOLDER, port_arg}));
        return h;
    };
    for (int i = 0; i < 8; ++i)
        holders.push_back(spawn());

    // A killed holder's token must leave its key by the longest TTL after the kill, + margin for
    // a loaded machine; polled, and judged only by a GET sent after the deadline.
    const long long expiry_margin_us = (soak::max_ttl_ms + 1000) * 1000LL;
    std::vector<std::string> expiry_failures;
    long long max_expiry_us = 0;
    // An unlogged token (`suspect`) is dropped as soon as the log shows it: a live holder's
    // record that was on its way.
    auto wait_gone = [&](const std::string& key, const std::string& token, long long kill_us,
                         bool suspect) {
        for (;;) {
            const long long now = soak::boot_us();
            std::string value;
            if (client.get(key, value) && value != token) {
                max_expiry_us = std::max(max_expiry_us, now - kill_us);
                return;
            }
            if (suspect) {
                log.refresh();
                if (log.tokens.count(token) != 0) return;
            }
            if (now > kill_us + expiry_margin_us) {
                expiry_failures.push_back(key + " still held by killed " + token + " after " +
                                          std::to_string((now - kill_us) / 1000) + " ms");
                return;
            }
            sleep_us(suspect ? 50000 : 10000);
        }
    };

    int kills = 0, kills_holding = 0, kills_releasing = 0;
    std::vector<std::pair<std::string, std::string>> suspects;  // (key, token) seen, not logged
    const long long end_us = soak::boot_us() + static_cast<long long>(seconds * 1e6);
    while (soak::boot_us() < end_us) {
        sleep_us(std::uniform_int_distribution<long long>(500000, 2000000)(rng));

        for (auto& p : holders) {
            if (!has_exited(p.proc->pid())) continue;
            const support::Result r = p.wait(5);
            ++unexpected_exits;
            std::printf("holder exited by itself: code %d, stderr: %s\n", r.code, r.err.c_str());
            p = spawn();
        }

        // Mostly a holder that the log shows within its validity; sometimes anyone.
        log.refresh();
        std::vector<std::size_t> candidates;
        const long long now = soak::boot_us();
        for (std::size_t i = 0; i < holders.size(); ++i) {
            const auto it = log.last.find(static_cast<long>(holders[i].proc->pid()));
            if (it == log.last.end()) continue;
            const Fields& f = it->second;
            const long long valid_until = f[0] == "A" && f.size() > 5   ? num(f[5])
                                          : f[0] == "E" && f.size() > 4 ? num(f[4])
                                                                        : 0;
            if (valid_until > now + 30000) candidates.push_back(i);
        }
        const bool pick_holder = !candidates.empty() && rng() % 4 != 0;
        const std::size_t slot = pick_holder
                                     ? candidates[rng() % candidates.size()]
                                     : std::uniform_int_distribution<std::size_t>(0, 7)(rng);
        const long pid = static_cast<long>(holders[slot].proc->pid());
        const long long kill_us = soak::boot_us();
        kill(static_cast<pid_t>(pid), SIGKILL);
        holders[slot].wait(5);
        ++kills;

        // What the keys hold right after the kill: a token missing from the log there could be
        // the victim's, killed between the acquire's OK and its RPUSH.
        std::vector<std::pair<std::string, std::string>> held;
        for (const char* key : soak::keys) {
            std::string value;
            if (client.get(key, value) && !value.empty()) held.emplace_back(key, value);
        }
        log.refresh();  // the victim's records are now final

        const auto last = log.last.find(pid);
        const auto last_a = log.last_a.find(pid);
        if (last != log.last.end() && last_a != log.last_a.end()) {
            const std::string& type = last->second[0];
            const Fields& a = last_a->second;
            // A/E: it held the lock; R/L: it had stopped relying on it but not yet released.
            if (type == "A" || type == "E") ++kills_holding;
            if (type == "R" || type == "L") ++kills_releasing;
            if (type != "X" && type != "B" && type != "U") wait_gone(a[2], a[3], kill_us, false);
        }
        for (const auto& kv : held) {
            if (log.tokens.count(kv.second) != 0) continue;
            wait_gone(kv.first, kv.second, kill_us, true);
            suspects.push_back(kv);
        }
        holders[slot] = spawn();
    }

    // Stop: each holder releases what it holds (writing R first) and exits 0.
    // A holder handles SIGTERM once it has logged S, so wait for that first.
    const long long ready_by = soak::boot_us() + 5000000;
    for (bool ready = false; !ready && soak::boot_us() < ready_by;) {
        log.refresh();
        ready = std::all_of(holders.begin(), holders.end(), [&](const Holder& h) {
            return log.started.count(static_cast<long>(h.proc->pid())) != 0;
        });
        if (!ready) sleep_us(20000);
    }
    for (auto& p : holders)
        kill(p.proc->pid(), SIGTERM);
    for (auto& p : holders) {
        const support::Result r = p.wait(10);
        if (!CHECK_EQ(r.code, 0)) std::printf("holder stderr: %s\n", r.err.c_str());
    }
    CHECK_EQ(unexpected_exits, 0);

    // Every key ends up free: released by the stopped holders, expired for the killed ones.
    const long long free_by = soak::boot_us() + expiry_margin_us;
    std::vector<std::string> still_held;
    do {
        still_held.clear();
        for (const char* key : soak::keys) {
            std::string value;
            if (!client.get(key, value) || !value.empty()) still_held.push_back(key);
        }
        if (!still_held.empty()) sleep_us(20000);
    } while (!still_held.empty() && soak::boot_us() < free_by);
    CHECK(still_held.empty());

    log.refresh();
    const Analysis a = analyse(log.lines);
    int lost = 0;
    for (const auto& kv : suspects)
        lost += a.tokens.count(kv.second) == 0 ? 1 : 0;

    int acquired = 0;
    std::printf("log records: %zu\n", log.lines.size());
    for (const char* key : soak::keys) {
        const auto it = a.acquired.find(key);
        const int n = it == a.acquired.end() ? 0 : it->second;
        acquired += n;
        std::printf("acquisitions on %s: %d\n", key, n);
    }
    std::printf(
        "acquisitions: %d (%d after waiting for a holder), busy after wait: %d, "
        "other acquire failures: %d\n",
        acquired, a.contended, a.busy, a.other_failures);
    std::printf("extends: %d, failed extends: %d, released while valid: %d, lapsed: %d\n",
                a.extends, a.extend_failed, a.released, a.lapsed);
    for (const auto& [status, n] : a.release_status)
        std::printf("release() -> %s: %d\n", resplock::to_string(static_cast<Status>(status)), n);
    std::printf("kills: %d (holding: %d, between R/L and release: %d), lost records: %d\n", kills,
                kills_holding, kills_releasing, lost);
    auto ms = [](long long us) { return us == LLONG_MAX ? -1.0 : static_cast<double>(us) / 1000; };
    std::printf(
        "longest kill-to-expiry: %lld ms; smallest gap before the next holder: %.3f ms "
        "(%.3f ms after a killed holder)\n",
        max_expiry_us / 1000, ms(a.min_slack_us), ms(a.min_killed_slack_us));
    std::printf("overlaps: %d, other problems: %zu, expiry failures: %zu\n", a.overlaps,
                a.problems.size() - static_cast<std::size_t>(a.overlaps), expiry_failures.size());
    for (const std::string& p : a.problems)
        std::printf("  problem: %s\n", p.c_str());
    for (const std::string& f : expiry_failures)
        std::printf("  expiry: %s\n", f.c_str());

    CHECK_EQ(a.overlaps, 0);
    CHECK(a.problems.empty());
    CHECK(expiry_failures.empty());
    // Not vacuous: enough of every kind of event happened.
    auto at_least = [&](double floor_at_60s) {
        return std::max(2, static_cast<int>(floor_at_60s * scale));
    };
    for (const char* key : soak::keys) {
        const auto it = a.acquired.find(key);
        CHECK((it == a.acquired.end() ? 0 : it->second) >= at_least(20));
    }
    CHECK(kills_holding >= at_least(10));
    CHECK(a.extends >= at_least(10));
    CHECK(a.contended >= at_least(10));
    CHECK(a.busy >= at_least(5));
    CHECK(a.lapsed >= at_least(5));
    // A record lost to a kill needs the kill to land in a few microseconds: many mean the log
    // itself is failing.
    CHECK(lost <= kills / 4);
}

// ---------------------------------------------------------------------------------------------
// `resplock run` holders whose COMMANDs are process trees

#ifdef RESPLOCK_CLI

// The writers' log, as soak_writer.cpp describes it: per key, every hold (token) must have all its
// entries outside every other hold, both by time and by the file's order.
struct TreeAnalysis {
    std::vector<std::string> problems;
    int overlaps = 0;     // by time: a hold's first entry before the last entry of an earlier one
    int interleaved = 0;  // by the file: a hold's entry after another hold's, then its own again
    std::map<std::string, int> holds;  // per key
    std::size_t entries = 0;
    std::set<std::string> tags;        // the holders (resplock processes) whose COMMAND wrote
    std::set<long> pids;               // every writer
    long long min_gap_us = LLONG_MAX;  // between a hold's last entry and the next hold's first
};

TreeAnalysis analyse_trees(const std::vector<std::string>& lines) {
    TreeAnalysis a;
    struct Span {
        std::string key;
        std::string token;
        long long first;
        long long last;
    };
    std::map<std::string, Span> spans;           // by token
    std::map<std::string, std::string> current;  // per key: the hold that wrote last
    std::set<std::string> closed;                // holds that another hold of their key followed
    for (const std::string& line : lines) {
        const Fields f = split(line);
        if (f.size() != 5) {
            a.problems.push_back("malformed entry: " + line);
            continue;
        }
        const long long t = num(f[0]);
        const std::string& key = f[1];
        const std::string& token = f[2];
        ++a.entries;
        a.tags.insert(f[3]);
        a.pids.insert(static_cast<long>(num(f[4])));
        const auto it = spans.find(token);
        if (it == spans.end()) {
            spans.emplace(token, Span{key, token, t, t});
            ++a.holds[key];
        } else if (it->second.key != key) {
            a.problems.push_back("one token on two keys: " + line);
        } else {
            it->second.first = std::min(it->second.first, t);
            it->second.last = std::max(it->second.last, t);
        }
        const auto cur = current.find(key);
        if (cur != current.end() && cur->second != token) {
            closed.insert(cur->second);
            if (closed.count(token) != 0) {
                ++a.interleaved;
                a.problems.push_back(key + ": " + token + " wrote again after " + cur->second +
                                     " had written: " + line);
            }
        }
        current[key] = token;
    }
    std::map<std::string, std::vector<Span>> by_key;
    for (const auto& [token, span] : spans)
        by_key[span.key].push_back(span);
    for (auto& [key, list] : by_key) {
        std::sort(list.begin(), list.end(),
                  [](const Span& x, const Span& y) { return x.first < y.first; });
        const Span* reach = nullptr;  // the hold that reaches furthest so far
        for (const Span& s : list) {
            if (reach != nullptr && s.first <= reach->last) {
                ++a.overlaps;
                a.problems.push_back(key + ": " + s.token + " [" + std::to_string(s.first) + ", " +
                                     std::to_string(s.last) + "] overlaps " + reach->token + " [" +
                                     std::to_string(reach->first) + ", " +
                                     std::to_string(reach->last) + "]");
            } else if (reach != nullptr) {
                a.min_gap_us = std::min(a.min_gap_us, s.first - reach->last);
            }
            if (reach == nullptr || s.last > reach->last) reach = &s;
        }
    }
    return a;
}

TEST(tree_checker_finds_interleaving) {
    // Two holds of k one after the other, and one of j in the middle: fine.
    TreeAnalysis r = analyse_trees(
        {"100 k a h1 1", "150 k a h1 2", "160 j c h3 4", "200 k b h2 3", "250 k b h2 3"});
    CHECK(r.problems.empty());
    CHECK_EQ(r.overlaps, 0);
    CHECK_EQ(r.min_gap_us, 50LL);
    CHECK_EQ(r.holds["k"], 2);
    CHECK_EQ(r.tags.size(), std::size_t{3});
    // a's late entry, written after b's first, with a time inside b's span: both checks see it.
    r = analyse_trees({"100 k a h1 1", "200 k b h2 3", "210 k a h1 2", "250 k b h2 3"});
    CHECK_EQ(r.overlaps, 1);
    CHECK_EQ(r.interleaved, 2);  // a, b, a, b
    // A write that took long to land: stamped before b started, written after b's first entry.
    r = analyse_trees({"100 k a h1 1", "200 k b h2 3", "150 k a h1 2"});
    CHECK_EQ(r.overlaps, 0);
    CHECK_EQ(r.interleaved, 1);
    // An entry of a stamped after b had started, though written before b's first entry.
    r = analyse_trees({"100 k a h1 1", "210 k a h1 2", "200 k b h2 3"});
    CHECK_EQ(r.overlaps, 1);
    CHECK_EQ(r.interleaved, 0);
    // A long hold covering two later ones.
    r = analyse_trees({"0 k a h1 1", "100 k b h2 2", "300 k c h3 3", "1000 k a h1 1"});
    CHECK_EQ(r.overlaps, 2);
    r = analyse_trees({"garbage"});
    CHECK_EQ(r.problems.size(), std::size_t{1});
}

// COMMAND: $1 soak_writer, $2 log, $3 tag, $4..$7 how long each writer works (ms), $8 "wait" (for
// the background jobs) or "exit" (leave them running). One entry at once, then a subshell with a
// background writer and a writer that lingers 150 ms on SIGTERM, a background writer, and one in
// the foreground.
const char* const kTreeScript = R"sh(w=$1 log=$2 tag=$3
"$w" "$log" "$tag" 0
( "$w" "$log" "$tag" "$4" & "$w" "$log" "$tag" "$5" 150; wait ) &
"$w" "$log" "$tag" "$6" &
"$w" "$log" "$tag" "$7"
[ "$8" = wait ] && wait
exit 0
)sh";

// Alive and not a zombie.
bool running(long pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE* f = std::fopen(path, "r");
    if (f == nullptr) return false;
    char buf[512];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* close = std::strrchr(buf, ')');
    return close != nullptr && close[1] == ' ' && close[2] != 'Z' && close[2] != 'X' &&
           close[2] != '\0';
}

// The log file, read as it grows (whole lines only).
struct FileLog {
    std::string path;
    long offset = 0;
    std::string partial;
    std::vector<std::string> lines;
    std::set<std::string> tags;

    void refresh() {
        FILE* f = std::fopen(path.c_str(), "r");
        if (f == nullptr) return;
        std::fseek(f, offset, SEEK_SET);
        char buf[65536];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
            offset += static_cast<long>(n);
            partial.append(buf, n);
        }
        std::fclose(f);
        std::size_t start = 0;
        for (std::size_t nl; (nl = partial.find('\n', start)) != std::string::npos;
             start = nl + 1) {
            lines.push_back(partial.substr(start, nl - start));
            const Fields fields = split(lines.back());
            if (fields.size() == 5) tags.insert(fields[3]);
        }
        partial.erase(0, start);
    }
};

TEST(run_holders_with_process_trees) {
    const double seconds = env_seconds() / 2;  // the other half is for the library holders
    const double scale = seconds / 30.0;
    std::random_device seed_source;
    const unsigned seed = seed_source();
    std::mt19937 rng(seed);
    auto uniform = [&](long long lo, long long hi) {
        return std::uniform_int_distribution<long long>(lo, hi)(rng);
    };
    constexpr int slot_count = 6;
    std::printf("soak: %.0f s, %d `resplock run` holders, %d keys, seed %u\n", seconds, slot_count,
                soak::run_key_count, seed);

    support::RedisServer server;
    REQUIRE(server.running());
    char tmpl[] = "/tmp/resplock-soak-XXXXXX";
    const char* dir = mkdtemp(tmpl);
    REQUIRE(dir != nullptr);
    FileLog log{std::string(dir) + "/log", 0, {}, {}, {}};

    struct Slot {
        std::unique_ptr<support::Process> proc;
        long long started_us = 0;
        std::string tag;
        long long ttl_ms = 0;
        bool stopped = false;
        long long resume_us = 0;
    };
    std::vector<Slot> slots(slot_count);
    int generation = 0;
    auto spawn = [&](Slot& s) {
        s.ttl_ms = uniform(600, 1500);
        s.tag = "h" + std::to_string(++generation);
        s.stopped = false;
        auto work = [&] { return std::to_string(uniform(0, s.ttl_ms * 3 / 2)); };
        std::vector<std::string> args = {RESPLOCK_CLI,
                                         "-u",
                                         server.url(),
                                         "--ttl",
                                         std::to_string(s.ttl_ms),
                                         "--wait",
                                         std::to_string(uniform(0, 2000)),
                                         "--timeout",
                                         "500",
                                         "run",
                                         soak::run_keys[uniform(0, soak::run_key_count - 1)],
                                         "--",
                                         "sh",
                                         "-c",
                                         kTreeScript,
                                         "sh",
                                         SOAK_WRITER,
                                         log.path,
                                         s.tag};
        for (int i = 0; i < 4; ++i)
            args.push_back(work());
        args.push_back(uniform(0, 1) == 0 ? "wait" : "exit");
        s.proc = std::make_unique<support::Process>();
        s.started_us = soak::boot_us();
        CHECK(s.proc->start(args));
    };
    auto finish = [&](Slot& s, double more_s) {
        return s.proc->wait(static_cast<double>(soak::boot_us() - s.started_us) / 1e6 + more_s);
    };
    for (Slot& s : slots)
        spawn(s);

    std::map<int, int> codes;  // resplock's exit codes
    std::vector<std::string> unexpected;
    auto collect = [&](Slot& s, const support::Result& r) {
        ++codes[r.code];
        // COMMAND's 0 (or 143 when SIGTERM reached its shell), lost (70), busy (75), or killed.
        if (r.code != 0 && r.code != 70 && r.code != 75 && r.code != 128 + SIGKILL &&
            r.code != 128 + SIGTERM) {
            unexpected.push_back(s.tag + ": exit " + std::to_string(r.code) + ": " + r.err);
        }
    };
    int kills = 0, kills_holding = 0, terms = 0, terms_holding = 0;
    int short_stalls = 0, short_stalls_holding = 0, long_stalls = 0, long_stalls_holding = 0;
    const long long end_us = soak::boot_us() + static_cast<long long>(seconds * 1e6);
    long long next_event = soak::boot_us() + uniform(150000, 600000);
    while (soak::boot_us() < end_us) {
        sleep_us(10000);
        const long long now = soak::boot_us();
        for (Slot& s : slots) {
            if (s.stopped && now >= s.resume_us) {
                kill(s.proc->pid(), SIGCONT);
                s.stopped = false;
            }
            if (!s.stopped && has_exited(s.proc->pid())) {
                collect(s, finish(s, 5));
                spawn(s);
            }
        }
        if (now < next_event) continue;
        next_event = now + uniform(150000, 600000);
        // Mostly a holder whose COMMAND has written (it holds the lock); sometimes anyone.
        log.refresh();
        std::vector<std::size_t> live, holders;
        for (std::size_t i = 0; i < slots.size(); ++i) {
            if (slots[i].stopped) continue;
            live.push_back(i);
            if (log.tags.count(slots[i].tag) != 0) holders.push_back(i);
        }
        const std::vector<std::size_t>& pool =
            !holders.empty() && uniform(0, 3) != 0 ? holders : live;
        if (pool.empty()) continue;
        Slot& s = slots[pool[static_cast<std::size_t>(
            uniform(0, static_cast<long long>(pool.size()) - 1))]];
        const bool holding = log.tags.count(s.tag) != 0;
        const long long roll = uniform(0, 99);
        if (roll < 35) {
            kill(s.proc->pid(), SIGKILL);
            ++kills;
            kills_holding += holding ? 1 : 0;
        } else if (roll < 70) {
            // Stalled for less than the TTL, or for longer.
            const bool longer = uniform(0, 1) == 1;
            const long long ms = longer ? uniform(s.ttl_ms * 13 / 10, s.ttl_ms * 25 / 10)
                                        : uniform(s.ttl_ms * 2 / 10, s.ttl_ms * 7 / 10);
            kill(s.proc->pid(), SIGSTOP);
            s.stopped = true;
            s.resume_us = now + ms * 1000;
            ++(longer ? long_stalls : short_stalls);
            (longer ? long_stalls_holding : short_stalls_holding) += holding ? 1 : 0;
        } else if (roll < 85) {
            kill(s.proc->pid(), SIGTERM);
            ++terms;
            terms_holding += holding ? 1 : 0;
        }
    }

    // Stop: every holder gets SIGTERM (after SIGCONT), passes it on to its group, and exits once
    // the group has ended.
    for (Slot& s : slots) {
        if (s.stopped) kill(s.proc->pid(), SIGCONT);
        kill(s.proc->pid(), SIGTERM);
    }
    for (Slot& s : slots)
        collect(s, finish(s, 15));
    log.refresh();
    const TreeAnalysis a = analyse_trees(log.lines);
    std::vector<long> left_running;
    for (const long pid : a.pids) {
        if (running(pid)) left_running.push_back(pid);
    }

    std::printf("log entries: %zu from %zu writers of %zu holders\n", a.entries, a.pids.size(),
                a.tags.size());
    for (const char* key : soak::run_keys) {
        const auto it = a.holds.find(key);
        std::printf("holds of %s: %d\n", key, it == a.holds.end() ? 0 : it->second);
    }
    std::printf("SIGKILLs: %d (holding: %d), SIGTERMs: %d (holding: %d)\n", kills, kills_holding,
                terms, terms_holding);
    std::printf("stalls shorter than the TTL: %d (holding: %d), longer: %d (holding: %d)\n",
                short_stalls, short_stalls_holding, long_stalls, long_stalls_holding);
    std::printf("resplock exit codes:");
    for (const auto& [code, n] : codes)
        std::printf(" %d: %d", code, n);
    std::printf("\nsmallest gap between two holds of a key: %.3f ms\n",
                a.min_gap_us == LLONG_MAX ? -1.0 : static_cast<double>(a.min_gap_us) / 1000);
    std::printf("overlaps: %d, interleaved: %d, other problems: %zu\n", a.overlaps, a.interleaved,
                a.problems.size() - static_cast<std::size_t>(a.overlaps + a.interleaved));
    for (std::size_t i = 0; i < a.problems.size() && i < 20; ++i)
        std::printf("  problem: %s\n", a.problems[i].c_str());
    for (const std::string& u : unexpected)
        std::printf("  unexpected: %s\n", u.c_str());

    CHECK_EQ(a.overlaps, 0);
    CHECK_EQ(a.interleaved, 0);
    CHECK(a.problems.empty());
    CHECK(unexpected.empty());
    if (!CHECK(left_running.empty()))
        std::printf("  %zu writers still running, e.g. pid %ld\n", left_running.size(),
                    left_running.front());
    // Not vacuous: enough of every kind of event happened to holders that held the lock.
    auto at_least = [&](double floor_at_30s) {
        return std::max(1, static_cast<int>(floor_at_30s * scale));
    };
    for (const char* key : soak::run_keys) {
        const auto it = a.holds.find(key);
        CHECK((it == a.holds.end() ? 0 : it->second) >= at_least(10));
    }
    CHECK(kills_holding >= at_least(5));
    CHECK(terms_holding >= at_least(2));
    CHECK(short_stalls_holding >= at_least(3));
    CHECK(long_stalls_holding >= at_least(3));
    CHECK(codes[70] >= at_least(2));  // lost: stalled past the validity
    CHECK(a.entries >= static_cast<std::size_t>(at_least(2000)));

    if (a.problems.empty()) unlink(log.path.c_str());
    rmdir(dir);
}

#endif  // RESPLOCK_CLI

}  // namespace
