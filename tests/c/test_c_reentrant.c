/* The reentrant lock's C API from a C program, against a real redis-server whose port is in
 * REDIS_PORT (started by the with_redis runner). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/reentrant.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

static char buf_a[C_BUF(640)], buf_b[C_BUF(640)];
static resplock_conn_t conn_a, conn_b;
static resplock_reentrant_t a, a2, b, bad;

int main(void) {
    const char* port_text = getenv("REDIS_PORT");
    resplock_posix_t ctx_a, ctx_b;
    resplock_port_t port_a;
    CHECK_STATUS(resplock_posix_port_init(&ctx_a, NULL, &port_a), RESPLOCK_STATUS_ok);
    resplock_port_t port_b;
    CHECK_STATUS(resplock_posix_port_init(&ctx_b, NULL, &port_b), RESPLOCK_STATUS_ok);
    resplock_conn_config_t cfg;
    resplock_lock_t plain;
    const char* owner;
    size_t len = 99;

    if (port_text == NULL) {
        printf("REDIS_PORT is not set: run under with_redis\n");
        return 2;
    }
    CHECK(resplock_reentrant_buffer_min() <= sizeof buf_a);
    resplock_conn_config_init(&cfg);
    cfg.port = (uint16_t)atoi(port_text);
    cfg.timeout_ms = 1000;
    CHECK_STATUS(resplock_conn_init(&conn_a, &port_a, &cfg, buf_a, sizeof buf_a),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn_b, &port_b, &cfg, buf_b, sizeof buf_b),
                 RESPLOCK_STATUS_ok);

    /* Bad arguments. */
    CHECK_STATUS(resplock_reentrant_init(NULL, &conn_a, "k", 1, NULL, 0),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_reentrant_init(&bad, &conn_a, "k", 0, NULL, 0),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_reentrant_init(&bad, &conn_a, "k", 1, NULL, 3),
                 RESPLOCK_STATUS_invalid_argument);
    {
        char over[RESPLOCK_MAX_TOKEN_LEN + 1];
        memset(over, 'o', sizeof over);
        CHECK_STATUS(resplock_reentrant_init(&bad, &conn_a, "k", 1, over, sizeof over),
                     RESPLOCK_STATUS_invalid_argument);
    }
    CHECK_STATUS(resplock_reentrant_acquire(NULL, 1000), RESPLOCK_STATUS_invalid_argument);
    CHECK(resplock_reentrant_remaining_ms(NULL) == 0);

    /* Two handles sharing the owner id "task-1", one with another (random) owner id. */
    CHECK_STATUS(resplock_reentrant_init(&a, &conn_a, "c:reentrant", 11, "task-1", 6),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_reentrant_init(&a2, &conn_b, "c:reentrant", 11, "task-1", 6),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_reentrant_init(&b, &conn_b, "c:reentrant", 11, NULL, 0),
                 RESPLOCK_STATUS_ok);
    owner = resplock_reentrant_owner(&a, &len);
    CHECK(owner != NULL && len == 6 && memcmp(owner, "task-1", 6) == 0);
    CHECK(resplock_reentrant_owner(&b, &len) == NULL && len == 0);

    CHECK_STATUS(resplock_reentrant_acquire(&a, 5000), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_reentrant_acquire(&a, 1000), RESPLOCK_STATUS_ok);
    CHECK(resplock_reentrant_count(&a) == 2);
    CHECK(resplock_reentrant_remaining_ms(&a) > 4000 &&
          resplock_reentrant_remaining_ms(&a) <= 5000);
    CHECK_STATUS(resplock_reentrant_acquire(&a2, 3000), RESPLOCK_STATUS_ok);
    CHECK(resplock_reentrant_count(&a2) == 3);
    CHECK_STATUS(resplock_reentrant_try_acquire(&b, 5000, 100), RESPLOCK_STATUS_busy);
    CHECK(resplock_reentrant_remaining_ms(&b) == 0);
    owner = resplock_reentrant_owner(&b, &len);
    CHECK(owner != NULL && len == 32);
    CHECK_STATUS(resplock_reentrant_extend(&a, 8000), RESPLOCK_STATUS_ok);
    CHECK(resplock_reentrant_remaining_ms(&a) > 7000);

    /* A plain lock on the same key is busy. */
    CHECK_STATUS(resplock_lock_init(&plain, &conn_b, "c:reentrant", 11), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_acquire(&plain, 5000), RESPLOCK_STATUS_busy);

    CHECK_STATUS(resplock_reentrant_release(&a), RESPLOCK_STATUS_ok);
    CHECK(resplock_reentrant_count(&a) == 2);
    CHECK(resplock_reentrant_remaining_ms(&a) > 0); /* one of a's levels is left */
    CHECK_STATUS(resplock_reentrant_release(&a2), RESPLOCK_STATUS_ok);
    CHECK(resplock_reentrant_count(&a2) == 1);
    CHECK_STATUS(resplock_reentrant_try_acquire(&b, 5000, 0), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_reentrant_release(&a), RESPLOCK_STATUS_ok);
    CHECK(resplock_reentrant_count(&a) == 0);
    CHECK(resplock_reentrant_remaining_ms(&a) == 0);
    CHECK_STATUS(resplock_reentrant_release(&a), RESPLOCK_STATUS_invalid_argument);

    /* Free now: the other owner id gets it, and task-1 sees not_owner / busy. */
    CHECK_STATUS(resplock_reentrant_try_acquire(&b, 5000, 500), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_reentrant_acquire(&a, 5000), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_reentrant_release(&b), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_reentrant_extend(&b, 5000), RESPLOCK_STATUS_invalid_argument);

    resplock_conn_deinit(&conn_a);
    resplock_conn_deinit(&conn_b);
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
