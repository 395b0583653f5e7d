// `resplock status KEY`: who holds KEY, for how long, and the owner label of the holder's token
// when it carries one ("free", "held <ms>" or "held <ms> <label>"), over one server or a quorum.
#ifndef RESPLOCK_TOOL_STATUS_HPP
#define RESPLOCK_TOOL_STATUS_HPP

#include <string_view>

#include "args.hpp"
#include "failure.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/variants/quorum_lock.hpp"

namespace resplock_cli {

// KEY on one server, read as a plain lock's string (what a plain or a fair lock sets), or as a
// reentrant lock's hash. Prints the answer and returns the exit code.
int status_single(resplock::Connection& conn, std::string_view key, const Options& o,
                  const Target& t);

// Over a quorum: held while a majority of the servers hold the key with one token; the time
// shown is the shortest PTTL among them, the label the one a majority of them show.
int status_quorum(resplock::QuorumLock& lock, resplock::Connection* const* conns, const Options& o,
                  const Target& t);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_STATUS_HPP
