/* The fair lock's C API from a C program, against a real redis-server whose port is in
 * REDIS_PORT (started by the with_redis runner). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/fair.h"
#include "resplock/c_api/lock.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

static char buf_a[C_BUF(2560)], buf_b[C_BUF(2560)];
static resplock_conn_t conn_a, conn_b;
static resplock_fair_t a, b, bad;

int main(void) {
    const char* port_text = getenv("REDIS_PORT");
    resplock_posix_t ctx_a, ctx_b;
    resplock_port_t port_a;
    resplock_port_t port_b;
    resplock_conn_config_t cfg;
    resplock_lock_t plain;
    const char* token;
    size_t len = 99;

    CHECK_STATUS(resplock_posix_port_init(&ctx_a, NULL, &port_a), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_posix_port_init(&ctx_b, NULL, &port_b), RESPLOCK_STATUS_ok);
    if (port_text == NULL) {
        printf("REDIS_PORT is not set: run under with_redis\n");
        return 2;
    }
    CHECK(resplock_fair_buffer_min() <= sizeof buf_a);
    resplock_conn_config_init(&cfg);
    cfg.port = (uint16_t)atoi(port_text);
    cfg.timeout_ms = 1000;
    CHECK_STATUS(resplock_conn_init(&conn_a, &port_a, &cfg, buf_a, sizeof buf_a),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn_b, &port_b, &cfg, buf_b, sizeof buf_b),
                 RESPLOCK_STATUS_ok);

    /* Bad arguments; a key with a '}' but no tag is fine (its queue gets a computed tag). */
    CHECK_STATUS(resplock_fair_init(NULL, &conn_a, "k", 1), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_fair_init(&bad, &conn_a, "k", 0), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_fair_init(&bad, &conn_a, "a}b", 3), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_fair_acquire(NULL, 1000), RESPLOCK_STATUS_invalid_argument);
    CHECK(resplock_fair_remaining_ms(NULL) == 0);
    CHECK(resplock_fair_token(NULL, &len) == NULL && len == 0);

    CHECK_STATUS(resplock_fair_init(&a, &conn_a, "c:fair", 6), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_fair_init(&b, &conn_b, "c:fair", 6), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_fair_acquire(&a, 5000), RESPLOCK_STATUS_ok);
    CHECK(resplock_fair_remaining_ms(&a) > 4000);
    token = resplock_fair_token(&a, &len);
    CHECK(token != NULL && len == 2 * RESPLOCK_TOKEN_BYTES);
    CHECK_STATUS(resplock_fair_extend(&a, 8000), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_fair_try_acquire(&b, 5000, 200), RESPLOCK_STATUS_busy);
    /* A plain lock on the same key sees it held. */
    CHECK_STATUS(resplock_lock_init(&plain, &conn_b, "c:fair", 6), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_acquire(&plain, 5000), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_fair_release(&a), RESPLOCK_STATUS_ok);
    CHECK(resplock_fair_remaining_ms(&a) == 0);
    CHECK_STATUS(resplock_fair_release(&a), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_fair_try_acquire(&b, 5000, 500), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_fair_acquire(&a, 5000), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_fair_release(&b), RESPLOCK_STATUS_ok);

    /* An owner label and fencing numbers, one sequence with the plain lock's; replicas asked
     * for and none there: the grant is given back. */
    CHECK_STATUS(resplock_fair_set_owner(&a, "bad label", 9), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_fair_set_owner(&a, "dev-7", 5), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_fair_try_acquire_fenced(&a, 5000, 0, NULL),
                 RESPLOCK_STATUS_invalid_argument);
    {
        uint64_t first = 0, second = 0;
        CHECK_STATUS(resplock_fair_try_acquire_fenced(&a, 5000, 0, &first), RESPLOCK_STATUS_ok);
        token = resplock_fair_token(&a, &len);
        CHECK(token != NULL && len == 6 + 2 * RESPLOCK_TOKEN_BYTES &&
              memcmp(token, "dev-7:", 6) == 0);
        CHECK_STATUS(resplock_fair_release(&a), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_fair_try_acquire_fenced(&b, 5000, 0, &second), RESPLOCK_STATUS_ok);
        CHECK(first > 0 && second > first);
        CHECK_STATUS(resplock_fair_release(&b), RESPLOCK_STATUS_ok);
    }
    CHECK_STATUS(resplock_fair_set_replicas(&a, 256), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_fair_set_replicas(&a, 1), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_fair_acquire(&a, 5000), RESPLOCK_STATUS_not_replicated);
    CHECK(resplock_fair_token(&a, &len) == NULL);
    CHECK_STATUS(resplock_fair_set_replicas(&a, 0), RESPLOCK_STATUS_ok);

    resplock_conn_deinit(&conn_a);
    resplock_conn_deinit(&conn_b);
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
