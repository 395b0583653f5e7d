// The `run` supervisor: COMMAND in a process group of its own, watched over by a guardian process
// (guardian.hpp). The lock stays held, and renewed, until every process of that group has ended,
// not only COMMAND: a script's subprocesses and background jobs stay in its group unless they
// leave it (setsid, setpgid, daemons). Signals sent to resplock are passed on to the group, and
// so is the stop when the lock is lost: SIGTERM, a grace period, SIGKILL, all before the lock's
// validity ends. It knows the lock only through a resplock::LockRef, so one supervisor serves
// every lock kind.
#ifndef RESPLOCK_TOOL_SUPERVISOR_HPP
#define RESPLOCK_TOOL_SUPERVISOR_HPP

#include <cstdint>
#include <string_view>

#include "failure.hpp"
#include "resplock/core/port.h"
#include "resplock/core/status.hpp"
#include "resplock/variants/lock_ref.hpp"

namespace resplock_cli {

// What to run, and what COMMAND is told about the lock.
struct RunRequest {
    const char* key;        // KEY, exported as RESPLOCK_KEY
    const char* key_shown;  // KEY as messages show it
    char** argv;            // COMMAND [ARGS...], null-terminated
    std::uint32_t ttl_ms;   // of each renewal; sets the grace and the kill allowance
    bool fence;             // export fence_value as RESPLOCK_FENCE
    std::uint64_t fence_value;
    std::uint32_t limit;  // --limit N, exported as RESPLOCK_LIMIT; 0 (a lock): not exported
};

// Runs COMMAND while holding `lock` (held, with validity left; an object of the caller's that
// outlives supervise()) and renewing it every ttl_ms/3 on a thread over `port`'s clock; releases
// it (lock.release()) once COMMAND's group has ended, and closes its sockets (lock.close()) in
// the processes it forks. Returns COMMAND's exit
// status (128+N if it died of signal N); 70 if the lock was lost, whatever COMMAND returned (a
// renewal reported it and the group was stopped, or the release found the key gone or another's:
// the message gives COMMAND's own status); or 126 if COMMAND could not be started (the lock is
// released then). `t` names the server in messages.
int supervise(const resplock::LockRef& lock, const RunRequest& run, const Target& t,
              const resplock_port_t& port);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_SUPERVISOR_HPP
