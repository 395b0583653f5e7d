#include "core/token.hpp"

#include <cstdint>

namespace resplock::detail {

Status random_token(const resplock_port_t& port, char (&out)[token_len]) noexcept {
    // The random bytes go to the end of `out` and are spelled out in hex in place, two at a
    // time: bytes i and i+1 are read before digits 2i..2i+3 overwrite anything unread (saves
    // stack).
    std::uint8_t* const random = reinterpret_cast<std::uint8_t*>(out + RESPLOCK_TOKEN_BYTES);
    if (port.random == nullptr || port.random(port.ctx, random, RESPLOCK_TOKEN_BYTES) != 0) {
        return Status::random_failed;
    }
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
    return Status::ok;
}

}  // namespace resplock::detail
