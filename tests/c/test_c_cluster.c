/* The Cluster router's C API from a C program, against a Redis Cluster (three masters with a
 * replica each) whose first node's port is in REDIS_PORT (started by `with_redis --cluster`):
 * locks on keys of every node through that one node, and a redirect event for each key another
 * node serves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/cluster.h"
#include "resplock/c_api/lock.h"
#include "resplock/c_api/observer.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

static char buf[C_BUF(640)];
static resplock_conn_t conn;
static resplock_cluster_t cluster;
static resplock_observer_t observer;
static unsigned redirects;

static void on_event(void* user, const resplock_event_t* e) {
    (void)user;
    if (e->kind == RESPLOCK_EVENT_redirect) {
        ++redirects;
        CHECK(e->number < 16384);
        CHECK(e->key != NULL && e->key_len > 6 && memcmp(e->key, "MOVED ", 6) == 0);
    }
}

int main(void) {
    const char* port_text = getenv("REDIS_PORT");
    resplock_posix_t ctx;
    resplock_port_t port;
    resplock_conn_config_t cfg;
    int i;

    if (port_text == NULL || getenv("REDIS_CLUSTER_PORTS") == NULL) {
        printf("REDIS_PORT / REDIS_CLUSTER_PORTS are not set: run under with_redis --cluster\n");
        return 2;
    }
    CHECK_STATUS(resplock_posix_port_init(&ctx, NULL, &port), RESPLOCK_STATUS_ok);
    resplock_conn_config_init(&cfg);
    cfg.port = (uint16_t)atoi(port_text);
    cfg.timeout_ms = 2000;
    CHECK_STATUS(resplock_cluster_init(NULL, &cfg), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_cluster_init(&cluster, NULL), RESPLOCK_STATUS_invalid_argument);
    CHECK(cfg.router == NULL);
    CHECK_STATUS(resplock_cluster_init(&cluster, &cfg), RESPLOCK_STATUS_ok);
    CHECK(cfg.router != NULL);
    CHECK_STATUS(resplock_observer_init(&observer, on_event, NULL), RESPLOCK_STATUS_ok);
    cfg.observer = &observer;
    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);

    /* Twelve keys: their slots spread over the three nodes; each key is locked, extended and
     * released through one connection (first to node 0, then to the node last redirected to),
     * whichever node serves it. */
    for (i = 0; i < 12; ++i) {
        char key[32];
        resplock_lock_t lock;
        const int n = snprintf(key, sizeof key, "c:cluster:%d", i);
        CHECK_STATUS(resplock_lock_init(&lock, &conn, key, (size_t)n), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_acquire(&lock, 5000), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_extend(&lock, 5000), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_release(&lock), RESPLOCK_STATUS_ok);
    }
    /* The keys of other nodes were redirected: at most once per key (the acquire's), as the
     * extend and release follow to the node remembered. */
    CHECK(redirects > 0 && redirects <= 12);

    resplock_conn_deinit(&conn);
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
