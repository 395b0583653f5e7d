/* The renewal driver's C API against a real redis-server (port in REDIS_PORT, set by the
 * with_redis runner): a 300 ms lock kept for 1.2 s by ticks from a plain loop, then a lock whose
 * key is deleted by another holder of its token, reported lost through the C callback. */
#define _DEFAULT_SOURCE /* usleep */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/observer.h"
#include "resplock/c_api/renewer.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

struct lost {
    int calls;
    resplock_lock_t* lock;
    resplock_status_t why;
};

/* The observer's events: counts of renewals and losses, the status of the last loss. */
struct seen {
    int renewals;
    int losses;
    resplock_status_t loss_status;
};

static void on_event(void* user, const resplock_event_t* e) {
    struct seen* s = (struct seen*)user;
    if (e->kind == RESPLOCK_EVENT_renewal) ++s->renewals;
    if (e->kind == RESPLOCK_EVENT_loss) {
        ++s->losses;
        s->loss_status = e->status;
        CHECK(e->key_len == 9 && memcmp(e->key, "c:renewer", 9) == 0);
    }
}

static void on_lost(void* user, resplock_lock_t* lock, resplock_status_t why) {
    struct lost* l = (struct lost*)user;
    ++l->calls;
    l->lock = lock;
    l->why = why;
}

/* Ticks the way a firmware main loop would, for `ms` or until the lock is reported lost. */
static void drive(resplock_renewer_t* r, const resplock_port_t* port, uint32_t ms,
                  const struct lost* lost) {
    const uint32_t start = port->now_ms(port->ctx);
    while (port->now_ms(port->ctx) - start < ms && lost->calls == 0) {
        uint32_t next = resplock_renewer_tick(r, port->now_ms(port->ctx));
        if (next > 10) next = 10;
        usleep((useconds_t)next * 1000U);
    }
}

int main(void) {
    static char buf[C_BUF(512)], buf2[C_BUF(512)];
    static resplock_conn_t conn, conn2;
    static resplock_lock_t lock, other;
    static resplock_renewer_t renewer;
    static resplock_observer_t observer;
    struct seen seen = {0, 0, RESPLOCK_STATUS_ok};
    resplock_posix_t ctx, ctx2;
    resplock_port_t port;
    CHECK_STATUS(resplock_posix_port_init(&ctx, NULL, &port), RESPLOCK_STATUS_ok);
    resplock_port_t port2;
    CHECK_STATUS(resplock_posix_port_init(&ctx2, NULL, &port2), RESPLOCK_STATUS_ok);
    resplock_conn_config_t cfg;
    resplock_lock_info_t info;
    struct lost lost = {0, NULL, RESPLOCK_STATUS_ok};
    const char* token;
    size_t token_len = 0;
    char saved[64];
    const char* port_text = getenv("REDIS_PORT");

    if (port_text == NULL) {
        printf("REDIS_PORT is not set: run under with_redis\n");
        return 2;
    }
    resplock_conn_config_init(&cfg);
    cfg.port = (uint16_t)atoi(port_text);
    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn2, &port2, &cfg, buf2, sizeof buf2), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&lock, &conn, "c:renewer", 9), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&other, &conn2, "c:renewer", 9), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_renewer_init(&renewer), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_renewer_init(NULL), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_observer_init(&observer, on_event, &seen), RESPLOCK_STATUS_ok);
    resplock_renewer_set_observer(&renewer, &observer);

    /* Kept alive for 1.2 s, four times its TTL. */
    CHECK_STATUS(resplock_renewer_watch_lock(&renewer, &lock, 300, on_lost, &lost, 0),
                 RESPLOCK_STATUS_invalid_argument); /* not held yet */
    CHECK_STATUS(resplock_lock_acquire(&lock, 300), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_renewer_watch_lock(&renewer, &lock, 300, on_lost, &lost, 0),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_renewer_watch_lock(&renewer, &lock, 300, on_lost, &lost, 0),
                 RESPLOCK_STATUS_invalid_argument); /* already watched */
    CHECK(resplock_renewer_watching(&renewer) == 1);
    drive(&renewer, &port, 1200, &lost);
    CHECK(lost.calls == 0);
    CHECK(seen.renewals >= 3 && seen.losses == 0); /* one every 100 ms, at least */
    CHECK(resplock_lock_remaining_ms(&lock) > 0);
    CHECK_STATUS(resplock_lock_query(&lock, &info), RESPLOCK_STATUS_ok);
    CHECK(info.state == RESPLOCK_LOCK_HELD_BY_ME); /* the key still holds our token */
    CHECK(info.ttl_ms > 0);
    resplock_renewer_unwatch_lock(&renewer, &lock);
    CHECK(resplock_renewer_watching(&renewer) == 0);
    CHECK_STATUS(resplock_lock_release(&lock), RESPLOCK_STATUS_ok);

    /* Another holder of the token deletes the key: the next renewal reports the loss. */
    CHECK_STATUS(resplock_lock_acquire(&lock, 300), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_renewer_watch_lock(&renewer, &lock, 300, on_lost, &lost, 0),
                 RESPLOCK_STATUS_ok);
    token = resplock_lock_token(&lock, &token_len);
    CHECK(token != NULL && token_len < sizeof saved);
    if (token != NULL && token_len < sizeof saved) {
        memcpy(saved, token, token_len);
        CHECK_STATUS(resplock_lock_adopt(&other, saved, token_len), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_release(&other), RESPLOCK_STATUS_ok);
    }
    drive(&renewer, &port, 1000, &lost);
    CHECK(lost.calls == 1);
    CHECK(lost.lock == &lock);
    CHECK(lost.why == RESPLOCK_STATUS_expired);
    CHECK(seen.losses == 1 && seen.loss_status == RESPLOCK_STATUS_expired);
    CHECK(resplock_renewer_watching(&renewer) == 0);
    CHECK(resplock_lock_remaining_ms(&lock) == 0);

    resplock_conn_deinit(&conn);
    resplock_conn_deinit(&conn2);
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
