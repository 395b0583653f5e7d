// Companion key names in KEY's cluster slot (see resplock/core/companion.hpp).
#include "resplock/core/companion.hpp"

#include <cstring>

namespace resplock {

namespace {

constexpr std::uint16_t poly = 0x1021;  // CRC16-XMODEM: x^16 + x^12 + x^5 + 1, no reflection

std::uint16_t crc16(std::string_view bytes) noexcept {
    std::uint32_t crc = 0;
    for (const char c : bytes) {
        crc ^= static_cast<std::uint32_t>(static_cast<unsigned char>(c)) << 8;
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc & 0x8000U) != 0 ? (crc << 1) ^ poly : crc << 1;
        crc &= 0xffffU;
    }
    return static_cast<std::uint16_t>(crc);
}

// a * b modulo the CRC polynomial (polynomials over GF(2), 16 bits).
std::uint16_t multiply(std::uint16_t a, std::uint16_t b) noexcept {
    std::uint32_t r = 0;
    for (int i = 15; i >= 0; --i) {
        r = (r & 0x8000U) != 0 ? ((r << 1) ^ poly) & 0xffffU : r << 1;
        if (((b >> i) & 1U) != 0) r ^= a;
    }
    return static_cast<std::uint16_t>(r);
}

// The CRC of a two-byte message M, from a zero start, is M * x^16 modulo the polynomial: the
// message whose CRC is c is c * x^-16, and x^-16 is this constant.
constexpr std::uint16_t x_inverse_16 = 0x9d71;

// KEY's hash tag: the text between its first '{' and the first '}' after it; empty when there is
// none or that text is empty (the whole key is then hashed).
std::string_view hash_tag(std::string_view key) noexcept {
    const std::size_t open = key.find('{');
    if (open == std::string_view::npos) return {};
    const std::size_t close = key.find('}', open + 1);
    if (close == std::string_view::npos) return {};
    return {key.data() + open + 1, close - open - 1};  // not substr(): that one may throw
}

}  // namespace

std::uint16_t key_slot(std::string_view key) noexcept {
    const std::string_view tag = hash_tag(key);
    return static_cast<std::uint16_t>(crc16(tag.empty() ? key : tag) & 0x3fffU);
}

std::size_t companion_prefix(std::string_view key, char* out) noexcept {
    if (!hash_tag(key).empty()) {  // a tag: KEY keeps it
        std::memcpy(out, key.data(), key.size());
        return key.size();
    }
    if (key.find('}') == std::string_view::npos) {  // {KEY}: the tag is the whole key
        out[0] = '{';
        std::memcpy(out + 1, key.data(), key.size());
        out[key.size() + 1] = '}';
        return key.size() + 2;
    }
    // {XY}KEY: of the four CRC values in KEY's slot, the first whose two bytes are not '}' (one
    // always is: checked for every slot by the unit tests).
    const std::uint16_t slot = key_slot(key);
    std::uint16_t m = 0;
    for (std::uint32_t high = 0; high < 4; ++high) {
        m = multiply(static_cast<std::uint16_t>(slot | (high << 14)), x_inverse_16);
        if ((m >> 8) != '}' && (m & 0xffU) != '}') break;
    }
    out[0] = '{';
    out[1] = static_cast<char>(m >> 8);
    out[2] = static_cast<char>(m & 0xffU);
    out[3] = '}';
    std::memcpy(out + 4, key.data(), key.size());
    return key.size() + 4;
}

}  // namespace resplock
