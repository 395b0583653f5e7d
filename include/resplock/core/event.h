/* resplock events: what an application may observe of its connections and locks, for logs and
 * metrics (see Observer in "resplock/core/observer.hpp", and "resplock/c_api/observer.h").
 * Shared by the C and C++ APIs. Nothing here allocates; an event lives only during the call. */
#ifndef RESPLOCK_EVENT_H
#define RESPLOCK_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name): one line per kind (what each carries: resplock_event_t). The numeric value is the
 * position in this list.
 *   connect:   a connection's first successful connect and handshake
 *   reconnect: a later one (after a fault, an idle close by the server, or close())
 *   retry:     an acquisition attempt failed and another follows after a pause
 *   renewal:   a Renewer sent a renewal (ok, or why it failed)
 *   loss:      a Renewer reported a lock lost
 *   redirect:  a Redis Cluster router (resplock/ha/cluster.hpp) follows a MOVED or an ASK */
#define RESPLOCK_EVENT_LIST(X) X(connect) X(reconnect) X(retry) X(renewal) X(loss) X(redirect)

#define RESPLOCK_EVENT_C_ENUM(name) RESPLOCK_EVENT_##name,
typedef enum resplock_event_kind {
    RESPLOCK_EVENT_LIST(RESPLOCK_EVENT_C_ENUM)
} resplock_event_kind_t;
#undef RESPLOCK_EVENT_C_ENUM

/* One event. Plain data, valid only during the call that reports it.
 *   connect, reconnect: status ok, or the status of a CLIENT SETNAME the server refused (e.g.
 *     no_permission): the connection is up and used either way, and the connection's error
 *     text holds the server's message during the call; key NULL; number and ms 0.
 *   retry: an acquisition or a release is tried again. status busy (the lock is held), or the
 *     failure that is retried (connect_failed, timeout, loading, try_again, no_replicas...); key:
 *     the lock's key; number: the attempt that failed (1 for the first); ms: the pause before
 *     the next attempt (0: at once).
 *   renewal: status ok or the failure (a renewal that proves the lock lost is followed by a loss
 *     event); key: the lock's key when the lock type has one, else NULL; number: the TTL asked
 *     for; ms: the validity left after the renewal.
 *   loss: status not_owner or expired; key as for renewal; number: the watch TTL; ms: 0.
 *   redirect: status ok; number: the slot (0..16383); ms: the redirections of this command so
 *     far (1 for the first); key: not a lock's key but the redirection as the server sent it,
 *     validated: "MOVED <slot> <host>:<port>" (the node is remembered for the next commands) or
 *     "ASK <slot> <host>:<port>" (this command only); an empty host means the node that
 *     answered. */
typedef struct resplock_event {
    resplock_event_kind_t kind;
    resplock_status_t status;
    uint32_t number;
    uint32_t ms;
    const char* key; /* key_len bytes, not NUL-terminated; NULL when not known */
    size_t key_len;
} resplock_event_t;

/* An application's event function, called with the `user` pointer given along with it. It runs
 * inside the library call that caused the event: it must be quick, and must not use the
 * connection or the lock the event is about. */
typedef void (*resplock_event_fn)(void* user, const resplock_event_t* event);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_EVENT_H */
