/* The counting semaphore's C API from a C program, against a real redis-server whose port is in
 * REDIS_PORT (started by the with_redis runner): three holders of a limit of 2 (two granted, the
 * third busy), increasing fencing numbers, owner labels and time left as holders() shows them,
 * query's counts, the fair mode's queue handing the place to its waiter, release and extend
 * after the lease ended, adopt, NULL arguments and a buffer too small. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/semaphore.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

static char buf_a[C_BUF(8192)], buf_b[C_BUF(8192)], buf_c[C_BUF(8192)], buf_small[C_BUF(2048)];
static resplock_conn_t conn_a, conn_b, conn_c, conn_small;
static resplock_sem_t s1, s2, s3, fa, fb, bad, small;

/* What holders() visited. */
#define MAX_SEEN 4
struct seen {
    int calls;
    char owner[MAX_SEEN][RESPLOCK_MAX_OWNER_LEN + 1];
    size_t owner_len[MAX_SEEN];
    uint32_t ms[MAX_SEEN];
    int unterminated; /* visits whose owner had no NUL at owner[owner_len] */
};

static void collect(void* ctx, const char* owner, size_t owner_len, uint32_t remaining_ms) {
    struct seen* s = (struct seen*)ctx;
    if (owner[owner_len] != '\0') ++s->unterminated;
    if (s->calls < MAX_SEEN && owner_len <= RESPLOCK_MAX_OWNER_LEN) {
        memcpy(s->owner[s->calls], owner, owner_len);
        s->owner[s->calls][owner_len] = '\0';
        s->owner_len[s->calls] = owner_len;
        s->ms[s->calls] = remaining_ms;
    }
    ++s->calls;
}

/* Whether the semaphore's token starts with "label:". */
static int token_labelled(const resplock_sem_t* sem, const char* label) {
    size_t len = 0;
    const char* t = resplock_sem_token(sem, &len);
    const size_t n = strlen(label);
    return t != NULL && len > n && memcmp(t, label, n) == 0 && t[n] == ':';
}

static void never_called(void* ctx, const char* owner, size_t owner_len, uint32_t remaining_ms) {
    (void)owner;
    (void)owner_len;
    (void)remaining_ms;
    ++*(int*)ctx;
}

/* NULL arguments, refused keys and limits, labels, and calls on a semaphore whose init failed. */
static void arguments(void) {
    static char long_key[RESPLOCK_MAX_KEY_LEN + 1];
    static char long_label[RESPLOCK_MAX_OWNER_LEN + 1];
    resplock_sem_info_t info;
    uint64_t fence = 7;
    size_t len = 99;
    int calls = 0;

    memset(long_key, 'k', sizeof long_key);
    memset(long_label, 'a', sizeof long_label);
    CHECK_STATUS(resplock_sem_init(NULL, &conn_a, "k", 1, 2, 0), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_init(&bad, NULL, "k", 1, 2, 0), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_init(&bad, &conn_a, NULL, 1, 2, 0), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_init(&bad, &conn_a, "k", 0, 2, 0), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_init(&bad, &conn_a, long_key, sizeof long_key, 2, 0),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_init(&bad, &conn_a, "k", 1, RESPLOCK_SEM_MAX_LIMIT + 1, 1),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_init(&bad, &conn_a, "k", 1, 0, 0), RESPLOCK_STATUS_invalid_argument);
    /* The last init failed: every call on it refuses, unsent. */
    CHECK_STATUS(resplock_sem_acquire(&bad, 1000, &fence), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_try_acquire(&bad, 1000, 100, &fence),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_query(&bad, &info), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_holders(&bad, never_called, &calls),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_adopt(&bad, "t", 1), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_release(&bad), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_extend(&bad, 1000), RESPLOCK_STATUS_invalid_argument);
    CHECK(fence == 7 && calls == 0);
    /* The largest limit and the longest key are accepted. */
    CHECK_STATUS(resplock_sem_init(&bad, &conn_a, "k", 1, RESPLOCK_SEM_MAX_LIMIT, 0),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_init(&bad, &conn_a, long_key, RESPLOCK_MAX_KEY_LEN, 1, 1),
                 RESPLOCK_STATUS_ok);

    /* NULL handles and pointers. */
    CHECK_STATUS(resplock_sem_set_owner(NULL, "a", 1), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_acquire(NULL, 1000, &fence), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_try_acquire(NULL, 1000, 100, NULL), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_release(NULL), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_extend(NULL, 1000), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_query(NULL, &info), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_query(&s1, NULL), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_holders(NULL, never_called, &calls),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_holders(&s1, NULL, &calls), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_adopt(NULL, "t", 1), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_adopt(&s1, NULL, 1), RESPLOCK_STATUS_invalid_argument);
    CHECK(resplock_sem_remaining_ms(NULL) == 0);
    CHECK(resplock_sem_token(NULL, &len) == NULL && len == 0);
    CHECK(resplock_sem_token(NULL, NULL) == NULL);

    /* Bad values on a good semaphore: nothing is sent, no token is kept. */
    CHECK_STATUS(resplock_sem_acquire(&s1, 0, &fence), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_acquire(&s1, RESPLOCK_MAX_TTL_MS + 1, &fence),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_try_acquire(&s1, 1000, RESPLOCK_MAX_TTL_MS + 1, &fence),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_release(&s1), RESPLOCK_STATUS_invalid_argument); /* no token */
    CHECK_STATUS(resplock_sem_extend(&s1, 1000), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_adopt(&s1, "t", 0), RESPLOCK_STATUS_invalid_argument);
    CHECK(fence == 7 && resplock_sem_token(&s1, &len) == NULL && len == 0);

    /* Owner labels: A-Z a-z 0-9 . _ -, up to RESPLOCK_MAX_OWNER_LEN bytes; none is fine. */
    CHECK_STATUS(resplock_sem_set_owner(&s1, NULL, 1), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_set_owner(&s1, "dev a", 5), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_set_owner(&s1, "dev:a", 5), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_set_owner(&s1, long_label, sizeof long_label),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_set_owner(&s1, long_label, RESPLOCK_MAX_OWNER_LEN),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_set_owner(&s1, NULL, 0), RESPLOCK_STATUS_ok);
}

/* Limit 2, three holders on three connections, each with an owner label. */
static void limit_two(const resplock_port_t* port) {
    struct seen seen;
    resplock_sem_info_t info;
    uint64_t f1 = 0, f2 = 0, f3 = 7;
    uint32_t start;

    CHECK_STATUS(resplock_sem_init(&s2, &conn_b, "c:sem", 5, 2, 0), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_init(&s3, &conn_c, "c:sem", 5, 2, 0), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_set_owner(&s1, "dev-a", 5), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_set_owner(&s2, "dev-b", 5), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_set_owner(&s3, "dev-c", 5), RESPLOCK_STATUS_ok);

    CHECK_STATUS(resplock_sem_acquire(&s1, 3000, &f1), RESPLOCK_STATUS_ok);
    CHECK(token_labelled(&s1, "dev-a"));
    CHECK(resplock_sem_remaining_ms(&s1) > 2500 && resplock_sem_remaining_ms(&s1) <= 3000);
    /* Held: another acquire on this handle is refused unsent. */
    CHECK_STATUS(resplock_sem_acquire(&s1, 3000, NULL), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_acquire(&s2, 6000, &f2), RESPLOCK_STATUS_ok);
    CHECK(f1 > 0 && f2 > f1);
    /* The third is busy: no fencing number, no token kept. */
    CHECK_STATUS(resplock_sem_acquire(&s3, 6000, &f3), RESPLOCK_STATUS_busy);
    CHECK(f3 == 7 && resplock_sem_token(&s3, NULL) == NULL);
    CHECK(resplock_sem_remaining_ms(&s3) == 0);
    start = port->now_ms(port->ctx);
    CHECK_STATUS(resplock_sem_try_acquire(&s3, 6000, 200, &f3), RESPLOCK_STATUS_busy);
    CHECK(port->now_ms(port->ctx) - start >= 150);
    CHECK(f3 == 7);

    /* Who holds places: the labels, never the tokens, the first to end first. */
    memset(&seen, 0, sizeof seen);
    CHECK_STATUS(resplock_sem_holders(&s3, collect, &seen), RESPLOCK_STATUS_ok);
    CHECK(seen.calls == 2 && seen.unterminated == 0);
    CHECK(strcmp(seen.owner[0], "dev-a") == 0 && seen.owner_len[0] == 5);
    CHECK(strcmp(seen.owner[1], "dev-b") == 0 && seen.owner_len[1] == 5);
    CHECK(seen.ms[0] > 2000 && seen.ms[0] <= 3000);
    CHECK(seen.ms[1] > 5000 && seen.ms[1] <= 6000);

    /* Counts: two leases, not the asker's; then the holder's own. */
    memset(&info, 0x5a, sizeof info);
    CHECK_STATUS(resplock_sem_query(&s3, &info), RESPLOCK_STATUS_ok);
    CHECK(info.count == 2 && info.mine == 0 && info.ttl_ms == -2 && info.waiters == 0);
    CHECK_STATUS(resplock_sem_query(&s1, &info), RESPLOCK_STATUS_ok);
    CHECK(info.count == 2 && info.mine == 1 && info.ttl_ms > 2000 && info.ttl_ms <= 3000);

    /* An extend moves dev-a's lease past dev-b's. */
    CHECK_STATUS(resplock_sem_extend(&s1, 9000), RESPLOCK_STATUS_ok);
    CHECK(resplock_sem_remaining_ms(&s1) > 8500 && resplock_sem_remaining_ms(&s1) <= 9000);
    memset(&seen, 0, sizeof seen);
    CHECK_STATUS(resplock_sem_holders(&s1, collect, &seen), RESPLOCK_STATUS_ok);
    CHECK(seen.calls == 2 && strcmp(seen.owner[0], "dev-b") == 0 &&
          strcmp(seen.owner[1], "dev-a") == 0 && seen.ms[1] > 8000 && seen.ms[1] <= 9000);

    /* A release frees a place for the third, whose number is larger still. */
    CHECK_STATUS(resplock_sem_release(&s1), RESPLOCK_STATUS_ok);
    CHECK(resplock_sem_remaining_ms(&s1) == 0 && resplock_sem_token(&s1, NULL) == NULL);
    CHECK_STATUS(resplock_sem_release(&s1), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_sem_acquire(&s3, 6000, &f3), RESPLOCK_STATUS_ok);
    CHECK(f3 > f2);
    CHECK(token_labelled(&s3, "dev-c"));
    CHECK_STATUS(resplock_sem_release(&s2), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_release(&s3), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_query(&s1, &info), RESPLOCK_STATUS_ok);
    CHECK(info.count == 0 && info.mine == 0 && info.ttl_ms == -2);
    memset(&seen, 0, sizeof seen);
    CHECK_STATUS(resplock_sem_holders(&s1, collect, &seen), RESPLOCK_STATUS_ok);
    CHECK(seen.calls == 0);
}

/* Release and extend once the lease has ended, and a token taken over with adopt. */
static void ended_and_adopted(const resplock_port_t* port) {
    char saved[RESPLOCK_MAX_TOKEN_LEN];
    const char* token;
    size_t len = 0;
    uint64_t fence = 0;

    CHECK_STATUS(resplock_sem_acquire(&s1, 100, &fence), RESPLOCK_STATUS_ok);
    port->sleep_ms(port->ctx, 250);
    CHECK(resplock_sem_remaining_ms(&s1) == 0);
    /* Validity ran out locally: the extend is refused unsent, the token kept for a release. */
    CHECK_STATUS(resplock_sem_extend(&s1, 1000), RESPLOCK_STATUS_expired);
    CHECK(resplock_sem_token(&s1, NULL) != NULL);
    /* The server's answer: the lease is gone. The token is forgotten. */
    CHECK_STATUS(resplock_sem_release(&s1), RESPLOCK_STATUS_expired);
    CHECK(resplock_sem_token(&s1, NULL) == NULL);
    CHECK_STATUS(resplock_sem_release(&s1), RESPLOCK_STATUS_invalid_argument);

    /* Another handle takes over a live lease: extends and releases it. */
    CHECK_STATUS(resplock_sem_acquire(&s1, 5000, &fence), RESPLOCK_STATUS_ok);
    token = resplock_sem_token(&s1, &len);
    CHECK(token != NULL && len > 0 && len <= sizeof saved);
    if (token == NULL || len > sizeof saved) return;
    memcpy(saved, token, len);
    CHECK_STATUS(resplock_sem_adopt(&s2, saved, len), RESPLOCK_STATUS_ok);
    CHECK(resplock_sem_remaining_ms(&s2) == 0); /* no validity until an extend succeeds */
    CHECK_STATUS(resplock_sem_extend(&s2, 4000), RESPLOCK_STATUS_ok);
    CHECK(resplock_sem_remaining_ms(&s2) > 3500);
    CHECK_STATUS(resplock_sem_release(&s2), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_release(&s1), RESPLOCK_STATUS_expired);
    /* A token that holds nothing: the server says so. */
    CHECK_STATUS(resplock_sem_adopt(&s2, "dev-b:0123", 10), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_extend(&s2, 1000), RESPLOCK_STATUS_expired);
}

/* The fair mode, limit 1: the queued waiter is handed the place when the holder's lease ends. */
static void fair(const resplock_port_t* port) {
    resplock_sem_info_t info;
    uint64_t f1 = 0, f2 = 0;
    uint32_t start, waited;

    CHECK_STATUS(resplock_sem_init(&fa, &conn_a, "c:fair-sem", 10, 1, 1), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_init(&fb, &conn_b, "c:fair-sem", 10, 1, 1), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_acquire(&fa, 400, &f1), RESPLOCK_STATUS_ok);
    /* One attempt without a wait does not queue. */
    CHECK_STATUS(resplock_sem_acquire(&fb, 5000, &f2), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_sem_query(&fb, &info), RESPLOCK_STATUS_ok);
    CHECK(info.count == 1 && info.waiters == 0);
    /* fb queues; fa's lease ends on the server's clock and the place goes to the queue's head. */
    start = port->now_ms(port->ctx);
    CHECK_STATUS(resplock_sem_try_acquire(&fb, 5000, 3000, &f2), RESPLOCK_STATUS_ok);
    waited = port->now_ms(port->ctx) - start;
    CHECK(waited >= 250 && waited < 3000);
    CHECK(f2 > f1);
    CHECK(resplock_sem_remaining_ms(&fb) > 4000);
    CHECK_STATUS(resplock_sem_release(&fa), RESPLOCK_STATUS_expired);
    CHECK_STATUS(resplock_sem_query(&fa, &info), RESPLOCK_STATUS_ok);
    CHECK(info.count == 1 && info.mine == 0 && info.waiters == 0);
    /* fa waits in turn, runs out of time and leaves the queue. */
    CHECK_STATUS(resplock_sem_try_acquire(&fa, 5000, 300, &f1), RESPLOCK_STATUS_busy);
    CHECK(resplock_sem_token(&fa, NULL) == NULL);
    CHECK_STATUS(resplock_sem_query(&fa, &info), RESPLOCK_STATUS_ok);
    CHECK(info.count == 1 && info.waiters == 0);
    CHECK_STATUS(resplock_sem_release(&fb), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_acquire(&fa, 5000, &f1), RESPLOCK_STATUS_ok);
    CHECK(f1 > f2);
    CHECK_STATUS(resplock_sem_release(&fa), RESPLOCK_STATUS_ok);
}

int main(void) {
    const char* port_text = getenv("REDIS_PORT");
    resplock_posix_t ctx_a, ctx_b, ctx_c, ctx_small;
    resplock_port_t port_a, port_b, port_c, port_small;
    resplock_conn_config_t cfg;
    uint64_t fence = 7;

    CHECK_STATUS(resplock_posix_port_init(&ctx_a, NULL, &port_a), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_posix_port_init(&ctx_b, NULL, &port_b), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_posix_port_init(&ctx_c, NULL, &port_c), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_posix_port_init(&ctx_small, NULL, &port_small), RESPLOCK_STATUS_ok);
    if (port_text == NULL) {
        printf("REDIS_PORT is not set: run under with_redis\n");
        return 2;
    }
    CHECK(resplock_sem_buffer_min() <= sizeof buf_a);
    CHECK(resplock_sem_buffer_min() > resplock_lock_buffer_min());
    resplock_conn_config_init(&cfg);
    cfg.port = (uint16_t)atoi(port_text);
    cfg.timeout_ms = 1000;
    CHECK_STATUS(resplock_conn_init(&conn_a, &port_a, &cfg, buf_a, sizeof buf_a),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn_b, &port_b, &cfg, buf_b, sizeof buf_b),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn_c, &port_c, &cfg, buf_c, sizeof buf_c),
                 RESPLOCK_STATUS_ok);
    /* A buffer that fits a plain lock's requests but none of the semaphore's. */
    CHECK(resplock_lock_buffer_min() <= sizeof buf_small);
    CHECK_STATUS(
        resplock_conn_init(&conn_small, &port_small, &cfg, buf_small, resplock_lock_buffer_min()),
        RESPLOCK_STATUS_ok);

    CHECK_STATUS(resplock_sem_init(&s1, &conn_a, "c:sem", 5, 2, 0), RESPLOCK_STATUS_ok);
    arguments();

    /* Too large for the buffer: refused unsent, no token kept. */
    CHECK_STATUS(resplock_sem_init(&small, &conn_small, "c:sem", 5, 2, 0), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_acquire(&small, 1000, &fence), RESPLOCK_STATUS_too_large);
    CHECK(fence == 7 && resplock_sem_token(&small, NULL) == NULL);
    CHECK_STATUS(resplock_sem_try_acquire(&small, 1000, 100, &fence), RESPLOCK_STATUS_too_large);
    CHECK_STATUS(resplock_sem_adopt(&small, "t", 1), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_sem_release(&small), RESPLOCK_STATUS_too_large);

    limit_two(&port_c);
    ended_and_adopted(&port_a);
    fair(&port_b);

    resplock_conn_deinit(&conn_a);
    resplock_conn_deinit(&conn_b);
    resplock_conn_deinit(&conn_c);
    resplock_conn_deinit(&conn_small);
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
