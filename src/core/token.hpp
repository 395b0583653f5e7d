// The tokens a lock holds: random ones from the port, and owner labels in front of them.
// Internal: not installed.
#ifndef RESPLOCK_TOKEN_HPP
#define RESPLOCK_TOKEN_HPP

#include <cstring>
#include <string_view>

#include "resplock/core/hold.hpp"
#include "resplock/core/port.h"
#include "resplock/core/status.hpp"

namespace resplock::detail {

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
