// The tool's exit codes, in the style of sysexits(3), and the one mapping from a library status to
// an exit code. Scripts depend on these numbers: never renumber them. The README's table and
// usage.cpp's "Exit status" list say the same.
#ifndef RESPLOCK_TOOL_EXIT_CODES_HPP
#define RESPLOCK_TOOL_EXIT_CODES_HPP

#include "resplock/core/status.hpp"

namespace resplock_cli {

constexpr int exit_ok = 0;
constexpr int exit_not_owner = 1;     // release/extend: token does not own KEY; status: free
constexpr int exit_usage = 64;        // EX_USAGE
constexpr int exit_unavailable = 69;  // EX_UNAVAILABLE: server unreachable, timeout, link lost
constexpr int exit_lost = 70;         // run: the lock was lost while COMMAND ran
constexpr int exit_io = 74;           // EX_IOERR: the token could not be written to stdout
constexpr int exit_busy = 75;         // EX_TEMPFAIL: lock busy
constexpr int exit_protocol = 76;     // EX_PROTOCOL: malformed or unexpected reply
constexpr int exit_denied = 77;       // EX_NOPERM: authentication or permission refused
constexpr int exit_cannot_run = 126;  // run: COMMAND found but could not be started
constexpr int exit_not_found = 127;   // run: COMMAND not found

// The exit code of a call that returned s, from the status alone (failure.hpp's exit_for() also
// looks at the server's words and at TLS).
int exit_code(resplock::Status s);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_EXIT_CODES_HPP
