// supervise() (see supervisor.hpp): the signals resplock takes synchronously, COMMAND's start in
// its own process group behind a handshake, the guardian, the renewal thread, the wait for the
// whole group, the stop when the lock is lost, and the release.
#include "supervisor.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "exit_codes.hpp"
#include "guardian.hpp"
#include "messages.hpp"
#include "process_group.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/posix/renewer_thread.hpp"
#include "resplock/variants/renewer.hpp"
#include "url.hpp"

namespace resplock_cli {

using resplock::Status;

namespace {

constexpr std::uint32_t max_grace_ms = 2000;          // SIGTERM to SIGKILL, at most
constexpr std::uint32_t max_kill_allowance_ms = 100;  // for SIGKILL to take effect, at most
// How often the main loop looks at the lock and the group, should no signal wake it (a process of
// the group that is not resplock's child ends; an emulator that loses a thread-directed signal).
// It is the reaction time to a loss then, so it stays well below the kill allowance.
constexpr std::uint32_t group_poll_ms = 50;
constexpr std::uint32_t kill_wait_ms = 10000;  // for the group to vanish after SIGKILL

// The stop when the lock is lost: SIGTERM, then SIGKILL after min(2 s, ttl/4), then
// min(100 ms, ttl/10) for SIGKILL to take effect, all before the validity ends.
std::uint32_t grace_ms(std::uint32_t ttl_ms) {
    return std::min(max_grace_ms, ttl_ms / 4);
}
std::uint32_t kill_allowance_ms(std::uint32_t ttl_ms) {
    return std::min(max_kill_allowance_ms, ttl_ms / 10);
}

// Waits up to ms for one of `set` (blocked). Returns the signal, or 0 when the time ran out.
int wait_signal(const sigset_t& set, std::uint64_t ms, siginfo_t& info) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ms / 1000U);
    ts.tv_nsec = static_cast<long>((ms % 1000U) * 1000000U);
    const int sig = sigtimedwait(&set, &info, &ts);
    return sig > 0 ? sig : 0;  // EAGAIN (time up) or EINTR: the caller checks the clock
}

int child_exit_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return exit_protocol;  // not reached: stopped children are not reported without WUNTRACED
}

// How COMMAND ended, in words, for the messages that replace its status by 70.
struct CommandEnd {
    char text[40] = "";
    explicit CommandEnd(int status) {
        if (WIFSIGNALED(status)) {
            (void)std::snprintf(text, sizeof text, "died of signal %d", WTERMSIG(status));
        } else {
            (void)std::snprintf(text, sizeof text, "exited with status %d",
                                child_exit_code(status));
        }
    }
};

// The lock as the renewal driver sees it: after each successful renewal, the guardian learns the
// new end of the validity (from the renewal thread).
class Renewed {
  public:
    Renewed(const resplock::LockRef& lock, const Guardian& guardian)
        : lock_(lock), guardian_(guardian) {}
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) {
        const Status s = lock_.extend(ttl_ms, wait_ms);
        if (s == Status::ok) guardian_.renewed(lock_.remaining_ms());
        return s;
    }
    std::uint32_t remaining_ms() const { return lock_.remaining_ms(); }
    std::string_view token() const { return lock_.token(); }

  private:
    const resplock::LockRef& lock_;
    const Guardian& guardian_;
};

// COMMAND's process group: its leader (COMMAND itself, whose pid is the group's id) and how it
// ended.
struct Group {
    pid_t leader = -1;
    bool leader_done = false;
    int leader_status = 0;
    bool subreaper = false;  // resplock reaps the group's orphans (Linux)
    // COMMAND itself, resplock's own child, counts until resplock has reaped it, zombie or not:
    // it is reaped at the next look, and must not outlive resplock as a zombie.
    bool alive() const { return group_alive(leader, subreaper || !leader_done); }
};

// Reaps every child that has ended: COMMAND, the guardian, and (as a subreaper, on Linux) the
// processes of the group whose parent ended before them.
void reap_all(Group& g, Guardian& guardian) {
    for (;;) {
        int status = 0;
        const pid_t p = waitpid(-1, &status, WNOHANG);
        if (p > 0) {
            if (p == g.leader) {
                g.leader_done = true;
                g.leader_status = status;
            } else if (p == guardian.pid()) {
                guardian.reaped(status);
            }
            continue;
        }
        if (p < 0 && errno == EINTR) continue;
        if (p < 0 && !g.leader_done) {
            g.leader_done = true;  // ECHILD: someone else reaped it; nothing left to wait for
            g.leader_status = 0;
        }
        return;
    }
}

// Waits up to ms for the whole group to end, reaping as it goes. True if it has.
bool wait_group_end(Group& g, Guardian& guardian, std::uint32_t ms, const sigset_t& watched) {
    const std::uint64_t until = clock_ms() + ms;
    for (;;) {
        reap_all(g, guardian);
        if (!g.alive()) return true;
        const std::uint64_t now = clock_ms();
        if (now >= until) return false;
        siginfo_t info{};
        (void)wait_signal(watched, std::min<std::uint64_t>(until - now, 10), info);
    }
}

// The lock is lost: SIGTERM the group, SIGKILL it after grace_ms, reap it. False if some of it
// survived SIGKILL for kill_wait_ms (a process stuck in the kernel).
bool stop_group(Group& g, Guardian& guardian, std::uint32_t grace, const sigset_t& watched) {
    reap_all(g, guardian);
    if (!g.alive()) return true;
    if (grace > 0) {
        (void)kill(-g.leader, SIGTERM);
        (void)kill(-g.leader, SIGCONT);  // a stopped process acts on SIGTERM once continued
        if (wait_group_end(g, guardian, grace, watched)) return true;
    }
    (void)kill(-g.leader, SIGKILL);
    return wait_group_end(g, guardian, kill_wait_ms, watched);
}

// What the forked child needs to become COMMAND.
struct ChildSetup {
    pid_t parent;
    int go_read;  // the handshake pipe: resplock writes one byte when COMMAND may start
    int go_write;
    bool drop_redis_url;
    sigset_t old_mask;
    struct sigaction old_chld;
    struct sigaction old_pipe;
    struct sigaction old_ttou;
};

// In the forked child: RESPLOCK_TOKEN, RESPLOCK_KEY, RESPLOCK_FENCE with --fence,
// RESPLOCK_LIMIT with --limit, and no REDIS_URL that may carry a password. False (errno set) if
// the environment cannot be changed.
bool export_lock(const resplock::LockRef& lock, const RunRequest& run, const ChildSetup& c) {
    char token[resplock::max_token_len + 1];
    const std::string_view t = lock.token();
    std::memcpy(token, t.data(), t.size());
    token[t.size()] = '\0';
    char fence_text[24];
    (void)std::snprintf(fence_text, sizeof fence_text, "%llu",
                        static_cast<unsigned long long>(run.fence_value));
    char limit_text[12];
    (void)std::snprintf(limit_text, sizeof limit_text, "%u", run.limit);
    return setenv("RESPLOCK_TOKEN", token, 1) == 0 && setenv("RESPLOCK_KEY", run.key, 1) == 0 &&
           (!run.fence || setenv("RESPLOCK_FENCE", fence_text, 1) == 0) &&
           (run.limit == 0 || setenv("RESPLOCK_LIMIT", limit_text, 1) == 0) &&
           (!c.drop_redis_url || unsetenv("REDIS_URL") == 0);
}

// In the forked child: join a new process group, wait for resplock's go, export the lock,
// restore the caller's signal state and exec COMMAND.
[[noreturn]] void exec_child(const resplock::LockRef& lock, const RunRequest& run,
                             const ChildSetup& c) {
    // First of all, so that whatever resplock sends to the group reaches this process.
    (void)setpgid(0, 0);
#ifdef __linux__
    // Dies with resplock, even of SIGKILL; the guardian sees to the rest of the group.
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != c.parent) _exit(exit_cannot_run);  // resplock died before that
#endif
    lock.close();
    (void)close(c.go_write);
    // Held until resplock has set everything up: one byte means go, end of file that it gave up
    // (and said why).
    char go = 0;
    ssize_t n = 0;
    while ((n = read(c.go_read, &go, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) _exit(exit_cannot_run);
    (void)close(c.go_read);
    if (!export_lock(lock, run, c)) {
        report("cannot run %.100s: %s", Masked(run.argv[0]).text, std::strerror(errno));
        _exit(exit_cannot_run);
    }
    (void)sigaction(SIGCHLD, &c.old_chld, nullptr);
    (void)sigaction(SIGPIPE, &c.old_pipe, nullptr);
    (void)sigaction(SIGTTOU, &c.old_ttou, nullptr);
    (void)sigprocmask(SIG_SETMASK, &c.old_mask, nullptr);
    execvp(run.argv[0], run.argv);
    const int err = errno;
    report("cannot run %.100s: %s", Masked(run.argv[0]).text, std::strerror(err));
    _exit(err == ENOENT || err == ENOTDIR ? exit_not_found : exit_cannot_run);
}

// Signals are taken synchronously with sigtimedwait, so they are blocked from before fork (none
// can be lost in between) and in the renewal thread; blocked first of all, as soon as the lock is
// held, so that a SIGINT, SIGTERM or SIGHUP from then on is passed on to COMMAND's group rather
// than ending resplock with the lock held. SIGCHLD must not be ignored, or children would be
// reaped behind our back; SIGPIPE is ignored for the guardian's pipe, and SIGTTOU so that resplock
// may take the terminal back from the background. The caller's dispositions and mask go to c, for
// COMMAND to get them back before exec; `watched` gets the signals to wait for.
void take_signals(ChildSetup& c, sigset_t& watched) {
    sigemptyset(&watched);
    sigaddset(&watched, SIGCHLD);
    sigaddset(&watched, SIGINT);
    sigaddset(&watched, SIGTERM);
    sigaddset(&watched, SIGHUP);
    (void)sigprocmask(SIG_BLOCK, &watched, &c.old_mask);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    struct sigaction ignore = dfl;
    ignore.sa_handler = SIG_IGN;
    (void)sigaction(SIGCHLD, &dfl, &c.old_chld);
    (void)sigaction(SIGPIPE, &ignore, &c.old_pipe);
    (void)sigaction(SIGTTOU, &ignore, &c.old_ttou);
}

// What the renewal thread tells the main thread when the lock is lost.
struct LostNote {
    std::atomic<int> why{-1};  // the Status, once lost
    pthread_t main_thread{};
};

// The renewal driver reports a loss, early enough to stop COMMAND before the validity ends, by a
// SIGCHLD to the main thread, which then looks at the note.
void on_lost(void* user, void* /*lock*/, Status why) {
    auto& n = *static_cast<LostNote*>(user);
    n.why.store(static_cast<int>(why));
    (void)pthread_kill(n.main_thread, SIGCHLD);
}

// One run of COMMAND under the lock, from the fork to the release.
class Supervision {
  public:
    // `setup` and `watched` as take_signals() left them.
    Supervision(const resplock::LockRef& lock, const RunRequest& run, const resplock_port_t& port,
                const ChildSetup& setup, const sigset_t& watched);
    Supervision(const Supervision&) = delete;
    Supervision& operator=(const Supervision&) = delete;
    ~Supervision() = default;

    int run(const Target& t);

  private:
    const char* start(int& failure);
    int give_up(const char* failed, int failure);
    bool let_go();
    void wait_until_done();
    const char* loss(Status why) const;
    bool stop_after_loss(Status why);
    int end_lost(bool gone);
    int end(const Target& t);

    const resplock::LockRef& lock_;
    const RunRequest& run_;
    ChildSetup setup_;
    sigset_t watched_;
    std::uint32_t grace_;
    std::uint32_t allowance_;
    Group group_;
    Guardian guardian_;
    LostNote note_;
    Renewed renewed_;
    resplock::Renewer renewer_;
    resplock::RenewerThread renewals_;
    int go_[2] = {-1, -1};  // the handshake pipe to COMMAND
};

Supervision::Supervision(const resplock::LockRef& lock, const RunRequest& run,
                         const resplock_port_t& port, const ChildSetup& setup,
                         const sigset_t& watched)
    : lock_(lock),
      run_(run),
      setup_(setup),
      watched_(watched),
      grace_(grace_ms(run.ttl_ms)),
      allowance_(kill_allowance_ms(run.ttl_ms)),
      // Its SIGKILL lands between resplock's own and the end of the validity.
      guardian_(allowance_ / 2),
      renewed_(lock, guardian_),
      renewals_(renewer_, port) {
    setup_.parent = getpid();
    setup_.drop_redis_url = url_list_has_credentials(std::getenv("REDIS_URL"));
#ifdef __linux__
    // Processes of the group whose parent ends are re-parented to resplock, which reaps them: a
    // zombie nobody reaps (PID 1 of a container may never do it) would keep the group alive.
    group_.subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
#endif
    note_.main_thread = pthread_self();
}

// Forks COMMAND (held before exec), its guardian, and starts the renewals. Returns null, or what
// failed (with errno in `failure`, 0 if none applies).
const char* Supervision::start(int& failure) {
    if (pipe2(go_, O_CLOEXEC) != 0) {
        failure = errno;
        return "pipe";
    }
    setup_.go_read = go_[0];
    setup_.go_write = go_[1];
    (void)std::fflush(stdout);
    (void)std::fflush(stderr);
    group_.leader = fork();
    if (group_.leader == 0) exec_child(lock_, run_, setup_);
    failure = errno;
    (void)close(go_[0]);
    if (group_.leader < 0) return "fork";
    // Set on both sides of the fork, so that it holds whichever runs first.
    (void)setpgid(group_.leader, group_.leader);
    if (getpgid(group_.leader) != group_.leader) {
        failure = errno;
        return "setpgid";
    }
    if (!guardian_.start(group_.leader, lock_.remaining_ms(), lock_, go_[1])) {
        failure = errno;
        return "cannot start its guardian process";
    }
    Status s = renewer_.watch(renewed_, run_.ttl_ms, &on_lost, &note_, grace_ + allowance_);
    if (s == Status::ok) s = renewals_.start();
    if (s != Status::ok) {
        failure = 0;
        return "cannot renew the lock";
    }
    return nullptr;
}

// COMMAND is not started: undoes what start() did and releases the lock.
int Supervision::give_up(const char* failed, int failure) {
    if (go_[1] >= 0) (void)close(go_[1]);  // the held child reads end of file and exits
    if (group_.leader > 0) {
        while (waitpid(group_.leader, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    renewals_.stop();
    (void)guardian_.finish();
    const Status r = lock_.release();
    report("cannot run %.100s: %s%s%s; %s", Masked(run_.argv[0]).text, failed,
           failure != 0 ? ": " : "", failure != 0 ? std::strerror(failure) : "",
           r == Status::ok ? "lock released" : "the lock expires by its TTL");
    return exit_cannot_run;
}

// Lets COMMAND start. An interactive COMMAND reads the terminal: its group gets the terminal's
// foreground (from resplock's group, which had it). Returns whether it did.
bool Supervision::let_go() {
    const bool terminal = isatty(STDIN_FILENO) == 1 && tcgetpgrp(STDIN_FILENO) == getpgrp() &&
                          tcsetpgrp(STDIN_FILENO, group_.leader) == 0;
    const char go = 'g';
    while (write(go_[1], &go, 1) < 0 && errno == EINTR) {
    }
    (void)close(go_[1]);
    return terminal;
}

// Until the lock is lost, or COMMAND and every process left in its group have ended; passes on
// SIGINT, SIGTERM and SIGHUP to the group meanwhile.
void Supervision::wait_until_done() {
    for (;;) {
        reap_all(group_, guardian_);
        if (note_.why.load() >= 0) break;
        if (group_.leader_done && !group_.alive()) break;
        siginfo_t info{};
        const int sig = wait_signal(watched_, group_poll_ms, info);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) (void)kill(-group_.leader, sig);
    }
}

// Why the renewals reported the lock lost, in words.
const char* Supervision::loss(Status why) const {
    // The lock object forgets its token when the server said the key is not ours. A semaphore's
    // key holds the other leases: only its own member is gone.
    return why == Status::not_owner ? "another holder has the key"
           : lock_.token().empty()  ? (run_.limit != 0 ? "its lease is gone: expired or removed"
                                                       : "the key is gone: expired or deleted")
           : why == Status::expired
               ? "no renewal succeeded before its TTL ran out (less the time needed to stop "
                 "COMMAND)"
               : resplock::to_string(why);
}

// The renewals reported the lock lost: says so and stops the group, never past the validity left
// (SIGKILL at once when nothing is left). Returns whether the group is gone. A group that has
// ended by itself meanwhile is not stopped: the message gives COMMAND's own status instead.
bool Supervision::stop_after_loss(Status why) {
    // lock()/unlock() by hand rather than std::lock_guard: <mutex> would bring libstdc++'s
    // glibc-only parts into the static musl build (scripts/static.sh); nothing here can throw.
    renewals_.lock();
    const std::uint32_t left = lock_.remaining_ms();
    renewals_.unlock();
    if (group_.leader_done && !group_.alive()) {
        report("run %s: lock lost while COMMAND ran (%s); COMMAND %s", run_.key_shown, loss(why),
               CommandEnd(group_.leader_status).text);
        return true;
    }
    report("run %s: lock lost (%s); stopping COMMAND", run_.key_shown, loss(why));
    return stop_group(group_, guardian_,
                      left > allowance_ ? std::min(grace_, left - allowance_) : 0, watched_);
}

// The lock was lost: releases it if the group is gone and the lock may still carry the token.
int Supervision::end_lost(bool gone) {
    if (!gone) {
        report(
            "run %s: warning: processes of COMMAND's group survived SIGKILL; not releasing: "
            "the lock expires by its TTL",
            run_.key_shown);
    } else if (!lock_.token().empty()) {
        // The key may still carry our token if only the server was out of reach.
        (void)lock_.release();
    }
    return exit_lost;
}

// COMMAND's group has ended, and no renewal reported the lock lost: releases it and returns
// COMMAND's status, or 70 if the release finds the lock lost (a loss the next renewal would
// have reported: COMMAND did not hold the lock to its end, and a script must not take that for
// success).
int Supervision::end(const Target& t) {
    const int code = child_exit_code(group_.leader_status);
    const Status s = lock_.release();
    if (s == Status::not_owner || s == Status::expired) {
        report("run %s: lock lost while COMMAND ran (the release found %s); COMMAND %s",
               run_.key_shown,
               s == Status::not_owner ? "another holder's token in the key"
               : run_.limit != 0      ? "its lease gone: expired or removed"
                                      : "the key gone: expired or deleted",
               CommandEnd(group_.leader_status).text);
        return exit_lost;
    }
    if (s != Status::ok) {
        char why[why_max];
        describe(s, t, why, sizeof why);
        report("run %s: warning: release failed (%s); the lock expires by its TTL", run_.key_shown,
               why);
    }
    return code;
}

int Supervision::run(const Target& t) {
    int failure = 0;
    const char* failed = start(failure);
    if (failed != nullptr) return give_up(failed, failure);
    const bool terminal = let_go();
    wait_until_done();

    int lost = note_.why.load();
    bool gone = true;
    reap_all(group_, guardian_);
    const bool stalled = guardian_.killed();
    if (lost >= 0 && stalled) {
        // The guardian was first: resplock was stopped past the validity, which then ran out.
        gone = stop_group(group_, guardian_, 0, watched_);
    } else if (lost >= 0) {
        gone = stop_after_loss(static_cast<Status>(lost));
    }
    renewals_.stop();
    if (lost < 0 && !stalled && (lost = note_.why.load()) >= 0) {
        // Reported after COMMAND's group had ended, before the renewals stopped (when stalled,
        // the guardian's kill says it below).
        gone = stop_after_loss(static_cast<Status>(lost));
    }
    if (terminal) (void)tcsetpgrp(STDIN_FILENO, getpgrp());  // SIGTTOU is ignored
    const bool killed = guardian_.finish();
    if (killed && (lost < 0 || stalled)) {
        report(
            "run %s: lock lost (resplock was stopped or stalled until the lock's validity "
            "ran out); COMMAND's process group was killed",
            run_.key_shown);
    }
    if (lost >= 0 || killed) return end_lost(gone);
    return end(t);
}

}  // namespace

int supervise(const resplock::LockRef& lock, const RunRequest& run, const Target& t,
              const resplock_port_t& port) {
    ChildSetup setup{};
    sigset_t watched;
    take_signals(setup, watched);  // before anything else that takes time
    Supervision supervision(lock, run, port, setup, watched);
    return supervision.run(t);
}

}  // namespace resplock_cli
