// JSON string output for the tool's --json lines: any bytes (a Redis key may hold any) written as
// one JSON string, and the same bytes as one line of text for the human columns.
#ifndef RESPLOCK_TOOL_JSON_TEXT_HPP
#define RESPLOCK_TOOL_JSON_TEXT_HPP

#include <cstddef>
#include <cstdio>
#include <string_view>

namespace resplock_cli {

// Writes s as a JSON string, quotes included: '"' and '\' escaped with a backslash, control
// characters (0x00-0x1f, 0x7f) as \u00XX (\n, \t... too), valid UTF-8 sequences as they are, and
// each byte of an invalid UTF-8 sequence as \u00XX (its Latin-1 reading, U+0080..U+00FF).
void json_string(std::FILE* out, std::string_view s);

// Whether s is valid UTF-8 (shortest forms, no surrogates, at most U+10FFFF).
bool valid_utf8(std::string_view s);

// Writes s as lowercase hex, two digits a byte.
void hex_bytes(std::FILE* out, std::string_view s);

// Writes s for a text line: as json_string() does, without the quotes (so a key shows on one
// line, whatever bytes it holds). Returns how many bytes it wrote.
std::size_t text_escaped(std::FILE* out, std::string_view s);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_JSON_TEXT_HPP
