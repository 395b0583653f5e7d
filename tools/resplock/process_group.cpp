// group_alive() (see process_group.hpp): kill(-pgid, 0), then, where zombies must not count, a
// scan of /proc.
#include "process_group.hpp"

#include <errno.h>
#include <signal.h>
#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "text.hpp"

namespace resplock_cli {

namespace {

#ifdef __linux__
// Reads /proc/<pid>/stat: the process's group and whether it is a zombie (or dead). False when it
// cannot be read.
bool read_stat(const char* pid, std::uint32_t& group, bool& zombie) {
    char path[64];
    (void)std::snprintf(path, sizeof path, "/proc/%.20s/stat", pid);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char stat[512];
    const ssize_t n = read(fd, stat, sizeof stat - 1);
    (void)close(fd);
    if (n <= 0) return false;
    stat[n] = '\0';
    // "pid (comm) state ppid pgrp ...": comm may hold anything, so read after its last ')'.
    const char* end = std::strrchr(stat, ')');
    if (end == nullptr) return false;
    const std::string_view fields(end + 1);  // " S 123 456 ..."
    const std::size_t ppid_at = fields.find(' ', 1);
    const std::size_t pgrp_at =
        ppid_at == std::string_view::npos ? std::string_view::npos : fields.find(' ', ppid_at + 1);
    if (fields.size() < 3 || pgrp_at == std::string_view::npos) return false;
    const std::string_view pgrp =
        slice(fields, pgrp_at + 1, fields.find(' ', pgrp_at + 1) - pgrp_at - 1);
    if (!parse_number(pgrp, 1, max_ms, group)) return false;
    zombie = fields[1] == 'Z' || fields[1] == 'X';
    return true;
}
#endif

// Whether /proc shows a process of group pgid that is not a zombie. True when it cannot tell.
bool group_has_live_process(pid_t pgid) {
#ifdef __linux__
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return true;
    bool live = false;
    bool seen = false;
    while (!live) {
        // readdir_r is deprecated; this stream is used by this thread only.
        // cppcheck-suppress readdirCalled
        const dirent* entry = readdir(proc);
        if (entry == nullptr) break;
        const std::string_view name(entry->d_name);
        if (name.empty() || !std::all_of(name.begin(), name.end(), is_digit)) continue;
        std::uint32_t group = 0;
        bool zombie = false;
        if (!read_stat(entry->d_name, group, zombie) || group != static_cast<std::uint32_t>(pgid))
            continue;
        seen = true;
        live = !zombie;
    }
    (void)closedir(proc);
    // None seen though kill() found some: hidden from us (hidepid), so assume they live.
    return live || !seen;
#else
    (void)pgid;
    return true;
#endif
}

}  // namespace

bool group_alive(pid_t pgid, bool zombies_count) {
    if (kill(-pgid, 0) != 0 && errno != EPERM) return false;
    return zombies_count || group_has_live_process(pgid);
}

}  // namespace resplock_cli
