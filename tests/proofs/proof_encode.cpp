// Bounded proof of the request encoder and of the request sizes computed from it, against a
// reference encoder written here (std::to_string for the numbers, nothing from the library):
//   every_command_shape_at_every_capacity: resp::encode_command for every command of 1 to 4
//     arguments whose lengths are drawn from 0 1 2 9 10 11 99 100 101, every command of 1 to 12
//     arguments of 0 or 1 bytes, and 98 to 101 arguments (the count's digits), each into every
//     capacity from 0 to its size + 2; and long arguments (lengths around each power of ten up
//     to 10^6 and around 2^16) at every capacity within 2 bytes of the end of each piece of the
//     request. ok with the reference's exact bytes exactly when the request fits, else
//     too_large with *written 0; never a byte written outside [0, capacity) (guards on both
//     sides, unreadable and unwritable under AddressSanitizer).
//   lengths_of_2_32_and_more_are_refused_unread: arguments of 2^32 - 1 bytes and more (their
//     bytes do not exist: a read faults under ASan) are too_large at every capacity up to 4096.
//   invalid_arguments_leave_the_buffer_untouched: count 0, no argument array, a null argument
//     with a size at each position.
//   format_decimal_around_every_power_of_ten: every value within 300 of 0, of each power of ten
//     and of 2^31 and 2^32 - 1, into every capacity 0..11; the same bytes from the ARMv6-M
//     spelling, detail::format_decimal_by_subtraction.
//   word_math_matches_the_plain_arithmetic: the ARMv6-M spellings of core/word_math.hpp
//     (x / 255 by steps and, below 65535, by shifts; value * 10 + digit by 64-bit doublings)
//     against the plain expressions, for the inputs its test lists.
//   token_hex_spellings_match: core/token.hpp's two spellings of a token's hex digits (one digit
//     per step, for -Os; two bytes per step) against snprintf's "%02x", for every byte value at
//     every position of the token, the other bytes each a different value.
//   request_sizes_are_the_encoded_sizes: detail::digits and detail::bulk_size around every
//     power of ten up to 10^19; detail::eval_size for every script length around each power of
//     ten up to 1000 and the real scripts, 0..12 and 96..99 arguments of lengths drawn from
//     0 1 9 10 99 100; detail::eval_fits on a connection of every buffer size within 2 bytes of
//     the request's size, against what the encoder does with that buffer.
// A count of 2^32 or more cannot be tried: it needs an array of 2^32 arguments.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "core/lua_scripts.hpp"
#include "core/script.hpp"
#include "core/token.hpp"
#include "core/word_math.hpp"
#include "proof.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/resp.hpp"
#include "variants/lua_scripts.hpp"

namespace {

using resplock::Status;
using resplock::resp::encode_command;
using resplock::resp::format_decimal;
namespace detail = resplock::detail;

// The reference: "*N\r\n", then "$len\r\n" bytes "\r\n" per argument.
std::string reference_command(const std::string_view* args, std::size_t count) {
    std::string out = "*" + std::to_string(count) + "\r\n";
    for (std::size_t i = 0; i < count; ++i) {
        out += "$" + std::to_string(args[i].size()) + "\r\n";
        out.append(args[i].data(), args[i].size());
        out += "\r\n";
    }
    return out;
}

// Where each piece of the reference's request ends: the header, each length line, each payload
// with its CR LF (and the prefix of each line: after '*' or '$' and after the digits).
std::vector<std::size_t> piece_ends(const std::string_view* args, std::size_t count) {
    std::vector<std::size_t> ends;
    std::size_t at = 1 + std::to_string(count).size();
    ends.push_back(1);
    ends.push_back(at);
    at += 2;
    ends.push_back(at);
    for (std::size_t i = 0; i < count; ++i) {
        ends.push_back(at + 1);
        at += 1 + std::to_string(args[i].size()).size();
        ends.push_back(at);
        at += 2;
        ends.push_back(at);
        at += args[i].size();
        ends.push_back(at);
        at += 2;
        ends.push_back(at);
    }
    return ends;
}

// Payload bytes that a line-based encoder would trip on: CR, LF, NUL, type bytes, digits.
const std::string& payload_bytes() {
    static const std::string bytes = [] {
        std::string s;
        const char mix[] = {'\r', '\n', '\0', '$', '*', '1', 'x', '\xff'};
        for (std::size_t i = 0; i < 1000001 + 16; ++i)
            s.push_back(mix[(i * 7 + i / 8) % sizeof mix]);
        return s;
    }();
    return bytes;
}

constexpr std::size_t guard = 16;  // bytes on each side of the output
constexpr char guard_byte = '#';

struct Runner {
    unsigned long long cases = 0;
    bool failed = false;

    void describe(const std::string_view* args, std::size_t count, std::size_t capacity) {
        std::printf("      %zu arguments of lengths", count);
        for (std::size_t i = 0; i < count && i < 12; ++i)
            std::printf(" %zu", args[i].size());
        std::printf("%s; capacity %zu\n", count > 12 ? " ..." : "", capacity);
    }

    // Encodes args into each of `capacities`, each an allocation of exactly guard + capacity +
    // guard bytes.
    void encode(const std::string_view* args, std::size_t count,
                const std::vector<std::size_t>& capacities) {
        if (failed) return;
        const std::string want = reference_command(args, count);
        for (const std::size_t capacity : capacities) {
            std::unique_ptr<char[]> mem(new char[guard + capacity + guard]);
            char* out = mem.get() + guard;
            std::memset(mem.get(), guard_byte, guard);
            std::memset(out + capacity, guard_byte, guard);
            // The guard after the output ends the allocation, so ASan marks it exactly.
            proof::forbid(mem.get(), guard);
            proof::forbid(out + capacity, guard);
            std::size_t written = 12345;
            const Status s = encode_command(args, count, out, capacity, &written);
            proof::allow(mem.get(), guard);
            proof::allow(out + capacity, guard);
            ++cases;
            bool good = true;
            if (want.size() <= capacity) {
                good = CHECK_EQ(s, Status::ok) && CHECK_EQ(written, want.size()) &&
                       CHECK(std::memcmp(out, want.data(), want.size()) == 0);
            } else {
                good = CHECK_EQ(s, Status::too_large) && CHECK_EQ(written, std::size_t{0});
            }
            for (std::size_t i = 0; good && i < guard; ++i)
                good = CHECK_EQ(mem[i], guard_byte) && CHECK_EQ(out[capacity + i], guard_byte);
            if (!good) {
                failed = true;
                describe(args, count, capacity);
                return;
            }
        }
    }

    void every_capacity(const std::string_view* args, std::size_t count) {
        const std::size_t size = reference_command(args, count).size();
        std::vector<std::size_t> capacities;
        for (std::size_t c = 0; c <= size + 2; ++c)
            capacities.push_back(c);
        encode(args, count, capacities);
    }

    // Every capacity up to 64 and within 2 bytes of the end of each piece.
    void around_each_piece(const std::string_view* args, std::size_t count) {
        std::vector<std::size_t> capacities;
        for (std::size_t c = 0; c <= 64; ++c)
            capacities.push_back(c);
        for (const std::size_t end : piece_ends(args, count)) {
            for (std::size_t c = end < 2 ? 0 : end - 2; c <= end + 2; ++c) {
                if (c > capacities.back()) capacities.push_back(c);
            }
        }
        encode(args, count, capacities);
    }
};

// An argument of `n` payload bytes, starting `skew` bytes into the payload.
std::string_view payload(std::size_t n, std::size_t skew) {
    return {payload_bytes().data() + skew % 16, n};
}

TEST(every_command_shape_at_every_capacity) {
    const proof::Timer timer;
    Runner r;
    const std::size_t lengths[] = {0, 1, 2, 9, 10, 11, 99, 100, 101};
    std::string_view args[101];
    // 1 to 4 arguments, every tuple of lengths.
    for (std::size_t count = 1; count <= 4; ++count) {
        std::size_t tuples = 1;
        for (std::size_t i = 0; i < count; ++i)
            tuples *= sizeof lengths / sizeof lengths[0];
        for (std::size_t t = 0; t < tuples && !r.failed; ++t) {
            for (std::size_t i = 0, rest = t; i < count; ++i, rest /= 9)
                args[i] = payload(lengths[rest % 9], t + i);
            r.every_capacity(args, count);
        }
    }
    // 1 to 12 arguments of 0 or 1 bytes: the count crosses from 1 digit to 2.
    for (std::size_t count = 1; count <= 12 && !r.failed; ++count) {
        for (std::size_t bits = 0; bits < (std::size_t{1} << count) && !r.failed; ++bits) {
            for (std::size_t i = 0; i < count; ++i)
                args[i] = payload((bits >> i) & 1U, i);
            r.every_capacity(args, count);
        }
    }
    // 98 to 101 arguments: the count crosses from 2 digits to 3.
    for (std::size_t count = 98; count <= 101 && !r.failed; ++count) {
        for (std::size_t i = 0; i < count; ++i)
            args[i] = payload(i % 3, i);
        r.every_capacity(args, count);
    }
    // Long arguments, first, middle or last.
    std::vector<std::size_t> long_lengths = {65535, 65536, 65537};
    for (std::size_t power = 1000; power <= 1000000; power *= 10) {
        for (const std::size_t n : {power - 1, power, power + 1})
            long_lengths.push_back(n);
    }
    for (const std::size_t n : long_lengths) {
        for (std::size_t at = 0; at < 3 && !r.failed; ++at) {
            for (std::size_t i = 0; i < 3; ++i)
                args[i] = i == at ? payload(n, i) : payload(3, i);
            r.around_each_piece(args, 3);
        }
    }
    proof::report("encode.shapes",
                  "1..4 arguments x lengths {0,1,2,9,10,11,99,100,101}, 1..12 arguments of 0..1 "
                  "bytes, 98..101 arguments, each at every capacity 0..size+2; lengths around "
                  "10^3..10^6 and 2^16 within 2 bytes of every piece's end",
                  r.cases, timer);
}

TEST(lengths_of_2_32_and_more_are_refused_unread) {
    const proof::Timer timer;
    Runner r;
    // One real byte: a read of any other faults under ASan.
    std::unique_ptr<char[]> byte(new char[1]);
    byte[0] = 'x';
    std::vector<std::size_t> sizes = {0xffffffffU, SIZE_MAX, SIZE_MAX - 1};
    if constexpr (sizeof(std::size_t) > 4) {
        const std::uint64_t big[] = {std::uint64_t{1} << 32, (std::uint64_t{1} << 32) + 1,
                                     std::uint64_t{1} << 33};
        for (const std::uint64_t n : big)
            sizes.push_back(static_cast<std::size_t>(n));
    }
    std::vector<std::size_t> capacities;
    for (std::size_t c = 0; c <= 4096; ++c)
        capacities.push_back(c);
    for (const std::size_t n : sizes) {
        for (std::size_t at = 0; at < 3 && !r.failed; ++at) {
            std::string_view args[3];
            for (std::size_t i = 0; i < 3; ++i)
                args[i] = i == at ? std::string_view(byte.get(), n) : std::string_view("GET");
            for (const std::size_t capacity : capacities) {
                std::unique_ptr<char[]> mem(new char[guard + capacity + guard]);
                std::memset(mem.get(), guard_byte, guard + capacity + guard);
                char* out = mem.get() + guard;
                proof::forbid(mem.get(), guard);
                proof::forbid(out + capacity, guard);
                std::size_t written = 1;
                const Status s = encode_command(args, 3, out, capacity, &written);
                proof::allow(mem.get(), guard);
                proof::allow(out + capacity, guard);
                ++r.cases;
                bool good = CHECK_EQ(s, Status::too_large) && CHECK_EQ(written, std::size_t{0});
                for (std::size_t i = 0; good && i < guard; ++i)
                    good = CHECK_EQ(mem[i], guard_byte) && CHECK_EQ(out[capacity + i], guard_byte);
                if (!good) {
                    std::printf("      an argument of %zu bytes at %zu, capacity %zu\n", n, at,
                                capacity);
                    return;
                }
            }
        }
    }
    proof::report("encode.huge_lengths",
                  "arguments of 2^32-1, SIZE_MAX-1, SIZE_MAX (64-bit: 2^32, 2^32+1, 2^33) bytes "
                  "at each of 3 positions, every capacity 0..4096",
                  r.cases, timer);
}

TEST(invalid_arguments_leave_the_buffer_untouched) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    char out[64];
    const auto untouched = [&out] {
        for (const char c : out) {
            if (c != guard_byte) return false;
        }
        return true;
    };
    for (const std::size_t capacity : {std::size_t{0}, std::size_t{1}, sizeof out}) {
        std::size_t written = 7;
        std::memset(out, guard_byte, sizeof out);
        const std::string_view one[] = {"PING"};
        CHECK_EQ(encode_command(one, 0, out, capacity, &written), Status::invalid_argument);
        CHECK_EQ(written, std::size_t{0});
        CHECK(untouched());
        for (std::size_t count = 1; count <= 3; ++count) {
            written = 7;
            CHECK_EQ(encode_command(nullptr, count, out, capacity, &written),
                     Status::invalid_argument);
            CHECK_EQ(written, std::size_t{0});
            CHECK(untouched());
            for (std::size_t at = 0; at < count; ++at) {
                std::string_view args[3] = {"SET", "k", "v"};
                args[at] = std::string_view(nullptr, 1 + at);
                written = 7;
                CHECK_EQ(encode_command(args, count, out, capacity, &written),
                         Status::invalid_argument);
                CHECK_EQ(written, std::size_t{0});
                CHECK(untouched());
                cases += 2;
            }
            ++cases;
        }
        ++cases;
    }
    proof::report("encode.invalid", "count 0, null array, a null argument at each of 1..3", cases,
                  timer);
}

TEST(format_decimal_around_every_power_of_ten) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    std::vector<std::uint64_t> centres = {0, std::uint64_t{1} << 31, 0xffffffffU - 300};
    for (std::uint64_t p = 10; p <= 1000000000U; p *= 10)
        centres.push_back(p);
    for (const std::uint64_t centre : centres) {
        const std::uint64_t first = centre < 300 ? 0 : centre - 300;
        const std::uint64_t last = centre + 300 > 0xffffffffU ? 0xffffffffU : centre + 300;
        for (std::uint64_t v = first; v <= last; ++v) {
            const auto value = static_cast<std::uint32_t>(v);
            const std::string want = std::to_string(value);
            for (std::size_t capacity = 0; capacity <= 11; ++capacity) {
                std::unique_ptr<char[]> mem(new char[capacity + guard]);
                std::memset(mem.get(), guard_byte, capacity + guard);
                proof::forbid(mem.get() + capacity, guard);
                const std::size_t n = format_decimal(value, mem.get(), capacity);
                // The ARMv6-M spelling (core/word_math.hpp), into a second buffer.
                std::unique_ptr<char[]> mem6(new char[capacity + guard]);
                std::memset(mem6.get(), guard_byte, capacity + guard);
                proof::forbid(mem6.get() + capacity, guard);
                const std::size_t n6 =
                    detail::format_decimal_by_subtraction(value, mem6.get(), capacity);
                proof::allow(mem.get() + capacity, guard);
                proof::allow(mem6.get() + capacity, guard);
                ++cases;
                bool good = want.size() <= capacity
                                ? CHECK_EQ(std::string_view(mem.get(), n), std::string_view(want))
                                : CHECK_EQ(n, std::size_t{0});
                for (std::size_t i = n; good && i < capacity + guard; ++i)
                    good = CHECK_EQ(mem[i], guard_byte);
                good = good && CHECK_EQ(n6, n) &&
                       CHECK_EQ(std::memcmp(mem6.get(), mem.get(), capacity + guard), 0);
                if (!good) {
                    std::printf("      value %u, capacity %zu\n", value, capacity);
                    return;
                }
            }
        }
    }
    proof::report("encode.format_decimal",
                  "every value within 300 of 0, 10^1..10^9, 2^31 and below 2^32, capacities "
                  "0..11",
                  cases, timer);
}

// A port that is never called: the connection only lends eval_fits its buffer size.
resplock_port_t idle_port() {
    resplock_port_t port{};
    return port;
}

// The ARMv6-M spellings of core/word_math.hpp against the plain expressions.
TEST(word_math_matches_the_plain_arithmetic) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    // quotient_255_by_steps: every x below 2^22, every x within 300 of each multiple of 2^20
    // (up to 2^32 - 1).
    auto quotient = [&](std::uint64_t x) {
        ++cases;
        const auto v = static_cast<std::uint32_t>(x);
        if (detail::quotient_255_by_steps(v) == v / 255U) return true;
        CHECK_EQ(detail::quotient_255_by_steps(v), v / 255U);
        std::printf("      x %u\n", v);
        return false;
    };
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << 22); ++x)
        if (!quotient(x)) return;
    for (std::uint64_t centre = 0; centre <= 0x100000000U; centre += 1U << 20) {
        for (std::uint64_t x = centre < 300 ? 0 : centre - 300; x <= centre + 300; ++x)
            if (x <= 0xffffffffU && !quotient(x)) return;
    }
    // quotient_255_below_65535 (the retry jitter's on ARMv6-M): every x below 65535.
    for (std::uint32_t x = 0; x < 65535U; ++x) {
        ++cases;
        if (detail::quotient_255_below_65535(x) != x / 255U) {
            CHECK_EQ(detail::quotient_255_below_65535(x), x / 255U);
            std::printf("      x %u\n", x);
            return;
        }
    }
    // times_10_plus_by_doubling, every digit 0..9: the low word within 300 of each place where its
    // product by 10 carries into the high word (k * 2^32 / 10, k = 0..10) and of 2^31, each with
    // a high word of 0, 1, 2^31 / 10, 0x19999999, 2^31 and 2^32 - 1; and every value within 300
    // of 2^k (k = 0..63) and below 2^64.
    std::vector<std::uint64_t> values;
    auto around = [&](std::uint64_t centre) {
        for (std::uint64_t d = 0; d <= 600; ++d)
            values.push_back(centre - 300 + d);  // wraps at 0 and 2^64: both ends covered
    };
    for (const std::uint64_t high :
         {0ULL, 1ULL, 214748364ULL, 0x19999999ULL, 0x80000000ULL, 0xffffffffULL}) {
        for (std::uint64_t k = 0; k <= 10; ++k)
            around((high << 32) | ((k << 32) / 10));
        around((high << 32) | 0x80000000U);
    }
    for (unsigned k = 0; k < 64; ++k)
        around(std::uint64_t{1} << k);
    for (const std::uint64_t value : values) {
        for (std::uint32_t digit = 0; digit <= 9; ++digit) {
            ++cases;
            if (detail::times_10_plus_by_doubling(value, digit) != value * 10 + digit) {
                CHECK_EQ(detail::times_10_plus_by_doubling(value, digit), value * 10 + digit);
                std::printf("      value %llu, digit %u\n", static_cast<unsigned long long>(value),
                            digit);
                return;
            }
        }
    }
    proof::report("encode.word_math",
                  "x / 255: every x below 2^22 and within 300 of each multiple of 2^20, and by "
                  "the short form every x below 65535; "
                  "value * 10 + digit: around each carry of the low word and each 2^k",
                  cases, timer);
}

TEST(token_hex_spellings_match) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    constexpr std::size_t bytes = RESPLOCK_TOKEN_BYTES;
    for (std::size_t at = 0; at < bytes; ++at) {
        for (unsigned value = 0; value < 256; ++value) {
            ++cases;
            unsigned char random[bytes];
            for (std::size_t i = 0; i < bytes; ++i)
                random[i] = static_cast<unsigned char>(i == at ? value : value * 7 + i * 31 + 1);
            char expected[2 * bytes + 1];
            for (std::size_t i = 0; i < bytes; ++i)
                std::snprintf(expected + 2 * i, 3, "%02x", random[i]);
            char by_digits[resplock::token_len];
            char by_pairs[resplock::token_len];
            std::memcpy(by_digits + bytes, random, bytes);
            std::memcpy(by_pairs + bytes, random, bytes);
            detail::hex_by_digits(by_digits);
            detail::hex_by_pairs(by_pairs);
            const std::string_view want(expected, 2 * bytes);
            if (std::string_view(by_digits, sizeof by_digits) != want ||
                std::string_view(by_pairs, sizeof by_pairs) != want) {
                CHECK_EQ(std::string_view(by_digits, sizeof by_digits), want);
                CHECK_EQ(std::string_view(by_pairs, sizeof by_pairs), want);
                std::printf("      byte %zu = %u\n", at, value);
                return;
            }
        }
    }
    proof::report("encode.token_hex", "every byte value at every position of the token", cases,
                  timer);
}

TEST(request_sizes_are_the_encoded_sizes) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    // digits and bulk_size, around every power of ten that a size_t holds.
    std::vector<std::size_t> sizes = {0, 1, 2, SIZE_MAX};
    for (std::size_t p = 10, prev = 1; p / 10 == prev; prev = p, p *= 10) {
        for (std::size_t d = 0; d <= 300 && d < p; ++d) {
            sizes.push_back(p - d);
            if (p + d > p) sizes.push_back(p + d);
        }
    }
    for (const std::size_t n : sizes) {
        const std::size_t digits = std::to_string(n).size();
        ++cases;
        if (!CHECK_EQ(detail::digits(n), digits)) {
            std::printf("      n %zu\n", n);
            return;
        }
        // Against the reference's bulk string up to 10^4 + 300 bytes, beyond by its parts.
        std::size_t bulk = 0;
        if (n <= 10300) {
            const std::string_view arg = payload(n, 0);
            bulk = reference_command(&arg, 1).size() - std::string("*1\r\n").size();
        } else if (n <= SIZE_MAX - 25) {
            bulk = std::string("$").size() + digits + std::string("\r\n").size() + n +
                   std::string("\r\n").size();
        } else {
            continue;  // no size_t holds it (see the proof's notes in docs/testing.md)
        }
        if (!CHECK_EQ(detail::bulk_size(n), bulk)) {
            std::printf("      n %zu\n", n);
            return;
        }
    }

    // eval_size and eval_fits against the encoder.
    std::vector<std::size_t> text_lengths = {
        0,
        detail::owner_script.text.size(),
        detail::options_acquire_script.text.size(),
        detail::options_release_script.text.size(),
        detail::fair_script.text.size(),
        detail::reentrant_acquire_script.text.size(),
        detail::semaphore_script.text.size(),
    };
    for (const std::size_t p : {1, 10, 100, 1000}) {
        text_lengths.push_back(p - 1);
        text_lengths.push_back(p);
        text_lengths.push_back(p + 1);
    }
    const std::size_t arg_lengths[] = {0, 1, 9, 10, 99, 100};
    const resplock_port_t port = idle_port();
    std::vector<char> buffer(64 * 1024);
    std::string_view args[2 + 99];
    const auto check_shape = [&](std::size_t text_len, std::size_t count) {
        const detail::Script script{"0123456789012345678901234567890123456789",
                                    payload(text_len, 5)};
        std::size_t bytes = 0;
        for (std::size_t i = 2; i < 2 + count; ++i)
            bytes += detail::bulk_size(args[i].size());
        args[0] = "EVAL";
        args[1] = script.text;
        const std::size_t want = reference_command(args, 2 + count).size();
        ++cases;
        if (!CHECK_EQ(detail::eval_size(text_len, count, bytes), want)) return false;
        for (std::size_t size = want - 2; size <= want + 2; ++size) {
            resplock::Connection conn(port, {}, buffer.data(), size);
            std::size_t written = 0;
            const bool encodes =
                encode_command(args, 2 + count, buffer.data(), size, &written) == Status::ok;
            const bool fits = detail::eval_fits(conn, script, args, 2 + count);
            ++cases;
            if (!CHECK_EQ(fits, encodes) || !CHECK_EQ(fits, want <= size)) {
                std::printf("      buffer %zu, request %zu\n", size, want);
                return false;
            }
        }
        return true;
    };
    for (const std::size_t text_len : text_lengths) {
        // 0..3 arguments: every tuple of lengths.
        for (std::size_t count = 0; count <= 3; ++count) {
            std::size_t tuples = 1;
            for (std::size_t i = 0; i < count; ++i)
                tuples *= sizeof arg_lengths / sizeof arg_lengths[0];
            for (std::size_t t = 0; t < tuples; ++t) {
                for (std::size_t i = 0, rest = t; i < count; ++i, rest /= 6)
                    args[2 + i] = payload(arg_lengths[rest % 6], i);
                if (!check_shape(text_len, count)) {
                    std::printf("      script of %zu bytes, %zu arguments\n", text_len, count);
                    return;
                }
            }
        }
        // 4..12 and 96..99 arguments (2 + count crosses 10 and 100).
        for (std::size_t count = 4; count <= 99; count = count == 12 ? 96 : count + 1) {
            for (const std::size_t len : arg_lengths) {
                for (std::size_t i = 0; i < count; ++i)
                    args[2 + i] = payload(i % 2 == 0 ? len : 1, i);
                if (!check_shape(text_len, count)) {
                    std::printf("      script of %zu bytes, %zu arguments\n", text_len, count);
                    return;
                }
            }
        }
    }
    proof::report("encode.request_sizes",
                  "digits/bulk_size within 300 of every power of ten in a size_t; eval_size and "
                  "eval_fits for 19 script lengths x 0..3 arguments of every length tuple, 4..12 "
                  "and 96..99 arguments, buffers request-2..request+2",
                  cases, timer);
}

}  // namespace
