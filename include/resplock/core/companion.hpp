// The names of a lock's companion keys (KEY:fence, KEY:once, KEY:wake, the fair lock's queue...):
// one rule for every lock kind, so that a script touching KEY and its companions never fails with
// CROSSSLOT on a Redis Cluster, whatever KEY is. Implemented in src/core/companion.cpp.
#ifndef RESPLOCK_COMPANION_HPP
#define RESPLOCK_COMPANION_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace resplock {

// Most bytes companion_prefix() puts around KEY.
inline constexpr std::size_t companion_prefix_extra = 4;

// The Redis Cluster slot of `key` (0..16383): CRC16-XMODEM of its hash tag mod 16384. The tag is
// the text between the first '{' and the first '}' after it when that text is not empty; else
// the whole key.
std::uint16_t key_slot(std::string_view key) noexcept;

// Writes to out (which holds key.size() + companion_prefix_extra bytes) the prefix of KEY's
// companion keys and returns its length; a companion is that prefix + a suffix (":fence"), and
// hashes to KEY's slot:
//   KEY has a hash tag (locks:{job}):   KEY itself        (locks:{job}:fence, the same tag);
//   no tag and no '}' (locks:job):      {KEY}             ({locks:job}:fence, tag = the key);
//   no tag but a '}' (a}b, {}x):        {XY}KEY           ({XY}a}b:fence), where XY are two
//     bytes, neither '}', whose CRC16 falls in KEY's slot (a}b cannot be a tag itself).
std::size_t companion_prefix(std::string_view key, char* out) noexcept;

}  // namespace resplock

#endif  // RESPLOCK_COMPANION_HPP
