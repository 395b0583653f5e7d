// `resplock run` with real process trees: COMMAND is a shell whose subprocesses and background
// jobs write timestamped lines to a log, and another `resplock run` waits for the same key. The
// lock must cover every process of COMMAND's group: no line of the first holder may come after
// the second holder started, whether resplock was sent SIGTERM, lost the lock, was SIGKILLed, or
// COMMAND exited while a background job still ran.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_server.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::log_times;
using support::read_file;
using support::seconds_since;
using support::sleep_ms;
using support::wait_until;

using Clock = std::chrono::steady_clock;
using support::Result;
using Proc = support::Process;

std::vector<std::string> with_cli(std::vector<std::string> args) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return args;
}

Result cli(const std::vector<std::string>& args) {
    return support::run(with_cli(args), {}, 30);
}

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

bool exists(const std::string& key) {
    return server().cli({"EXISTS", key}) == "1";
}

bool write_file(const std::string& path, const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return false;
    std::fwrite(text.data(), 1, text.size(), f);
    return std::fclose(f) == 0;
}

// Alive and not a zombie.
bool running(pid_t pid) {
    const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return false;
    const char state = stat[close + 2];
    return state != 'Z' && state != 'X';
}

// A worker: `sh worker.sh LOG COUNT LINGER` appends "w <ns>" (CLOCK_REALTIME, the clock of
// date(1), shared by every process) to LOG every 20 ms, COUNT times (0: until killed). With
// LINGER > 0 it traps SIGTERM, appends "term <ns>", and goes on for LINGER more lines before it
// exits. Its pid goes to LOG.pids.
const char* const kWorker = R"sh(log=$1 count=$2 linger=$3
echo $$ >> "$log.pids"
put() { echo "$1 $(date +%s%N)" >> "$log"; }
on_term() {
    put term
    n=0
    while [ $n -lt "$linger" ]; do put w; sleep 0.02; n=$((n + 1)); done
    exit 0
}
[ "$linger" -gt 0 ] && trap on_term TERM
i=0
while [ "$count" -eq 0 ] || [ $i -lt "$count" ]; do put w; sleep 0.02; i=$((i + 1)); done
)sh";

// One case's files: the worker script and the log every process of the case writes to.
struct Scene {
    std::string dir;
    std::string worker;
    std::string log;

    Scene() {
        char tmpl[] = "/tmp/resplock-run-XXXXXX";
        const char* d = mkdtemp(tmpl);
        dir = d != nullptr ? d : "/tmp";
        worker = dir + "/worker.sh";
        log = dir + "/log";
        write_file(worker, kWorker);
    }
    ~Scene() {
        // Whatever a failed case left running.
        for (const pid_t pid : pids())
            kill(pid, SIGKILL);
        unlink(worker.c_str());
        unlink(log.c_str());
        unlink((log + ".pids").c_str());
        rmdir(dir.c_str());
    }

    // "sh WORKER LOG COUNT LINGER", for a COMMAND's script.
    std::string work(int count, int linger) const {
        return "sh " + worker + " " + log + " " + std::to_string(count) + " " +
               std::to_string(linger);
    }

    std::vector<pid_t> pids() const {
        std::vector<pid_t> v;
        const std::string text = read_file(log + ".pids");
        for (std::size_t at = 0; at < text.size();) {
            std::size_t end = text.find('\n', at);
            if (end == std::string::npos) end = text.size();
            const long pid = std::atol(text.substr(at, end - at).c_str());
            if (pid > 0) v.push_back(static_cast<pid_t>(pid));
            at = end + 1;
        }
        return v;
    }
    bool any_running() const {
        const std::vector<pid_t> v = pids();
        return std::any_of(v.begin(), v.end(), running);
    }

    // The log's lines of one kind, as times.
    std::vector<long long> times(const std::string& kind) const { return log_times(log, kind); }

    // A second `resplock run` that waits for KEY, logs "start <ns>" as soon as it holds it, and
    // holds it for 300 ms more, during which any process of the first holder still running
    // would write.
    bool start_next_holder(Proc& p, const std::string& key) const {
        return p.start(with_cli({"-u", server().url(), "--wait", "30000", "run", key, "--", "sh",
                                 "-c", "echo \"start $(date +%s%N)\" >> " + log + "; sleep 0.3"}));
    }
};

// Every line the first holder's processes wrote came before the next holder started.
void check_no_overlap(const Scene& scene, const Result& next) {
    CHECK_EQ(next.code, 0);
    const std::vector<long long> starts = scene.times("start");
    const std::vector<long long> writes = scene.times("w");
    REQUIRE_EQ(starts.size(), std::size_t{1});
    REQUIRE(!writes.empty());
    const long long last = *std::max_element(writes.begin(), writes.end());
    const long long after = static_cast<long long>(
        std::count_if(writes.begin(), writes.end(), [&](long long w) { return w > starts[0]; }));
    if (!CHECK(last < starts[0])) {
        std::printf(
            "      %lld lines written after the next holder started, the last %.1f ms "
            "after\n",
            after, static_cast<double>(last - starts[0]) / 1e6);
    } else {
        std::printf("      last line %.1f ms before the next holder started\n",
                    static_cast<double>(starts[0] - last) / 1e6);
    }
}

// Waits until the workers have written a few lines (so the key was taken) and, unless `gone_ok`,
// the key is held.
bool running_with_lines(const Scene& scene, const std::string& key, std::size_t lines,
                        bool gone_ok = false) {
    return wait_until([&] { return (gone_ok || exists(key)) && scene.times("w").size() >= lines; },
                      5.0);
}

}  // namespace

TEST_TAGGED(server_starts, "slow_launcher_ok") {
    REQUIRE(server().running());
}

// SIGTERM to resplock reaches the whole group; a worker that takes its time to stop keeps the
// lock held until it is done.
TEST_TAGGED(sigterm_holds_the_lock_until_every_process_of_the_group_ends, "slow_launcher_ok") {
    const Scene scene;
    const std::string key = "run:term";
    Proc holder;
    REQUIRE(holder.start(with_cli({"-u", server().url(), "--ttl", "5000", "run", key, "--", "sh",
                                   "-c", scene.work(0, 25) + "; echo after"})));
    REQUIRE(running_with_lines(scene, key, 3));
    Proc next;
    REQUIRE(scene.start_next_holder(next, key));
    sleep_ms(200);
    kill(holder.pid(), SIGTERM);
    const Result r = holder.wait(15);
    CHECK_EQ(r.code, 128 + SIGTERM);  // the shell COMMAND died of it
    CHECK(r.err.find("resplock:") == std::string::npos);
    CHECK(!scene.any_running());
    check_no_overlap(scene, next.wait(30));
    // The worker got the signal and went on writing for a while: the case is not vacuous.
    const std::vector<long long> terms = scene.times("term");
    REQUIRE_EQ(terms.size(), std::size_t{1});
    const std::vector<long long> writes = scene.times("w");
    CHECK(std::count_if(writes.begin(), writes.end(), [&](long long w) { return w > terms[0]; }) >=
          20);
}

// The key is taken over: the whole group is stopped, background jobs included, before anyone
// else can hold the key.
TEST_TAGGED(lost_lock_stops_every_process_of_the_group, "slow_launcher_ok") {
    const Scene scene;
    const std::string key = "run:lost";
    Proc holder;
    REQUIRE(
        holder.start(with_cli({"-u", server().url(), "--ttl", "900", "run", key, "--", "sh", "-c",
                               scene.work(0, 25) + " & " + scene.work(0, 0) + " & wait"})));
    REQUIRE(running_with_lines(scene, key, 6));
    Proc next;
    REQUIRE(scene.start_next_holder(next, key));
    server().cli({"SET", key, "someone-else", "PX", "1500"});
    const Result r = holder.wait(15);
    CHECK_EQ(r.code, 70);
    CHECK(r.err.find("lock lost") != std::string::npos);
    CHECK_EQ(scene.pids().size(), std::size_t{2});
    CHECK(!scene.any_running());
    check_no_overlap(scene, next.wait(30));
}

// resplock is SIGKILLed: its group dies with it at once, long before the key expires.
TEST_TAGGED(killed_resplock_takes_its_group_with_it, "slow_launcher_ok") {
    const Scene scene;
    const std::string key = "run:killed";
    Proc holder;
    REQUIRE(
        holder.start(with_cli({"-u", server().url(), "--ttl", "1500", "run", key, "--", "sh", "-c",
                               scene.work(0, 25) + " & " + scene.work(0, 0) + "; exit 0"})));
    REQUIRE(running_with_lines(scene, key, 6));
    Proc next;
    REQUIRE(scene.start_next_holder(next, key));
    kill(holder.pid(), SIGKILL);
    const auto killed_at = Clock::now();
    CHECK_EQ(holder.wait(5).code, 128 + SIGKILL);
    CHECK(wait_until([&] { return !scene.any_running(); }, 1.0));
    std::printf("      group gone %.0f ms after the kill\n", seconds_since(killed_at) * 1000);
    CHECK(exists(key));  // left to expire by its TTL
    check_no_overlap(scene, next.wait(30));
}

// The same with SIGKILL to resplock's whole process group (as a shell's `kill -9 %1` does): the
// guardian is not in it, so it still stops COMMAND's group.
TEST_TAGGED(killed_process_group_of_resplock_takes_command_with_it, "slow_launcher_ok") {
    const Scene scene;
    const std::string key = "run:killed-group";
    Proc holder;
    // setsid: resplock leads a process group (and session) of its own, which the test can kill
    // without killing itself.
    REQUIRE(holder.start({"setsid", RESPLOCK_CLI, "-u", server().url(), "--ttl", "1500", "run", key,
                          "--", "sh", "-c",
                          scene.work(0, 25) + " & " + scene.work(0, 0) + "; exit 0"}));
    REQUIRE(running_with_lines(scene, key, 6));
    REQUIRE(getpgid(holder.pid()) == holder.pid());
    Proc next;
    REQUIRE(scene.start_next_holder(next, key));
    kill(-holder.pid(), SIGKILL);
    CHECK_EQ(holder.wait(5).code, 128 + SIGKILL);
    CHECK(wait_until([&] { return !scene.any_running(); }, 1.0));
    check_no_overlap(scene, next.wait(30));
}

// COMMAND exits while its background job still runs: the lock stays held until the job ends, and
// resplock exits with COMMAND's status.
TEST_TAGGED(command_exit_leaves_the_lock_held_until_background_jobs_end, "slow_launcher_ok") {
    const Scene scene;
    const std::string key = "run:background";
    Proc holder;
    REQUIRE(holder.start(with_cli({"-u", server().url(), "--ttl", "1000", "run", key, "--", "sh",
                                   "-c", scene.work(40, 0) + " & exit 4"})));
    REQUIRE(running_with_lines(scene, key, 1, true));
    Proc next;
    REQUIRE(scene.start_next_holder(next, key));
    const Result r = holder.wait(15);
    CHECK_EQ(r.code, 4);
    CHECK_EQ(r.err, std::string());
    CHECK_EQ(scene.times("w").size(), std::size_t{40});  // the job ran to its end
    CHECK(!scene.any_running());
    check_no_overlap(scene, next.wait(30));
}

// "--" right after KEY is the separator, however KEY was reached.
TEST_TAGGED(separator_right_after_key_is_never_the_command, "slow_launcher_ok") {
    const std::string u = server().url();
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"-u", u, "run", "--", "run:sep", "--", "sh", "-c", "exit 6"},
             {"-u", u, "--", "run", "run:sep", "--", "sh", "-c", "exit 6"},
             {"-u", u, "run", "run:sep", "--", "sh", "-c", "exit 6"},
             {"run", "run:sep", "-u", u, "--", "sh", "-c", "exit 6"}}) {
        const Result r = cli(args);
        if (!CHECK_EQ(r.code, 6)) std::printf("      stderr: %s", r.err.c_str());
    }
    // After the separator, "--" is COMMAND's own.
    const Result r = cli({"-u", u, "run", "run:sep", "--", "--", "x"});
    CHECK_EQ(r.code, 127);
    CHECK(r.err.find("cannot run --") != std::string::npos);
    CHECK(!exists("run:sep"));
}

// On a terminal, COMMAND's group gets the foreground, so an interactive COMMAND can read it, and
// resplock gives it back to its caller afterwards.
TEST_TAGGED(interactive_command_reads_the_terminal, "slow_launcher_ok") {
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master >= 0);
    REQUIRE(grantpt(master) == 0 && unlockpt(master) == 0);
    const std::string slave = ptsname(master);
    const std::string script = "'" + std::string(RESPLOCK_CLI) + "' -u " + server().url() +
                               " run run:tty -- sh -c 'read a; echo got-$a'; read b; "
                               "echo back-$b";
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // setsid(), then the first terminal it opens, the pty, becomes its controlling one.
        setsid();
        const int fd = open(slave.c_str(), O_RDWR);
        if (fd < 0) _exit(120);
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2) close(fd);
        unsetenv("REDIS_URL");
        execlp("sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
        _exit(121);
    }
    std::string seen;
    auto expect = [&](const std::string& text) {
        return wait_until(
            [&] {
                pollfd p{master, POLLIN, 0};
                while (poll(&p, 1, 0) > 0) {
                    char buf[256];
                    const ssize_t n = read(master, buf, sizeof buf);
                    if (n <= 0) break;
                    seen.append(buf, static_cast<std::size_t>(n));
                }
                return seen.find(text) != std::string::npos;
            },
            10.0);
    };
    REQUIRE(wait_until([] { return exists("run:tty"); }, 5.0));
    CHECK(write(master, "one\n", 4) == 4);
    const bool command_read = CHECK(expect("got-one"));
    CHECK(write(master, "two\n", 4) == 4);
    const bool caller_read = CHECK(expect("back-two"));
    if (!command_read || !caller_read) {
        std::printf("      terminal output: ");
        check::print(std::string_view(seen));
        std::printf("\n");
        kill(-child, SIGKILL);
    }
    int status = 0;
    waitpid(child, &status, 0);
    close(master);
    CHECK(command_read && caller_read && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(!exists("run:tty"));
}

// COMMAND itself deletes KEY, or gives it to someone else, and ends long before the first
// renewal (ttl/3 = 10 s): only the release finds the lock gone. A script must not take that for
// success: resplock exits 70 whatever COMMAND returned, and its one message gives COMMAND's own
// status.
TEST_TAGGED(lock_lost_found_at_release_exits_70_with_command_status, "slow_launcher_ok") {
    struct Case {
        const char* key;
        std::string during;  // redis-cli's arguments, run by COMMAND
        std::string end;     // how COMMAND ends
        int status;          // COMMAND's own: "status N", or 128+N for "signal N"
        const char* left;    // KEY's value after the run ("": gone)
    };
    const std::string taken = "run:lost-at-release-taken";
    const Case cases[] = {
        {"run:lost-at-release", "DEL run:lost-at-release", "exit 0", 0, ""},
        {"run:lost-at-release-taken", "SET " + taken + " other", "exit 0", 0, "other"},
        {"run:lost-at-release-taken", "SET " + taken + " other", "exit 3", 3, "other"},
        {"run:lost-at-release", "DEL run:lost-at-release", "kill -TERM $$", 128 + SIGTERM, ""},
    };
    for (const Case& c : cases) {
        server().cli({"DEL", c.key});
        const std::string script = "redis-cli -h 127.0.0.1 -p " + std::to_string(server().port()) +
                                   " " + c.during + " >/dev/null; " + c.end;
        const Result r = cli(
            {"--url", server().url(), "--ttl", "30000", "run", c.key, "--", "sh", "-c", script});
        const std::string status = c.status > 128 ? "signal " + std::to_string(c.status - 128)
                                                  : "status " + std::to_string(c.status);
        const bool ok = CHECK_EQ(r.code, 70) &&
                        CHECK(r.err.find("lock lost") != std::string::npos) &&
                        CHECK(r.err.find(status) != std::string::npos) &&
                        CHECK_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
        if (!ok)
            std::printf("      %s; %s: exit %d, stderr: %s", c.during.c_str(), c.end.c_str(),
                        r.code, r.err.c_str());
        CHECK_EQ(server().cli({"GET", c.key}), std::string(c.left));
    }
    server().cli({"DEL", taken});
}
