// Numbers in the text of a router's replies (a redirection's slot and port, a sentinel's port):
// one parser for both routers. Private to the library (src/ha/).
#ifndef RESPLOCK_DECIMAL_HPP
#define RESPLOCK_DECIMAL_HPP

#include <cstdint>
#include <string_view>

namespace resplock::detail {

// `text` as a decimal number: 1..5 digits and at most `max`; false, leaving out alone, for
// anything else.
inline bool parse_decimal(std::string_view text, std::uint32_t max, std::uint32_t& out) noexcept {
    if (text.empty() || text.size() > 5) return false;
    std::uint32_t value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return false;
        value = value * 10U + static_cast<std::uint32_t>(c - '0');
    }
    if (value > max) return false;
    out = value;
    return true;
}

// A TCP port: 1..65535.
inline bool parse_port(std::string_view text, std::uint16_t& port) noexcept {
    std::uint32_t value = 0;
    if (!parse_decimal(text, 65535, value) || value == 0) return false;
    port = static_cast<std::uint16_t>(value);
    return true;
}

}  // namespace resplock::detail

#endif  // RESPLOCK_DECIMAL_HPP
