// What each command does, over one server (resplock::Lock, with the acquisition options, or
// resplock::FairLock with --fair) or a quorum of several (resplock::QuorumLock): acquire, release,
// extend, status and run, written once for every lock kind the tool drives, and run(), the whole
// tool from argv to exit code.
#ifndef RESPLOCK_TOOL_COMMANDS_HPP
#define RESPLOCK_TOOL_COMMANDS_HPP

namespace resplock_cli {

// The tool: parses the command line, sets up the connection(s) and runs the command. Returns the
// process's exit code (exit_codes.hpp).
int run(int argc, char** argv);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_COMMANDS_HPP
