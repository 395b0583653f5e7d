// `resplock --limit N` against a real redis-server: the counting semaphore through the tool.
// Three leases of a limit of 3 (distinct tokens, each with its owner label), the fourth busy;
// status's "held K/N" line and its "<ms> <label>" lines, first to end first; release and extend
// of a live, a released and a foreign token; fencing numbers; status of a free semaphore; the
// options --limit refuses; four concurrent `run`s under a limit of 2 that log their start and
// end (never more than 2 at once, all 4 ran); what `run` exports; a fair limit of 1 that serves
// its waiters in arrival order; a lease lost under `run` (70); and a SIGKILLed `run` whose lease
// the server takes back when its TTL ends. --replicas: a lone server's lease given back (69), and
// a master with one replica (met, unmet, extend, a fair hand-off). A Redis Cluster reached through
// nodes that do not serve KEY's slot.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_cluster.hpp"
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

std::vector<std::string> tool(std::vector<std::string> args) {
    args.insert(args.begin(), {RESPLOCK_CLI, "-u", server().url()});
    return args;
}

Result cli(std::vector<std::string> args) {
    return support::run(tool(std::move(args)), {}, 30);
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return lines;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

bool one_error_line(const std::string& err) {
    return err.rfind("resplock: ", 0) == 0 && err.back() == '\n' &&
           err.find('\n') == err.size() - 1;
}

// A lease line of status: "<ms> <label>" or "<ms>".
struct Lease {
    long long ms = -1;
    std::string label;
};

// status's lines after the first, or none when a line is not a lease line.
std::vector<Lease> leases_of(const std::vector<std::string>& lines) {
    std::vector<Lease> leases;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        const std::size_t digits = l.find_first_not_of("0123456789");
        if (digits == 0) return {};
        Lease lease;
        lease.ms = std::atoll(l.c_str());
        if (digits != std::string::npos) {
            if (l[digits] != ' ' || digits + 1 == l.size()) return {};
            lease.label = l.substr(digits + 1);
        }
        leases.push_back(lease);
    }
    return leases;
}

// KEY, deleted from the server of most tests.
std::string fresh_key(const std::string& key) {
    server().cli({"DEL", key});
    return key;
}

// An empty log file of this test process, "/tmp/resplock-sem-NAME-PID.log".
std::string fresh_log(const std::string& name) {
    const std::string path = "/tmp/resplock-sem-" + name + "-" + std::to_string(getpid()) + ".log";
    std::remove(path.c_str());
    return path;
}

void show(const char* what, const Result& r) {
    std::printf("      %s: exit %d\n      stdout: %s      stderr: %s", what, r.code, r.out.c_str(),
                r.err.c_str());
}

TEST(server_started) {
    REQUIRE(server().running());
}

TEST(three_leases_of_three_then_busy_then_status_release_and_extend) {
    const std::string key = fresh_key("cli:sem");
    // TTLs that make the order of the ends b, c, a.
    const struct {
        const char* owner;
        const char* ttl;
    } holders[] = {{"gw-a", "30000"}, {"gw-b", "10000"}, {"gw-c", "20000"}};
    std::string tokens[3];
    for (int i = 0; i < 3; ++i) {
        const Result r = cli(
            {"--limit", "3", "--owner", holders[i].owner, "--ttl", holders[i].ttl, "acquire", key});
        if (!CHECK_EQ(r.code, 0)) show("acquire", r);
        tokens[i] = trimmed(r.out);
        CHECK(tokens[i].rfind(std::string(holders[i].owner) + ":", 0) == 0);
        CHECK(tokens[i].find(' ') == std::string::npos);
    }
    CHECK(tokens[0] != tokens[1] && tokens[1] != tokens[2] && tokens[0] != tokens[2]);
    CHECK_EQ(server().cli({"ZCARD", key}), std::string("3"));

    // The fourth: busy at once, and after a short wait.
    Result r = cli({"--limit", "3", "acquire", key});
    CHECK_EQ(r.code, 75);
    CHECK(one_error_line(r.err) && contains(r.err, "semaphore is full (--limit 3)"));
    CHECK_EQ(r.out, std::string());
    r = cli({"--limit", "3", "--wait", "400", "acquire", key});
    CHECK_EQ(r.code, 75);
    CHECK(contains(r.err, "gave up after waiting 400 ms"));
    CHECK(r.secs >= 0.35);
    CHECK_EQ(server().cli({"ZCARD", key}), std::string("3"));

    r = cli({"--limit", "3", "status", key});
    CHECK_EQ(r.code, 0);
    std::vector<std::string> lines = lines_of(r.out);
    REQUIRE_EQ(lines.size(), std::size_t{4});
    CHECK_EQ(lines[0], std::string("held 3/3"));
    std::vector<Lease> leases = leases_of(lines);
    REQUIRE_EQ(leases.size(), std::size_t{3});
    CHECK_EQ(leases[0].label, std::string("gw-b"));
    CHECK_EQ(leases[1].label, std::string("gw-c"));
    CHECK_EQ(leases[2].label, std::string("gw-a"));
    CHECK(leases[0].ms > 5000 && leases[0].ms <= 10000);
    CHECK(leases[1].ms > 15000 && leases[1].ms <= 20000);
    CHECK(leases[2].ms > 25000 && leases[2].ms <= 30000);
    std::printf("      status: %s / %s / %s\n", lines[1].c_str(), lines[2].c_str(),
                lines[3].c_str());

    // Release b's lease: two left, and b's token no longer releases or extends anything.
    CHECK_EQ(cli({"--limit", "3", "release", key, tokens[1]}).code, 0);
    r = cli({"--limit", "3", "status", key});
    CHECK_EQ(r.code, 0);
    lines = lines_of(r.out);
    REQUIRE_EQ(lines.size(), std::size_t{3});
    CHECK_EQ(lines[0], std::string("held 2/3"));
    r = cli({"--limit", "3", "release", key, tokens[1]});
    CHECK_EQ(r.code, 1);
    CHECK(one_error_line(r.err) && contains(r.err, "token holds no live lease"));
    CHECK_EQ(cli({"--limit", "3", "extend", key, tokens[1]}).code, 1);
    // A token nobody was given.
    CHECK_EQ(cli({"--limit", "3", "release", key, "gw-x:0123456789abcdef0123456789abcdef"}).code,
             1);
    CHECK_EQ(server().cli({"ZCARD", key}), std::string("2"));

    // Extend c's lease past a's: c is now the last to end.
    CHECK_EQ(cli({"--limit", "3", "--ttl", "60000", "extend", key, tokens[2]}).code, 0);
    r = cli({"--limit", "3", "status", key});
    leases = leases_of(lines_of(r.out));
    REQUIRE_EQ(leases.size(), std::size_t{2});
    CHECK_EQ(leases[0].label, std::string("gw-a"));
    CHECK_EQ(leases[1].label, std::string("gw-c"));
    CHECK(leases[1].ms > 55000);

    // A lease without a label: its line is the ms alone.
    r = cli({"--limit", "3", "--owner", "", "acquire", key});
    CHECK_EQ(r.code, 0);
    const std::string plain = trimmed(r.out);
    CHECK(plain.find(':') == std::string::npos);
    r = cli({"--limit", "3", "status", key});
    CHECK_EQ(lines_of(r.out)[0], std::string("held 3/3"));
    leases = leases_of(lines_of(r.out));
    REQUIRE_EQ(leases.size(), std::size_t{3});
    // a's (30 s, taken first), the new one's (the default 30 s), c's (60 s).
    CHECK_EQ(leases[0].label, std::string("gw-a"));
    CHECK(leases[1].label.empty() && leases[1].ms > 25000 && leases[1].ms <= 30000);
    CHECK_EQ(leases[2].label, std::string("gw-c"));
    CHECK(std::is_sorted(leases.begin(), leases.end(),
                         [](const Lease& x, const Lease& y) { return x.ms < y.ms; }));

    for (const std::string& t : {tokens[0], tokens[2], plain})
        CHECK_EQ(cli({"--limit", "3", "release", key, t}).code, 0);
    CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
}

TEST(status_of_a_free_semaphore_is_free_0_of_n_and_exit_1) {
    server().cli({"DEL", "cli:sem:free"});
    const Result r = cli({"--limit", "5", "status", "cli:sem:free"});
    CHECK_EQ(r.code, 1);
    CHECK_EQ(r.out, std::string("free 0/5\n"));
    CHECK_EQ(r.err, std::string());
}

TEST(fence_prints_increasing_numbers) {
    const std::string key = fresh_key("cli:sem:fence");
    unsigned long long last = 0;
    std::vector<std::string> tokens;
    for (int i = 0; i < 4; ++i) {
        const Result r = cli({"--limit", "2", "--fence", "acquire", key});
        if (!CHECK_EQ(r.code, 0)) show("acquire --fence", r);
        const std::string out = trimmed(r.out);
        const std::size_t space = out.find(' ');
        REQUIRE(space != std::string::npos && space > 0);
        const unsigned long long fence = std::strtoull(out.c_str() + space + 1, nullptr, 10);
        CHECK(fence > last);
        last = fence;
        tokens.push_back(out.substr(0, space));
        // Two at a time: give the older one back before the next pair.
        if (tokens.size() == 2) {
            CHECK_EQ(cli({"--limit", "2", "release", key, tokens[0]}).code, 0);
            tokens.erase(tokens.begin());
        }
    }
    std::printf("      last fence %llu\n", last);
    CHECK_EQ(cli({"--limit", "2", "release", key, tokens[0]}).code, 0);
}

TEST(limit_refuses_options_that_do_not_apply) {
    const std::string key = fresh_key("cli:sem:refused");
    const struct {
        std::vector<std::string> args;
        const char* named;
    } cases[] = {
        {{"--once-per", "1000", "acquire", key}, "--once-per"},
        {{"--wake", "acquire", key}, "--wake"},
        {{"-u", server().url(), "-u", server().url(), "acquire", key}, "several URLs"},
        {{"--limit", "4", "acquire", key}, "--limit given twice"},
        {{"--replicas", "1", "status", key}, "--replicas applies to"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args = {"--limit", "3"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const Result r = cli(args);
        const bool ok =
            CHECK_EQ(r.code, 64) && CHECK(one_error_line(r.err)) && CHECK(contains(r.err, c.named));
        if (!ok) show(c.named, r);
    }
    for (const char* bad : {"0", "65536", "many"}) {
        const Result r = cli({"--limit", bad, "acquire", key});
        CHECK_EQ(r.code, 64);
        CHECK(contains(r.err, "--limit"));
    }
    CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
}

// One line of a run's log: "S <ns>" or "E <ns>".
struct Event {
    long long ns;
    int step;  // +1 start, -1 end
};

TEST(four_runs_under_a_limit_of_two_never_exceed_two) {
    const std::string key = fresh_key("cli:sem:run");
    const std::string log = fresh_log("run");
    const std::string script =
        "echo \"S $(date +%s%N)\" >> " + log + "; sleep 0.6; echo \"E $(date +%s%N)\" >> " + log;
    std::unique_ptr<support::Process> runs[4];
    for (auto& p : runs) {
        p = std::make_unique<support::Process>();
        REQUIRE(p->start(tool({"--limit", "2", "--wait", "20000", "--ttl", "5000", "run", key, "--",
                               "sh", "-c", script})));
    }
    int failed = 0;
    for (auto& p : runs) {
        const Result r = p->wait(30);
        if (r.code != 0) {
            ++failed;
            show("run", r);
        }
    }
    std::vector<Event> events;
    for (const long long ns : support::log_times(log, "S"))
        events.push_back({ns, +1});
    for (const long long ns : support::log_times(log, "E"))
        events.push_back({ns, -1});
    // At one instant an end counts before a start.
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
        return a.ns != b.ns ? a.ns < b.ns : a.step < b.step;
    });
    int now = 0, deepest = 0;
    for (const Event& e : events) {
        now += e.step;
        deepest = std::max(deepest, now);
    }
    const std::size_t starts = support::log_times(log, "S").size();
    std::printf("      %zu starts, %zu ends, deepest concurrency %d\n", starts,
                support::log_times(log, "E").size(), deepest);
    CHECK_EQ(failed, 0);
    CHECK_EQ(starts, std::size_t{4});
    CHECK_EQ(support::log_times(log, "E").size(), std::size_t{4});
    CHECK(deepest <= 2);
    CHECK_EQ(deepest, 2);  // the limit is used, not only respected
    CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
    std::remove(log.c_str());
}

TEST(run_exports_token_fence_and_limit_and_releases) {
    const std::string key = fresh_key("cli:sem:env");
    const Result r =
        cli({"--limit", "2", "--fence", "--owner", "runner", "run", key, "--", "sh", "-c",
             "echo \"$RESPLOCK_KEY|$RESPLOCK_TOKEN|$RESPLOCK_FENCE|$RESPLOCK_LIMIT\"; "
             "redis-cli -h 127.0.0.1 -p " +
                 std::to_string(server().port()) + " ZSCORE " + key + " \"$RESPLOCK_TOKEN\""});
    if (!CHECK_EQ(r.code, 0)) show("run", r);
    const std::vector<std::string> lines = lines_of(r.out);
    REQUIRE_EQ(lines.size(), std::size_t{2});
    const std::vector<std::string> fields = [&] {
        std::vector<std::string> f;
        std::size_t at = 0;
        for (std::size_t bar; (bar = lines[0].find('|', at)) != std::string::npos; at = bar + 1)
            f.push_back(lines[0].substr(at, bar - at));
        f.push_back(lines[0].substr(at));
        return f;
    }();
    REQUIRE_EQ(fields.size(), std::size_t{4});
    CHECK_EQ(fields[0], key);
    CHECK(fields[1].rfind("runner:", 0) == 0);
    CHECK(std::strtoull(fields[2].c_str(), nullptr, 10) > 0);
    CHECK_EQ(fields[3], std::string("2"));
    // The token held a lease of KEY while COMMAND ran (its score: the lease's end).
    CHECK(std::atoll(lines[1].c_str()) > 0);
    CHECK_EQ(cli({"--limit", "2", "status", key}).out, std::string("free 0/2\n"));
}

TEST(run_with_a_full_semaphore_is_busy_and_does_not_run) {
    const std::string key = fresh_key("cli:sem:busy");
    const Result a = cli({"--limit", "1", "acquire", key});
    REQUIRE_EQ(a.code, 0);
    const Result r = cli({"--limit", "1", "run", key, "--", "echo", "ran"});
    CHECK_EQ(r.code, 75);
    CHECK_EQ(r.out, std::string());
    CHECK(contains(r.err, "semaphore is full"));
    CHECK_EQ(cli({"--limit", "1", "release", key, trimmed(a.out)}).code, 0);
}

// COMMAND removes its own lease and exits at once: the release at the end finds it gone, and run
// exits 70 naming COMMAND's own status. Or it goes on: a renewal finds the lease gone, and run
// stops COMMAND and exits 70.
TEST(run_exits_70_when_its_lease_was_lost) {
    const std::string key = fresh_key("cli:sem:lost");
    const std::string remove = "redis-cli -h 127.0.0.1 -p " + std::to_string(server().port()) +
                               " ZREM " + key + " \"$RESPLOCK_TOKEN\" >/dev/null; ";
    Result r =
        cli({"--limit", "2", "--ttl", "30000", "run", key, "--", "sh", "-c", remove + "exit 0"});
    CHECK_EQ(r.code, 70);
    if (!CHECK(contains(r.err, "its lease gone") && contains(r.err, "status 0"))) show("run", r);
    r = cli({"--limit", "2", "--ttl", "900", "run", key, "--", "sh", "-c", remove + "sleep 10"});
    CHECK_EQ(r.code, 70);
    CHECK(r.secs < 3);
    if (!CHECK(contains(r.err, "its lease is gone") && contains(r.err, "stopping COMMAND"))) {
        show("run", r);
    }
}

TEST(fair_limit_of_one_serves_waiters_in_arrival_order) {
    const std::string key = fresh_key("cli:sem:fair");
    const std::string log = fresh_log("fair");
    const Result a = cli({"--limit", "1", "--fair", "--ttl", "20000", "acquire", key});
    REQUIRE_EQ(a.code, 0);
    std::unique_ptr<support::Process> waiters[3];
    for (int i = 0; i < 3; ++i) {
        waiters[i] = std::make_unique<support::Process>();
        REQUIRE(waiters[i]->start(
            tool({"--limit", "1", "--fair", "--owner", "w" + std::to_string(i + 1), "--wait",
                  "20000", "--ttl", "10000", "run", key, "--", "sh", "-c",
                  "echo $RESPLOCK_TOKEN >> " + log + "; sleep 0.2"})));
        // The next one starts once this one is queued, as status counts it.
        const std::string queued = std::to_string(i + 1) + " waiting in the fair queue";
        CHECK(support::wait_until(
            [&] {
                return contains(cli({"--limit", "1", "status", key}).err, queued);
            },
            10));
    }
    const Result s = cli({"--limit", "1", "status", key});
    CHECK_EQ(s.code, 0);
    CHECK(lines_of(s.out).size() == 2 && lines_of(s.out)[0] == "held 1/1");
    CHECK(one_error_line(s.err));
    CHECK_EQ(cli({"--limit", "1", "release", key, trimmed(a.out)}).code, 0);
    for (auto& w : waiters) {
        const Result r = w->wait(30);
        if (!CHECK_EQ(r.code, 0)) show("waiter", r);
    }
    const std::vector<std::string> order = lines_of(read_file(log));
    std::string served;
    for (const std::string& t : order)
        served += t.substr(0, t.find(':')) + " ";
    std::printf("      served: %s\n", served.c_str());
    CHECK_EQ(served, std::string("w1 w2 w3 "));
    CHECK_EQ(cli({"--limit", "1", "status", key}).out, std::string("free 0/1\n"));
    std::remove(log.c_str());
}

TEST(a_killed_runs_lease_ends_with_its_ttl) {
    const std::string key = fresh_key("cli:sem:killed");
    support::Process holder;
    REQUIRE(holder.start(tool(
        {"--limit", "2", "--owner", "doomed", "--ttl", "1500", "run", key, "--", "sleep", "30"})));
    REQUIRE(support::wait_until(
        [&] {
            return cli({"--limit", "2", "status", key}).out.rfind("held 1/2\n", 0) == 0;
        },
        10));
    ::kill(holder.pid(), SIGKILL);
    const auto killed = support::Clock::now();
    (void)holder.wait(10);
    // Nobody released it: still held right after the kill, with the label of the dead holder.
    Result r = cli({"--limit", "2", "status", key});
    CHECK_EQ(r.code, 0);
    CHECK(contains(r.out, " doomed\n"));
    CHECK(support::wait_until([&] { return cli({"--limit", "2", "status", key}).code == 1; }, 5));
    const double gone_after = support::seconds_since(killed);
    std::printf("      lease gone %.2f s after the kill (TTL 1.5 s)\n", gone_after);
    CHECK(gone_after <= 2.5);
    r = cli({"--limit", "2", "status", key});
    CHECK_EQ(r.out, std::string("free 0/2\n"));
}

// --replicas 1 on a server without replicas: the WAIT counts none, the lease is given back.
TEST(replicas_unmet_on_a_lone_server_give_the_lease_back) {
    const std::string key = fresh_key("cli:sem:norep");
    const Result r = cli({"--limit", "2", "--replicas", "1", "--timeout", "600", "acquire", key});
    CHECK_EQ(r.code, 69);
    CHECK_EQ(r.out, std::string());
    const bool ok = CHECK(one_error_line(r.err)) &&
                    CHECK(contains(r.err, "only 0 of 1 replicas acknowledged")) &&
                    CHECK(contains(r.err, "the lease it had taken was released"));
    if (!ok) show("acquire --replicas 1", r);
    CHECK_EQ(server().cli({"ZCARD", key}), std::string("0"));
}

// A master and its replica, whose copy of the first sync goes to a fresh directory (removed
// when the replica has stopped: declared first, it is destroyed last).
struct Replicated {
    struct Scratch {
        char dir[40] = "/tmp/resplock-cli-sem-XXXXXX";
        bool made = mkdtemp(dir) != nullptr;
        ~Scratch() {
            std::error_code ignored;
            if (made) std::filesystem::remove_all(dir, ignored);
        }
    } scratch;
    support::RedisServer master{"--repl-diskless-sync-delay", "0"};
    std::string master_port = std::to_string(master.port());
    support::RedisServer replica{"--replicaof", "127.0.0.1", master_port.c_str(), "--dir",
                                 scratch.dir};

    bool linked() const {
        return replica.cli({"INFO", "replication"}).find("master_link_status:up") !=
               std::string::npos;
    }
    Result cli(std::vector<std::string> args) const {
        args.insert(args.begin(), {RESPLOCK_CLI, "-u", master.url()});
        return support::run(args, {}, 30);
    }
};

TEST(replicas_with_a_replica_met_unmet_extend_and_fair_hand_off) {
    const Replicated r;
    REQUIRE(r.scratch.made && r.master.running() && r.replica.running());
    REQUIRE(support::wait_until([&] { return r.linked(); }, 20));
    const std::string key = "cli:sem:rep";
    Result a = r.cli({"--limit", "2", "--replicas", "1", "--ttl", "20000", "acquire", key});
    if (!CHECK_EQ(a.code, 0)) show("acquire --replicas 1", a);
    const std::string token = trimmed(a.out);
    // Acknowledged: the replica has the lease.
    CHECK(!r.replica.cli({"ZSCORE", key, token}).empty());
    a = r.cli({"--limit", "2", "--replicas", "2", "--timeout", "600", "acquire", key});
    CHECK_EQ(a.code, 69);
    if (!CHECK(contains(a.err, "only 1 of 2 replicas acknowledged"))) show("--replicas 2", a);
    CHECK_EQ(r.master.cli({"ZCARD", key}), std::string("1"));
    CHECK_EQ(
        r.cli({"--limit", "2", "--replicas", "1", "--ttl", "40000", "extend", key, token}).code, 0);
    CHECK(std::atoll(r.master.cli({"PTTL", key}).c_str()) > 30000);
    CHECK_EQ(r.cli({"--limit", "2", "release", key, token}).code, 0);

    // A fair hand-off to a waiter that asks for one replica.
    const std::string fair = "cli:sem:rep:fair";
    const Result h = r.cli({"--limit", "1", "--fair", "--ttl", "20000", "acquire", fair});
    REQUIRE_EQ(h.code, 0);
    support::Process waiter;
    REQUIRE(waiter.start({RESPLOCK_CLI, "-u", r.master.url(), "--limit", "1", "--fair",
                          "--replicas", "1", "--wait", "10000", "run", fair, "--", "echo", "ran"}));
    CHECK(support::wait_until(
        [&] {
            return contains(r.cli({"--limit", "1", "status", fair}).err,
                            "1 waiting in the fair queue");
        },
        10));
    CHECK_EQ(r.cli({"--limit", "1", "release", fair, trimmed(h.out)}).code, 0);
    const Result w = waiter.wait(20);
    if (!CHECK_EQ(w.code, 0)) show("fair waiter --replicas 1", w);
    CHECK_EQ(w.out, std::string("ran\n"));
}

// Every command through a node that does not serve KEY's slot (MOVED followed), with --replicas 1
// met by the slot's master's replica.
TEST(a_cluster_reached_through_other_nodes) {
    support::RedisCluster cluster;
    REQUIRE(cluster.ok());
    const std::string key = cluster.key_on(1, "cli:sem:cluster:");
    const auto via = [&](std::size_t node, std::vector<std::string> args) {
        args.insert(args.begin(), {RESPLOCK_CLI, "-u", cluster.node(node).url(), "--limit", "2"});
        return support::run(args, {}, 30);
    };
    std::string tokens[2];
    for (int i = 0; i < 2; ++i) {
        const Result r =
            via(0, {"--replicas", "1", "--owner", "n" + std::to_string(i), "acquire", key});
        if (!CHECK_EQ(r.code, 0)) show("acquire via node 0", r);
        tokens[i] = trimmed(r.out);
    }
    CHECK_EQ(via(2, {"acquire", key}).code, 75);
    Result r = via(2, {"status", key});
    CHECK_EQ(r.code, 0);
    const std::vector<std::string> lines = lines_of(r.out);
    CHECK(lines.size() == 3 && lines[0] == "held 2/2");
    CHECK_EQ(leases_of(lines).size(), std::size_t{2});
    CHECK_EQ(cluster.node(1).cli({"ZCARD", key}), std::string("2"));
    CHECK_EQ(via(0, {"release", key, tokens[0]}).code, 0);
    r = via(2, {"--replicas", "1", "run", key, "--", "sh", "-c", "echo $RESPLOCK_LIMIT"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.out, std::string("2\n"));
    CHECK_EQ(via(0, {"release", key, tokens[1]}).code, 0);
    CHECK_EQ(via(2, {"status", key}).out, std::string("free 0/2\n"));
}

}  // namespace
