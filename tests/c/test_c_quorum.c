/* The quorum lock's C API from a C99 program, against the real redis-server whose port the
 * with_redis runner puts in REDIS_PORT: a quorum of one server, checked against a plain lock on
 * the same key over a second connection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/quorum.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

int main(void) {
    static char buf_q[C_BUF(512)], buf_p[C_BUF(512)];
    static resplock_conn_t conn_q, conn_p;
    static resplock_quorum_t quorum, bad;
    static resplock_lock_t plain;
    resplock_posix_t ctx_q, ctx_p;
    resplock_port_t port_q;
    CHECK_STATUS(resplock_posix_port_init(&ctx_q, NULL, &port_q), RESPLOCK_STATUS_ok);
    resplock_port_t port_p;
    CHECK_STATUS(resplock_posix_port_init(&ctx_p, NULL, &port_p), RESPLOCK_STATUS_ok);
    resplock_conn_config_t cfg;
    resplock_conn_t* servers[1];
    resplock_conn_t* repeated[2];
    resplock_conn_t* with_null[2];
    const char* port_text = getenv("REDIS_PORT");
    const char* token;
    size_t len = 99;

    if (port_text == NULL) {
        printf("REDIS_PORT is not set: run under with_redis\n");
        return 2;
    }
    resplock_conn_config_init(&cfg);
    cfg.port = (uint16_t)atoi(port_text);
    cfg.timeout_ms = 1000;
    CHECK_STATUS(resplock_conn_init(&conn_q, &port_q, &cfg, buf_q, sizeof buf_q),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn_p, &port_p, &cfg, buf_p, sizeof buf_p),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&plain, &conn_p, "c:quorum", 8), RESPLOCK_STATUS_ok);

    /* Invalid set-ups: every later call reports invalid_argument. */
    servers[0] = &conn_q;
    repeated[0] = repeated[1] = &conn_q;
    with_null[0] = &conn_q;
    with_null[1] = NULL;
    CHECK_STATUS(resplock_quorum_init(NULL, servers, 1, "c:quorum", 8),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_init(&bad, servers, 0, "c:quorum", 8),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_init(&bad, servers, RESPLOCK_MAX_SERVERS + 1, "c:quorum", 8),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_init(&bad, repeated, 2, "c:quorum", 8),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_init(&bad, with_null, 2, "c:quorum", 8),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_init(&bad, NULL, 1, "c:quorum", 8),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_init(&bad, servers, 1, NULL, 8), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_init(&bad, servers, 1, "c:quorum", 0),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_acquire(&bad, 1000), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_try_acquire(&bad, 1000, 10), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_extend(&bad, 1000), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_release(&bad), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_acquire(NULL, 1000), RESPLOCK_STATUS_invalid_argument);
    CHECK(resplock_quorum_remaining_ms(&bad) == 0);
    CHECK(resplock_quorum_remaining_ms(NULL) == 0);

    /* A quorum of one: held, seen by the plain lock as someone else's. */
    CHECK_STATUS(resplock_quorum_init(&quorum, servers, 1, "c:quorum", 8), RESPLOCK_STATUS_ok);
    CHECK(resplock_quorum_token(&quorum, &len) == NULL && len == 0);
    CHECK_STATUS(resplock_quorum_acquire(&quorum, 0), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_release(&quorum), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_quorum_acquire(&quorum, 3000), RESPLOCK_STATUS_ok);
    CHECK(resplock_quorum_remaining_ms(&quorum) > 2900 &&
          resplock_quorum_remaining_ms(&quorum) <= 2968);
    token = resplock_quorum_token(&quorum, &len);
    CHECK(token != NULL && len == 2 * RESPLOCK_TOKEN_BYTES);
    CHECK_STATUS(resplock_lock_try_acquire(&plain, 3000, 100), RESPLOCK_STATUS_busy);
    {
        resplock_lock_info_t info;
        CHECK_STATUS(resplock_lock_query(&plain, &info), RESPLOCK_STATUS_ok);
        CHECK(info.state == RESPLOCK_LOCK_HELD_BY_OTHER && info.ttl_ms > 2500);
    }
    CHECK_STATUS(resplock_quorum_extend(&quorum, 9000), RESPLOCK_STATUS_ok);
    CHECK(resplock_quorum_remaining_ms(&quorum) > 8000);
    {
        resplock_lock_info_t info;
        CHECK_STATUS(resplock_lock_query(&plain, &info), RESPLOCK_STATUS_ok);
        CHECK(info.ttl_ms > 8000);
    }
    CHECK_STATUS(resplock_quorum_release(&quorum), RESPLOCK_STATUS_ok);
    CHECK(resplock_quorum_remaining_ms(&quorum) == 0);
    CHECK(resplock_quorum_token(&quorum, &len) == NULL && len == 0);

    /* The other way round: the quorum waits for the plain lock and times out. */
    CHECK_STATUS(resplock_lock_acquire(&plain, 3000), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_quorum_try_acquire(&quorum, 3000, 150), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_lock_release(&plain), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_quorum_try_acquire(&quorum, 3000, 150), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_quorum_release(&quorum), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_quorum_release(&quorum), RESPLOCK_STATUS_invalid_argument);

    /* An owner label: the same token on every server (here one), LABEL:hex. */
    {
        resplock_acquire_options_t opt;
        resplock_acquire_options_init(&opt);
        opt.owner = "door-17";
        CHECK_STATUS(resplock_quorum_try_acquire_opt(&quorum, 3000, 0, &opt), RESPLOCK_STATUS_ok);
        len = 0;
        {
            const char* t = resplock_quorum_token(&quorum, &len);
            CHECK(t != NULL && len == 8 + 32 && memcmp(t, "door-17:", 8) == 0);
        }
        CHECK_STATUS(resplock_quorum_release(&quorum), RESPLOCK_STATUS_ok);
        opt.fence = 1; /* needs one server: refused */
        CHECK_STATUS(resplock_quorum_try_acquire_opt(&quorum, 3000, 0, &opt),
                     RESPLOCK_STATUS_invalid_argument);
        CHECK_STATUS(resplock_quorum_try_acquire_opt(NULL, 3000, 0, NULL),
                     RESPLOCK_STATUS_invalid_argument);
    }

    resplock_conn_deinit(&conn_q);
    resplock_conn_deinit(&conn_p);
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
