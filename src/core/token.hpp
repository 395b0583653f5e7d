// The tokens a lock holds: random ones from the port, and owner labels in front of them.
// Internal: not installed.
#ifndef RESPLOCK_TOKEN_HPP
#define RESPLOCK_TOKEN_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "resplock/core/hold.hpp"
#include "resplock/core/port.h"
#include "resplock/core/status.hpp"

namespace resplock::detail {

// The RESPLOCK_TOKEN_BYTES bytes at out + RESPLOCK_TOKEN_BYTES spelled out over `out` in
// lowercase hex, the high nibble first: token_len digits, in place. Two spellings of one result,
// proved equal by proof.encode; random_token() takes the first when the library is compiled for
// size (-Os, a firmware: 30 to 60 bytes less on a Cortex-M) and the second otherwise (about a
// third of the instructions).
// One digit per step: digit k is nibble k of the bytes. Writing digit k overwrites byte k -
// RESPLOCK_TOKEN_BYTES, which no later digit reads. Spelled as conditional steps, not as a shift
// and an offset chosen by expressions: 6 B less on a Cortex-M4, 4 B on a Cortex-M0+.
inline void hex_by_digits(char (&out)[token_len]) noexcept {
    const auto* const random = reinterpret_cast<const std::uint8_t*>(out + RESPLOCK_TOKEN_BYTES);
    for (std::size_t k = 0; k != token_len; ++k) {
        unsigned nibble = random[k / 2];
        if (k % 2 == 0) nibble >>= 4;
        nibble &= 15U;
        unsigned digit = nibble + '0';
        if (nibble > 9) digit += 'a' - '0' - 10;
        out[k] = static_cast<char>(digit);
    }
}

// Two bytes per step with 32-bit arithmetic: bytes i and i + 1 are read before digits
// 2i..2i + 3 overwrite anything unread.
inline void hex_by_pairs(char (&out)[token_len]) noexcept {
    const auto* const random = reinterpret_cast<const std::uint8_t*>(out + RESPLOCK_TOKEN_BYTES);
    for (std::size_t i = 0; i < RESPLOCK_TOKEN_BYTES; i += 2) {
        // One nibble per byte of x, in the order of the digits: high, low, high, low (for an odd
        // count, the last byte pairs with a zero whose digits are not written).
        const std::uint32_t pair =
            random[i] | (i + 1 < RESPLOCK_TOKEN_BYTES ? std::uint32_t{random[i + 1]} << 16 : 0U);
        std::uint32_t x = ((pair >> 4) & 0x000f000fU) | ((pair & 0x000f000fU) << 8);
        // '0' + n, plus 39 more ('a' - '0' - 10) where n > 9: bit 4 of n + 6 says which.
        x += 0x30303030U + (((x + 0x06060606U) >> 4) & 0x01010101U) * 39U;
        out[2 * i] = static_cast<char>(x);
        out[2 * i + 1] = static_cast<char>(x >> 8);
        if (i + 1 < RESPLOCK_TOKEN_BYTES) {
            out[2 * i + 2] = static_cast<char>(x >> 16);
            out[2 * i + 3] = static_cast<char>(x >> 24);
        }
    }
}

// Fills `out` with token_len lowercase hex digits of RESPLOCK_TOKEN_BYTES bytes from the port's
// random source. Returns ok or random_failed.
Status random_token(const resplock_port_t& port, char (&out)[token_len]) noexcept;

// Whether `owner` may label a token (AcquireOptions::owner): empty (no label), or 1..max_owner_len
// bytes of A-Z a-z 0-9 . _ - (printable anywhere, never the ':' that ends it, no space).
inline bool valid_owner(std::string_view owner) noexcept {
    if (owner.size() > max_owner_len) return false;
    // A loop: std::all_of costs 120 to 160 bytes more in each Cortex-M4 object that calls this.
    for (const char c : owner) {
        // cppcheck-suppress useStlAlgorithm
        if (!owner_label_char(c)) return false;
    }
    return true;
}

// Fills `out` with a fresh token: `owner` (valid_owner, not checked here) and ':' before the
// random hex of random_token(), or that hex alone for an empty owner. Returns the token, or an
// empty view when the random source failed.
inline std::string_view owned_token(const resplock_port_t& port, std::string_view owner,
                                    char (&out)[max_token_len]) noexcept {
    char fresh[token_len];
    if (random_token(port, fresh) != Status::ok) return {};
    std::size_t n = owner.size();
    if (n != 0) {
        std::memcpy(out, owner.data(), n);
        out[n++] = ':';
    }
    std::memcpy(out + n, fresh, token_len);
    return {out, n + token_len};
}

}  // namespace resplock::detail

#endif  // RESPLOCK_TOKEN_HPP
