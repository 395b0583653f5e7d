/* The firmware of tests/package/firmware: a port with no network (every connect is refused) and
 * one lock attempt through the C API, which must report the refusal. Under QEMU it prints the
 * status; the test only links it, for the hard-float and the soft-float ABI. */
#include <stdio.h>
#include <string.h>

#include "resplock/c_api/lock.h"

static uint32_t clock_ms;

static int32_t no_connect(void* ctx, const char* host, uint16_t port, uint32_t timeout_ms) {
    (void)ctx;
    (void)host;
    (void)port;
    (void)timeout_ms;
    return RESPLOCK_PORT_REFUSED;
}
static int32_t no_send(void* ctx, const uint8_t* data, size_t len, uint32_t timeout_ms) {
    (void)ctx;
    (void)data;
    (void)len;
    (void)timeout_ms;
    return RESPLOCK_PORT_ERROR;
}
static int32_t no_recv(void* ctx, uint8_t* buf, size_t len, uint32_t timeout_ms) {
    (void)ctx;
    (void)buf;
    (void)len;
    (void)timeout_ms;
    return RESPLOCK_PORT_ERROR;
}
static void no_close(void* ctx) {
    (void)ctx;
}
static uint32_t now_ms(void* ctx) {
    (void)ctx;
    return clock_ms;
}
static void sleep_ms(void* ctx, uint32_t ms) {
    (void)ctx;
    clock_ms += ms;
}
/* Not random: this port never reaches a server. */
static int32_t fill(void* ctx, uint8_t* buf, size_t len) {
    (void)ctx;
    memset(buf, 0x5a, len);
    return 0;
}

int main(void) {
    static char buf[512];
    static resplock_conn_t conn;
    static resplock_lock_t lock;
    resplock_port_t port = {NULL, no_connect, no_send, no_recv, no_close, now_ms, sleep_ms, fill};
    resplock_conn_config_t cfg;
    resplock_status_t s;

    resplock_conn_config_init(&cfg);
    if (resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf) != RESPLOCK_STATUS_ok ||
        resplock_lock_init(&lock, &conn, "firmware", 8) != RESPLOCK_STATUS_ok) {
        puts("init failed");
        return 1;
    }
    s = resplock_lock_try_acquire(&lock, 1000, 0);
    printf("try_acquire: %s\n", resplock_status_str(s));
    return s == RESPLOCK_STATUS_ok ? 1 : 0;
}
