// The Sentinel router's C API: resplock::Sentinel in the caller's storage.
#include "resplock/c_api/sentinel.h"

#include <cstring>

#include "c_api/handles.hpp"
#include "resplock/ha/sentinel.hpp"

using resplock::Sentinel;

static_assert(resplock::c_api::storage_fits<Sentinel, resplock_sentinel_t>(),
              "RESPLOCK_SENTINEL_STORAGE is too small for this target");
static_assert(
    resplock::c_api::storage_tight<Sentinel, resplock_sentinel_t>(),
    "RESPLOCK_SENTINEL_STORAGE is larger than needed: its formula drifted from the class");

static_assert(resplock::c_api::storage_fits<Sentinel::Link, resplock_sentinel_link_t>(),
              "RESPLOCK_SENTINEL_LINK_STORAGE is too small for this target");
static_assert(
    resplock::c_api::storage_tight<Sentinel::Link, resplock_sentinel_link_t>(),
    "RESPLOCK_SENTINEL_LINK_STORAGE is larger than needed: its formula drifted from the class");

namespace {

using resplock::c_api::object;

// A NUL-terminated text of at most RESPLOCK_MAX_HOST_LEN bytes, without reading past them.
bool bounded(const char* text, std::string_view& out) noexcept {
    if (text == nullptr) return false;
    const void* end = std::memchr(text, '\0', RESPLOCK_MAX_HOST_LEN + 1);
    if (end == nullptr) return false;
    out = {text, static_cast<std::size_t>(static_cast<const char*>(end) - text)};
    return !out.empty();
}

}  // namespace

extern "C" {

resplock_status_t resplock_sentinel_init_linked(resplock_sentinel_t* sentinel,
                                                const char* master_name,
                                                const resplock_sentinel_addr_t* sentinels,
                                                resplock_sentinel_link_t* links,
                                                const resplock_port_t* ports, size_t count,
                                                resplock_conn_config_t* conn_config) {
    std::string_view name;
    if (sentinel == nullptr || sentinels == nullptr || conn_config == nullptr || count == 0 ||
        count > RESPLOCK_MAX_SENTINELS || !bounded(master_name, name) ||
        (links == nullptr) != (ports == nullptr)) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    Sentinel* router = new (sentinel->opaque.bytes) Sentinel(name);
    for (std::size_t i = 0; i < count; ++i) {
        std::string_view host;
        Sentinel::Link* link =
            links != nullptr ? new (links[i].opaque.bytes) Sentinel::Link(ports[i]) : nullptr;
        if (!bounded(sentinels[i].host, host) || !router->add(host, sentinels[i].port, link)) {
            return RESPLOCK_STATUS_invalid_argument;
        }
    }
    conn_config->router =
        reinterpret_cast<struct resplock_router*>(static_cast<resplock::Router*>(router));
    return RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_sentinel_init(resplock_sentinel_t* sentinel, const char* master_name,
                                         const resplock_sentinel_addr_t* sentinels, size_t count,
                                         resplock_conn_config_t* conn_config) {
    return resplock_sentinel_init_linked(sentinel, master_name, sentinels, nullptr, nullptr, count,
                                         conn_config);
}

void resplock_sentinel_deinit(resplock_sentinel_t* sentinel) {
    if (sentinel != nullptr) object<Sentinel>(sentinel).close_links();
}

size_t resplock_sentinel_tried(const resplock_sentinel_t* sentinel) {
    return sentinel == nullptr ? 0 : object<Sentinel>(sentinel).tried();
}

int resplock_sentinel_name_unknown(const resplock_sentinel_t* sentinel) {
    return sentinel != nullptr && object<Sentinel>(sentinel).name_unknown() ? 1 : 0;
}

}  // extern "C"
