/* A firmware that takes a place in a counting semaphore through the C API, as an OTA client
 * would: connection and semaphore set-up with an owner label, try_acquire with its fencing
 * number, extend and release, over a port that does nothing (stub_port.h). `make size` links it
 * as it links firmware_c_api.c and reports what the library and the C run-time add: the figure
 * docs/footprint.md gives for the semaphore. Never run. */
#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/semaphore.h"
#include "stub_port.h"

static char buffer[3328]; /* resplock_sem_buffer_min() at a 128-byte key, rounded up */
static resplock_conn_t conn;
static resplock_sem_t sem;

int main(void) {
    resplock_conn_config_t config;
    uint64_t fence = 0;
    resplock_conn_config_init(&config);
    config.host = "10.0.2.2";
    if (resplock_conn_init(&conn, &stub_port, &config, buffer, sizeof buffer) !=
            RESPLOCK_STATUS_ok ||
        resplock_sem_init(&sem, &conn, "fleet:ota", 9, 10, 1) != RESPLOCK_STATUS_ok ||
        resplock_sem_set_owner(&sem, "gw-17", 5) != RESPLOCK_STATUS_ok) {
        return 1;
    }
    if (resplock_sem_try_acquire(&sem, 60000, 3600000, &fence) != RESPLOCK_STATUS_ok) return 2;
    (void)resplock_sem_extend(&sem, 60000);
    return resplock_sem_release(&sem) == RESPLOCK_STATUS_ok && fence != 0 ? 0 : 3;
}
