// The quorum lock's C API: thin wrappers that build a QuorumLock inside the caller's storage.
#include <new>

#include "c_api/handles.hpp"
#include "resplock/c_api/options.h"
#include "resplock/c_api/quorum.h"
#include "resplock/variants/quorum_lock.hpp"

using resplock::Connection;
using resplock::QuorumLock;

static_assert(resplock::c_api::storage_fits<QuorumLock, resplock_quorum_t>(),
              "RESPLOCK_QUORUM_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<QuorumLock, resplock_quorum_t>(),
              "RESPLOCK_QUORUM_STORAGE is larger than needed: its formula drifted from the class");

namespace {

using resplock::c_api::c_status;

QuorumLock& quorum_of(resplock_quorum_t* lock) {
    return resplock::c_api::object<QuorumLock>(lock);
}
const QuorumLock& quorum_of(const resplock_quorum_t* lock) {
    return resplock::c_api::object<QuorumLock>(lock);
}

}  // namespace

extern "C" {

resplock_status_t resplock_quorum_init(resplock_quorum_t* lock, resplock_conn_t* const* conns,
                                       size_t count, const char* key, size_t key_len) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    Connection* objects[RESPLOCK_MAX_SERVERS] = {};
    const bool args_ok = conns != nullptr && key != nullptr && count <= RESPLOCK_MAX_SERVERS;
    if (args_ok) {
        for (size_t i = 0; i < count; ++i) {
            if (conns[i] != nullptr) objects[i] = &resplock::c_api::object<Connection>(conns[i]);
        }
    }
    // An invalid lock is still built, so that every later call reports invalid_argument.
    const QuorumLock* q = new (lock->opaque.bytes)
        QuorumLock(objects, args_ok ? count : 0,
                   args_ok ? std::string_view(key, key_len) : std::string_view());
    return q->quorum() == 0 ? RESPLOCK_STATUS_invalid_argument : RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_quorum_acquire(resplock_quorum_t* lock, uint32_t ttl_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(quorum_of(lock).acquire(ttl_ms));
}

resplock_status_t resplock_quorum_try_acquire(resplock_quorum_t* lock, uint32_t ttl_ms,
                                              uint32_t wait_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(quorum_of(lock).try_acquire(ttl_ms, wait_ms));
}

resplock_status_t resplock_quorum_try_acquire_opt(resplock_quorum_t* lock, uint32_t ttl_ms,
                                                  uint32_t wait_ms,
                                                  const resplock_acquire_options_t* options) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    resplock::AcquireOptions o;
    if (options != nullptr) {
        o.fence = options->fence != 0;
        o.once_per_ms = options->once_per_ms;
        o.wake = options->wake != 0;
        if (options->owner != nullptr) o.owner = options->owner;
    }
    return c_status(quorum_of(lock).try_acquire(ttl_ms, wait_ms, o));
}

resplock_status_t resplock_quorum_release(resplock_quorum_t* lock) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(quorum_of(lock).release());
}

resplock_status_t resplock_quorum_extend(resplock_quorum_t* lock, uint32_t ttl_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(quorum_of(lock).extend(ttl_ms));
}

uint32_t resplock_quorum_remaining_ms(const resplock_quorum_t* lock) {
    return lock == nullptr ? 0U : quorum_of(lock).remaining_ms();
}

const char* resplock_quorum_token(const resplock_quorum_t* lock, size_t* len) {
    const std::string_view t = lock == nullptr ? std::string_view() : quorum_of(lock).token();
    if (len != nullptr) *len = t.size();
    return t.empty() ? nullptr : t.data();
}

}  // extern "C"
