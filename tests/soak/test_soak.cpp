// Soak: 8 soak_holder processes contend on 4 keys with TTLs of 200-800 ms for
// RESPLOCK_SOAK_SECONDS (default 60) while this test SIGKILLs one of them every 0.5-2 s (mostly
// ones that hold a lock) and starts a replacement. After each kill the victim's token must leave
// its key within the longest TTL (+ margin). At the end the holders' own log, written through
// Redis, must show that no two holders of a key were ever within their validity at once.
#include <signal.h>
#include <sys/wait.h>
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
    const double seconds = env_seconds();
    const double scale = seconds / 60.0;  // plausibility floors shrink for short local runs
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
            return proc->wait(static_cast<double>(soak::mono_us() - started_us) / 1e6 + more_s);
        }
    };
    std::vector<Holder> holders;
    int unexpected_exits = 0;
    auto spawn = [&] {
        Holder h{std::make_unique<support::Process>(), soak::mono_us()};
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
            const long long now = soak::mono_us();
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
    const long long end_us = soak::mono_us() + static_cast<long long>(seconds * 1e6);
    while (soak::mono_us() < end_us) {
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
        const long long now = soak::mono_us();
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
        const long long kill_us = soak::mono_us();
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
    const long long ready_by = soak::mono_us() + 5000000;
    for (bool ready = false; !ready && soak::mono_us() < ready_by;) {
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
    const long long free_by = soak::mono_us() + expiry_margin_us;
    std::vector<std::string> still_held;
    do {
        still_held.clear();
        for (const char* key : soak::keys) {
            std::string value;
            if (!client.get(key, value) || !value.empty()) still_held.push_back(key);
        }
        if (!still_held.empty()) sleep_us(20000);
    } while (!still_held.empty() && soak::mono_us() < free_by);
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

}  // namespace
