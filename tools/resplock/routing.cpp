// router_for() and sentinel_for() (see routing.hpp).
#include "routing.hpp"

#include <cstdio>
#include <cstring>
#include <new>

#include "resplock/ha/cluster.hpp"

namespace resplock_cli {

namespace {

// One Sentinel per server index, built in place by router_for().
struct SentinelSlot {
    alignas(resplock::Sentinel) unsigned char bytes[sizeof(resplock::Sentinel)];
    resplock::Sentinel* built;
};
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
SentinelSlot slots[RESPLOCK_MAX_SERVERS];
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
resplock::Cluster cluster;

}  // namespace

resplock::Router* router_for(const Endpoint& ep, int index, int count) {
    if (index < 0 || index >= RESPLOCK_MAX_SERVERS) return nullptr;
    if (ep.sentinel) {
        SentinelSlot& slot = slots[index];
        auto* sentinel = new (slot.bytes) resplock::Sentinel(ep.master_name);
        slot.built = sentinel;
        // parse_url() checked every host and port against the library's limits.
        for (std::size_t i = 0; i < ep.sentinel_count; ++i)
            (void)sentinel->add(ep.sentinels[i].host, ep.sentinels[i].port);
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
