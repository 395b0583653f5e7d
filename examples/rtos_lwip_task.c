/* A FreeRTOS task that flashes a shared sensor bus only while it holds the fleet-wide lock
 * "fleet:flash:sensor-bus", over lwIP, with the C API. The application creates lock_task() with
 * xTaskCreate() once the network is up; board_* functions stand for its own code. */
#include "FreeRTOS.h" /* before any other FreeRTOS header */
#include "task.h"

#include "resplock/c_api/lock.h"
#include "resplock/ports/lwip.h"

#define TTL_MS 15000U  /* a crashed holder blocks the others for at most this long */
#define WAIT_MS 30000U /* how long to wait for another holder */

/* Provided by the board: a hardware TRNG (lwIP has no secure random), a log line, the work. */
int32_t board_trng_read(void* user, uint8_t* buf, size_t len);
void board_log(const char* what, resplock_status_t status);
int board_flash_next_block(void); /* 1 while blocks remain, 0 when done, -1 on failure */

void lock_task(void* arg);

/* The work, once: returns when it is done or has failed. */
static void flash_under_lock(void) {
    static char buffer[512]; /* the connection's only buffer: no heap anywhere */
    static resplock_lwip_t net;
    static resplock_conn_t conn;
    static resplock_lock_t lock;
    resplock_port_t port;
    resplock_lwip_config_t net_config = {0};
    resplock_conn_config_t config;
    resplock_status_t s;
    int more = 1;

    net_config.random = board_trng_read; /* required: tokens must be unguessable */
    if (resplock_lwip_port_init(&net, &net_config, &port) != RESPLOCK_STATUS_ok) {
        board_log("no random source", RESPLOCK_STATUS_random_failed);
        return;
    }
    resplock_conn_config_init(&config);
    config.host = "10.0.0.5";
    config.timeout_ms = 2000;
    s = resplock_conn_init(&conn, &port, &config, buffer, sizeof buffer);
    if (s == RESPLOCK_STATUS_ok) s = resplock_lock_init(&lock, &conn, "fleet:flash:sensor-bus", 22);
    if (s != RESPLOCK_STATUS_ok) {
        board_log("setup", s);
        return;
    }

    s = resplock_lock_try_acquire(&lock, TTL_MS, WAIT_MS);
    if (s != RESPLOCK_STATUS_ok) {
        /* busy: someone else flashed for WAIT_MS; unknown_outcome: the key expires by its TTL. */
        board_log("not acquired", s);
        resplock_conn_deinit(&conn);
        return;
    }
    while (more > 0) {
        /* Renew once a third of the TTL is used; stop the work if the lock cannot be kept. */
        if (resplock_lock_remaining_ms(&lock) < TTL_MS * 2U / 3U) {
            s = resplock_lock_extend(&lock, TTL_MS);
            if (s != RESPLOCK_STATUS_ok) {
                board_log("lock lost, flashing stopped", s);
                break;
            }
        }
        more = board_flash_next_block();
    }
    if (more < 0) board_log("flash failed", RESPLOCK_STATUS_ok);
    /* Release even after a failure; if the reply is lost the TTL frees the key anyway. */
    s = resplock_lock_release(&lock);
    if (s != RESPLOCK_STATUS_ok) board_log("release", s);
    resplock_conn_deinit(&conn);
}

void lock_task(void* arg) {
    (void)arg;
    flash_under_lock();
    vTaskDelete(NULL); /* a FreeRTOS task must never return from its function */
}
