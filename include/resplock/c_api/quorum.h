/* resplock C API: the quorum lock (Redlock) over N independent servers, for C programs (C99).
 *
 * One key on 1..RESPLOCK_MAX_SERVERS servers, each reached through its own resplock_conn_t (its
 * own buffer of at least resplock_lock_buffer_min() bytes). The lock is held only while a
 * majority (count/2 + 1) of the servers confirmed this holder's token and its validity (TTL minus
 * elapsed time minus a drift allowance) lasts. See quorum_lock.hpp for every status.
 *
 *     resplock_conn_t* servers[3] = {&conn_a, &conn_b, &conn_c};
 *     static resplock_quorum_t lock;
 *     resplock_quorum_init(&lock, servers, 3, "job:flash", 9);
 *     if (resplock_quorum_try_acquire(&lock, 10000, 5000) == RESPLOCK_STATUS_ok) {
 *         ... work, stopping before resplock_quorum_remaining_ms() reaches 0 ...
 *         resplock_quorum_release(&lock);
 *     }
 */
#ifndef RESPLOCK_QUORUM_H
#define RESPLOCK_QUORUM_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/options.h"
#include "resplock/core/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Storage size of resplock::QuorumLock (see lock.h for how the sizes follow config.h): conns_
 * (RESPLOCK_MAX_SERVERS pointers), count_ (size_t), hold_, granted_ (size_t). */
#define RESPLOCK_QUORUM_STORAGE                                                              \
    RESPLOCK_SZ_ALIGN(                                                                       \
        RESPLOCK_SZ_THEN(                                                                    \
            RESPLOCK_SZ_ALIGN((size_t)RESPLOCK_MAX_SERVERS * sizeof(void*) + sizeof(size_t), \
                              sizeof(size_t)) +                                              \
                RESPLOCK_SZ_HOLD,                                                            \
            size_t),                                                                         \
        sizeof(void*))

/* A quorum lock on one key over several connections. Opaque. */
typedef struct resplock_quorum {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_QUORUM_STORAGE];
    } opaque;
} resplock_quorum_t;

/* Binds `lock` to `key` (key_len bytes, copied) over conns[0..count), distinct connections to
 * distinct servers, each on its own port context, that must outlive it (the array itself is
 * copied). Returns ok, or invalid_argument (NULL pointer, count outside 1..RESPLOCK_MAX_SERVERS,
 * a NULL or repeated connection, two on one port context, empty key, key over
 * RESPLOCK_MAX_KEY_LEN); every later call on a lock whose init
 * failed returns invalid_argument too. */
resplock_status_t resplock_quorum_init(resplock_quorum_t* lock, resplock_conn_t* const* conns,
                                       size_t count, const char* key, size_t key_len);

/* One attempt: SET key token NX PX ttl_ms sent to every server before any reply is read. ok:
 * held by a majority with validity left. busy: others hold too many servers. timeout: granted,
 * but the validity was used up. Otherwise the failure shared by most servers that did not grant
 * (connect_failed, timeout, ...). On any failure the keys this attempt may have set are deleted
 * again on every server before it returns. */
resplock_status_t resplock_quorum_acquire(resplock_quorum_t* lock, uint32_t ttl_ms);

/* Attempts until held or wait_ms has passed (jittered backoff). wait_ms 0 is one attempt. */
resplock_status_t resplock_quorum_try_acquire(resplock_quorum_t* lock, uint32_t ttl_ms,
                                              uint32_t wait_ms);

/* resplock_quorum_try_acquire() with options (resplock/c_api/options.h): only `owner`, the same
 * label on every server. NULL options: none. Returns its statuses, and invalid_argument when
 * fence, once_per_ms or wake is set (they need one server) or the owner label is not valid. */
resplock_status_t resplock_quorum_try_acquire_opt(resplock_quorum_t* lock, uint32_t ttl_ms,
                                                  uint32_t wait_ms,
                                                  const resplock_acquire_options_t* options);

/* Owner-checked delete on every server. ok / not_owner / expired once a majority answered (the
 * token is then forgotten); otherwise a connection status or unknown_outcome (call again). The
 * servers that refused it before running it are asked again as resplock_lock_release() does. */
resplock_status_t resplock_quorum_release(resplock_quorum_t* lock);

/* Owner-checked PEXPIRE on every server. ok: a majority confirmed; validity restarts. expired /
 * not_owner: the lock is lost. Other statuses: validity is the shorter of the old and new. */
resplock_status_t resplock_quorum_extend(resplock_quorum_t* lock, uint32_t ttl_ms);

/* Milliseconds this holder may still rely on the lock; 0 when not held. */
uint32_t resplock_quorum_remaining_ms(const resplock_quorum_t* lock);

/* The current token (not NUL-terminated) and its length in *len; NULL and 0 when none. */
const char* resplock_quorum_token(const resplock_quorum_t* lock, size_t* len);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_QUORUM_H */
