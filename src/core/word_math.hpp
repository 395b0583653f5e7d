// Arithmetic spelled out in 32-bit operations for ARMv6-M (Cortex-M0, M0+, M1), a core with
// neither a divide instruction nor a 64-bit product: there the compiler would call a library
// routine (__aeabi_uidiv, __aeabi_lmul), several times the size of these few instructions, for
// what other cores do in one or two. Each is selected on ARMv6-M only and proved against the
// plain expression on the host (tests/proofs/proof_encode.cpp). Internal: not installed.
#ifndef RESPLOCK_WORD_MATH_HPP
#define RESPLOCK_WORD_MATH_HPP

#include <cstddef>
#include <cstdint>

namespace resplock::detail {

// value * 10 + digit, wrapping as a uint64_t would: ((2 value) 2 + value) 2 + digit, each step a
// 64-bit addition (two instructions on ARMv6-M). The empty asm hides the first doubling from the
// compiler, which would otherwise fold the additions back into a product (a library call there).
inline std::uint64_t times_10_plus_by_doubling(std::uint64_t value, std::uint32_t digit) noexcept {
    std::uint64_t twice = value + value;
    __asm__("" : "+r"(twice));
    const std::uint64_t five_times = twice + twice + value;
    return five_times + five_times + digit;
}

inline std::uint64_t times_10_plus(std::uint64_t value, std::uint32_t digit) noexcept {
#if defined(__ARM_ARCH_6M__)
    return times_10_plus_by_doubling(value, digit);
#else
    return value * 10 + digit;
#endif
}

// x / 255 by steps that keep the quotient and shrink x: x = 256 t + rest = 255 t + (t + rest),
// with t = x / 256, at least 1 while x > 255; at most 255 is left, a last 1 when it is 255.
constexpr std::uint32_t quotient_255_by_steps(std::uint32_t x) noexcept {
    std::uint32_t q = 0;
    while (x > 255U) {
        const std::uint32_t t = x >> 8;
        q += t;
        x -= (t << 8) - t;
    }
    return x == 255U ? q + 1 : q;
}

// x / 255 for x below 65535 by shifts and additions: (x + 1 + x / 256) / 256, equal to x / 255
// for each such x (proof.encode checks every one; 65535 is the first x where it is not).
constexpr std::uint32_t quotient_255_below_65535(std::uint32_t x) noexcept {
    return (x + 1 + (x >> 8)) >> 8;
}

constexpr std::uint32_t quotient_255(std::uint32_t x) noexcept {
#if defined(__ARM_ARCH_6M__)
    return quotient_255_by_steps(x);
#else
    return x / 255U;
#endif
}

// resp::format_decimal without a division: counts the digits by comparisons, then writes them
// from the first, each by subtracting its power of ten; the next power is the last one's half
// times the inverse of 5 modulo 2^32 (5 * 0xcccccccd = 4 * 2^32 + 1), exact for a multiple of 5.
inline __attribute__((always_inline)) std::size_t format_decimal_by_subtraction(
    std::uint32_t value, char* out, std::size_t capacity) noexcept {
    std::size_t n = 1;
    std::uint32_t power = 1;  // 10^(n - 1); next is 10^n, which wraps only once n is 10
    for (std::uint32_t next = 10; n != 10 && value >= next; next *= 10, ++n)
        power = next;
    if (n > capacity) return 0;
    for (std::size_t i = 0; i != n; ++i) {
        unsigned digit = '0';  // a word: a char would be truncated after each step
        for (; value >= power; value -= power)
            ++digit;
        out[i] = static_cast<char>(digit);
        power = (power >> 1) * 0xcccccccdU;  // 1 becomes 0 after the last digit
    }
    return n;
}

}  // namespace resplock::detail

#endif  // RESPLOCK_WORD_MATH_HPP
