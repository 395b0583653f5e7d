/* resplock C API: acquisition options over a resplock_lock_t (see resplock.h) — fencing numbers,
 * locks taken at most once per interval, waking a waiter on release, an owner label in the
 * token, and replica acknowledgement (WAIT). C99.
 *
 *     resplock_acquire_options_t opt;
 *     uint64_t fence;
 *     resplock_acquire_options_init(&opt);
 *     opt.fence = 1;
 *     if (resplock_lock_acquire_opt(&lock, 10000, &opt, &fence) == RESPLOCK_STATUS_ok) {
 *         ... write to the protected resource along with `fence` ...
 *     }
 *
 * Each option uses a companion key in KEY's cluster slot: {KEY}:fence, {KEY}:once, {KEY}:wake
 * for a key without a hash tag, KEY:fence... for a key with one (locks:{job}:fence); see
 * resplock/core/companion.hpp. These requests are longer than a plain lock's: with a
 * key of RESPLOCK_MAX_KEY_LEN bytes they need a larger buffer than resplock_lock_buffer_min(),
 * and a request that does not fit returns too_large without being sent. */
#ifndef RESPLOCK_OPTIONS_H
#define RESPLOCK_OPTIONS_H

#include <stdint.h>

#include "resplock/c_api/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct resplock_acquire_options {
    /* Non-zero: also return a fencing number (64-bit, stored in KEY:fence by the same script as
     * the SET): the larger of KEY:fence + 1 and the server's clock in microseconds. It grows with
     * every successful acquisition (not by one: it follows the clock) and never with a busy one;
     * across a restart without persistence or a failover it keeps growing as long as the new
     * server's clock is not behind by more than that took (docs/variants.md#fencing-numbers). */
    int fence;
    /* Non-zero: the lock can be taken at most once per this many ms by anyone, even if it is
     * released early (the marker KEY:once, on the server's clock). 0..RESPLOCK_MAX_TTL_MS. Every
     * party using the key must set it: a plain acquire ignores the marker. */
    uint32_t once_per_ms;
    /* Non-zero: while waiting, block on KEY:wake with BLPOP instead of sleeping; a release with
     * wake set wakes one waiter at once. Falls back to sleeping if the server refuses BLPOP. */
    int wake;
    /* Non-NULL: an owner label before the random part of the token, which becomes
     * "LABEL:<random hex>", so that GET KEY on the server shows who holds the lock. NUL-terminated,
     * 1..RESPLOCK_MAX_OWNER_LEN bytes of A-Z a-z 0-9 . _ - (others: invalid_argument, nothing
     * sent); "" or NULL: no label. Release, extend and every owner check compare the whole token.
     * Also taken by resplock_quorum_try_acquire_opt() (the same label on every server). */
    const char* owner;
} resplock_acquire_options_t;

/* Fills `options` with the defaults: no fence, no interval, no wake, no owner label. */
void resplock_acquire_options_init(resplock_acquire_options_t* options);

/* resplock_lock_acquire() with options. `fence` receives the fencing number on ok when
 * options->fence is set (it must then not be NULL). NULL options: no options. Returns
 * resplock_lock_acquire()'s statuses; busy also while the once-per marker exists; too_large when
 * the request does not fit the buffer (not sent); invalid_argument for a NULL lock or fence, or
 * once_per_ms over RESPLOCK_MAX_TTL_MS. */
resplock_status_t resplock_lock_acquire_opt(resplock_lock_t* lock, uint32_t ttl_ms,
                                            const resplock_acquire_options_t* options,
                                            uint64_t* fence);

/* resplock_lock_try_acquire() with options: waits up to wait_ms, never past the holder's TTL nor
 * the once-per marker's. With options->wake the pauses block on BLPOP, so a release made with
 * wake hands the lock over at once. Returns resplock_lock_acquire_opt()'s statuses; busy when the
 * wait ran out. */
resplock_status_t resplock_lock_try_acquire_opt(resplock_lock_t* lock, uint32_t ttl_ms,
                                                uint32_t wait_ms,
                                                const resplock_acquire_options_t* options,
                                                uint64_t* fence);

/* resplock_lock_release() with options: with options->wake, a successful release also wakes one
 * waiter blocked in resplock_lock_try_acquire_opt() with wake. Same statuses and retries as
 * resplock_lock_release(), plus too_large when the request does not fit the buffer. */
resplock_status_t resplock_lock_release_opt(resplock_lock_t* lock,
                                            const resplock_acquire_options_t* options);

/* Largest count resplock_lock_set_replicas() accepts. */
#define RESPLOCK_MAX_REPLICAS 255u

/* Replica acknowledgement: with replicas >= 1, every acquisition of `lock` that succeeds (plain,
 * with options, each attempt of a try_acquire) and every extend that succeeds is followed by
 * WAIT replicas <ms>, its timeout half of what is left of the call's budget. The call succeeds
 * only if at least `replicas` replicas acknowledged; otherwise an acquisition releases the lock
 * again and an extend keeps no more validity than before it, and both return not_replicated (an
 * error reply to WAIT returns its own status, a reply that is not a count protocol_error).
 * 0 turns it off (the default). Returns ok, or invalid_argument (NULL, or over
 * RESPLOCK_MAX_REPLICAS). A firmware that never calls it links none of it. */
resplock_status_t resplock_lock_set_replicas(resplock_lock_t* lock, uint32_t replicas);

/* How many replicas acknowledged the lock's last WAIT (0 before any, when its reply was not a
 * count, or for NULL). */
uint32_t resplock_lock_replicas_acknowledged(const resplock_lock_t* lock);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_OPTIONS_H */
