// What is left of a process group: whether any of its processes still runs, for `run`, which
// holds the lock until COMMAND's whole group has ended (supervisor.hpp).
#ifndef RESPLOCK_TOOL_PROCESS_GROUP_HPP
#define RESPLOCK_TOOL_PROCESS_GROUP_HPP

#include <sys/types.h>

namespace resplock_cli {

// Whether any process of group pgid is left. A zombie counts when zombies_count (the caller will
// reap it: it is the caller's own child, or the caller is the subreaper of every orphan);
// otherwise a group of zombies only is gone: an orphan zombie waits for whoever reaps orphans,
// maybe nobody (PID 1 of a container). On Linux, zombies are told apart through /proc; elsewhere,
// or when /proc hides the group's processes, every process counts.
bool group_alive(pid_t pgid, bool zombies_count);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_PROCESS_GROUP_HPP
