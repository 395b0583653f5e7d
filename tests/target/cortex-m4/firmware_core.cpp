// The smallest firmware that uses the plain lock through C++: a Connection over a port of its own
// that does nothing (its functions are the firmware's, as a real port's would be), a Lock, and
// every public call of the two (connect, command, close; acquire, try_acquire, extend, query,
// adopt, release). `make size` links it with newlib-nano and --gc-sections, and
// tests/target/size_report.py reads its link map: what the library adds to it is the "core" of
// the flash budget, wherever in src/ that code lives. Options, replicas, routers and the other lock
// kinds are not called, so a firmware that does not use them does not pay for them. Never run.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"

extern "C" {
extern std::uint32_t __stack_top__;  // from mps2-an386.ld
void reset_handler();
}

namespace {

std::int32_t port_connect(void*, const char*, std::uint16_t, std::uint32_t) {
    return RESPLOCK_PORT_REFUSED;
}
std::int32_t port_send(void*, const std::uint8_t*, std::size_t len, std::uint32_t) {
    return static_cast<std::int32_t>(len);
}
std::int32_t port_recv(void*, std::uint8_t*, std::size_t, std::uint32_t) {
    return RESPLOCK_PORT_CLOSED;
}
void port_close(void*) {}
std::uint32_t port_now_ms(void*) {
    return 0;
}
void port_sleep_ms(void*, std::uint32_t) {}
std::int32_t port_random(void*, std::uint8_t*, std::size_t) {
    return -1;
}

const resplock_port_t port = {nullptr,    port_connect, port_send,     port_recv,
                              port_close, port_now_ms,  port_sleep_ms, port_random};
char buffer[512];
// Each status is stored, so that no call's result is thrown away.
volatile int sink;

int run() {
    resplock::ConnectionConfig config;
    config.host = "10.0.2.2";
    resplock::Connection conn(port, config, buffer, sizeof buffer);
    if (conn.connect(resplock::Deadline::after(port, 1000)) != resplock::Status::ok) {
        sink = 1;
    }
    const std::string_view ping[] = {"PING"};
    resplock::resp::Reply reply;
    sink = static_cast<int>(conn.command(ping, 1, reply, resplock::Deadline::after(port, 1000)));

    resplock::Lock lock(conn, "job");
    sink = static_cast<int>(lock.acquire(10000));
    sink = static_cast<int>(lock.try_acquire(10000, 5000));
    sink = static_cast<int>(lock.extend(10000));
    resplock::LockInfo info;
    sink = static_cast<int>(lock.query(info));
    sink = static_cast<int>(lock.adopt("0123456789abcdef0123456789abcdef"));
    sink = static_cast<int>(lock.release());
    conn.close();
    return sink;
}

}  // namespace

void reset_handler() {
    (void)run();
    for (;;) {
    }
}

namespace {
struct Vectors {
    void* initial_sp;
    void (*reset)();
};
__attribute__((section(".vectors"), used)) const Vectors vectors = {&__stack_top__, reset_handler};
}  // namespace
