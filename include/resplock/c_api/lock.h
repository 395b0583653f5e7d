/* resplock C API: the connection and the lock for C programs (C99, no C++ types).
 *
 * Everything lives in storage the caller provides: a resplock_conn_t and a resplock_lock_t (plain
 * structs, e.g. static or on a task's stack) and one I/O buffer of at least
 * resplock_lock_buffer_min() bytes. Nothing is allocated. Functions return a resplock_status_t;
 * resplock_status_str() gives its text. No function blocks longer than the connection's
 * timeout_ms, except resplock_lock_try_acquire(), which waits at most wait_ms more.
 *
 * A connection and its locks are used by one task at a time (no internal locking).
 *
 *     static char buf[512];
 *     static resplock_conn_t conn;
 *     static resplock_lock_t lock;
 *     resplock_conn_config_t cfg;
 *     resplock_conn_config_init(&cfg);
 *     cfg.host = "10.0.0.2";
 *     resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf);
 *     resplock_lock_init(&lock, &conn, "job:flash", 9);
 *     if (resplock_lock_try_acquire(&lock, 10000, 5000) == RESPLOCK_STATUS_ok) {
 *         ... work, calling resplock_lock_extend(&lock, 10000) every few seconds ...
 *         resplock_lock_release(&lock);
 *     }
 */
#ifndef RESPLOCK_LOCK_H
#define RESPLOCK_LOCK_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/core/config.h"
#include "resplock/core/port.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest token: an owner label of up to RESPLOCK_MAX_OWNER_LEN bytes, ':' and 40 characters
 * (the most random hex any build makes); 40 when labels are off. */
#define RESPLOCK_MAX_TOKEN_LEN (RESPLOCK_MAX_OWNER_LEN == 0 ? 40 : RESPLOCK_MAX_OWNER_LEN + 41)

/* The storage sizes of the C++ objects behind the handles (RESPLOCK_*_STORAGE, in this header and
 * its siblings) follow the limits of config.h: each is the object's layout, member by member, as
 * the compiler makes it on ILP32 and LP64 targets (a member starts at the next multiple of its
 * alignment; an object's size is a multiple of its strictest member's). The library checks at
 * compile time that each object fits its storage with no more spare than the storage's alignment
 * rounds up, so the library and the C code using these headers must see the same limits. The
 * RESPLOCK_SZ_* macros are the steps of those formulas, not an interface. */

/* n rounded up to a multiple of a. */
#define RESPLOCK_SZ_ALIGN(n, a) (((size_t)(n) + (size_t)(a)-1) / (size_t)(a) * (size_t)(a))
/* The end of a member of type T (a scalar whose alignment is its size: size_t, a pointer,
 * uint32_t) placed after offset n. */
#define RESPLOCK_SZ_THEN(n, T) (RESPLOCK_SZ_ALIGN(n, sizeof(T)) + sizeof(T))
/* The alignment of an int64_t member: 8, but 4 on i386. */
struct resplock_sz_i64_probe {
    char c;
    int64_t v;
};
#define RESPLOCK_SZ_I64_ALIGN offsetof(struct resplock_sz_i64_probe, v)
/* The alignment of an object holding an int64_t and a pointer. */
#define RESPLOCK_SZ_MAX_ALIGN \
    (RESPLOCK_SZ_I64_ALIGN > sizeof(void*) ? RESPLOCK_SZ_I64_ALIGN : sizeof(void*))
/* resplock::Validity: two uint32_t and two bool, aligned to 4. */
#define RESPLOCK_SZ_VALIDITY 12
/* resplock::Node: host (RESPLOCK_MAX_HOST_LEN + 1 chars), port (uint16_t), aligned to 2. */
#define RESPLOCK_SZ_NODE (RESPLOCK_SZ_ALIGN(RESPLOCK_MAX_HOST_LEN + 1, 2) + 2)

/* resplock::resp::Value: type (uint8_t, padded to 4), size (uint32_t), data (a pointer), then
 * integer (int64_t). */
#define RESPLOCK_SZ_VALUE                                                                  \
    RESPLOCK_SZ_ALIGN(RESPLOCK_SZ_ALIGN(4 + 4 + sizeof(void*), RESPLOCK_SZ_I64_ALIGN) + 8, \
                      RESPLOCK_SZ_MAX_ALIGN)
/* resplock::resp::Parser, up to bulk_len_: state_ (an int), prefix_ (bool), values_ (a pointer),
 * capacity_, count_, pos_, scan_ (size_t), bulk_len_ (int64_t). */
#define RESPLOCK_SZ_PARSER_BULK                                                        \
    (RESPLOCK_SZ_ALIGN(                                                                \
         RESPLOCK_SZ_ALIGN(4 + 1, sizeof(void*)) + sizeof(void*) + 4 * sizeof(size_t), \
         RESPLOCK_SZ_I64_ALIGN) +                                                      \
     8)
/* resplock::resp::Parser. */
#define RESPLOCK_SZ_PARSER                                                                  \
    RESPLOCK_SZ_ALIGN(RESPLOCK_SZ_PARSER_BULK + 2 * sizeof(size_t) /* bulk_start_, kept_ */ \
                          + 4                                      /* depth_ */             \
                          + 4 * (size_t)RESPLOCK_MAX_DEPTH,        /* remaining_ */         \
                      RESPLOCK_SZ_MAX_ALIGN)
/* resplock::Connection, up to its parser. */
#define RESPLOCK_SZ_CONN_HEAD                                                        \
    (RESPLOCK_SZ_ALIGN(4, sizeof(void*))                   /* four bool */           \
     + sizeof(resplock_port_t)                             /* port_ */               \
     + RESPLOCK_SZ_ALIGN(sizeof(void*) + 2, sizeof(void*)) /* config_: host, port */ \
     + 2 * sizeof(void*)                                   /* username, password */  \
     + 8                                                   /* db, timeout_ms */      \
     + 2 * sizeof(void*)                                   /* observer, router */    \
     + sizeof(void*) + sizeof(size_t))                     /* buf_, size_ */
/* resplock::Connection. */
#define RESPLOCK_CONN_STORAGE                                               \
    (RESPLOCK_SZ_ALIGN(RESPLOCK_SZ_CONN_HEAD, RESPLOCK_SZ_MAX_ALIGN) +      \
     RESPLOCK_SZ_PARSER                                       /* parser_ */ \
     + (size_t)RESPLOCK_MAX_REPLY_VALUES * RESPLOCK_SZ_VALUE) /* values_ */

/* resplock::Hold: key_len_, token_len_ (size_t), validity_, key_, token_. */
#define RESPLOCK_SZ_HOLD                                                                           \
    RESPLOCK_SZ_ALIGN(                                                                             \
        2 * sizeof(size_t) + RESPLOCK_SZ_VALIDITY + RESPLOCK_MAX_KEY_LEN + RESPLOCK_MAX_TOKEN_LEN, \
        sizeof(size_t))
/* Offset of a Hold after a pointer (a Connection reference). */
#define RESPLOCK_SZ_PTR_HOLD (RESPLOCK_SZ_ALIGN(sizeof(void*), sizeof(size_t)) + RESPLOCK_SZ_HOLD)
/* resplock::Lock: conn_ (a reference), check_ (a pointer), replicas_ and acknowledged_
 * (uint8_t), hold_. */
#define RESPLOCK_LOCK_STORAGE                                                                      \
    RESPLOCK_SZ_ALIGN(RESPLOCK_SZ_ALIGN(2 * sizeof(void*) + 2, sizeof(size_t)) + RESPLOCK_SZ_HOLD, \
                      sizeof(void*))

/* A connection to one Redis server. Opaque: use only through the functions below. */
typedef struct resplock_conn {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_CONN_STORAGE];
    } opaque;
} resplock_conn_t;

/* A lock on one key over one connection. Opaque. */
typedef struct resplock_lock {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_LOCK_STORAGE];
    } opaque;
} resplock_lock_t;

typedef struct resplock_conn_config {
    const char* host;     /* name or numeric address, NUL-terminated; default "127.0.0.1" */
    uint16_t port;        /* default 6379 */
    const char* username; /* ACL user (AUTH user password); NULL: AUTH password only */
    const char* password; /* NULL: no AUTH */
    uint32_t db;          /* SELECT db after connecting when non-zero */
    uint32_t timeout_ms;  /* budget of one call: reconnect, handshake, round trips; default 2000;
                           * values above 2^31 - 1 count as 2^31 - 1 */
    /* Events (connect, reconnect, retries of the locks over it) and CLIENT SETNAME: see
     * resplock/c_api/observer.h. Must outlive the connection. NULL: none (the default). */
    const struct resplock_observer* observer;
    /* Which node to talk to when it is not host:port alone (a Redis Cluster, a master found
     * through Sentinel): set by the router's own init function (resplock/c_api/cluster.h,
     * resplock/c_api/sentinel.h). Must outlive the connection. NULL: host:port (the default). */
    struct resplock_router* router;
} resplock_conn_config_t;

typedef enum resplock_lock_state {
    RESPLOCK_LOCK_FREE,
    RESPLOCK_LOCK_HELD_BY_ME,
    RESPLOCK_LOCK_HELD_BY_OTHER
} resplock_lock_state_t;

typedef struct resplock_lock_info {
    resplock_lock_state_t state;
    int64_t ttl_ms; /* the key's PTTL: ms left, -1 without TTL, -2 when absent */
} resplock_lock_info_t;

/* Largest TTL accepted, in ms (about 24.8 days). */
#define RESPLOCK_MAX_TTL_MS 0x7fffffffUL

/* Smallest I/O buffer that fits every request a lock sends (keys up to RESPLOCK_MAX_KEY_LEN). */
size_t resplock_lock_buffer_min(void);

/* Fills `config` with the defaults (127.0.0.1:6379, no AUTH, db 0, 2000 ms). */
void resplock_conn_config_init(resplock_conn_config_t* config);

/* Sets up `conn`. The port struct and config are copied; the port's context, the buffer and the
 * config's strings must outlive the connection. No I/O happens until the first call that needs
 * the server. Returns ok, or invalid_argument (a NULL pointer, no host, a port without
 * connect/send/recv/close/now_ms/sleep_ms, or a buffer smaller than resplock_lock_buffer_min()). */
resplock_status_t resplock_conn_init(resplock_conn_t* conn, const resplock_port_t* port,
                                     const resplock_conn_config_t* config, char* buffer,
                                     size_t buffer_size);

/* Connects and authenticates now rather than on first use. Returns ok, timeout, no_host,
 * connect_failed, closed, io_error, auth_required, auth_failed, server_error, ... */
resplock_status_t resplock_conn_connect(resplock_conn_t* conn);

/* The text of the error reply the connection's last command received (e.g. "NOPERM ..."), or ""
 * when it received none (or for NULL). NUL-terminated and never NULL; valid until the next call
 * on that connection or on a lock over it. */
const char* resplock_conn_error_text(resplock_conn_t* conn);

/* Closes the transport and ends the connection; resplock_conn_init() may reuse the storage. */
void resplock_conn_deinit(resplock_conn_t* conn);

/* Binds `lock` to `key` (key_len bytes, copied, binary-safe) over `conn`, which must outlive it.
 * Returns ok or invalid_argument (NULL pointer, empty key, key over RESPLOCK_MAX_KEY_LEN). */
resplock_status_t resplock_lock_init(resplock_lock_t* lock, resplock_conn_t* conn, const char* key,
                                     size_t key_len);

/* One attempt (SET key token NX PX ttl_ms). ok: held. busy: someone else holds it.
 * unknown_outcome: the reply was lost; the lock is not held, but release() may still clean up.
 * Also invalid_argument, random_failed, protocol_error, too_large and connection statuses. */
resplock_status_t resplock_lock_acquire(resplock_lock_t* lock, uint32_t ttl_ms);

/* Attempts until held or wait_ms has passed (jittered backoff, never sleeping past the holder's
 * TTL). wait_ms 0 is one attempt. Returns acquire's statuses; busy when the wait ran out;
 * invalid_argument when wait_ms exceeds RESPLOCK_MAX_TTL_MS. */
resplock_status_t resplock_lock_try_acquire(resplock_lock_t* lock, uint32_t ttl_ms,
                                            uint32_t wait_ms);

/* Deletes the key if it still holds this lock's token. ok: released. not_owner: someone else
 * holds it. expired: it was gone. unknown_outcome: reply lost (call again). A release the server
 * refused before running it (loading, server_busy, try_again, no_replicas, too_many_redirects,
 * or no connection) is retried during the first half of the connection's timeout, the whole
 * within that timeout; the last refusal is returned then. Afterwards remaining_ms() is 0
 * whatever the outcome. */
resplock_status_t resplock_lock_release(resplock_lock_t* lock);

/* Sets the key's TTL to ttl_ms if it still holds this lock's token. ok: validity restarts now.
 * not_owner / expired: the lock is lost. Never waits past the validity left. unknown_outcome:
 * the validity left is the shorter of the old and the new one. */
resplock_status_t resplock_lock_extend(resplock_lock_t* lock, uint32_t ttl_ms);

/* Who holds the key, and its PTTL, in one round trip. */
resplock_status_t resplock_lock_query(resplock_lock_t* lock, resplock_lock_info_t* info);

/* Milliseconds this holder may still rely on the lock (TTL minus elapsed time minus clock drift
 * allowance); 0 when not held. Work that must not overlap another holder's must end before. */
uint32_t resplock_lock_remaining_ms(const resplock_lock_t* lock);

/* The current token (not NUL-terminated) and its length in *len; NULL and 0 when none. */
const char* resplock_lock_token(const resplock_lock_t* lock, size_t* len);

/* Takes over a token obtained elsewhere so release/extend act for it (validity unknown until an
 * extend succeeds). Returns ok or invalid_argument (NULL, empty, or over RESPLOCK_MAX_TOKEN_LEN
 * bytes). */
resplock_status_t resplock_lock_adopt(resplock_lock_t* lock, const char* token, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_LOCK_H */
