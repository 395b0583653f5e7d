/* resplock C API: the fair lock (see resplock/variants/fair_lock.hpp for the full reference).
 *
 * Waiters queue on the server in arrival order; a release hands the lock straight to the first
 * live waiter, whose resplock_fair_try_acquire() then returns with the lock held. The key stays a
 * string holding the holder's token, so plain and fair clients on one key exclude each other.
 * Storage is the caller's, like resplock.h; the connection's buffer must be at least
 * resplock_fair_buffer_min() bytes for keys of RESPLOCK_MAX_KEY_LEN bytes.
 *
 *     static resplock_fair_t lock;
 *     resplock_fair_init(&lock, &conn, "job:flash", 9);
 *     if (resplock_fair_try_acquire(&lock, 10000, 30000) == RESPLOCK_STATUS_ok) {
 *         ... work ...
 *         resplock_fair_release(&lock);
 *     }
 */
#ifndef RESPLOCK_FAIR_H
#define RESPLOCK_FAIR_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Storage size of resplock::FairLock (see lock.h for how the sizes follow config.h): base_
 * (RESPLOCK_MAX_KEY_LEN + 4 chars: the key and a companion prefix), base_len_ (size_t), lock_ (a
 * resplock::Lock, aligned as a pointer), owner_ (RESPLOCK_MAX_OWNER_LEN + 1 chars), owner_len_
 * (size_t). */
#define RESPLOCK_FAIR_STORAGE                                                                      \
    RESPLOCK_SZ_ALIGN(                                                                             \
        RESPLOCK_SZ_THEN(                                                                          \
            RESPLOCK_SZ_ALIGN(RESPLOCK_SZ_THEN(RESPLOCK_MAX_KEY_LEN + 4, size_t), sizeof(void*)) + \
                RESPLOCK_LOCK_STORAGE + RESPLOCK_MAX_OWNER_LEN + 1,                                \
            size_t),                                                                               \
        sizeof(void*))

/* A fair lock on one key over one connection. Opaque. */
typedef struct resplock_fair {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_FAIR_STORAGE];
    } opaque;
} resplock_fair_t;

/* Smallest I/O buffer that fits every request of a fair lock at the longest key. */
size_t resplock_fair_buffer_min(void);

/* Binds `lock` to `key` (key_len bytes, copied) over `conn`, which must outlive it. Returns ok or
 * invalid_argument (NULL lock or conn, empty key, key over RESPLOCK_MAX_KEY_LEN). */
resplock_status_t resplock_fair_init(resplock_fair_t* lock, resplock_conn_t* conn, const char* key,
                                     size_t key_len);

/* One attempt, without queueing. ok: held. busy: held by another, or handed to a queued waiter.
 * Also invalid_argument, random_failed, unknown_outcome, protocol_error, too_large and connection
 * statuses. */
resplock_status_t resplock_fair_acquire(resplock_fair_t* lock, uint32_t ttl_ms);

/* Queues and waits up to wait_ms for a release to hand the lock over (first come, first served).
 * ok: held. busy: the wait ran out (the queue entry is removed). not_replicated: the write check
 * (resplock_fair_set_replicas(), a Sentinel) failed on the last grant, which was given back.
 * wait_ms 0 is one attempt. */
resplock_status_t resplock_fair_try_acquire(resplock_fair_t* lock, uint32_t ttl_ms,
                                            uint32_t wait_ms);

/* resplock_fair_try_acquire() with a fencing number: *fence (not NULL) receives the grant's
 * number on ok, from the counter the plain lock's fenced acquisitions use (one sequence per
 * key). A grant without a valid number is protocol_error. */
resplock_status_t resplock_fair_try_acquire_fenced(resplock_fair_t* lock, uint32_t ttl_ms,
                                                   uint32_t wait_ms, uint64_t* fence);

/* An owner label in front of the tokens of the next acquisitions (owner_len bytes of A-Z a-z 0-9
 * . _ -, at most RESPLOCK_MAX_OWNER_LEN; 0: none). ok or invalid_argument. */
resplock_status_t resplock_fair_set_owner(resplock_fair_t* lock, const char* owner,
                                          size_t owner_len);

/* Replica acknowledgement after every grant (taken or handed over) and every extend, as
 * resplock_lock_set_replicas(). ok or invalid_argument. */
resplock_status_t resplock_fair_set_replicas(resplock_fair_t* lock, uint32_t replicas);

/* Owner-checked release that hands the lock to the first live waiter. ok, not_owner, expired,
 * unknown_outcome and connection statuses, and the retries of a release the server refused
 * before running it, as resplock_lock_release. */
resplock_status_t resplock_fair_release(resplock_fair_t* lock);

/* Owner-checked PEXPIRE to ttl_ms. ok: validity restarts. not_owner / expired: the lock is lost. */
resplock_status_t resplock_fair_extend(resplock_fair_t* lock, uint32_t ttl_ms);

/* Milliseconds this holder may still rely on the lock; 0 when not held. */
uint32_t resplock_fair_remaining_ms(const resplock_fair_t* lock);

/* The token of the current hold (not NUL-terminated) and its length in *len; NULL and 0 when
 * there is none. */
const char* resplock_fair_token(const resplock_fair_t* lock, size_t* len);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_FAIR_H */
