#include "core/token.hpp"

#include <cstdint>

namespace resplock::detail {

Status random_token(const resplock_port_t& port, char (&out)[token_len]) noexcept {
    // The random bytes go to the end of `out` and are spelled out in hex in place (saves stack).
    std::uint8_t* const random = reinterpret_cast<std::uint8_t*>(out + RESPLOCK_TOKEN_BYTES);
    if (port.random == nullptr || port.random(port.ctx, random, RESPLOCK_TOKEN_BYTES) != 0) {
        return Status::random_failed;
    }
#if defined(__OPTIMIZE_SIZE__)
    hex_by_digits(out);  // -Os, a firmware's build: the smallest code
#else
    hex_by_pairs(out);  // the fewest instructions
#endif
    return Status::ok;
}

}  // namespace resplock::detail
