// Which node each connection of the tool talks to: the router (resplock/core/router.hpp) an
// Endpoint asks for, kept in static storage (the tool never allocates for the library).
#ifndef RESPLOCK_TOOL_ROUTING_HPP
#define RESPLOCK_TOOL_ROUTING_HPP

#include "resplock/core/router.hpp"
#include "resplock/ha/sentinel.hpp"
#include "url.hpp"

namespace resplock_cli {

// The router for the connection to ep, the index-th server of the command line (0 for a single
// server); null when the connection talks to ep's host and port only. A redis[s]-sentinel:// ep
// gets a resplock::Sentinel over its sentinels (one per index, built afresh on each call).
resplock::Router* router_for(const Endpoint& ep, int index);

// The Sentinel router_for() last built for index, for messages; null if none.
const resplock::Sentinel* sentinel_for(int index);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_ROUTING_HPP
