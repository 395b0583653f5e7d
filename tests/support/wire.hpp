// Builds the exact RESP bytes a command encodes to, independently of the library's encoder, for
// mock scripts. The bytes live in a fixed pool for the life of the test binary.
#ifndef RESPLOCK_TESTS_WIRE_HPP
#define RESPLOCK_TESTS_WIRE_HPP

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string_view>

namespace wire {

inline std::string_view cmd(std::initializer_list<std::string_view> args) {
    static char pool[64 * 1024];
    static std::size_t used = 0;
    char* const start = pool + used;
    auto put = [&](const char* s, std::size_t n) {
        if (used + n > sizeof pool) return;
        std::memcpy(pool + used, s, n);
        used += n;
    };
    char head[32];
    int n = std::snprintf(head, sizeof head, "*%lu\r\n", static_cast<unsigned long>(args.size()));
    put(head, static_cast<std::size_t>(n));
    for (std::string_view a : args) {
        n = std::snprintf(head, sizeof head, "$%lu\r\n", static_cast<unsigned long>(a.size()));
        put(head, static_cast<std::size_t>(n));
        put(a.data(), a.size());
        put("\r\n", 2);
    }
    return {start, static_cast<std::size_t>(pool + used - start)};
}

// What the mock port and the server say, as the unit tests expect it. The mock's random source
// counts up from 0: token0 is the first token a test's lock makes, token1 the next; with the
// mock's constant random every token is `zeros`.
inline constexpr std::string_view token0 = "000102030405060708090a0b0c0d0e0f";
inline constexpr std::string_view token1 = "101112131415161718191a1b1c1d1e1f";
inline constexpr std::string_view zeros = "00000000000000000000000000000000";

// The owner script (release, extend and query of the plain and the quorum lock differ only by
// their arguments): its SHA-1, sent with EVALSHA, and its text, sent with EVAL.
inline constexpr std::string_view owner_sha = "23d13ce2ffcb74f3babaff7e5afc9c05b7a72781";
inline constexpr std::string_view owner_text =
    "local k,a,r=KEYS[1],ARGV,redis.call local v=r('get',k)if not a[1]then "
    "return{v,r('pttl',k)}end if v~=a[1]then return v and-1 or 0 end return a[2]and "
    "r('pexpire',k,a[2])or r('del',k)";

// The server's answer to EVALSHA of a script it does not have.
inline constexpr std::string_view noscript = "-NOSCRIPT No matching script. Please use EVAL.\r\n";

}  // namespace wire

#endif  // RESPLOCK_TESTS_WIRE_HPP
