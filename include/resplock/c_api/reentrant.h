/* resplock C API: the reentrant lock (see resplock/reentrant_lock.hpp for the full reference).
 *
 * An owner that already holds the lock may acquire it again; the server keeps a hash at the key
 * with the owner id's hold count, and the key is deleted when the count returns to 0. Several
 * objects, tasks or processes given the same owner id share one hold. Storage is the caller's,
 * like resplock.h; the connection's buffer must be at least resplock_reentrant_buffer_min()
 * bytes for keys of RESPLOCK_MAX_KEY_LEN bytes and owner ids of RESPLOCK_MAX_TOKEN_LEN bytes.
 *
 *     static resplock_reentrant_t lock;
 *     resplock_reentrant_init(&lock, &conn, "job:flash", 9, NULL, 0);
 *     if (resplock_reentrant_acquire(&lock, 10000) == RESPLOCK_STATUS_ok) {
 *         ... code that may call resplock_reentrant_acquire / _release on it again ...
 *         resplock_reentrant_release(&lock);
 *     }
 */
#ifndef RESPLOCK_REENTRANT_H
#define RESPLOCK_REENTRANT_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Storage size of resplock::ReentrantLock (see lock.h for how the sizes follow config.h): conn_
 * (a reference), hold_, unsure_ (bool), levels_ and count_ (uint32_t). */
#define RESPLOCK_REENTRANT_STORAGE                                                        \
    RESPLOCK_SZ_ALIGN(                                                                    \
        RESPLOCK_SZ_THEN(RESPLOCK_SZ_THEN(RESPLOCK_SZ_PTR_HOLD + 1, uint32_t), uint32_t), \
        sizeof(void*))

/* A reentrant lock on one key over one connection. Opaque. */
typedef struct resplock_reentrant {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_REENTRANT_STORAGE];
    } opaque;
} resplock_reentrant_t;

/* Smallest I/O buffer that fits every request of a reentrant lock at the longest key and owner. */
size_t resplock_reentrant_buffer_min(void);

/* Binds `lock` to `key` (key_len bytes) and to the owner id `owner` (owner_len bytes,
 * 1..RESPLOCK_MAX_TOKEN_LEN), both copied, over `conn`, which must outlive it. owner NULL or
 * owner_len 0: a random owner id is made by the first acquire. Returns ok or invalid_argument
 * (NULL lock or conn, empty key, key over RESPLOCK_MAX_KEY_LEN, owner over RESPLOCK_MAX_TOKEN_LEN
 * bytes, NULL owner with owner_len > 0). */
resplock_status_t resplock_reentrant_init(resplock_reentrant_t* lock, resplock_conn_t* conn,
                                          const char* key, size_t key_len, const char* owner,
                                          size_t owner_len);

/* One attempt: takes the lock, or enters it again if this owner id holds it (count + 1); the TTL
 * becomes the larger of ttl_ms and the largest TTL any holder asked for. ok: held. busy: another
 * owner id (or a plain lock) holds it. unknown_outcome: the reply was lost. Also invalid_argument,
 * random_failed, protocol_error, too_large and connection statuses. */
resplock_status_t resplock_reentrant_acquire(resplock_reentrant_t* lock, uint32_t ttl_ms);

/* Attempts until held or wait_ms has passed, never sleeping past the holder's TTL. wait_ms 0 is
 * one attempt. Returns acquire's statuses; busy when the wait ran out. */
resplock_status_t resplock_reentrant_try_acquire(resplock_reentrant_t* lock, uint32_t ttl_ms,
                                                 uint32_t wait_ms);

/* Takes 1 from this owner id's count; the key is deleted at 0. ok either way (see
 * resplock_reentrant_count). not_owner: another holder. expired: the key was gone.
 * unknown_outcome: reply lost; the level counts as released (do not repeat it). A release the
 * server refused before running it is retried as resplock_lock_release() does. */
resplock_status_t resplock_reentrant_release(resplock_reentrant_t* lock);

/* Sets the TTL to the larger of ttl_ms and the largest TTL any holder asked for, if this owner id
 * still holds the key. ok: validity restarts. not_owner / expired: the lock is lost. */
resplock_status_t resplock_reentrant_extend(resplock_reentrant_t* lock, uint32_t ttl_ms);

/* Milliseconds this holder may still rely on the lock; 0 when not held. */
uint32_t resplock_reentrant_remaining_ms(const resplock_reentrant_t* lock);

/* This owner id's count on the server from the last reply that carried it. */
uint32_t resplock_reentrant_count(const resplock_reentrant_t* lock);

/* The owner id (not NUL-terminated) and its length in *len; NULL and 0 before a random one has
 * been made. */
const char* resplock_reentrant_owner(const resplock_reentrant_t* lock, size_t* len);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_REENTRANT_H */
