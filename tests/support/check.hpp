// A minimal test framework: printf only, no heap, so the same tests run on a host and on a
// bare-metal target over semihosting. Each test binary defines tests with TEST() and links
// check_main.cpp, which runs them all and prints "N passed, N failed".
#ifndef RESPLOCK_TESTS_CHECK_HPP
#define RESPLOCK_TESTS_CHECK_HPP

#include <cstdint>
#include <cstdio>
#include <string_view>
#include <type_traits>

#include "resplock/core/status.hpp"

namespace check {

struct Test {
    const char* name;
    void (*fn)();
    Test* next;
    const char* tags = nullptr;  // words a run can select with --tag (see TEST_TAGGED)
};

// Registers a test at static-initialisation time (an intrusive list: no allocation).
struct Registrar {
    Registrar(Test& t) noexcept;
};

// Records a failure of the running test and prints where it happened.
void fail(const char* file, int line, const char* what);
// True when the running test has failed so far (to stop a test early).
bool failed();

inline void print(std::string_view s) {
    std::printf("\"");
    for (char c : s) {
        if (c == '\r')
            std::printf("\\r");
        else if (c == '\n')
            std::printf("\\n");
        else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
            std::printf("\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        else
            std::printf("%c", c);
    }
    std::printf("\"");
}
inline void print(const char* s) {
    s ? print(std::string_view(s)) : (void)std::printf("(null)");
}
inline void print(resplock::Status s) {
    std::printf("Status %d (%s)", static_cast<int>(s), resplock::to_string(s));
}
inline void print(bool b) {
    std::printf("%s", b ? "true" : "false");
}
template <typename T>
void print(const T& v) {
    if constexpr (std::is_enum_v<T>) {
        std::printf("%lld", static_cast<long long>(v));
    } else if constexpr (std::is_signed_v<T>) {
        std::printf("%lld", static_cast<long long>(v));
    } else if constexpr (std::is_unsigned_v<T>) {
        std::printf("%llu", static_cast<unsigned long long>(v));
    } else if constexpr (std::is_pointer_v<T>) {
        std::printf("%p", static_cast<const void*>(v));
    } else {
        std::printf("(value)");
    }
}

template <typename A, typename B>
bool check_eq(const A& a, const B& b, const char* file, int line, const char* expr) {
    if (a == b) return true;
    fail(file, line, expr);
    std::printf("      left:  ");
    print(a);
    std::printf("\n      right: ");
    print(b);
    std::printf("\n");
    return false;
}

}  // namespace check

#define CHECK_CAT2(a, b) a##b
#define CHECK_CAT(a, b) CHECK_CAT2(a, b)

#define TEST(name)                                                               \
    static void name();                                                          \
    static check::Test CHECK_CAT(name, _test){#name, name, nullptr};             \
    static check::Registrar CHECK_CAT(name, _registrar){CHECK_CAT(name, _test)}; \
    static void name()

// A test with tags: words, separated by spaces, that say something about it, e.g.
// "slow_launcher_ok" (its timing margins leave room for a slow launcher such as valgrind). A run
// with --tag WORD runs only the tests tagged WORD.
#define TEST_TAGGED(name, tags)                                                  \
    static void name();                                                          \
    static check::Test CHECK_CAT(name, _test){#name, name, nullptr, tags};       \
    static check::Registrar CHECK_CAT(name, _registrar){CHECK_CAT(name, _test)}; \
    static void name()

// Records a failure and goes on.
#define CHECK(cond) ((cond) ? true : (check::fail(__FILE__, __LINE__, #cond), false))
#define CHECK_EQ(a, b) check::check_eq((a), (b), __FILE__, __LINE__, #a " == " #b)
// Records a failure and returns from the test.
#define REQUIRE(cond)             \
    do {                          \
        if (!CHECK(cond)) return; \
    } while (0)
#define REQUIRE_EQ(a, b)             \
    do {                             \
        if (!CHECK_EQ(a, b)) return; \
    } while (0)

#endif  // RESPLOCK_TESTS_CHECK_HPP
