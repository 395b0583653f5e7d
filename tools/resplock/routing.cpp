// router_for() and sentinel_for() (see routing.hpp).
#include "routing.hpp"

#include <cstdio>
#include <cstring>
#include <new>

#include "resplock/ha/cluster.hpp"
#include "resplock/ports/posix.h"
#include "tls.hpp"

namespace resplock_cli {

namespace {

// One Sentinel per server index, built in place by router_for(), with a link of its own to each
// sentinel (a POSIX transport each, in TLS for a rediss-sentinel:// URL): the sentinels are asked
// all at once, so that one that hangs costs nothing while a majority answers.
struct SentinelSlot {
    alignas(resplock::Sentinel) unsigned char bytes[sizeof(resplock::Sentinel)];
    resplock::Sentinel* built;
    resplock_posix_t transports[RESPLOCK_MAX_SENTINELS];
#ifdef RESPLOCK_CLI_TLS
    resplock_mbedtls_t tls[RESPLOCK_MAX_SENTINELS];
#endif
    alignas(resplock::Sentinel::Link) unsigned char links[RESPLOCK_MAX_SENTINELS]
                                                         [sizeof(resplock::Sentinel::Link)];
};
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
SentinelSlot slots[RESPLOCK_MAX_SERVERS];
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
resplock::Cluster cluster;

// The link to the i-th sentinel of slot, or null when its transport cannot be made (the router
// then asks the sentinels over the connection itself).
resplock::Sentinel::Link* link_for(SentinelSlot& slot, std::size_t i, const Endpoint& ep,
                                   const Options& o) {
    resplock_port_t port;
    if (resplock_posix_port_init(&slot.transports[i], nullptr, &port) != RESPLOCK_STATUS_ok) {
        return nullptr;
    }
#ifdef RESPLOCK_CLI_TLS
    if (ep.tls && wrap_tls(o, port, slot.tls[i], port) >= 0) return nullptr;
#else
    (void)ep;
    (void)o;
#endif
    void* room = slot.links[i];
    return new (room) resplock::Sentinel::Link(port);
}

}  // namespace

resplock::Router* router_for(const Endpoint& ep, const Options& o, int index, int count) {
    if (index < 0 || index >= RESPLOCK_MAX_SERVERS) return nullptr;
    if (ep.sentinel) {
        SentinelSlot& slot = slots[index];
        if (slot.built != nullptr) slot.built->~Sentinel();  // closes its links
        auto* sentinel = new (slot.bytes) resplock::Sentinel(ep.master_name);
        slot.built = sentinel;
        // parse_url() checked every host and port against the library's limits.
        for (std::size_t i = 0; i < ep.sentinel_count; ++i) {
            (void)sentinel->add(ep.sentinels[i].host, ep.sentinels[i].port,
                                link_for(slot, i, ep, o));
        }
        return sentinel;
    }
    return count == 1 ? &cluster : nullptr;
}

const resplock::Sentinel* sentinel_for(int index) {
    return index < 0 || index >= RESPLOCK_MAX_SERVERS ? nullptr : slots[index].built;
}

void last_node(const resplock::Connection& conn, const char* fallback, char* out, std::size_t cap) {
    const resplock::Router* router = conn.config().router;
    const resplock::Node* node = nullptr;
    if (router != nullptr && router == slots[0].built) {
        node = &slots[0].built->master();
    } else if (router == &cluster) {
        node = cluster.asked().port != 0 ? &cluster.asked() : &cluster.node();
    }
    if (node == nullptr || node->port == 0) {
        (void)std::snprintf(out, cap, "%s", fallback);
        return;
    }
    const char* host = resplock::Cluster::host_of(*node, conn);
    const bool v6 = std::strchr(host, ':') != nullptr;
    (void)std::snprintf(out, cap, v6 ? "[%s]:%u" : "%s:%u", host,
                        static_cast<unsigned>(node->port));
}

}  // namespace resplock_cli
