// The counting semaphore's C API: thin wrappers over resplock::Semaphore in the caller's storage.
#include "resplock/c_api/semaphore.h"

#include "c_api/handles.hpp"
#include "resplock/variants/semaphore.hpp"

using resplock::Semaphore;
using resplock::SemaphoreHolder;
using resplock::SemaphoreInfo;
using resplock::Status;

static_assert(resplock::c_api::storage_fits<Semaphore, resplock_sem_t>(),
              "RESPLOCK_SEM_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<Semaphore, resplock_sem_t>(),
              "RESPLOCK_SEM_STORAGE is larger than needed: its formula drifted from the class");
static_assert(RESPLOCK_SEM_MAX_LIMIT == Semaphore::max_limit, "one limit bound");
static_assert(resplock::companion_prefix_extra == 4, "RESPLOCK_SEM_STORAGE counts 4 bytes");

namespace {

using resplock::c_api::c_status;

Semaphore& sem_of(resplock_sem_t* sem) {
    return resplock::c_api::object<Semaphore>(sem);
}
const Semaphore& sem_of(const resplock_sem_t* sem) {
    return resplock::c_api::object<Semaphore>(sem);
}

// The C visitor of one holders() call, behind the C++ one.
struct CVisit {
    resplock_sem_holder_fn visit;
    void* ctx;
};

void visit_holder(void* ctx, const SemaphoreHolder& holder) noexcept {
    const auto& v = *static_cast<const CVisit*>(ctx);
    // The label is a view into the connection's buffer, where the CR LF that ended its bulk
    // string follows it: a NUL over the CR makes it a C string, and nothing reads that CR again
    // (the page was parsed whole before any visit; the next request overwrites the buffer).
    char* label = const_cast<char*>(holder.owner.data());  // NOLINT: the caller's buffer
    label[holder.owner.size()] = '\0';
    v.visit(v.ctx, label, holder.owner.size(), holder.remaining_ms);
}

}  // namespace

extern "C" {

size_t resplock_sem_buffer_min(void) {
    return resplock::semaphore_buffer_min();
}

resplock_status_t resplock_sem_init(resplock_sem_t* sem, resplock_conn_t* conn, const char* key,
                                    size_t key_len, uint32_t limit, int fair) {
    if (sem == nullptr || conn == nullptr) return RESPLOCK_STATUS_invalid_argument;
    // A refused key or limit still builds the object, bound to no key, so that every later call
    // reports invalid_argument.
    const Semaphore* s = new (sem->opaque.bytes) Semaphore(
        resplock::c_api::object<resplock::Connection>(conn),
        key != nullptr ? std::string_view(key, key_len) : std::string_view(), limit, fair != 0);
    return s->key().empty() ? RESPLOCK_STATUS_invalid_argument : RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_sem_set_owner(resplock_sem_t* sem, const char* owner, size_t owner_len) {
    if (sem == nullptr || (owner == nullptr && owner_len != 0)) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    return c_status(sem_of(sem).set_owner(owner == nullptr ? std::string_view()
                                                           : std::string_view(owner, owner_len)));
}

resplock_status_t resplock_sem_acquire(resplock_sem_t* sem, uint32_t ttl_ms, uint64_t* fence) {
    if (sem == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(sem_of(sem).acquire(ttl_ms, fence));
}

resplock_status_t resplock_sem_try_acquire(resplock_sem_t* sem, uint32_t ttl_ms, uint32_t wait_ms,
                                           uint64_t* fence) {
    if (sem == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(sem_of(sem).try_acquire(ttl_ms, wait_ms, fence));
}

resplock_status_t resplock_sem_release(resplock_sem_t* sem) {
    if (sem == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(sem_of(sem).release());
}

resplock_status_t resplock_sem_extend(resplock_sem_t* sem, uint32_t ttl_ms) {
    if (sem == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(sem_of(sem).extend(ttl_ms));
}

resplock_status_t resplock_sem_query(resplock_sem_t* sem, resplock_sem_info_t* info) {
    if (sem == nullptr || info == nullptr) return RESPLOCK_STATUS_invalid_argument;
    SemaphoreInfo i;
    const Status s = sem_of(sem).query(i);
    if (s == Status::ok) {
        info->count = i.count;
        info->mine = i.mine ? 1 : 0;
        info->ttl_ms = i.ttl_ms;
        info->waiters = i.waiters;
    }
    return c_status(s);
}

resplock_status_t resplock_sem_holders(resplock_sem_t* sem, resplock_sem_holder_fn visit,
                                       void* ctx) {
    if (sem == nullptr || visit == nullptr) return RESPLOCK_STATUS_invalid_argument;
    CVisit v{visit, ctx};
    return c_status(sem_of(sem).holders(&visit_holder, &v));
}

resplock_status_t resplock_sem_adopt(resplock_sem_t* sem, const char* token, size_t len) {
    if (sem == nullptr || token == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(sem_of(sem).adopt({token, len}));
}

uint32_t resplock_sem_remaining_ms(const resplock_sem_t* sem) {
    return sem == nullptr ? 0U : sem_of(sem).remaining_ms();
}

const char* resplock_sem_token(const resplock_sem_t* sem, size_t* len) {
    const std::string_view t = sem == nullptr ? std::string_view() : sem_of(sem).token();
    if (len != nullptr) *len = t.size();
    return t.empty() ? nullptr : t.data();
}

}  // extern "C"
