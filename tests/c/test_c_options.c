/* The acquisition options through the C API, from a program compiled as C99, against a real
 * redis-server whose port is in REDIS_PORT (started by the with_redis runner). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/options.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

int main(void) {
    static char buf_a[C_BUF(1024)], buf_b[C_BUF(1024)];
    static resplock_conn_t conn_a, conn_b;
    static resplock_lock_t a, b;
    resplock_posix_t ctx_a, ctx_b;
    resplock_port_t port_a, port_b;
    resplock_conn_config_t cfg;
    resplock_acquire_options_t opt;
    uint64_t fence = 0, previous = 0, untouched = 77;
    const char* port_text = getenv("REDIS_PORT");
    uint32_t start, waited;
    int i;

    if (port_text == NULL) {
        printf("REDIS_PORT is not set: run under with_redis\n");
        return 2;
    }
    CHECK_STATUS(resplock_posix_port_init(&ctx_a, NULL, &port_a), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_posix_port_init(&ctx_b, NULL, &port_b), RESPLOCK_STATUS_ok);
    resplock_conn_config_init(&cfg);
    cfg.port = (uint16_t)atoi(port_text);
    cfg.timeout_ms = 1000;
    CHECK_STATUS(resplock_conn_init(&conn_a, &port_a, &cfg, buf_a, sizeof buf_a),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn_b, &port_b, &cfg, buf_b, sizeof buf_b),
                 RESPLOCK_STATUS_ok);

    /* Defaults and arguments. */
    memset(&opt, 0xff, sizeof opt);
    resplock_acquire_options_init(&opt);
    CHECK(opt.fence == 0 && opt.once_per_ms == 0 && opt.wake == 0);
    CHECK_STATUS(resplock_lock_acquire_opt(NULL, 1000, &opt, &fence),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_try_acquire_opt(NULL, 1000, 0, &opt, &fence),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_release_opt(NULL, &opt), RESPLOCK_STATUS_invalid_argument);

    /* Fencing: each grant gets a larger number; a busy attempt takes none. */
    CHECK_STATUS(resplock_lock_init(&a, &conn_a, "c:opt:fence", 11), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&b, &conn_b, "c:opt:fence", 11), RESPLOCK_STATUS_ok);
    opt.fence = 1;
    CHECK_STATUS(resplock_lock_acquire_opt(&a, 5000, &opt, NULL), RESPLOCK_STATUS_invalid_argument);
    for (i = 0; i < 5; ++i) {
        resplock_lock_t* holder = i % 2 ? &b : &a;
        resplock_lock_t* other = i % 2 ? &a : &b;
        CHECK_STATUS(resplock_lock_acquire_opt(holder, 5000, &opt, &fence), RESPLOCK_STATUS_ok);
        CHECK(fence > previous);
        previous = fence;
        CHECK_STATUS(resplock_lock_acquire_opt(other, 5000, &opt, &untouched),
                     RESPLOCK_STATUS_busy);
        CHECK(untouched == 77);
        CHECK_STATUS(resplock_lock_release_opt(holder, &opt), RESPLOCK_STATUS_ok);
    }
    /* Numbers are the server's clock in microseconds (or past it): all 64 bits pass through. */
    CHECK(previous > UINT64_C(1000000000000000));

    /* Once per 600 ms: busy after an early release until the interval has passed. */
    CHECK_STATUS(resplock_lock_init(&a, &conn_a, "c:opt:once", 10), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&b, &conn_b, "c:opt:once", 10), RESPLOCK_STATUS_ok);
    resplock_acquire_options_init(&opt);
    opt.once_per_ms = 600;
    start = port_a.now_ms(port_a.ctx);
    CHECK_STATUS(resplock_lock_acquire_opt(&a, 5000, &opt, NULL), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_release_opt(&a, &opt), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_acquire_opt(&b, 5000, &opt, NULL), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_lock_try_acquire_opt(&b, 5000, 100, &opt, NULL), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_lock_try_acquire_opt(&b, 5000, 2000, &opt, NULL), RESPLOCK_STATUS_ok);
    waited = port_a.now_ms(port_a.ctx) - start;
    CHECK(waited >= 550 && waited < 1300);
    CHECK_STATUS(resplock_lock_release_opt(&b, NULL), RESPLOCK_STATUS_ok);

    /* Wake: a waiter follows a holder that never releases at its TTL; a release with wake. */
    CHECK_STATUS(resplock_lock_init(&a, &conn_a, "c:opt:wake", 10), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&b, &conn_b, "c:opt:wake", 10), RESPLOCK_STATUS_ok);
    resplock_acquire_options_init(&opt);
    opt.wake = 1;
    CHECK_STATUS(resplock_lock_acquire_opt(&a, 400, &opt, NULL), RESPLOCK_STATUS_ok);
    start = port_a.now_ms(port_a.ctx);
    CHECK_STATUS(resplock_lock_try_acquire_opt(&b, 5000, 2000, &opt, NULL), RESPLOCK_STATUS_ok);
    waited = port_a.now_ms(port_a.ctx) - start;
    CHECK(waited >= 300 && waited < 900);
    CHECK_STATUS(resplock_lock_release_opt(&a, &opt), RESPLOCK_STATUS_not_owner); /* b holds it */
    CHECK_STATUS(resplock_lock_release_opt(&b, &opt), RESPLOCK_STATUS_ok);
    CHECK(resplock_lock_remaining_ms(&b) == 0);
    CHECK_STATUS(resplock_lock_release_opt(&b, &opt), RESPLOCK_STATUS_invalid_argument);

    /* Replicas: this server has none, so a lock that asks for one is released again. */
    CHECK_STATUS(resplock_lock_set_replicas(NULL, 1), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_set_replicas(&a, RESPLOCK_MAX_REPLICAS + 1),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK(resplock_lock_replicas_acknowledged(NULL) == 0);
    CHECK_STATUS(resplock_lock_init(&a, &conn_a, "c:opt:replicas", 14), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_set_replicas(&a, 1), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_acquire(&a, 5000), RESPLOCK_STATUS_not_replicated);
    CHECK(resplock_lock_replicas_acknowledged(&a) == 0);
    CHECK(resplock_lock_remaining_ms(&a) == 0);
    CHECK_STATUS(resplock_lock_set_replicas(&a, 0), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_acquire(&a, 5000), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_release(&a), RESPLOCK_STATUS_ok);

    resplock_conn_deinit(&conn_a);
    resplock_conn_deinit(&conn_b);
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
