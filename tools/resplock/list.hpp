// `resplock list [PATTERN]`: every lock whose key matches PATTERN (SCAN's MATCH; default `*`),
// one per line: list's columns, or a JSON object with --json (view_output.hpp). Each key is read
// as inspect_key() reads it; companion keys (is_companion()) and values no lock kind writes are
// left out. SCAN with MATCH and COUNT, never KEYS, and at most --max locks (a line on stderr
// says when it stopped there). On a Redis Cluster (the URL may name any node) every master
// that CLUSTER NODES names is scanned, each once; replicas are not.
#ifndef RESPLOCK_TOOL_LIST_HPP
#define RESPLOCK_TOOL_LIST_HPP

#include "args.hpp"
#include "failure.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/port.h"
#include "url.hpp"

namespace resplock_cli {

// Lists the locks of the one server (or cluster) ep names, connected as config says, over `port`.
// Returns the exit code: 0 listed (none included), or the failure's (reported).
int list_locks(const Options& o, const Endpoint& ep, resplock::ConnectionConfig config,
               resplock_port_t port, const Target& t);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_LIST_HPP
