// Which node each connection of the tool talks to: the router (resplock/core/router.hpp) an
// Endpoint asks for, kept in static storage (the tool never allocates for the library).
#ifndef RESPLOCK_TOOL_ROUTING_HPP
#define RESPLOCK_TOOL_ROUTING_HPP

#include "args.hpp"
#include "resplock/core/router.hpp"
#include "resplock/ha/sentinel.hpp"
#include "url.hpp"

namespace resplock_cli {

// The router for the connection to ep, the index-th of the `count` servers of the command line;
// null when the connection talks to ep's host and port only. A redis[s]-sentinel:// ep gets a
// resplock::Sentinel over its sentinels (one per index, built afresh on each call), with a link
// of its own to each (TLS as o says for rediss-sentinel://), so that they are asked at once. The
// server of a single-server lock (count 1, redis:// or rediss://) gets a Redis Cluster router,
// so that its URL may name any node of a cluster (a server that is no cluster node never
// redirects: nothing changes); the plain servers of a quorum get none (the quorum stays over
// independent servers).
resplock::Router* router_for(const Endpoint& ep, const Options& o, int index, int count);

// The Sentinel router_for() last built for index, for messages; null if none.
const resplock::Sentinel* sentinel_for(int index);

// The node the single server's connection `conn` talked to last ("host:port", "[v6]:port"), for
// messages: the master a Sentinel found, or a Cluster's redirection or ASK target; `fallback`
// when it is the URL's own node. Writes at most cap bytes.
void last_node(const resplock::Connection& conn, const char* fallback, char* out, std::size_t cap);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_ROUTING_HPP
