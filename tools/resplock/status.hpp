// `resplock status KEY`: who holds KEY, for how long, and the owner label of the holder's token
// when it carries one ("free", "held <ms>" or "held <ms> <label>"; "held forever" for a key
// without a TTL), over one server or a quorum;
// with --limit, how many leases of the semaphore live and each one's time left and label.
#ifndef RESPLOCK_TOOL_STATUS_HPP
#define RESPLOCK_TOOL_STATUS_HPP

#include <string_view>

#include "args.hpp"
#include "failure.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/variants/quorum_lock.hpp"
#include "resplock/variants/semaphore.hpp"

namespace resplock_cli {

// KEY on one server, read as a plain lock's string (what a plain or a fair lock sets), or as a
// reentrant lock's hash. Prints the answer and returns the exit code.
int status_single(resplock::Connection& conn, std::string_view key, const Options& o,
                  const Target& t);

// Over a quorum: held while a majority of the servers hold the key with one token; the time
// shown is the shortest PTTL among them, the label the one a majority of them show.
int status_quorum(resplock::QuorumLock& lock, resplock::Connection* const* conns, const Options& o,
                  const Target& t);

// The semaphore of --limit N: "held K/N" (K live leases, K >= 1) or "free 0/N", then one line per
// live lease, the first to end first: "<remaining-ms> <label>", or "<remaining-ms>" for a token
// without a label. The lines are read after the count (a lease may end or start in between).
// Fair waiters queued are told on stderr, one line, so that stdout keeps its format.
int status_semaphore(resplock::Semaphore& semaphore, const Options& o, const Target& t);

// status --json or --verbose on one server: what inspect_key() reads of KEY, whatever kind holds
// it, as one JSON object or as "name value" lines (view_output.hpp). Exit 0 held, 1 free.
int status_inspect(resplock::Connection& conn, std::string_view key, const Options& o,
                   const Target& t);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_STATUS_HPP
