// Runs a job under the lock "example:job", renewing the lock while it works.
// Build: see examples/CMakeLists.txt. Run: REDIS_PORT=6379 ./posix_lock
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"

using resplock::Status;

namespace {

constexpr std::uint32_t ttl_ms = 3000;   // the lock outlives a crashed holder by at most this
constexpr std::uint32_t wait_ms = 5000;  // how long to wait for another holder

// One step of the job; the lock must still be valid when it ends.
void work_step(int step) {
    std::printf("step %d\n", step);
    const timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, nullptr);
}

}  // namespace

int main() {
    resplock_posix_t posix;
    resplock_port_t port;
    if (resplock_posix_port_init(&posix, nullptr, &port) != RESPLOCK_STATUS_ok) return 1;
    resplock::ConnectionConfig config;
    const char* port_env = std::getenv("REDIS_PORT");
    config.port = static_cast<std::uint16_t>(port_env ? std::atoi(port_env) : 6379);
    config.timeout_ms = 1000;
    static char buffer[512];
    resplock::Connection conn(port, config, buffer, sizeof buffer);

    resplock::Lock lock(conn, "example:job");
    Status s = lock.try_acquire(ttl_ms, wait_ms);
    if (s != Status::ok) {
        // busy: another holder kept it for wait_ms; anything else: the server or the network.
        std::fprintf(stderr, "not acquired: %s\n", resplock::to_string(s));
        return s == Status::busy ? 75 : 69;
    }
    resplock::LockGuard guard(lock);  // releases on every return below

    for (int step = 1; step <= 5; ++step) {
        // Renew once a third of the TTL is used; stop if the lock cannot be kept.
        if (lock.remaining_ms() < ttl_ms * 2 / 3) {
            s = lock.extend(ttl_ms);
            if (s != Status::ok) {
                std::fprintf(stderr, "lock lost: %s\n", resplock::to_string(s));
                return 70;
            }
            std::printf("renewed\n");
        }
        work_step(step);
    }
    s = lock.release();
    if (s != Status::ok) {
        std::fprintf(stderr, "release: %s\n", resplock::to_string(s));
        return 70;
    }
    std::printf("done\n");
    return 0;
}
