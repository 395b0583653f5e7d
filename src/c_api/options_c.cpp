// The C API of the acquisition options: wrappers over Lock's calls with AcquireOptions, and
// the replica acknowledgement setting (Lock::set_replicas).
#include "resplock/c_api/options.h"

#include "c_api/handles.hpp"
#include "resplock/core/lock_options.hpp"

using resplock::AcquireOptions;
using resplock::Lock;
using resplock::c_api::c_status;

static_assert(resplock::c_api::storage_fits<Lock, resplock_lock_t>(),
              "RESPLOCK_LOCK_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<Lock, resplock_lock_t>(),
              "RESPLOCK_LOCK_STORAGE is larger than needed: its formula drifted from the class");
static_assert(RESPLOCK_MAX_REPLICAS == Lock::max_replicas, "one replica limit for C and C++");

namespace {

AcquireOptions options_of(const resplock_acquire_options_t* options) noexcept {
    AcquireOptions o;
    if (options != nullptr) {
        o.fence = options->fence != 0;
        o.once_per_ms = options->once_per_ms;
        o.wake = options->wake != 0;
        if (options->owner != nullptr) o.owner = options->owner;
    }
    return o;
}

}  // namespace

extern "C" {

void resplock_acquire_options_init(resplock_acquire_options_t* options) {
    if (options != nullptr) *options = {0, 0, 0, nullptr};
}

resplock_status_t resplock_lock_acquire_opt(resplock_lock_t* lock, uint32_t ttl_ms,
                                            const resplock_acquire_options_t* options,
                                            uint64_t* fence) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(
        resplock::c_api::object<Lock>(lock).acquire(ttl_ms, options_of(options), fence));
}

resplock_status_t resplock_lock_try_acquire_opt(resplock_lock_t* lock, uint32_t ttl_ms,
                                                uint32_t wait_ms,
                                                const resplock_acquire_options_t* options,
                                                uint64_t* fence) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(resplock::c_api::object<Lock>(lock).try_acquire(ttl_ms, wait_ms,
                                                                    options_of(options), fence));
}

resplock_status_t resplock_lock_release_opt(resplock_lock_t* lock,
                                            const resplock_acquire_options_t* options) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(resplock::c_api::object<Lock>(lock).release(options_of(options)));
}

resplock_status_t resplock_lock_set_replicas(resplock_lock_t* lock, uint32_t replicas) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(resplock::c_api::object<Lock>(lock).set_replicas(replicas));
}

uint32_t resplock_lock_replicas_acknowledged(const resplock_lock_t* lock) {
    return lock == nullptr ? 0U : resplock::c_api::object<Lock>(lock).replicas_acknowledged();
}

}  // extern "C"
