// The reentrant lock's C API: thin wrappers over resplock::ReentrantLock in the caller's storage.
#include "resplock/c_api/reentrant.h"

#include "c_api/handles.hpp"
#include "resplock/variants/reentrant_lock.hpp"

using resplock::ReentrantLock;

static_assert(resplock::c_api::storage_fits<ReentrantLock, resplock_reentrant_t>(),
              "RESPLOCK_REENTRANT_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<ReentrantLock, resplock_reentrant_t>(),
              "RESPLOCK_REENTRANT_STORAGE is larger than the object: its formula no longer follows "
              "the class");

namespace {

using resplock::c_api::c_status;
using resplock::c_api::object;

}  // namespace

extern "C" {

size_t resplock_reentrant_buffer_min(void) {
    return resplock::reentrant_buffer_min();
}

resplock_status_t resplock_reentrant_init(resplock_reentrant_t* lock, resplock_conn_t* conn,
                                          const char* key, size_t key_len, const char* owner,
                                          size_t owner_len) {
    if (lock == nullptr || conn == nullptr || key == nullptr || key_len == 0 ||
        key_len > RESPLOCK_MAX_KEY_LEN || (owner == nullptr && owner_len != 0) ||
        owner_len > resplock::max_token_len) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    new (lock->opaque.bytes)
        ReentrantLock(object<resplock::Connection>(conn), {key, key_len},
                      owner == nullptr ? std::string_view() : std::string_view(owner, owner_len));
    return RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_reentrant_acquire(resplock_reentrant_t* lock, uint32_t ttl_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<ReentrantLock>(lock).acquire(ttl_ms));
}

resplock_status_t resplock_reentrant_try_acquire(resplock_reentrant_t* lock, uint32_t ttl_ms,
                                                 uint32_t wait_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<ReentrantLock>(lock).try_acquire(ttl_ms, wait_ms));
}

resplock_status_t resplock_reentrant_release(resplock_reentrant_t* lock) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<ReentrantLock>(lock).release());
}

resplock_status_t resplock_reentrant_extend(resplock_reentrant_t* lock, uint32_t ttl_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(object<ReentrantLock>(lock).extend(ttl_ms));
}

uint32_t resplock_reentrant_remaining_ms(const resplock_reentrant_t* lock) {
    return lock == nullptr ? 0U : object<ReentrantLock>(lock).remaining_ms();
}

uint32_t resplock_reentrant_count(const resplock_reentrant_t* lock) {
    return lock == nullptr ? 0U : object<ReentrantLock>(lock).count();
}

const char* resplock_reentrant_owner(const resplock_reentrant_t* lock, size_t* len) {
    const std::string_view o =
        lock == nullptr ? std::string_view() : object<ReentrantLock>(lock).owner();
    if (len != nullptr) *len = o.size();
    return o.empty() ? nullptr : o.data();
}

}  // extern "C"
