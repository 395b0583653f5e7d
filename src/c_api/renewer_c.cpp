// The renewal driver's C API: a Renewer plus, per watched lock, the C callback it reports to.
#include "resplock/c_api/renewer.h"

#include "c_api/handles.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/variants/renewer.hpp"

using resplock::Lock;
using resplock::Renewer;
using resplock::Status;

namespace {

// The C callback of one watched lock; the Renewer's own callback receives a pointer to it.
struct CWatch {
    resplock_lock_t* lock = nullptr;
    resplock_renewer_lost_fn on_lost = nullptr;
    void* user = nullptr;
};

struct CRenewer {
    Renewer renewer;
    CWatch watches[RESPLOCK_MAX_RENEWED];
};

static_assert(resplock::c_api::storage_fits<CRenewer, resplock_renewer_t>(),
              "RESPLOCK_RENEWER_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<CRenewer, resplock_renewer_t>(),
              "RESPLOCK_RENEWER_STORAGE is larger than needed: its formula drifted from the class");

CRenewer& renewer_of(resplock_renewer_t* r) {
    return resplock::c_api::object<CRenewer>(r);
}

void report_lost(void* user, void* /*lock*/, Status why) noexcept {
    auto& w = *static_cast<CWatch*>(user);
    const CWatch was = w;
    w = CWatch{};
    if (was.on_lost != nullptr) was.on_lost(was.user, was.lock, resplock::c_api::c_status(why));
}

}  // namespace

extern "C" {

resplock_status_t resplock_renewer_init(resplock_renewer_t* renewer) {
    if (renewer == nullptr) return RESPLOCK_STATUS_invalid_argument;
    new (renewer->opaque.bytes) CRenewer();
    return RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_renewer_watch_lock(resplock_renewer_t* renewer, resplock_lock_t* lock,
                                              uint32_t ttl_ms, resplock_renewer_lost_fn on_lost,
                                              void* user, uint32_t loss_margin_ms) {
    if (renewer == nullptr || lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    CRenewer& r = renewer_of(renewer);
    // An entry for this lock, or one whose lock is no longer watched (released or lost).
    CWatch* entry = nullptr;
    for (CWatch& w : r.watches) {
        if (w.lock == lock || w.lock == nullptr ||
            !r.renewer.watches(&resplock::c_api::object<Lock>(w.lock))) {
            entry = &w;
            if (w.lock == lock) break;
        }
    }
    Lock& l = resplock::c_api::object<Lock>(lock);
    if (entry == nullptr) return RESPLOCK_STATUS_too_large;  // the renewer is full too
    const Status s = r.renewer.watch(l, ttl_ms, &report_lost, entry, loss_margin_ms);
    if (s == Status::ok) *entry = CWatch{lock, on_lost, user};
    return resplock::c_api::c_status(s);
}

void resplock_renewer_set_observer(resplock_renewer_t* renewer,
                                   const resplock_observer_t* observer) {
    if (renewer == nullptr) return;
    renewer_of(renewer).renewer.set_observer(
        observer == nullptr ? nullptr : &resplock::c_api::object<resplock::Observer>(observer));
}

void resplock_renewer_unwatch_lock(resplock_renewer_t* renewer, const resplock_lock_t* lock) {
    if (renewer == nullptr || lock == nullptr) return;
    renewer_of(renewer).renewer.unwatch(&resplock::c_api::object<Lock>(lock));
}

uint32_t resplock_renewer_tick(resplock_renewer_t* renewer, uint32_t now_ms) {
    return renewer == nullptr ? Renewer::idle_ms : renewer_of(renewer).renewer.tick(now_ms);
}

size_t resplock_renewer_watching(const resplock_renewer_t* renewer) {
    return renewer == nullptr ? 0U : resplock::c_api::object<CRenewer>(renewer).renewer.watching();
}

}  // extern "C"
