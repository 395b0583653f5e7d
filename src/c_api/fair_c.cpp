// The fair lock's C API: thin wrappers over resplock::FairLock in the caller's storage.
#include "resplock/c_api/fair.h"

#include "c_api/handles.hpp"
#include "resplock/variants/fair_lock.hpp"

using resplock::FairLock;

static_assert(resplock::c_api::storage_fits<FairLock, resplock_fair_t>(),
              "RESPLOCK_FAIR_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<FairLock, resplock_fair_t>(),
              "RESPLOCK_FAIR_STORAGE is larger than needed: its formula drifted from the class");

namespace {

using resplock::c_api::c_status;
using resplock::c_api::object;

}  // namespace

extern "C" {

size_t resplock_fair_buffer_min(void) {
    return resplock::fair_buffer_min();
}

resplock_status_t resplock_fair_init(resplock_fair_t* lock, resplock_conn_t* conn, const char* key,
                                     size_t key_len) {
    if (lock == nullptr || conn == nullptr || key == nullptr || key_len == 0 ||
        key_len > RESPLOCK_MAX_KEY_LEN) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    new (lock->opaque.bytes) FairLock(object<resplock::Connection>(conn), {key, key_len});
    return RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_fair_acquire(resplock_fair_t* lock, uint32_t ttl_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<FairLock>(lock).acquire(ttl_ms));
}

resplock_status_t resplock_fair_try_acquire(resplock_fair_t* lock, uint32_t ttl_ms,
                                            uint32_t wait_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<FairLock>(lock).try_acquire(ttl_ms, wait_ms));
}

resplock_status_t resplock_fair_try_acquire_fenced(resplock_fair_t* lock, uint32_t ttl_ms,
                                                   uint32_t wait_ms, uint64_t* fence) {
    if (lock == nullptr || fence == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<FairLock>(lock).try_acquire(ttl_ms, wait_ms, fence));
}

resplock_status_t resplock_fair_set_owner(resplock_fair_t* lock, const char* owner,
                                          size_t owner_len) {
    if (lock == nullptr || (owner == nullptr && owner_len != 0)) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    return c_status(object<FairLock>(lock).set_owner({owner_len != 0 ? owner : "", owner_len}));
}

resplock_status_t resplock_fair_set_replicas(resplock_fair_t* lock, uint32_t replicas) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<FairLock>(lock).set_replicas(replicas));
}

resplock_status_t resplock_fair_release(resplock_fair_t* lock) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<FairLock>(lock).release());
}

resplock_status_t resplock_fair_extend(resplock_fair_t* lock, uint32_t ttl_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<FairLock>(lock).extend(ttl_ms));
}

uint32_t resplock_fair_remaining_ms(const resplock_fair_t* lock) {
    return lock == nullptr ? 0U : object<FairLock>(lock).remaining_ms();
}

const char* resplock_fair_token(const resplock_fair_t* lock, size_t* len) {
    const std::string_view t =
        lock == nullptr ? std::string_view() : object<FairLock>(lock).token();
    if (len != nullptr) *len = t.size();
    return t.empty() ? nullptr : t.data();
}

}  // extern "C"
