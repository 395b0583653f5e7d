// A program built against an installed resplock, the way a user's program is: only the installed
// headers and libraries, found through CMake's find_package or through pkg-config. It takes a
// lock on the redis-server at 127.0.0.1:PORT, checks that a second holder is refused, and
// releases it, printing one line per step for the test to compare.
#include <cstdio>
#include <cstdlib>

#include "resplock/core/lock.hpp"
#include "resplock/core/status.h"
#include "resplock/ports/posix.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s PORT KEY\n", argv[0]);
        return 2;
    }
    std::printf("status_str: %s\n", resplock_status_str(RESPLOCK_STATUS_busy));

    resplock_posix_t net_a;
    resplock_posix_t net_b;
    resplock_port_t port_a;
    resplock_port_t port_b;
    if (resplock_posix_port_init(&net_a, nullptr, &port_a) != RESPLOCK_STATUS_ok ||
        resplock_posix_port_init(&net_b, nullptr, &port_b) != RESPLOCK_STATUS_ok) {
        std::fprintf(stderr, "port set-up failed\n");
        return 1;
    }
    resplock::ConnectionConfig cfg;
    cfg.host = "127.0.0.1";
    cfg.port = static_cast<std::uint16_t>(std::atoi(argv[1]));
    cfg.timeout_ms = 2000;
    char buf_a[512];
    char buf_b[512];
    resplock::Connection conn_a(port_a, cfg, buf_a, sizeof buf_a);
    resplock::Connection conn_b(port_b, cfg, buf_b, sizeof buf_b);
    resplock::Lock first(conn_a, argv[2]);
    resplock::Lock second(conn_b, argv[2]);

    std::printf("acquire: %s\n", resplock::to_string(first.acquire(10000)));
    std::printf("held: %s\n", first.held() ? "yes" : "no");
    std::printf("second: %s\n", resplock::to_string(second.acquire(10000)));
    std::printf("release: %s\n", resplock::to_string(first.release()));
    std::printf("second again: %s\n", resplock::to_string(second.acquire(10000)));
    std::printf("release: %s\n", resplock::to_string(second.release()));
    return 0;
}
