/* The smallest firmware that takes a lock through the C API: connection and lock set-up, then
 * try_acquire, extend and release, over a port that does nothing (stub_port.h). `make size`
 * links it with newlib-nano and --gc-sections, and tests/target/firmware_size.py reads the link
 * map: what the library and the C run-time it pulls in (memcpy, memcmp, ...) add to a firmware.
 * Never run. */
#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"
#include "stub_port.h"

static char buffer[512];
static resplock_conn_t conn;
static resplock_lock_t lock;

int main(void) {
    resplock_conn_config_t config;
    resplock_conn_config_init(&config);
    config.host = "10.0.2.2";
    if (resplock_conn_init(&conn, &stub_port, &config, buffer, sizeof buffer) !=
            RESPLOCK_STATUS_ok ||
        resplock_lock_init(&lock, &conn, "job", 3) != RESPLOCK_STATUS_ok) {
        return 1;
    }
    if (resplock_lock_try_acquire(&lock, 10000, 5000) != RESPLOCK_STATUS_ok) return 2;
    (void)resplock_lock_extend(&lock, 10000);
    return resplock_lock_release(&lock) == RESPLOCK_STATUS_ok ? 0 : 3;
}
