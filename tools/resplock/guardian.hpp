// The guardian of `run`: a small process, outside COMMAND's process group, that SIGKILLs the group
// when resplock cannot. It reads a pipe that only resplock writes: after every renewal, when the
// lock's validity ends. It kills the group at end of file (resplock died, even of SIGKILL), and
// when that end comes without a newer one (resplock stopped or stalled past the lock's validity).
// Also the clock the lock's validity is measured on (clock_ms()).
#ifndef RESPLOCK_TOOL_GUARDIAN_HPP
#define RESPLOCK_TOOL_GUARDIAN_HPP

#include <sys/types.h>

#include <cstdint>

#include "resplock/variants/lock_ref.hpp"

namespace resplock_cli {

// Milliseconds on the clock the POSIX port measures validity on: CLOCK_BOOTTIME on Linux, which
// counts through a suspend.
std::uint64_t clock_ms();

// resplock's side of the guardian.
class Guardian {
  public:
    // `early_ms`: how long before the end of the lock's validity the guardian kills the group.
    explicit Guardian(std::uint32_t early_ms) : early_ms_(early_ms) {}
    Guardian(const Guardian&) = delete;
    Guardian& operator=(const Guardian&) = delete;
    ~Guardian() { (void)finish(); }

    // Forks the guardian of group `pgid`, the lock being valid for left_ms more. In the guardian,
    // closes the lock's sockets (lock.close()) and `also_close`. Returns false (errno set) if it
    // cannot.
    bool start(pid_t pgid, std::uint32_t left_ms, const resplock::LockRef& lock, int also_close);

    pid_t pid() const { return pid_; }

    // A renewal left the lock valid for left_ms more. Safe from any thread while started.
    void renewed(std::uint32_t left_ms) const;

    // The guardian was reaped with this wait status.
    void reaped(int status) {
        reaped_ = true;
        status_ = status;
    }

    // Tells the guardian to exit, waits for it (killing it if it does not exit in time) and
    // reaps it. Returns whether it had killed the group.
    bool finish();
    // Whether the guardian was reaped after killing the group.
    bool killed() const;

  private:
    std::uint64_t deadline_for(std::uint32_t left_ms) const;
    void send(unsigned char kind, std::uint64_t value) const;

    std::uint32_t early_ms_;
    pid_t pid_ = -1;
    int fd_ = -1;  // the pipe's write end: only resplock holds it (O_CLOEXEC)
    bool reaped_ = false;
    int status_ = 0;
};

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_GUARDIAN_HPP
