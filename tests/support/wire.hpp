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

}  // namespace wire

#endif  // RESPLOCK_TESTS_WIRE_HPP
