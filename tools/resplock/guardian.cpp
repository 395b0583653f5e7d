// The guardian process and resplock's side of it (see guardian.hpp): the messages on its pipe,
// its main loop, and Guardian's start, renewal notes and finish.
#include "guardian.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/timerfd.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdio>

namespace resplock_cli {

namespace {

constexpr std::uint32_t guardian_exit_ms = 1000;  // for the guardian to exit once told
constexpr int guardian_killed = 3;                // the guardian's exit status: it killed the group

// What resplock tells the guardian, in one write() of this size (atomic on a pipe, so the main
// thread and the renewal thread may both write): the clock_ms() at which to kill the group unless
// told a later one, or quit.
constexpr std::size_t guardian_message_size = 9;
constexpr unsigned char guardian_deadline = 'D';
constexpr unsigned char guardian_quit = 'Q';

void encode(unsigned char kind, std::uint64_t value, unsigned char (&out)[guardian_message_size]) {
    out[0] = kind;
    for (std::size_t i = 0; i < 8; ++i)
        out[1 + i] = static_cast<unsigned char>(value >> (8 * i));
}

std::uint64_t decode(const unsigned char (&in)[guardian_message_size]) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < 8; ++i)
        value |= static_cast<std::uint64_t>(in[1 + i]) << (8 * i);
    return value;
}

// The guardian ignores what is sent to resplock's terminal or group, and blocks no signal.
void guardian_signals() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) {
        (void)sigaction(sig, &ignore, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, nullptr);
}

// The guardian process: waits for messages on `in` until told to quit, or kills COMMAND's group.
[[noreturn]] void guardian_main(int in, pid_t pgid, std::uint64_t deadline_ms) {
    guardian_signals();
    int timer = -1;
#ifdef __linux__
    // A timer on the same clock, so that it fires on time after a suspend too.
    timer = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
#endif
    unsigned char message[guardian_message_size];
    std::size_t have = 0;
    for (;;) {
        const std::uint64_t now = clock_ms();
        if (now >= deadline_ms) _exit(kill(-pgid, SIGKILL) == 0 ? guardian_killed : 0);
        // Without a timer, poll wakes up often enough to notice a suspend soon after it.
        int wait_ms = static_cast<int>(std::min<std::uint64_t>(deadline_ms - now, 100));
#ifdef __linux__
        itimerspec at{};
        at.it_value.tv_sec = static_cast<time_t>(deadline_ms / 1000U);
        at.it_value.tv_nsec = static_cast<long>((deadline_ms % 1000U) * 1000000U);
        if (timer >= 0 && timerfd_settime(timer, TFD_TIMER_ABSTIME, &at, nullptr) == 0) {
            wait_ms = -1;
        }
#endif
        pollfd fds[2] = {{in, POLLIN, 0}, {timer, POLLIN, 0}};
        if (poll(fds, timer >= 0 ? 2 : 1, wait_ms) <= 0) continue;           // time up or EINTR
        if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;  // the timer
        const ssize_t n = read(in, message + have, sizeof message - have);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) {
            // resplock is gone without a word: nobody is left to keep the lock.
            (void)kill(-pgid, SIGKILL);
            _exit(guardian_killed);
        }
        have += static_cast<std::size_t>(n);
        if (have < sizeof message) continue;
        have = 0;
        if (message[0] == guardian_quit) _exit(0);
        if (message[0] == guardian_deadline) deadline_ms = decode(message);
    }
}

// In the forked guardian: its standard streams to /dev/null, and `in` above them. Returns the
// descriptor to read.
int detach_streams(int in) {
    // The guardian writes nothing, and must not keep a caller's pipe (stdout of $(...)) open.
    const int moved = fcntl(in, F_DUPFD_CLOEXEC, 3);
    const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2; ++fd) {
        if (null_fd < 0 || dup2(null_fd, fd) < 0) (void)close(fd);
    }
    return moved >= 0 ? moved : in;
}

}  // namespace

std::uint64_t clock_ms() {
    timespec ts{};
#ifdef CLOCK_BOOTTIME
    (void)clock_gettime(CLOCK_BOOTTIME, &ts);
#else
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000U +
           static_cast<std::uint64_t>(ts.tv_nsec) / 1000000U;
}

bool Guardian::start(pid_t pgid, std::uint32_t left_ms, const resplock::LockRef& lock,
                     int also_close) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    const std::uint64_t deadline = deadline_for(left_ms);
    (void)std::fflush(stdout);
    (void)std::fflush(stderr);
    pid_ = fork();
    if (pid_ == 0) {
        // A process group of its own too: a SIGKILL to resplock's group (a shell's kill -9 %1)
        // leaves the guardian to do its job.
        (void)setpgid(0, 0);
        lock.close();
        (void)close(also_close);
        (void)close(fds[1]);
        guardian_main(detach_streams(fds[0]), pgid, deadline);
    }
    const int err = errno;
    (void)close(fds[0]);
    if (pid_ < 0) {
        (void)close(fds[1]);
        errno = err;
        return false;
    }
    fd_ = fds[1];
    return true;
}

void Guardian::renewed(std::uint32_t left_ms) const {
    send(guardian_deadline, deadline_for(left_ms));
}

bool Guardian::finish() {
    if (fd_ >= 0) {
        send(guardian_quit, 0);
        (void)close(fd_);
        fd_ = -1;
    }
    if (pid_ > 0 && !reaped_) {
        const std::uint64_t until = clock_ms() + guardian_exit_ms;
        int status = 0;
        for (;;) {
            const pid_t r = waitpid(pid_, &status, WNOHANG);
            if (r == pid_) break;
            if (r < 0 && errno != EINTR) break;
            if (clock_ms() >= until) {
                (void)kill(pid_, SIGKILL);
                while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
                }
                break;
            }
            const timespec pause{0, 1000000};
            (void)nanosleep(&pause, nullptr);
        }
        reaped(status);
    }
    return killed();
}

bool Guardian::killed() const {
    return reaped_ && WIFEXITED(status_) && WEXITSTATUS(status_) == guardian_killed;
}

std::uint64_t Guardian::deadline_for(std::uint32_t left_ms) const {
    const std::uint64_t now = clock_ms();
    return left_ms > early_ms_ ? now + left_ms - early_ms_ : now;
}

void Guardian::send(unsigned char kind, std::uint64_t value) const {
    if (fd_ < 0) return;
    unsigned char message[guardian_message_size];
    encode(kind, value, message);
    // A guardian that is gone (EPIPE; SIGPIPE is ignored) has nothing left to do.
    while (write(fd_, message, sizeof message) < 0 && errno == EINTR) {
    }
}

}  // namespace resplock_cli
