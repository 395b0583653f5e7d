/* The smallest firmware that takes a lock through the C API: connection and lock set-up, then
 * try_acquire, extend and release, over a port of its own that does nothing (its functions are
 * the firmware's, as a real port's would be). `make size` links it with newlib-nano and
 * --gc-sections, and tests/target/firmware_size.py reads the link map: what the library and the
 * C run-time it pulls in (memcpy, memcmp, ...) add to a firmware. Never run. */
#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"

extern uint32_t __stack_top__; /* from mps2-an386.ld */

static int32_t port_connect(void* ctx, const char* host, uint16_t port, uint32_t timeout_ms) {
    (void)ctx;
    (void)host;
    (void)port;
    (void)timeout_ms;
    return RESPLOCK_PORT_REFUSED;
}
static int32_t port_send(void* ctx, const uint8_t* data, size_t len, uint32_t timeout_ms) {
    (void)ctx;
    (void)data;
    (void)timeout_ms;
    return (int32_t)len;
}
static int32_t port_recv(void* ctx, uint8_t* buf, size_t len, uint32_t timeout_ms) {
    (void)ctx;
    (void)buf;
    (void)len;
    (void)timeout_ms;
    return RESPLOCK_PORT_CLOSED;
}
static void port_close(void* ctx) {
    (void)ctx;
}
static uint32_t port_now_ms(void* ctx) {
    (void)ctx;
    return 0;
}
static void port_sleep_ms(void* ctx, uint32_t ms) {
    (void)ctx;
    (void)ms;
}
static int32_t port_random(void* ctx, uint8_t* buf, size_t len) {
    (void)ctx;
    (void)buf;
    (void)len;
    return -1;
}

static char buffer[512];
static resplock_conn_t conn;
static resplock_lock_t lock;

int main(void) {
    const resplock_port_t port = {NULL,       port_connect, port_send,     port_recv,
                                  port_close, port_now_ms,  port_sleep_ms, port_random};
    resplock_conn_config_t config;
    resplock_conn_config_init(&config);
    config.host = "10.0.2.2";
    if (resplock_conn_init(&conn, &port, &config, buffer, sizeof buffer) != RESPLOCK_STATUS_ok ||
        resplock_lock_init(&lock, &conn, "job", 3) != RESPLOCK_STATUS_ok) {
        return 1;
    }
    if (resplock_lock_try_acquire(&lock, 10000, 5000) != RESPLOCK_STATUS_ok) return 2;
    (void)resplock_lock_extend(&lock, 10000);
    return resplock_lock_release(&lock) == RESPLOCK_STATUS_ok ? 0 : 3;
}

void reset_handler(void);
void reset_handler(void) {
    (void)main();
    for (;;) {
    }
}

struct vectors {
    void* initial_sp;
    void (*reset)(void);
};
__attribute__((section(".vectors"), used)) static const struct vectors vectors = {&__stack_top__,
                                                                                  reset_handler};
