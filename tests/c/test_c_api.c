/* The C API from a program compiled as C and linked by the C compiler: over the mock port
 * (`test_c_api mock`) and over the POSIX port against a real redis-server whose port is in
 * REDIS_PORT (`test_c_api posix`, started by the with_redis runner). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/observer.h"
#include "resplock/c_api/options.h"
#include "resplock/ports/mock.h"
#include "resplock/ports/posix.h"

#include "c_check.h"

/* RESP commands for the mock script, kept in a pool that outlives the script. */
static char pool[4096];
static size_t pool_used;

static const char* resp_cmd(size_t* len, int argc, const char* const* argv) {
    char* out = pool + pool_used;
    size_t n = (size_t)snprintf(out, sizeof pool - pool_used, "*%d\r\n", argc);
    int i;
    for (i = 0; i < argc; ++i) {
        n += (size_t)snprintf(out + n, sizeof pool - pool_used - n, "$%u\r\n%s\r\n",
                              (unsigned)strlen(argv[i]), argv[i]);
    }
    pool_used += n + 1;
    *len = n;
    return out;
}

/* The client must send argv as a command; then `reply` arrives (NULL: nothing is scripted). */
static void expect(resplock_mock_t* m, int argc, const char* const* argv, const char* reply) {
    size_t len;
    const char* bytes = resp_cmd(&len, argc, argv);
    resplock_mock_expect(m, bytes, len);
    if (reply != NULL) resplock_mock_reply(m, reply, strlen(reply));
}

#define TOKEN0 "000102030405060708090a0b0c0d0e0f"
#define TOKEN1 "101112131415161718191a1b1c1d1e1f" /* the mock's next random bytes */
#define SHA "23d13ce2ffcb74f3babaff7e5afc9c05b7a72781"

static void over_mock(void) {
    static char buf[C_BUF(512)];
    static resplock_conn_t conn;
    static resplock_lock_t lock;
    resplock_mock_t* m = resplock_mock_reset();
    resplock_port_t port;
    CHECK(resplock_mock_port_init(m, NULL, &port) == RESPLOCK_STATUS_ok);
    resplock_conn_config_t cfg;
    resplock_lock_info_t info;
    const char* token;
    size_t token_len = 99;
    static const char* const set[] = {"SET", "job", TOKEN0, "NX", "PX", "3000"};
    static const char* const set1[] = {"SET", "job", TOKEN1, "NX", "PX", "3000"};
    static const char* const extend[] = {"EVALSHA", SHA, "1", "job", TOKEN0, "6000"};
    static const char* const query[] = {"EVALSHA", SHA, "1", "job"};
    static const char* const release[] = {"EVALSHA", SHA, "1", "job", TOKEN0};

    printf("mock\n");
    resplock_conn_config_init(&cfg);
    CHECK(strcmp(cfg.host, "127.0.0.1") == 0 && cfg.port == 6379 && cfg.timeout_ms == 2000);
    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, resplock_lock_buffer_min() - 1),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&lock, &conn, "", 0), RESPLOCK_STATUS_invalid_argument);
    {
        /* The library takes the longest key this program's RESPLOCK_MAX_KEY_LEN allows, and no
         * more: both were built with the same limits (their storage sizes depend on them). */
        static char longest[RESPLOCK_MAX_KEY_LEN + 1];
        memset(longest, 'k', sizeof longest);
        CHECK_STATUS(resplock_lock_init(&lock, &conn, longest, RESPLOCK_MAX_KEY_LEN),
                     RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_init(&lock, &conn, longest, RESPLOCK_MAX_KEY_LEN + 1),
                     RESPLOCK_STATUS_invalid_argument);
    }
    CHECK_STATUS(resplock_lock_init(&lock, &conn, "job", 3), RESPLOCK_STATUS_ok);
    CHECK(resplock_lock_token(&lock, &token_len) == NULL && token_len == 0);

    resplock_mock_on_connect(m, RESPLOCK_PORT_OK);
    expect(m, 6, set, "+OK\r\n");
    CHECK_STATUS(resplock_lock_acquire(&lock, 3000), RESPLOCK_STATUS_ok);
    CHECK(resplock_lock_remaining_ms(&lock) > 2900 && resplock_lock_remaining_ms(&lock) <= 3000);
    token = resplock_lock_token(&lock, &token_len);
    CHECK(token != NULL && token_len == 32 && memcmp(token, TOKEN0, 32) == 0);

    expect(m, 6, extend, ":1\r\n");
    CHECK_STATUS(resplock_lock_extend(&lock, 6000), RESPLOCK_STATUS_ok);
    expect(m, 4, query, "*2\r\n$32\r\n" TOKEN0 "\r\n:5990\r\n");
    CHECK_STATUS(resplock_lock_query(&lock, &info), RESPLOCK_STATUS_ok);
    CHECK(info.state == RESPLOCK_LOCK_HELD_BY_ME && info.ttl_ms == 5990);
    expect(m, 5, release, ":1\r\n");
    CHECK_STATUS(resplock_lock_release(&lock), RESPLOCK_STATUS_ok);
    CHECK(resplock_lock_remaining_ms(&lock) == 0);
    CHECK_STATUS(resplock_lock_release(&lock), RESPLOCK_STATUS_invalid_argument);
    CHECK(resplock_mock_done(m));
    if (!resplock_mock_done(m)) printf("  mismatch: %s\n", resplock_mock_mismatch(m));

    /* A lost reply is never reported as held. */
    expect(m, 6, set1, NULL);
    resplock_mock_recv_timeout(m);
    CHECK_STATUS(resplock_lock_acquire(&lock, 3000), RESPLOCK_STATUS_unknown_outcome);
    CHECK(resplock_lock_remaining_ms(&lock) == 0);
    CHECK(resplock_lock_token(&lock, &token_len) != NULL && token_len == 32);
    CHECK(resplock_mock_done(m));

    /* No random source: no token, no request. */
    resplock_mock_random_fails(m, 1);
    CHECK_STATUS(resplock_lock_acquire(&lock, 3000), RESPLOCK_STATUS_random_failed);

    CHECK_STATUS(resplock_lock_acquire(NULL, 3000), RESPLOCK_STATUS_invalid_argument);
    CHECK(strcmp(resplock_status_str(RESPLOCK_STATUS_busy), "lock is held by someone else") == 0);
    CHECK(strcmp(resplock_status_str((resplock_status_t)999), "unknown status") == 0);
    resplock_conn_deinit(&conn);
}

/* What the observer saw: each event's kind and status, and the error text during the first. */
static resplock_conn_t observed;
static int event_count;
static resplock_event_kind_t event_kinds[8];
static resplock_status_t event_statuses[8];
static uint32_t event_numbers[8];
static char text_during_event[128];

static void record_event(void* user, const resplock_event_t* e) {
    CHECK(user == &event_count);
    if (event_count == 0) {
        strncpy(text_during_event, resplock_conn_error_text(&observed),
                sizeof text_during_event - 1);
    }
    if (event_count < 8) {
        event_kinds[event_count] = e->kind;
        event_statuses[event_count] = e->status;
        event_numbers[event_count] = e->number;
    }
    ++event_count;
}

/* Events, the client name, an owner label and the error text through the C API. */
static void observed_over_mock(void) {
    static char buf[C_BUF(512)];
    static resplock_lock_t lock;
    static resplock_observer_t observer;
    resplock_mock_t* m = resplock_mock_reset();
    resplock_port_t port;
    resplock_conn_config_t cfg;
    resplock_acquire_options_t opt;
    size_t len = 0;
    const char* token;
    static const char* const setname[] = {"CLIENT", "SETNAME", "door-17"};
    static const char* const set[] = {"SET", "job", ("door-17:" TOKEN0), "NX", "PX", "3000"};
    static const char* const extend[] = {"EVALSHA", SHA, "1", "job", ("door-17:" TOKEN0), "3000"};

    printf("mock, observed\n");
    CHECK(resplock_mock_port_init(m, NULL, &port) == RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_observer_init(NULL, record_event, NULL),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_observer_init(&observer, record_event, &event_count), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_observer_set_client_name(&observer, "door 17"),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_observer_set_client_name(&observer, "door-17"), RESPLOCK_STATUS_ok);
    resplock_conn_config_init(&cfg);
    CHECK(cfg.observer == NULL);
    cfg.observer = &observer;
    CHECK_STATUS(resplock_conn_init(&observed, &port, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);
    CHECK(strcmp(resplock_conn_error_text(&observed), "") == 0);
    CHECK(strcmp(resplock_conn_error_text(NULL), "") == 0);
    CHECK_STATUS(resplock_lock_init(&lock, &observed, "job", 3), RESPLOCK_STATUS_ok);

    /* The server refuses the name: the connection goes on, the connect event says so. */
    resplock_mock_on_connect(m, RESPLOCK_PORT_OK);
    expect(m, 3, setname, "-NOPERM no client|setname for this user\r\n");
    expect(m, 6, set, "+OK\r\n");
    resplock_acquire_options_init(&opt);
    CHECK(opt.owner == NULL);
    opt.owner = "door 17";
    CHECK_STATUS(resplock_lock_acquire_opt(&lock, 3000, &opt, NULL),
                 RESPLOCK_STATUS_invalid_argument);
    opt.owner = "door-17";
    CHECK_STATUS(resplock_lock_acquire_opt(&lock, 3000, &opt, NULL), RESPLOCK_STATUS_ok);
    token = resplock_lock_token(&lock, &len);
    CHECK(token != NULL && len == 40 && memcmp(token, "door-17:" TOKEN0, 40) == 0);
    CHECK(event_count == 1 && event_kinds[0] == RESPLOCK_EVENT_connect &&
          event_statuses[0] == RESPLOCK_STATUS_no_permission);
    CHECK(strcmp(text_during_event, "NOPERM no client|setname for this user") == 0);

    /* An error reply to a lock's request: its text, NUL-terminated. */
    expect(m, 6, extend, "-ERR something went wrong\r\n");
    CHECK_STATUS(resplock_lock_extend(&lock, 3000), RESPLOCK_STATUS_server_error);
    CHECK(strcmp(resplock_conn_error_text(&observed), "ERR something went wrong") == 0);
    CHECK(resplock_mock_done(m));
    if (!resplock_mock_done(m)) printf("  mismatch: %s\n", resplock_mock_mismatch(m));

    /* The server closes the connection: the next request reconnects and names it again. */
    resplock_mock_recv_closed(m);
    resplock_mock_on_connect(m, RESPLOCK_PORT_OK);
    expect(m, 3, setname, "+OK\r\n");
    expect(m, 6, extend, ":1\r\n");
    CHECK_STATUS(resplock_lock_extend(&lock, 3000), RESPLOCK_STATUS_ok);
    CHECK(strcmp(resplock_conn_error_text(&observed), "") == 0);
    CHECK(event_count == 2 && event_kinds[1] == RESPLOCK_EVENT_reconnect &&
          event_statuses[1] == RESPLOCK_STATUS_ok && event_numbers[1] == 0);
    CHECK(resplock_mock_done(m));
    if (!resplock_mock_done(m)) printf("  mismatch: %s\n", resplock_mock_mismatch(m));
    resplock_conn_deinit(&observed);
}

static void over_posix(const char* port_text) {
    static char buf[C_BUF(512)];
    static resplock_conn_t conn_a, conn_b;
    static resplock_lock_t a, b;
    resplock_posix_t ctx_a, ctx_b;
    resplock_port_t port_a;
    CHECK_STATUS(resplock_posix_port_init(&ctx_a, NULL, &port_a), RESPLOCK_STATUS_ok);
    resplock_port_t port_b;
    CHECK_STATUS(resplock_posix_port_init(&ctx_b, NULL, &port_b), RESPLOCK_STATUS_ok);
    static char buf_b[C_BUF(512)];
    resplock_conn_config_t cfg;
    resplock_lock_info_t info;

    printf("posix (redis on port %s)\n", port_text);
    resplock_conn_config_init(&cfg);
    cfg.port = (uint16_t)atoi(port_text);
    cfg.timeout_ms = 1000;
    CHECK_STATUS(resplock_conn_init(&conn_a, &port_a, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_init(&conn_b, &port_b, &cfg, buf_b, sizeof buf_b),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_conn_connect(&conn_a), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&a, &conn_a, "c:api", 5), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_init(&b, &conn_b, "c:api", 5), RESPLOCK_STATUS_ok);

    CHECK_STATUS(resplock_lock_acquire(&a, 5000), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_try_acquire(&b, 5000, 100), RESPLOCK_STATUS_busy);
    CHECK_STATUS(resplock_lock_query(&b, &info), RESPLOCK_STATUS_ok);
    CHECK(info.state == RESPLOCK_LOCK_HELD_BY_OTHER && info.ttl_ms > 4000);
    CHECK_STATUS(resplock_lock_extend(&a, 8000), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_query(&a, &info), RESPLOCK_STATUS_ok);
    CHECK(info.state == RESPLOCK_LOCK_HELD_BY_ME && info.ttl_ms > 7000);
    CHECK_STATUS(resplock_lock_release(&b), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_release(&a), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_try_acquire(&b, 5000, 100), RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_extend(&a, 5000), RESPLOCK_STATUS_invalid_argument);
    {
        /* a takes over b's token, as a CLI user would with a printed token. */
        size_t len;
        const char* t = resplock_lock_token(&b, &len);
        CHECK_STATUS(resplock_lock_adopt(&a, t, len), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_release(&a), RESPLOCK_STATUS_ok);
        CHECK_STATUS(resplock_lock_release(&b), RESPLOCK_STATUS_expired);
    }
    resplock_conn_deinit(&conn_a);
    resplock_conn_deinit(&conn_b);
}

/* Every call refuses what its header says it refuses, and touches nothing else: a NULL handle,
 * each NULL member of the port and the configuration, a buffer too small, an empty or too long
 * key, a NULL result pointer. */
static void refused_arguments(void) {
    static char buf[C_BUF(512)];
    static resplock_conn_t conn;
    static resplock_lock_t lock;
    static char long_key[RESPLOCK_MAX_KEY_LEN + 1];
    resplock_mock_t* m = resplock_mock_reset();
    resplock_port_t port;
    resplock_port_t broken;
    resplock_conn_config_t cfg;
    resplock_lock_info_t info;
    size_t len = 99;
    int i;

    printf("refused arguments\n");
    CHECK(resplock_mock_port_init(m, NULL, &port) == RESPLOCK_STATUS_ok);
    resplock_conn_config_init(&cfg);
    resplock_conn_config_init(NULL); /* nothing to fill in */
    CHECK_STATUS(resplock_conn_init(NULL, &port, &cfg, buf, sizeof buf),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_conn_init(&conn, NULL, &cfg, buf, sizeof buf),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_conn_init(&conn, &port, NULL, buf, sizeof buf),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, NULL, sizeof buf),
                 RESPLOCK_STATUS_invalid_argument);
    cfg.host = NULL;
    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf),
                 RESPLOCK_STATUS_invalid_argument);
    resplock_conn_config_init(&cfg);
    /* Each of the port's required functions missing in turn (random is optional here). */
    for (i = 0; i < 6; ++i) {
        broken = port;
        switch (i) {
            case 0:
                broken.connect = NULL;
                break;
            case 1:
                broken.send = NULL;
                break;
            case 2:
                broken.recv = NULL;
                break;
            case 3:
                broken.close = NULL;
                break;
            case 4:
                broken.now_ms = NULL;
                break;
            default:
                broken.sleep_ms = NULL;
                break;
        }
        CHECK_STATUS(resplock_conn_init(&conn, &broken, &cfg, buf, sizeof buf),
                     RESPLOCK_STATUS_invalid_argument);
    }
    CHECK_STATUS(resplock_conn_connect(NULL), RESPLOCK_STATUS_invalid_argument);
    resplock_conn_deinit(NULL);

    CHECK_STATUS(resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf), RESPLOCK_STATUS_ok);
    memset(long_key, 'k', sizeof long_key);
    CHECK_STATUS(resplock_lock_init(NULL, &conn, "job", 3), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_init(&lock, NULL, "job", 3), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_init(&lock, &conn, NULL, 3), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_init(&lock, &conn, "job", 0), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_init(&lock, &conn, long_key, sizeof long_key),
                 RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_init(&lock, &conn, long_key, sizeof long_key - 1),
                 RESPLOCK_STATUS_ok);
    CHECK_STATUS(resplock_lock_try_acquire(NULL, 3000, 100), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_extend(NULL, 3000), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_release(NULL), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_query(NULL, &info), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_query(&lock, NULL), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_adopt(NULL, TOKEN0, 32), RESPLOCK_STATUS_invalid_argument);
    CHECK_STATUS(resplock_lock_adopt(&lock, NULL, 32), RESPLOCK_STATUS_invalid_argument);
    CHECK(resplock_lock_remaining_ms(NULL) == 0);
    CHECK(resplock_lock_token(NULL, &len) == NULL && len == 0);
    CHECK(resplock_lock_token(&lock, NULL) == NULL); /* no token yet; len is optional */
    /* None of it reached the port. */
    CHECK(resplock_mock_done(m));
    resplock_conn_deinit(&conn);
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "mock";
    if (strcmp(mode, "mock") == 0) {
        over_mock();
        observed_over_mock();
        refused_arguments();
    } else if (strcmp(mode, "posix") == 0) {
        const char* port = getenv("REDIS_PORT");
        if (port == NULL) {
            printf("REDIS_PORT is not set: run under with_redis\n");
            return 2;
        }
        over_posix(port);
    } else {
        printf("usage: test_c_api mock|posix\n");
        return 2;
    }
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
