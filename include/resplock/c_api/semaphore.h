/* resplock C API: the counting semaphore (see resplock/variants/semaphore.hpp for the full
 * reference).
 *
 * At most `limit` holders of one key at once, each with a lease of its own: a random token (with
 * an owner label when one is set) and a TTL, kept on the server in a sorted set whose scores are
 * the leases' expiry times on the server's clock. A holder that dies frees its place when its
 * lease ends. Each grant returns a fencing number, strictly increasing per key. In the fair mode
 * a waiter joins a queue on the server and a release hands the place to the first live waiter.
 * Storage is the caller's, like lock.h; the connection's buffer must be at least
 * resplock_sem_buffer_min() bytes for keys of RESPLOCK_MAX_KEY_LEN bytes (a request that does not
 * fit returns too_large unsent).
 *
 * An OTA rollout where at most 10 devices download the image at once:
 *
 *     static resplock_sem_t ota;
 *     uint64_t fence;
 *     resplock_sem_init(&ota, &conn, "fleet:ota", 9, 10, 1);
 *     resplock_sem_set_owner(&ota, "dev-0042", 8);
 *     if (resplock_sem_try_acquire(&ota, 60000, 600000, &fence) == RESPLOCK_STATUS_ok) {
 *         ... download, calling resplock_sem_extend(&ota, 60000) every 20 s and stopping
 *             before resplock_sem_remaining_ms(&ota) reaches 0 ...
 *         resplock_sem_release(&ota);
 *     }
 */
#ifndef RESPLOCK_SEMAPHORE_H
#define RESPLOCK_SEMAPHORE_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest limit resplock_sem_init() accepts. */
#define RESPLOCK_SEM_MAX_LIMIT 65535u

/* Storage size of resplock::Semaphore (see lock.h for how the sizes follow config.h): conn_ (a
 * reference), hold_, base_ (RESPLOCK_MAX_KEY_LEN + 4 chars: the key and a companion prefix),
 * base_len_ (size_t), limit_ (uint32_t), fair_ (bool), owner_ (RESPLOCK_MAX_OWNER_LEN + 1
 * chars), owner_len_ (size_t), replicas_ and acknowledged_ (one byte each). */
#define RESPLOCK_SEM_STORAGE                                                               \
    RESPLOCK_SZ_ALIGN(                                                                     \
        RESPLOCK_SZ_THEN(                                                                  \
            RESPLOCK_SZ_THEN(                                                              \
                RESPLOCK_SZ_THEN(RESPLOCK_SZ_PTR_HOLD + RESPLOCK_MAX_KEY_LEN + 4, size_t), \
                uint32_t) +                                                                \
                1 + RESPLOCK_MAX_OWNER_LEN + 1,                                            \
            size_t) +                                                                      \
            2,                                                                             \
        sizeof(void*))

/* A counting semaphore on one key over one connection. Opaque. */
typedef struct resplock_sem {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_SEM_STORAGE];
    } opaque;
} resplock_sem_t;

/* What resplock_sem_query() reads, in one round trip. */
typedef struct resplock_sem_info {
    uint32_t count;   /* live leases */
    int mine;         /* non-zero: this semaphore's token holds one of them */
    int64_t ttl_ms;   /* ms that lease has left on the server's clock; -2 when not mine */
    uint32_t waiters; /* live entries in the fair queue */
} resplock_sem_info_t;

/* Called by resplock_sem_holders() for each live lease: its owner label (owner_len bytes, 0 for
 * a lease without one; never its token), NUL-terminated at owner[owner_len] and valid only until
 * the call returns, and the ms the lease has left on the server's clock. It must not call the
 * semaphore's functions, nor any other function on its connection. */
typedef void (*resplock_sem_holder_fn)(void* ctx, const char* owner, size_t owner_len,
                                       uint32_t remaining_ms);

/* Smallest I/O buffer that fits every request of a semaphore at the longest key and owner
 * label. */
size_t resplock_sem_buffer_min(void);

/* Binds `sem` to `key` (key_len bytes, copied, binary-safe) over `conn`, which must outlive it,
 * admitting at most `limit` holders as this client states it; `fair` non-zero: waiters queue in
 * arrival order. Returns ok or invalid_argument (NULL sem or conn, NULL or empty key, key over
 * RESPLOCK_MAX_KEY_LEN, limit outside 1..RESPLOCK_SEM_MAX_LIMIT); every later call on a
 * semaphore whose init failed with a non-NULL sem and conn returns invalid_argument too. */
resplock_status_t resplock_sem_init(resplock_sem_t* sem, resplock_conn_t* conn, const char* key,
                                    size_t key_len, uint32_t limit, int fair);

/* Labels the tokens of the next acquisitions ("LABEL:<random hex>"), so that the server and
 * resplock_sem_holders() show which devices hold places. owner_len bytes of A-Z a-z 0-9 . _ -,
 * at most RESPLOCK_MAX_OWNER_LEN; owner_len 0 (owner may then be NULL): no label. Returns ok or
 * invalid_argument (NULL sem, NULL owner with owner_len > 0, a label too long or with another
 * byte). */
resplock_status_t resplock_sem_set_owner(resplock_sem_t* sem, const char* owner, size_t owner_len);

/* One attempt, one round trip, never queued. ok: a lease is held, and *fence (when fence is not
 * NULL) receives its fencing number. busy: the limit is reached, or a live waiter is queued
 * (nobody jumps the queue). invalid_argument: NULL sem, ttl_ms outside 1..RESPLOCK_MAX_TTL_MS, or
 * this semaphore holds a lease that has not expired locally. too_large: the request does not fit
 * the buffer (not sent). Also random_failed, unknown_outcome, protocol_error and connection
 * statuses; after unknown_outcome, protocol_error or an error reply from the script the token is
 * kept with no validity, so that resplock_sem_release() can undo what may have been done. */
resplock_status_t resplock_sem_acquire(resplock_sem_t* sem, uint32_t ttl_ms, uint64_t* fence);

/* Attempts until granted or wait_ms has passed, never pausing past the earliest lease's end. In
 * the plain mode a waiter is woken by a release; in the fair mode it joins the queue and is
 * handed a place by a release (or when a lease ends), leaving the queue when the wait runs out.
 * wait_ms 0 is resplock_sem_acquire(). Returns its statuses; busy when the wait ran out;
 * invalid_argument also when wait_ms exceeds RESPLOCK_MAX_TTL_MS. */
resplock_status_t resplock_sem_try_acquire(resplock_sem_t* sem, uint32_t ttl_ms, uint32_t wait_ms,
                                           uint64_t* fence);

/* Removes this semaphore's lease (owner-checked: only its own token) and hands the place to the
 * first live waiter, or wakes one plain waiter. ok: removed. expired: the lease had already
 * ended. invalid_argument: NULL sem, or no token (nothing acquired or adopted, or already
 * released). Also unknown_outcome (call again), protocol_error, too_large and connection
 * statuses (wrong_type: the key or a companion key holds another type). A release the server
 * refused before running it is retried as resplock_lock_release() does. Afterwards
 * resplock_sem_remaining_ms() is 0 whatever the outcome. */
resplock_status_t resplock_sem_release(resplock_sem_t* sem);

/* Moves this semaphore's live lease to end ttl_ms from now on the server's clock; a lease that
 * has ended is never revived. ok: validity restarts from this request. expired: no live lease,
 * or the local validity had already run out (then nothing is sent). unknown_outcome: the
 * validity left is the shorter of the old and the new one. Also invalid_argument (NULL sem, no
 * token, ttl_ms outside 1..RESPLOCK_MAX_TTL_MS) and connection statuses. */
resplock_status_t resplock_sem_extend(resplock_sem_t* sem, uint32_t ttl_ms);

/* The live leases, whether this semaphore holds one and for how long, and the live waiters
 * queued, in one round trip. ok (*info filled), invalid_argument (NULL pointer, failed init),
 * protocol_error, or connection statuses (*info untouched). */
resplock_status_t resplock_sem_query(resplock_sem_t* sem, resplock_sem_info_t* info);

/* Calls visit(ctx, ...) for each live lease, the first to end first. The leases are read in
 * pages within the connection's timeout: one granted, renewed or released between two pages may
 * be shown twice or not at all (resplock_sem_query() counts them in one step). ok: every page
 * read. busy: the timeout ran out first (the leases visited so far are correct). Also
 * invalid_argument (NULL sem or visit, failed init), protocol_error and connection statuses. */
resplock_status_t resplock_sem_holders(resplock_sem_t* sem, resplock_sem_holder_fn visit,
                                       void* ctx);

/* Takes over a token obtained elsewhere (e.g. by another process), so that release and extend
 * act for it, with no validity until an extend succeeds. Returns ok or invalid_argument (NULL,
 * empty, or over RESPLOCK_MAX_TOKEN_LEN bytes; failed init). */
resplock_status_t resplock_sem_adopt(resplock_sem_t* sem, const char* token, size_t len);

/* Milliseconds this holder may still rely on its lease (TTL minus elapsed time minus the clock
 * drift allowance); 0 when none is held (or for NULL). */
uint32_t resplock_sem_remaining_ms(const resplock_sem_t* sem);

/* The token of the current or last attempted lease (not NUL-terminated) and its length in *len;
 * NULL and 0 when there is none. */
const char* resplock_sem_token(const resplock_sem_t* sem, size_t* len);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_SEMAPHORE_H */
