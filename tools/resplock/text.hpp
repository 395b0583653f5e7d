// The small text scanners every parser of the tool shares: strict decimal numbers (no sign, no
// blank, no junk, within bounds), ASCII character classes, and a prefix test that ignores case.
// Pure functions: they print nothing and keep no state.
#ifndef RESPLOCK_TOOL_TEXT_HPP
#define RESPLOCK_TOOL_TEXT_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/lock.hpp"

namespace resplock_cli {

// The largest number the tool takes: a TTL, wait or timeout in milliseconds, or a database.
constexpr std::uint32_t max_ms = resplock::max_ttl_ms;

// Decimal digits only: no sign, no blanks, no trailing junk, within [lo, hi]. Sets out only when
// it returns true.
bool parse_number(std::string_view text, std::uint32_t lo, std::uint32_t hi, std::uint32_t& out);
// The same for a C string; false for null.
bool parse_number(const char* text, std::uint32_t lo, std::uint32_t hi, std::uint32_t& out);

// Whether s starts with `prefix` (written in lowercase), whatever the case of s's ASCII letters.
bool starts_with_nocase(std::string_view s, std::string_view prefix);

// s[from, from + n), n cut to what is there; from <= s.size(). string_view::substr() would check
// `from` by throwing, which brings the C++ runtime's out_of_range into the tool (a static build
// links no libstdc++).
inline std::string_view slice(std::string_view s, std::size_t from,
                              std::size_t n = std::string_view::npos) noexcept {
    const std::size_t left = s.size() - from;
    return {s.data() + from, n < left ? n : left};
}

inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

inline bool is_alnum(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_TEXT_HPP
