// Companion key names: the slot function against known CLUSTER KEYSLOT values, and every name
// in KEY's slot with the tag it must keep or get: a key with a tag keeps it, a key without '}'
// becomes its own tag, a key with a '}' but no tag gets a computed two-byte tag (never '}'),
// reaching every one of the 16384 slots. The integration tests compare with a real server.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "check.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/config.h"

using resplock::companion_prefix;
using resplock::companion_prefix_extra;
using resplock::key_slot;

namespace {

// prefix + suffix into `out`.
std::string_view companion(std::string_view key, std::string_view suffix, char* out) {
    const std::size_t n = companion_prefix(key, out);
    std::memcpy(out + n, suffix.data(), suffix.size());
    return {out, n + suffix.size()};
}

}  // namespace

TEST(key_slot_matches_redis) {
    // Values from Redis's cluster specification and CLUSTER KEYSLOT.
    CHECK_EQ(key_slot("123456789"), 12739);  // CRC16-XMODEM check value 0x31C3
    CHECK_EQ(key_slot("foo"), 12182);
    CHECK_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
    CHECK_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
    CHECK_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
    CHECK_EQ(key_slot(""), 0);
}

TEST(a_key_with_a_tag_is_its_own_prefix) {
    char out[RESPLOCK_MAX_KEY_LEN + companion_prefix_extra + 8];
    for (const char* key : {"locks:{job}", "a{b}c{d}", "{a}", "x{{y}"}) {
        const std::size_t n = companion_prefix(key, out);
        CHECK_EQ(std::string_view(out, n), std::string_view(key));
        const std::string_view name = companion(key, ":fence", out);
        CHECK_EQ(name.substr(n), std::string_view(":fence"));
        CHECK_EQ(key_slot(name), key_slot(key));
    }
}

TEST(a_key_without_a_brace_is_its_own_tag) {
    char out[RESPLOCK_MAX_KEY_LEN + companion_prefix_extra + 8];
    CHECK_EQ(companion("locks:job", ":once", out), std::string_view("{locks:job}:once"));
    CHECK_EQ(companion("{a", ":q", out), std::string_view("{{a}:q"));
    for (const char* key : {"job", "{a", "{", "a{b", "plain:key:7", "\x01\xff"}) {
        CHECK_EQ(key_slot(companion(key, ":wake", out)), key_slot(key));
    }
}

TEST(a_key_with_a_brace_but_no_tag_gets_a_computed_tag) {
    char out[RESPLOCK_MAX_KEY_LEN + companion_prefix_extra + 8];
    for (const char* key : {"a}b", "{}x", "}", "{}", "x{}{y", "{}x}", "}{", "{}{z}"}) {
        const std::string_view name = companion(key, ":f:token", out);
        CHECK_EQ(name.size(), std::strlen(key) + 4 + 8);
        CHECK_EQ(name[0], '{');
        CHECK(name[1] != '}' && name[2] != '}');
        CHECK_EQ(name[3], '}');
        CHECK_EQ(name.substr(4, std::strlen(key)), std::string_view(key));
        CHECK_EQ(key_slot(name), key_slot(key));
    }
}

TEST(computed_tags_reach_every_slot) {
    // Keys "}N" until every slot has been seen once; each name must land in its key's slot.
    static unsigned char seen[16384 / 8];
    std::size_t slots = 0;
    std::size_t wrong = 0;
    char key[16];
    char out[16 + companion_prefix_extra + 8];
    for (unsigned i = 0; slots < 16384 && i < 2000000; ++i) {
        const int n = std::snprintf(key, sizeof key, "}%u", i);
        const std::string_view k(key, static_cast<std::size_t>(n));
        const unsigned slot = key_slot(k);
        if ((seen[slot / 8] & (1U << (slot % 8))) != 0) continue;
        seen[slot / 8] = static_cast<unsigned char>(seen[slot / 8] | (1U << (slot % 8)));
        ++slots;
        const std::string_view name = companion(k, ":x", out);
        if (key_slot(name) != slot || name[1] == '}' || name[2] == '}') ++wrong;
    }
    CHECK_EQ(slots, std::size_t{16384});
    CHECK_EQ(wrong, std::size_t{0});
}

TEST(the_longest_key_fits) {
    static char key[RESPLOCK_MAX_KEY_LEN];
    std::memset(key, '}', sizeof key);
    char out[RESPLOCK_MAX_KEY_LEN + companion_prefix_extra];
    CHECK_EQ(companion_prefix({key, sizeof key}, out), sizeof out);
    std::memset(key, 'k', sizeof key);
    CHECK_EQ(companion_prefix({key, sizeof key}, out), std::size_t{RESPLOCK_MAX_KEY_LEN + 2});
}
