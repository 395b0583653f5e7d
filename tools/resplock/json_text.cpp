// json_string() and its kin (see json_text.hpp).
#include "json_text.hpp"

#include <cstddef>

namespace resplock_cli {

namespace {

// The length of the valid UTF-8 sequence of 2..4 bytes starting at s[i], or 0 when s[i] starts
// none (a lone continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
std::size_t utf8_length(std::string_view s, std::size_t i) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned lo = 0x80;
    unsigned hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) {
        n = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
        n = 3;
        if (b == 0xe0) lo = 0xa0;  // overlong
        if (b == 0xed) hi = 0x9f;  // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
        n = 4;
        if (b == 0xf0) lo = 0x90;  // overlong
        if (b == 0xf4) hi = 0x8f;  // past U+10FFFF
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    const auto second = static_cast<unsigned char>(s[i + 1]);
    if (second < lo || second > hi) return 0;
    for (std::size_t k = 2; k < n; ++k) {
        const auto c = static_cast<unsigned char>(s[i + k]);
        if (c < 0x80 || c > 0xbf) return 0;
    }
    return n;
}

std::size_t escaped(std::FILE* out, std::string_view s) {
    std::size_t written = 0;
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        // A valid UTF-8 sequence of 2..4 bytes goes out as it is; 0 for ASCII or an invalid byte.
        const std::size_t n = b < 0x80 ? 0 : utf8_length(s, i);
        if (n != 0) {
            (void)std::fwrite(s.data() + i, 1, n, out);
            i += n;
            written += n;
            continue;
        }
        if (b == '"' || b == '\\') {
            (void)std::fputc('\\', out);
            (void)std::fputc(b, out);
            written += 2;
        } else if (b < 0x20 || b >= 0x7f) {
            // A control character, DEL, or a byte of no valid UTF-8 sequence.
            (void)std::fprintf(out, "\\u%04x", b);
            written += 6;
        } else {
            (void)std::fputc(b, out);
            ++written;
        }
        ++i;
    }
    return written;
}

}  // namespace

void json_string(std::FILE* out, std::string_view s) {
    (void)std::fputc('"', out);
    (void)escaped(out, s);
    (void)std::fputc('"', out);
}

bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t n = utf8_length(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

void hex_bytes(std::FILE* out, std::string_view s) {
    for (const char c : s)
        (void)std::fprintf(out, "%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
}

std::size_t text_escaped(std::FILE* out, std::string_view s) {
    return escaped(out, s);
}

}  // namespace resplock_cli
