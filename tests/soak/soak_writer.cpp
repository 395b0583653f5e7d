// One process of a `resplock run` COMMAND's tree in the soak test: appends entries to a shared
// log for a while, as work protected by the lock would. Each entry is one write() to a file
// opened with O_APPEND, so entries never mix, and the file's order is the order of the writes:
//   <time> <key> <token> <tag> <pid>
// time: CLOCK_BOOTTIME in microseconds (one clock for every process of the host); key and token:
// RESPLOCK_KEY and RESPLOCK_TOKEN from resplock; tag: which holder started it.
// Usage: soak_writer LOG TAG MS [LINGER_MS]
// Writes every 2-10 ms for MS milliseconds (0: one entry). With LINGER_MS, SIGTERM does not end
// it at once: it goes on writing for LINGER_MS more, like work that takes its time to stop.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "soak_common.hpp"

namespace {

volatile sig_atomic_t terminated = 0;

void on_sigterm(int) {
    terminated = 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        std::fprintf(stderr, "usage: soak_writer LOG TAG MS [LINGER_MS]\n");
        return 64;
    }
    const char* key = std::getenv("RESPLOCK_KEY");
    const char* token = std::getenv("RESPLOCK_TOKEN");
    if (key == nullptr || token == nullptr) {
        std::fprintf(stderr, "soak_writer: not run by resplock run\n");
        return 64;
    }
    const long long run_us = std::atoll(argv[3]) * 1000;
    const long long linger_us = argc == 5 ? std::atoll(argv[4]) * 1000 : 0;
    if (linger_us > 0) {
        struct sigaction sa {};
        sa.sa_handler = on_sigterm;
        sigaction(SIGTERM, &sa, nullptr);
    }
    const int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        std::perror("soak_writer: open");
        return 1;
    }
    std::mt19937 rng(static_cast<unsigned>(getpid()) ^ static_cast<unsigned>(soak::boot_us()));
    const long long start = soak::boot_us();
    long long end = start + run_us;
    bool lingering = false;
    for (;;) {
        char line[256];
        const long long now = soak::boot_us();
        const int n = std::snprintf(line, sizeof line, "%lld %s %s %s %ld\n", now, key, token,
                                    argv[2], static_cast<long>(getpid()));
        if (n <= 0 || static_cast<std::size_t>(n) >= sizeof line ||
            write(fd, line, static_cast<std::size_t>(n)) != n) {
            std::perror("soak_writer: write");
            return 1;
        }
        if (terminated && !lingering) {
            lingering = true;
            end = now + linger_us;
        }
        if (now >= end) break;
        const long long pause_us = std::uniform_int_distribution<long long>(2000, 10000)(rng);
        const timespec ts{0, static_cast<long>(pause_us * 1000)};
        nanosleep(&ts, nullptr);  // SIGTERM cuts it short
    }
    close(fd);
    return 0;
}
