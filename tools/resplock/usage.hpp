// The tool's own documentation: the text of --help (commands, options, exit status, examples),
// each command's help (resplock help COMMAND, resplock COMMAND --help) and --version.
#ifndef RESPLOCK_TOOL_USAGE_HPP
#define RESPLOCK_TOOL_USAGE_HPP

#include <cstdio>
#include <string_view>

namespace resplock_cli {

// The commands `resplock help COMMAND` knows, for messages: "acquire, release, ...".
extern const char command_names[];

// Writes the --help text to out.
void usage(std::FILE* out);
// Writes COMMAND's help to out: its synopsis, what it does, its options, exit codes and examples
// (for "help": the whole help). False, having written nothing, for a name that is no command.
bool command_usage(std::FILE* out, std::string_view command);
// Writes "resplock <version>" and a line end to out.
void version(std::FILE* out);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_USAGE_HPP
