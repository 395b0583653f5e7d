/* The Sentinel router's C API from a C program, against a master, two replicas and three
 * sentinels started by `with_redis --sentinel` (REDIS_SENTINEL_PORTS, REDIS_SENTINEL_MASTER). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/sentinel.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

static char buf[C_BUF(1024)];
static resplock_conn_t conn;
static resplock_lock_t lock;
static resplock_sentinel_t sentinel;
static resplock_sentinel_t unknown;

int main(void) {
    const char* port_text = getenv("REDIS_SENTINEL_PORTS");
    const char* name = getenv("REDIS_SENTINEL_MASTER");
    resplock_posix_t ctx;
    resplock_port_t port;
    resplock_conn_config_t cfg;
    resplock_sentinel_addr_t addrs[RESPLOCK_MAX_SENTINELS];
    size_t n_addrs = 1;
    char* end;
    char long_host[RESPLOCK_MAX_HOST_LEN + 2];

    if (port_text == NULL || name == NULL) {
        printf("REDIS_SENTINEL_PORTS is not set: run under with_redis --sentinel\n");
        return 2;
    }
    CHECK_STATUS(resplock_posix_port_init(&ctx, NULL, &port), RESPLOCK_STATUS_ok);
    resplock_conn_config_init(&cfg);
    cfg.timeout_ms = 2000;
    /* A dead sentinel first (port 1 on loopback refuses), then the live ones: a write counts only
     * when a majority of the sentinels given name the node that took it. */
    addrs[0].host = "127.0.0.1";
    addrs[0].port = 1;
    for (; n_addrs < RESPLOCK_MAX_SENTINELS; ++n_addrs) {
        const long p = strtol(port_text, &end, 10);
        if (end == port_text || p <= 0 || p > 65535) break;
        addrs[n_addrs].host = "127.0.0.1";
        addrs[n_addrs].port = (uint16_t)p;
        port_text = end;
    }
    CHECK(n_addrs >= 3);

    /* Bad arguments leave the config alone. */
    memset(long_host, 'h', sizeof long_host - 1);
    long_host[sizeof long_host - 1] = '\0';
    CHECK_STATUS(resplock_sentinel_init(NULL, name, addrs, 2, &cfg),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sentinel_init(&sentinel, NULL, addrs, 2, &cfg),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sentinel_init(&sentinel, "", addrs, 2, &cfg),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sentinel_init(&sentinel, long_host, addrs, 2, &cfg),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sentinel_init(&sentinel, name, addrs, 0, &cfg),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sentinel_init(&sentinel, name, addrs, RESPLOCK_MAX_SENTINELS + 1, &cfg),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sentinel_init(&sentinel, name, NULL, 1, &cfg),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sentinel_init(&sentinel, name, addrs, 2, NULL),
                 RESPLOCK_STATUS_invalid_argument);
    {
        resplock_sentinel_addr_t bad[1];
        bad[0].host = long_host;
        bad[0].port = 26379;
        CHECK_STATUS(resplock_sentinel_init(&sentinel, name, bad, 1, &cfg),
                     RESPLOCK_STATUS_invalid_argument);
        bad[0].host = "127.0.0.1";
        bad[0].port = 0;
        CHECK_STATUS(resplock_sentinel_init(&sentinel, name, bad, 1, &cfg),
                     RESPLOCK_STATUS_invalid_argument);
    }
    CHECK(cfg.router == NULL);

    /* Through the sentinels to the master, and a lock on it. */
    CHECK_STATUS(resplock_sentinel_init(&sentinel, name, addrs, n_addrs, &cfg), RESPLOCK_STATUS_ok);
    CHECK(cfg.router != NULL);
    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&lock, &conn, "c:sentinel", 10), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_acquire(&lock, 5000), RESPLOCK_STATUS_ok);
    CHECK(resplock_sentinel_tried(&sentinel) == 2);
    CHECK(resplock_sentinel_name_unknown(&sentinel) == 0);
    CHECK_STATUS(resplock_lock_release(&lock), RESPLOCK_STATUS_ok);
    resplock_conn_deinit(&conn);

    /* With a link of its own to each sentinel (a transport context each): the same lock, the
     * sentinels asked all at once (every one of them tried), the master's connection kept. */
    {
        static resplock_sentinel_t linked;
        static resplock_sentinel_link_t links[RESPLOCK_MAX_SENTINELS];
        resplock_posix_t link_ctx[RESPLOCK_MAX_SENTINELS];
        resplock_port_t link_ports[RESPLOCK_MAX_SENTINELS];
        size_t i;
        for (i = 0; i < n_addrs; ++i)
            CHECK_STATUS(resplock_posix_port_init(&link_ctx[i], NULL, &link_ports[i]),
                         RESPLOCK_STATUS_ok);
        CHECK_STATUS(
            resplock_sentinel_init_linked(&linked, name, addrs, links, NULL, n_addrs, &cfg),
            RESPLOCK_STATUS_invalid_argument);
        CHECK_STATUS(
            resplock_sentinel_init_linked(&linked, name, addrs, links, link_ports, n_addrs, &cfg),
            RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_init(&lock, &conn, "c:sentinel", 10), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_acquire(&lock, 5000), RESPLOCK_STATUS_ok);
        CHECK(resplock_sentinel_tried(&linked) == n_addrs);
        CHECK_STATUS(resplock_lock_extend(&lock, 5000), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_release(&lock), RESPLOCK_STATUS_ok);
        resplock_conn_deinit(&conn);
        resplock_sentinel_deinit(&linked);
        resplock_sentinel_deinit(NULL);
    }

    /* A name the sentinel does not know. */
    CHECK_STATUS(resplock_sentinel_init(&unknown, "no-such-master", addrs + 1, 1, &cfg),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&lock, &conn, "c:sentinel", 10), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_acquire(&lock, 5000), RESPLOCK_STATUS_no_host);
    CHECK(resplock_sentinel_name_unknown(&unknown) == 1);
    CHECK(resplock_sentinel_tried(&unknown) == 1);
    CHECK(resplock_sentinel_tried(NULL) == 0 && resplock_sentinel_name_unknown(NULL) == 0);
    resplock_conn_deinit(&conn);

    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
