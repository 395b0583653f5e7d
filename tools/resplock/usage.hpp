// The tool's own documentation: the text of --help (commands, options, exit status, examples)
// and of --version.
#ifndef RESPLOCK_TOOL_USAGE_HPP
#define RESPLOCK_TOOL_USAGE_HPP

#include <cstdio>

namespace resplock_cli {

// Writes the --help text to out.
void usage(std::FILE* out);
// Writes "resplock <version>" and a line end to out.
void version(std::FILE* out);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_USAGE_HPP
