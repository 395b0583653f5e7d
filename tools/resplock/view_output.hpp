// How the tool shows what inspect_key() read (see inspect.hpp): one JSON object on one line
// (status --json, list --json), "name value" lines (status --verbose), or one row of list's
// columns. The holders of a semaphore are read page by page while the output is written, so that
// memory stays bounded however many leases it has. Nothing here ever prints a token.
#ifndef RESPLOCK_TOOL_VIEW_OUTPUT_HPP
#define RESPLOCK_TOOL_VIEW_OUTPUT_HPP

#include <cstdint>
#include <cstdio>
#include <string_view>

#include "inspect.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/status.hpp"

namespace resplock_cli {

// One JSON object and a newline (the fields are in docs/cli.md, "Inspecting locks"). `limit`:
// the semaphore's --limit, 0 when not known (null). conn reads a semaphore's leases.
resplock::Status print_json(std::FILE* out, resplock::Connection& conn, std::string_view key,
                            const KeyView& view, std::uint32_t limit);

// The "name value" lines of status --verbose.
resplock::Status print_verbose(std::FILE* out, resplock::Connection& conn, std::string_view key,
                               const KeyView& view, std::uint32_t limit);

// list's header line, and one row: KEY KIND REMAINING FENCE WAITERS HOLDERS.
void print_header(std::FILE* out);
resplock::Status print_row(std::FILE* out, resplock::Connection& conn, std::string_view key,
                           const KeyView& view);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_VIEW_OUTPUT_HPP
