// The text scanners of text.hpp: strict decimal numbers and a prefix test that ignores case.
#include "text.hpp"

namespace resplock_cli {

bool parse_number(std::string_view text, std::uint32_t lo, std::uint32_t hi, std::uint32_t& out) {
    if (text.empty()) return false;
    std::uint64_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return false;
        v = v * 10U + static_cast<std::uint64_t>(c - '0');
        if (v > hi) return false;
    }
    if (v < lo) return false;
    out = static_cast<std::uint32_t>(v);
    return true;
}

bool parse_number(const char* text, std::uint32_t lo, std::uint32_t hi, std::uint32_t& out) {
    return text != nullptr && parse_number(std::string_view(text), lo, hi, out);
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i]) return false;
    }
    return true;
}

}  // namespace resplock_cli
