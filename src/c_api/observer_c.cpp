// The C API of the Observer: built inside the caller's resplock_observer_t.
#include "resplock/c_api/observer.h"

#include <new>

#include "c_api/handles.hpp"
#include "resplock/core/observer.hpp"

using resplock::Observer;

static_assert(resplock::c_api::storage_fits<Observer, resplock_observer_t>(),
              "RESPLOCK_OBSERVER_STORAGE is too small for this target");
static_assert(
    resplock::c_api::storage_tight<Observer, resplock_observer_t>(),
    "RESPLOCK_OBSERVER_STORAGE is larger than needed: its formula drifted from the class");
static_assert(RESPLOCK_MAX_CLIENT_NAME_LEN == resplock::max_client_name_len, "one name limit");

extern "C" {

resplock_status_t resplock_observer_init(resplock_observer_t* observer, resplock_event_fn on_event,
                                         void* user) {
    if (observer == nullptr) return RESPLOCK_STATUS_invalid_argument;
    new (observer->opaque.bytes) Observer(on_event, user);
    return RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_observer_set_client_name(resplock_observer_t* observer,
                                                    const char* name) {
    if (observer == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return resplock::c_api::c_status(
        resplock::c_api::object<Observer>(observer).set_client_name(name));
}

}  // extern "C"
