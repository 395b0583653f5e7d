// In-process tests of group_alive() (tools/resplock/process_group.hpp) over real processes: a
// group with a running process, the same group once its only process is a zombie (counted or
// not), and once it has been reaped.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.hpp"
#include "process_group.hpp"

namespace {

using resplock_cli::group_alive;

// A child in a process group of its own that waits for a signal. Returns its pid, the group's id.
pid_t start_group() {
    const pid_t pid = fork();
    if (pid == 0) {
        (void)setpgid(0, 0);
        for (;;)
            (void)pause();
    }
    if (pid > 0) (void)setpgid(pid, pid);  // on both sides, whichever runs first
    return pid;
}

// Kills the child and waits until it is a zombie, without reaping it.
bool make_zombie(pid_t pid) {
    if (kill(pid, SIGKILL) != 0) return false;
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) == 0;
}

}  // namespace

TEST(running_group_is_alive_whether_zombies_count_or_not) {
    const pid_t pid = start_group();
    REQUIRE(pid > 0);
    REQUIRE_EQ(getpgid(pid), pid);
    CHECK(group_alive(pid, true));
    CHECK(group_alive(pid, false));
    CHECK(make_zombie(pid));
    (void)waitpid(pid, nullptr, 0);
}

TEST(group_of_a_zombie_is_alive_only_where_zombies_count) {
    const pid_t pid = start_group();
    REQUIRE(pid > 0);
    REQUIRE_EQ(getpgid(pid), pid);
    REQUIRE(make_zombie(pid));
    CHECK(group_alive(pid, true));  // its reaper has not reaped it yet
#ifdef __linux__
    CHECK(!group_alive(pid, false));  // /proc shows a zombie only
#endif
    CHECK_EQ(waitpid(pid, nullptr, 0), pid);
    // Reaped: nothing of the group is left.
    CHECK(!group_alive(pid, true));
    CHECK(!group_alive(pid, false));
}
