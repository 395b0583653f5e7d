/* resplock renewal driver for C programs (C99): keeps up to RESPLOCK_MAX_RENEWED locks alive
 * from the caller's own loop, with no thread and no allocation.
 *
 * resplock_renewer_tick() extends each watched lock min(ttl/3, (remaining - margin)/2) ms after
 * its last successful renewal (remaining: once its reply is in), retries a failed renewal after
 * min(ttl/10, (remaining - margin)/2) ms while validity lasts, and calls the lost callback (the
 * lock is then no longer watched) when the server says the lock is gone (not_owner, expired) or
 * its local validity falls to its loss margin before a renewal succeeded (expired). The margin is
 * the time the caller needs to stop the protected work, which must stop when the lock is reported
 * lost. Renewals due together go most urgent first, each bounded by the earliest loss deadline,
 * so a slow server cannot delay the loss report of a lock on another one (see renewer.hpp).
 *
 *     static resplock_renewer_t renewer;
 *     resplock_renewer_init(&renewer);
 *     resplock_renewer_watch_lock(&renewer, &lock, 10000, on_lost, &job, 500);
 *     for (;;) {
 *         uint32_t wait = resplock_renewer_tick(&renewer, port.now_ms(port.ctx));
 *         ... other work, for at most `wait` ms ...
 *     }
 */
#ifndef RESPLOCK_RENEWER_H
#define RESPLOCK_RENEWER_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"
#include "resplock/c_api/observer.h"
#include "resplock/core/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One slot of resplock::Renewer: lock, ops, on_lost, user (pointers), ttl_ms, margin_ms, due_ms,
 * left_ms, token_hash (uint32_t), scheduled (bool). */
#define RESPLOCK_SZ_RENEWER_SLOT \
    RESPLOCK_SZ_ALIGN(4 * sizeof(void*) + 5 * sizeof(uint32_t) + 1, sizeof(void*))
/* Storage size of the renewer (see lock.h for how the sizes follow config.h): a resplock::Renewer
 * (RESPLOCK_MAX_RENEWED slots, observer_), then the C callback of each slot (three pointers). */
#define RESPLOCK_RENEWER_STORAGE                                               \
    ((size_t)RESPLOCK_MAX_RENEWED * RESPLOCK_SZ_RENEWER_SLOT + sizeof(void*) + \
     (size_t)RESPLOCK_MAX_RENEWED * 3 * sizeof(void*))

/* Opaque: use only through the functions below. */
typedef struct resplock_renewer {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_RENEWER_STORAGE];
    } opaque;
} resplock_renewer_t;

/* Called from resplock_renewer_tick() when `lock` is lost; `why` is not_owner or expired. The
 * lock is no longer watched: the callback may unwatch, release or watch it again, but must not
 * call resplock_renewer_tick(). */
typedef void (*resplock_renewer_lost_fn)(void* user, resplock_lock_t* lock, resplock_status_t why);

/* An empty renewer. Returns ok, or invalid_argument for NULL. */
resplock_status_t resplock_renewer_init(resplock_renewer_t* renewer);

/* Starts renewing `lock` (which must outlive the watch) with ttl_ms every ttl_ms/3, or sooner
 * when the margin would be reached first, and reports it lost once its validity left falls to
 * loss_margin_ms (0: when it runs out); `on_lost` may be NULL. A renewal grants at most
 * ttl_ms - ttl_ms/100 - 2 ms of validity, which must exceed the margin by 2 ms at least. Returns
 * ok, invalid_argument (NULL, lock not held, ttl_ms outside 4..RESPLOCK_MAX_TTL_MS,
 * loss_margin_ms above ttl_ms - ttl_ms/100 - 4, or already watched) or too_large
 * (RESPLOCK_MAX_RENEWED watched). */
resplock_status_t resplock_renewer_watch_lock(resplock_renewer_t* renewer, resplock_lock_t* lock,
                                              uint32_t ttl_ms, resplock_renewer_lost_fn on_lost,
                                              void* user, uint32_t loss_margin_ms);

/* Reports a renewal event after each renewal sent and a loss event for each lock reported lost
 * (before its lost callback) to `observer` (resplock/c_api/observer.h), which must outlive the
 * renewer; NULL: none (the default). Does nothing for a NULL renewer. */
void resplock_renewer_set_observer(resplock_renewer_t* renewer,
                                   const resplock_observer_t* observer);

/* Stops renewing `lock` (no request is sent); nothing happens if it is not watched. */
void resplock_renewer_unwatch_lock(resplock_renewer_t* renewer, const resplock_lock_t* lock);

/* Renews the watched locks that are due; now_ms is the locks' port clock (port.now_ms). A lock
 * released by its user is dropped silently. Blocks for the renewals it sends (each bounded by
 * the connection's timeout and the earliest loss deadline). Returns the ms after now_ms at which
 * to call it again (0: at once; 1000 when nothing is watched). */
uint32_t resplock_renewer_tick(resplock_renewer_t* renewer, uint32_t now_ms);

/* How many locks are watched (0 for NULL). */
size_t resplock_renewer_watching(const resplock_renewer_t* renewer);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_RENEWER_H */
