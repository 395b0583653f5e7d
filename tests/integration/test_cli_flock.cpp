// The resplock tool's flock(1) options against a real redis-server: -n on a busy lock (one
// attempt), -w SECONDS (a wait in seconds, fractions to the millisecond), -E CODE (busy's exit
// status for acquire, run and --limit), run -c CMD (/bin/sh -c CMD); and the help of each command
// (resplock help COMMAND, resplock COMMAND --help) with its refusals.
#include <cstdio>
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

using support::Result;

Result cli(std::vector<std::string> args, const support::Env& env = {}) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return support::run(args, env, 60);
}

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// One line on stderr starting with "resplock: ".
bool one_message(const std::string& err) {
    return err.rfind("resplock: ", 0) == 0 && !err.empty() && err.back() == '\n' &&
           err.find('\n') == err.size() - 1;
}

// Takes `key` for a long TTL with a plain acquire; returns its token ("" if that failed).
std::string hold(const std::string& key) {
    const Result r = cli({"-u", server().url(), "--ttl", "60000", "acquire", key});
    return r.code == 0 ? trim(r.out) : std::string();
}

void show(const Result& r) {
    std::printf("      exit %d after %.3f s, stdout: %.300s\n      stderr: %.300s\n", r.code,
                r.secs, r.out.c_str(), r.err.c_str());
}

const std::vector<std::string> commands = {"acquire", "release", "extend", "status", "run"};

}  // namespace

// ---------------------------------------------------------------------------------------------
// -n, -w

TEST(nonblock_on_a_busy_lock_fails_at_once_with_75) {
    const std::string u = server().url();
    REQUIRE(!hold("flock:n").empty());
    for (const char* n : {"-n", "--nonblock"}) {
        const Result r = cli({"-u", u, n, "acquire", "flock:n"});
        const bool ok = CHECK_EQ(r.code, 75) && CHECK(r.out.empty()) && CHECK(one_message(r.err)) &&
                        CHECK(contains(r.err, "lock is busy (held by someone else)")) &&
                        // One attempt: no wait. A loose bound, for a loaded machine.
                        CHECK(r.secs < 2.5);
        if (!ok) show(r);
    }
    // run: COMMAND is not started.
    const Result r = cli({"-u", u, "-n", "run", "flock:n", "-c", "echo ran"});
    CHECK_EQ(r.code, 75);
    CHECK(!contains(r.out, "ran"));
    // A free lock is taken as before.
    CHECK_EQ(cli({"-u", u, "-n", "run", "flock:n-free", "-c", "true"}).code, 0);
}

TEST(wait_seconds_waits_for_a_busy_lock_then_75) {
    const std::string u = server().url();
    REQUIRE(!hold("flock:w").empty());
    for (const std::vector<std::string>& w :
         std::vector<std::vector<std::string>>{{"-w", "0.5"}, {"-w0.5"}, {"--wait-seconds=.5"}}) {
        std::vector<std::string> args = {"-u", u};
        args.insert(args.end(), w.begin(), w.end());
        args.insert(args.end(), {"acquire", "flock:w"});
        const Result r = cli(args);
        const bool ok = CHECK_EQ(r.code, 75) && CHECK(r.secs >= 0.49) &&
                        CHECK(contains(r.err, "gave up after waiting 500 ms"));
        if (!ok) show(r);
    }
    const Result run = cli({"-u", u, "-w", "0.5", "run", "flock:w", "--", "echo", "ran"});
    CHECK_EQ(run.code, 75);
    CHECK(run.secs >= 0.49);
    CHECK(!contains(run.out, "ran"));
}

TEST(wait_seconds_gets_a_lock_freed_meanwhile) {
    const std::string u = server().url();
    // A holder whose TTL ends in 300 ms: a 5 s wait gets the lock.
    REQUIRE_EQ(cli({"-u", u, "--ttl", "300", "acquire", "flock:w-free"}).code, 0);
    const Result r = cli({"-u", u, "-w", "5", "acquire", "flock:w-free"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(server().cli({"GET", "flock:w-free"}), trim(r.out));
}

TEST(nonblock_and_wait_refusals_reach_the_exit_code) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"-n", "--wait", "5", "acquire", "k"},
                                               {"-w", "1", "--wait", "5", "acquire", "k"},
                                               {"-n", "-w", "1", "acquire", "k"},
                                               {"-w", "0.0001", "acquire", "k"},
                                               {"-w", "-1", "acquire", "k"},
                                               {"-w", "2147484", "acquire", "k"},
                                               {"-nE", "3", "acquire", "k"}}) {
        const Result r = cli(args);
        if (!CHECK_EQ(r.code, 64) || !CHECK(one_message(r.err))) show(r);
    }
}

// ---------------------------------------------------------------------------------------------
// -E CODE

TEST(conflict_exit_code_replaces_busy_for_acquire_and_run) {
    const std::string u = server().url();
    REQUIRE(!hold("flock:E").empty());
    for (const std::vector<std::string>& e : std::vector<std::vector<std::string>>{
             {"-E", "3"}, {"-E3"}, {"--conflict-exit-code", "3"}, {"--conflict-exit-code=3"}}) {
        std::vector<std::string> acquire = {"-u", u};
        acquire.insert(acquire.end(), e.begin(), e.end());
        acquire.insert(acquire.end(), {"acquire", "flock:E"});
        const Result a = cli(acquire);
        if (!CHECK_EQ(a.code, 3) || !CHECK(contains(a.err, "lock is busy"))) show(a);
    }
    const Result run = cli({"-u", u, "-E", "3", "run", "flock:E", "-c", "echo ran"});
    CHECK_EQ(run.code, 3);
    CHECK(!contains(run.out, "ran"));
    const Result waited = cli({"-u", u, "-E", "3", "-w", "0.2", "run", "flock:E", "--", "true"});
    CHECK_EQ(waited.code, 3);
    // 0 is an exit status like any other: acquire then prints no token.
    const Result zero = cli({"-u", u, "-E", "0", "acquire", "flock:E"});
    CHECK_EQ(zero.code, 0);
    CHECK(zero.out.empty());
    // Without -E: 75.
    CHECK_EQ(cli({"-u", u, "acquire", "flock:E"}).code, 75);
}

TEST(conflict_exit_code_with_limit_and_once_per) {
    const std::string u = server().url();
    REQUIRE_EQ(cli({"-u", u, "--limit", "1", "--ttl", "60000", "acquire", "flock:E-sem"}).code, 0);
    const Result full = cli({"-u", u, "--limit", "1", "-E", "4", "acquire", "flock:E-sem"});
    CHECK_EQ(full.code, 4);
    CHECK(contains(full.err, "semaphore is full"));
    const Result run =
        cli({"-u", u, "--limit", "1", "-E", "4", "run", "flock:E-sem", "-c", "true"});
    CHECK_EQ(run.code, 4);
    // --once-per's busy (taken less than MS ago) is busy too.
    REQUIRE_EQ(cli({"-u", u, "--once-per", "60000", "run", "flock:E-once", "-c", "true"}).code, 0);
    CHECK_EQ(
        cli({"-u", u, "--once-per", "60000", "-E", "5", "run", "flock:E-once", "-c", "true"}).code,
        5);
}

TEST(conflict_exit_code_leaves_other_failures_alone) {
    const std::string u = server().url();
    // A free lock: 0 as always.
    const Result free = cli({"-u", u, "-E", "3", "run", "flock:E-free", "-c", "exit 0"});
    CHECK_EQ(free.code, 0);
    // COMMAND's own status passes through, even when it equals CODE's place.
    CHECK_EQ(cli({"-u", u, "-E", "3", "run", "flock:E-free", "-c", "exit 75"}).code, 75);
    // No server on the port: 69, not CODE.
    const Result down =
        cli({"-u", "redis://127.0.0.1:1", "--timeout", "500", "-E", "3", "acquire", "flock:E"});
    CHECK_EQ(down.code, 69);
    // Other commands refuse it.
    const Result status = cli({"-u", u, "-E", "3", "status", "flock:E"});
    CHECK_EQ(status.code, 64);
    CHECK(contains(status.err, "-E/--conflict-exit-code applies to run and acquire only"));
    const Result junk = cli({"-u", u, "-E", "256", "acquire", "flock:E"});
    CHECK_EQ(junk.code, 64);
    CHECK(contains(junk.err, "expected an exit status, a whole number in 0..255, got '256'"));
}

// ---------------------------------------------------------------------------------------------
// run -c CMD

TEST(run_c_runs_cmd_through_sh) {
    const std::string u = server().url();
    // Shell syntax, and COMMAND sees the lock held.
    Result r = cli({"-u", u, "run", "flock:c", "-c",
                    "echo hi; echo \"$RESPLOCK_KEY\"; echo \"${#RESPLOCK_TOKEN}\""});
    CHECK_EQ(r.code, 0);
    if (!CHECK(r.out.rfind("hi\nflock:c\n", 0) == 0) || !CHECK(trim(r.out) != "hi\nflock:c\n0"))
        show(r);
    CHECK_EQ(server().cli({"EXISTS", "flock:c"}), "0");  // released after
    // The shell is /bin/sh, whatever $SHELL says.
    r = cli({"-u", u, "run", "flock:c", "-c", "echo \"$0\""}, {{"SHELL", "/bin/false"}});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(trim(r.out), "/bin/sh");
    // Its exit status passes through; builtins work (cd, exit, a function, a loop).
    CHECK_EQ(cli({"-u", u, "run", "flock:c", "-c", "exit 7"}).code, 7);
    r = cli({"-u", u, "run", "flock:c", "--command=cd / && pwd; f() { return 4; }; f"});
    CHECK_EQ(r.code, 4);
    CHECK_EQ(trim(r.out), "/");
    r = cli({"-u", u, "run", "-c", "for i in 1 2 3; do printf $i; done", "flock:c"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.out, "123");
    // A command sh cannot find: sh's own 127.
    CHECK_EQ(cli({"-u", u, "run", "flock:c", "-cno-such-command-xyz"}).code, 127);
    // Killed by a signal: 128+N, as for any COMMAND.
    CHECK_EQ(cli({"-u", u, "run", "flock:c", "-c", "kill -TERM $$"}).code, 128 + 15);
}

TEST(run_c_holds_the_lock_while_cmd_runs) {
    const std::string u = server().url();
    support::Process p;
    REQUIRE(p.start({RESPLOCK_CLI, "-u", u, "run", "flock:c-held", "-c", "echo hi; sleep 1"}));
    // Once the key is set, and while CMD sleeps, the lock is held: -n finds it busy.
    bool taken = false;
    for (int i = 0; i < 500 && !taken; ++i) {
        taken = server().cli({"EXISTS", "flock:c-held"}) == "1";
        if (!taken) support::sleep_ms(10);
    }
    REQUIRE(taken);
    const Result busy = cli({"-u", u, "-n", "acquire", "flock:c-held"});
    CHECK_EQ(busy.code, 75);
    const Result r = p.wait(30);
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.out, "hi\n");
}

TEST(run_c_refusals) {
    struct Case {
        std::vector<std::string> args;
        const char* text;
    };
    const std::vector<Case> cases = {
        {{"run", "k", "-c", "true", "--", "true"},
         "run: give either -c CMD or -- COMMAND [ARGS...], not both"},
        {{"acquire", "k", "-c", "true"}, "-c/--command applies to run only"},
        {{"status", "k", "-c", "true"}, "-c/--command applies to run only"},
        {{"run", "k", "-c", ""}, "-c/--command needs a command for sh -c"},
        {{"run", "k", "-c"}, "option -c needs a value"},
    };
    for (const Case& c : cases) {
        const Result r = cli(c.args);
        const bool ok = CHECK_EQ(r.code, 64) && CHECK(one_message(r.err)) &&
                        CHECK(contains(r.err, c.text)) && CHECK(r.out.empty());
        if (!ok) show(r);
    }
}

// ---------------------------------------------------------------------------------------------
// Help per command

TEST(help_of_each_command) {
    const Result all = cli({"--help"});
    REQUIRE_EQ(all.code, 0);
    CHECK_EQ(cli({"help"}).out, all.out);
    for (const std::string& command : commands) {
        const Result h = cli({"help", command});
        const bool ok = CHECK_EQ(h.code, 0) && CHECK(h.err.empty()) &&
                        CHECK(h.out.rfind("Usage: resplock [OPTIONS] " + command, 0) == 0) &&
                        CHECK(contains(h.out, "Exit status:")) && CHECK(h.out != all.out);
        if (!ok) show(h);
        for (const char* flag : {"--help", "-h"}) {
            const Result f = cli({command, flag});
            CHECK_EQ(f.code, 0);
            CHECK_EQ(f.out, h.out);
        }
    }
    // What applies, and only that: a few telling lines.
    const Result run = cli({"help", "run"});
    CHECK(contains(run.out, "-c, --command CMD"));
    CHECK(contains(run.out, "   70  run: the lock was lost"));
    CHECK(!contains(run.out, "   74  acquire"));
    const Result release = cli({"release", "-h"});
    CHECK(contains(release.out, "    1  release/extend"));
    CHECK(!contains(release.out, "   75  "));
    CHECK(!contains(release.out, "-n, --nonblock"));
}

TEST(help_refusals_and_a_failing_stdout) {
    Result r = cli({"help", "nosuch"});
    CHECK_EQ(r.code, 64);
    CHECK(one_message(r.err));
    CHECK(contains(r.err, "help: unknown command 'nosuch' (commands: acquire, release"));
    CHECK(r.out.empty());
    r = cli({"help", "run", "extra"});
    CHECK_EQ(r.code, 64);
    CHECK(contains(r.err, "help: too many arguments"));
    // stdout that cannot be written: 74, as for --help.
    for (const char* line : {"help run", "run --help", "help", "--help"}) {
        r = support::run(
            {"sh", "-c", std::string("exec \"$0\" ") + line + " >/dev/full", RESPLOCK_CLI});
        if (!CHECK_EQ(r.code, 74)) std::printf("      line: %s\n", line);
    }
}
