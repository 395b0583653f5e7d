// Bounded proof of the companion key names (resplock/core/companion.hpp): key_slot() against a
// reference written here (a table-driven CRC16-XMODEM and Redis's hash-tag rule), and every
// companion name, companion_prefix(KEY) + each suffix the library appends, in KEY's slot by both.
//   every_key_up_to_the_bound: every key of 1..10 bytes over '{', '}', 'a', 'b' (1,398,100
//     keys); every key of 1..6 bytes over them padded with 'a' to RESPLOCK_MAX_KEY_LEN - 1 and
//     RESPLOCK_MAX_KEY_LEN bytes, before and after. The prefix is written into a heap buffer of
//     exactly key size + companion_prefix_extra bytes (a write past it faults under ASan, and the
//     guard after it is checked), is the documented one of its three forms, and each name is in
//     KEY's slot.
//   every_two_byte_key_and_every_slot: every key of two bytes (all 65,536) and every key "}XY"
//     (no tag, a '}': the computed {XY} form): CRC16 of two free bytes reaches every value, so
//     every one of the 16,384 slots gets its computed tag checked against the reference, four
//     times. (tests/unit/variants/test_companion.cpp, computed_tags_reach_every_slot, covers the
//     slots with the library's own key_slot; this adds the independent slot function.)
// The empty key is no lock's key (Hold refuses it): its prefix "{}" is checked for length only.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "check.hpp"
#include "proof.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/config.h"
#include "resplock/core/hold.hpp"

namespace {

using resplock::companion_prefix;
using resplock::companion_prefix_extra;
using resplock::key_slot;

// ---- The reference ---------------------------------------------------------------------------

// CRC16-XMODEM (polynomial 0x1021, initial 0, not reflected), one table lookup per byte.
struct Crc16 {
    std::uint16_t table[256];

    Crc16() {
        for (unsigned byte = 0; byte < 256; ++byte) {
            unsigned value = byte << 8;
            for (int i = 0; i < 8; ++i)
                value = (value << 1) ^ ((value & 0x8000U) != 0 ? 0x1021U : 0U);
            table[byte] = static_cast<std::uint16_t>(value);
        }
    }

    std::uint16_t of(std::string_view bytes) const {
        unsigned crc = 0;
        for (const char c : bytes)
            crc = ((crc << 8) ^ table[((crc >> 8) ^ static_cast<unsigned char>(c)) & 0xffU]) &
                  0xffffU;
        return static_cast<std::uint16_t>(crc);
    }
};

const Crc16 crc16;

// Redis Cluster's rule: if the key holds a '{', and a '}' somewhere after it, with at least one
// byte between the first '{' and the first such '}', only those bytes are hashed.
std::uint16_t reference_slot(std::string_view key) {
    std::size_t open = 0;
    while (open < key.size() && key[open] != '{')
        ++open;
    std::string_view hashed = key;
    if (open < key.size()) {
        std::size_t close = open + 1;
        while (close < key.size() && key[close] != '}')
            ++close;
        if (close < key.size() && close > open + 1) hashed = key.substr(open + 1, close - open - 1);
    }
    return static_cast<std::uint16_t>(crc16.of(hashed) % 16384);
}

bool has_tag(std::string_view key) {
    const std::size_t open = key.find('{');
    if (open == std::string_view::npos) return false;
    const std::size_t close = key.find('}', open + 1);
    return close != std::string_view::npos && close > open + 1;
}

// ---- The check -------------------------------------------------------------------------------

// The suffixes the library appends (Lock: :fence :once :wake; FairLock and Semaphore: :q :w
// :fence :wake, :f: and :f:TOKEN), with the longest token a lock keeps: adopt() takes any bytes,
// braces too.
std::string longest_token() {
    std::string t;
    for (std::size_t i = 0; i < resplock::max_token_len; ++i)
        t.push_back("{}ab:"[i % 5]);
    return t;
}

struct Runner {
    unsigned long long keys = 0;
    unsigned long long names = 0;
    bool failed = false;
    std::string token = longest_token();
    std::string suffixes[7] = {":fence", ":once", ":wake", ":q", ":w", ":f:", ":f:" + token};
    static constexpr std::size_t guard = 8;

    void fail_on(std::string_view key, const char* what, std::string_view name = {}) {
        failed = true;
        check::fail(__FILE__, __LINE__, what);
        std::printf("      key ");
        check::print(key);
        if (!name.empty()) {
            std::printf(", name ");
            check::print(name);
        }
        std::printf("\n");
    }

    void check(std::string_view key) {
        ++keys;
        const std::uint16_t slot = reference_slot(key);
        if (!key.empty() && key_slot(key) != slot) {
            fail_on(key, "key_slot(KEY) differs from the reference");
            std::printf("      key_slot %u, reference %u\n", key_slot(key), slot);
            return;
        }
        // The prefix, into exactly the bytes the header promises it needs, and a guard.
        const std::size_t room = key.size() + companion_prefix_extra;
        std::unique_ptr<char[]> mem(new char[room + guard]);
        std::memset(mem.get() + room, '#', guard);
        proof::forbid(mem.get() + room, guard);
        const std::size_t n = companion_prefix(key, mem.get());
        proof::allow(mem.get() + room, guard);
        for (std::size_t i = room; i < room + guard; ++i) {
            if (mem[i] != '#') return fail_on(key, "companion_prefix wrote past its buffer");
        }
        if (n > room) return fail_on(key, "companion_prefix is longer than key + extra");
        const std::string_view prefix(mem.get(), n);
        // The form the header documents.
        std::string expected;
        if (has_tag(key)) {
            expected = std::string(key);
        } else if (key.find('}') == std::string_view::npos) {
            expected = "{" + std::string(key) + "}";
        } else {
            const bool computed = n == key.size() + 4 && prefix[0] == '{' && prefix[1] != '}' &&
                                  prefix[2] != '}' && prefix[3] == '}' && prefix.substr(4) == key;
            if (!computed) return fail_on(key, "not the {XY}KEY form", prefix);
            expected = std::string(prefix);
        }
        if (prefix != expected) return fail_on(key, "not the documented prefix", prefix);
        if (key.empty()) return;  // no lock's key: "{}" is only checked for its length
        for (const std::string& suffix : suffixes) {
            const std::string name = expected + suffix;
            ++names;
            if (name.size() > key.size() + companion_prefix_extra + suffix.size()) {
                return fail_on(key, "a companion name longer than its buffer", name);
            }
            if (reference_slot(name) != slot) {
                return fail_on(key, "a companion name outside KEY's slot (reference)", name);
            }
            if (key_slot(name) != key_slot(key)) {
                return fail_on(key, "a companion name outside KEY's slot (key_slot)", name);
            }
        }
    }
};

constexpr char alphabet[] = {'{', '}', 'a', 'b'};

// Calls f on every string of exactly `len` bytes over the alphabet.
template <typename F>
void every_string(std::size_t len, F f) {
    std::string s(len, alphabet[0]);
    std::size_t total = 1;
    for (std::size_t i = 0; i < len; ++i)
        total *= sizeof alphabet;
    for (std::size_t index = 0; index < total; ++index) {
        for (std::size_t i = 0, rest = index; i < len; ++i, rest /= sizeof alphabet)
            s[i] = alphabet[rest % sizeof alphabet];
        if (!f(s)) return;
    }
}

TEST(the_reference_crc_is_xmodem) {
    // The CRC16-XMODEM check value, and Redis's own examples.
    CHECK_EQ(crc16.of("123456789"), 0x31C3);
    CHECK_EQ(reference_slot("foo"), 12182);
    CHECK_EQ(reference_slot("{user1000}.following"), reference_slot("user1000"));
    CHECK_EQ(reference_slot("foo{}{bar}"), crc16.of("foo{}{bar}") % 16384);  // an empty tag
    CHECK_EQ(reference_slot("foo{{bar}}zap"), reference_slot("{bar"));
}

TEST(every_key_up_to_the_bound) {
    const proof::Timer timer;
    Runner r;
    r.check("");
    for (std::size_t len = 1; len <= 10 && !r.failed; ++len) {
        every_string(len, [&r](const std::string& key) {
            r.check(key);
            return !r.failed;
        });
    }
    // Near the longest key: the short keys padded to RESPLOCK_MAX_KEY_LEN - 1 and to it.
    for (std::size_t len = 1; len <= 6 && !r.failed; ++len) {
        every_string(len, [&r](const std::string& core) {
            for (const std::size_t total : {RESPLOCK_MAX_KEY_LEN - 1, RESPLOCK_MAX_KEY_LEN}) {
                const std::string pad(total - core.size(), 'a');
                r.check(pad + core);
                if (!r.failed) r.check(core + pad);
            }
            return !r.failed;
        });
    }
    char bound[160];
    std::snprintf(bound, sizeof bound,
                  "every key of 1..10 bytes over { } a b, and of 1..6 padded to 127 and 128 "
                  "bytes; %llu names of 7 suffixes",
                  r.names);
    proof::report("companion.keys", bound, r.keys, timer);
}

TEST(every_two_byte_key_and_every_slot) {
    const proof::Timer timer;
    Runner r;
    static bool seen[16384];
    for (unsigned x = 0; x < 256 && !r.failed; ++x) {
        for (unsigned y = 0; y < 256 && !r.failed; ++y) {
            const char xy[2] = {static_cast<char>(x), static_cast<char>(y)};
            r.check(std::string_view(xy, 2));
            const std::string braced = "}" + std::string(xy, 2);
            if (!r.failed) r.check(braced);
            seen[reference_slot(braced)] = true;
        }
    }
    std::size_t slots = 0;
    for (const bool s : seen)
        slots += s ? 1 : 0;
    CHECK_EQ(slots, std::size_t{16384});
    proof::report("companion.slots",
                  "every 2-byte key and every \"}XY\" key: all 16,384 slots, computed tags "
                  "checked against the reference",
                  r.keys, timer);
}

}  // namespace
