// What a holder keeps of one lock, whatever its kind: the key, the token that owns it (or may
// own it) and the validity it may rely on. Every lock kind keeps its held state in a Hold, and
// changes it only through these calls (all inline: a firmware pays for them where it calls them).
#ifndef RESPLOCK_HOLD_HPP
#define RESPLOCK_HOLD_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/port.h"
#include "resplock/core/validity.hpp"

namespace resplock {

// Characters of a token this library makes (hex of RESPLOCK_TOKEN_BYTES random bytes).
inline constexpr std::size_t token_len = std::size_t{2} * RESPLOCK_TOKEN_BYTES;
// Longest owner label a token may carry (AcquireOptions::owner): RESPLOCK_MAX_OWNER_LEN.
inline constexpr std::size_t max_owner_len = RESPLOCK_MAX_OWNER_LEN;
// Whether `c` may stand in an owner label: A-Z a-z 0-9 . _ - (never the ':' that ends a label).
constexpr bool owner_label_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}
// Longest token adopt() accepts and a lock keeps: 40 characters (the most random hex any build
// makes), after an owner label and ':' when labels are enabled.
inline constexpr std::size_t max_token_len = max_owner_len == 0 ? 40 : max_owner_len + 1 + 40;

class Hold {
  public:
    // Binds to `key` (copied; binary-safe). An empty key, or one longer than
    // RESPLOCK_MAX_KEY_LEN, is not truncated: key() is then empty.
    // key_ and token_ are read only up to key_len_ and token_len_: zeroing them would cost flash.
    // NOLINTBEGIN(cppcoreguidelines-pro-type-member-init)
    // cppcheck-suppress uninitMemberVar
    explicit Hold(std::string_view key) noexcept {
        if (!key.empty() && key.size() <= sizeof key_) {
            std::memcpy(key_, key.data(), key.size());
            key_len_ = key.size();
        }
    }
    // NOLINTEND(cppcoreguidelines-pro-type-member-init)

    std::string_view key() const noexcept { return {key_, key_len_}; }
    // The token of the current or last attempted hold; empty when there is none.
    std::string_view token() const noexcept { return {token_, token_len_}; }
    Validity& validity() noexcept { return validity_; }
    const Validity& validity() const noexcept { return validity_; }

    // Keeps `token` (1..max_token_len bytes, not checked here) with no validity yet: a request
    // that may set the key with it is under way, its outcome is unknown, or it was adopted. The
    // caller starts the validity once the server granted the lock.
    void keep(std::string_view token) noexcept {
        std::memcpy(token_, token.data(), token.size());
        token_len_ = token.size();
        validity_.end();
    }
    // Forgets the token and the validity: the lock is known not to be held with it.
    void drop() noexcept {
        token_len_ = 0;
        validity_.end();
    }

  private:
    // The lengths and the validity first: on a Cortex-M a short load reaches a field only
    // within 124 B of the object's start, and the arrays would push them past it.
    std::size_t key_len_ = 0;
    std::size_t token_len_ = 0;
    Validity validity_;
    char key_[RESPLOCK_MAX_KEY_LEN];
    char token_[max_token_len];
};

}  // namespace resplock

#endif  // RESPLOCK_HOLD_HPP
