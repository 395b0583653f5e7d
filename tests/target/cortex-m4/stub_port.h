/* The port and start-up the size firmwares share (firmware_c_api.c, firmware_semaphore.c): a
 * port whose functions do nothing (they are the firmware's own, as a real port's would be, and
 * tests/target/firmware_size.py does not count them), `stub_port` made of them, and the vector
 * table that starts main(). Include it once, in the file that defines main(). Never run. */
#ifndef RESPLOCK_TESTS_STUB_PORT_H
#define RESPLOCK_TESTS_STUB_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/core/port.h"

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

static const resplock_port_t stub_port = {NULL,       port_connect, port_send,     port_recv,
                                          port_close, port_now_ms,  port_sleep_ms, port_random};

int main(void);
static void reset_handler(void) {
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

#endif /* RESPLOCK_TESTS_STUB_PORT_H */
