/* resplock C API: events and the client name (C99). An observer reports what happens to the
 * connections and renewers it is given (connect, reconnect, retry, renewal, loss: see
 * resplock/core/event.h for what each event carries), and makes those connections send
 * CLIENT SETNAME after AUTH / SELECT on every connect, so that the server's CLIENT LIST shows
 * who is connected. Nothing is allocated; a program that never calls resplock_observer_init()
 * does not link its code.
 *
 *     static void on_event(void* user, const resplock_event_t* e) {
 *         if (e->kind == RESPLOCK_EVENT_retry) log_retry(e->key, e->key_len, e->number, e->ms);
 *     }
 *     static resplock_observer_t observer;
 *     resplock_observer_init(&observer, on_event, NULL);
 *     resplock_observer_set_client_name(&observer, "door-17");
 *     cfg.observer = &observer;   (resplock_conn_config_t, before resplock_conn_init)
 *     resplock_renewer_set_observer(&renewer, &observer);
 */
#ifndef RESPLOCK_OBSERVER_H
#define RESPLOCK_OBSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/core/event.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Storage size of resplock::Observer, four pointers (connected_, on_event_, user_,
 * client_name_); the library checks that it matches. */
#define RESPLOCK_OBSERVER_STORAGE (4 * sizeof(void*))

/* Longest client name resplock_observer_set_client_name() accepts. */
#define RESPLOCK_MAX_CLIENT_NAME_LEN 64

/* Opaque: use only through the functions below. It must outlive the connections and renewers it
 * is given to; they only read it. */
typedef struct resplock_observer {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_OBSERVER_STORAGE];
    } opaque;
} resplock_observer_t;

/* An observer reporting each event to on_event(user, event) (NULL on_event: no events, e.g. an
 * observer only for the client name) and sending no client name. Returns ok, or invalid_argument
 * for a NULL observer. */
resplock_status_t resplock_observer_init(resplock_observer_t* observer, resplock_event_fn on_event,
                                         void* user);

/* CLIENT SETNAME `name` on every connect of the connections given this observer. `name` is
 * NUL-terminated, not copied, and must outlive the observer; NULL: no name. Returns ok, or
 * invalid_argument (NULL observer; an empty name, one over RESPLOCK_MAX_CLIENT_NAME_LEN bytes, or
 * with a byte outside '!'..'~': Redis refuses spaces and newlines), leaving the name unchanged.
 * A server that refuses the name (e.g. NOPERM: an ACL without client|setname) does not fail the
 * connection: the connect or reconnect event carries that status, and
 * resplock_conn_error_text() gives the server's message during that event. */
resplock_status_t resplock_observer_set_client_name(resplock_observer_t* observer,
                                                    const char* name);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_OBSERVER_H */
