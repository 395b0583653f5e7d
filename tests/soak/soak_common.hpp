// What the soak holders and the orchestrator agree on: the keys, the log, the TTL range, and the
// clock. CLOCK_BOOTTIME (the POSIX port's clock on Linux) is one clock for every process of a
// Linux host, so times written to the logs by different processes can be compared directly.
//
// The library holders' log (one Redis list element per record, fields separated by single
// spaces; times in microseconds of CLOCK_BOOTTIME):
//   S pid                     started; SIGTERM is handled from here on
//   A pid key token start valid_until ttl_ms contended   acquired (contended: 1 if the first
//                                                       attempt was busy and waiting got it)
//   E pid key token valid_until                         extended
//   R pid key token end       about to release; validity was observed at `end`, and the holder
//                             relied on the lock no later than that
//   L pid key token status    stopped relying because validity ran out (status "lapsed") or an
//                             extend failed; it relied on the lock no later than valid_until
//   X pid key token status    release() returned status
//   B pid key                 busy: not acquired within the wait
//   U pid key token status    acquire failed otherwise (token "-" if none was made)
#ifndef RESPLOCK_TESTS_SOAK_COMMON_HPP
#define RESPLOCK_TESTS_SOAK_COMMON_HPP

#include <time.h>

#include <cstdint>
#include <random>

namespace soak {

inline constexpr const char* keys[] = {"soak:key:0", "soak:key:1", "soak:key:2", "soak:key:3"};
inline constexpr int key_count = 4;
inline constexpr const char* log_key = "soak:log";
inline constexpr std::uint32_t min_ttl_ms = 200;
inline constexpr std::uint32_t max_ttl_ms = 800;

// The `resplock run` holders' keys (their log is a file: see soak_writer.cpp).
inline constexpr const char* run_keys[] = {"soak:run:0", "soak:run:1", "soak:run:2"};
inline constexpr int run_key_count = 3;

inline std::int64_t boot_us() {
    timespec ts{};
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// The port's clock as the POSIX port reads it: CLOCK_BOOTTIME in whole milliseconds.
inline std::int64_t port_ms() {
    return boot_us() / 1000;
}

// A sleep that SIGTERM cuts short, which is what a holder asked to stop wants.
inline void sleep_ms(std::uint32_t ms) {
    const timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    nanosleep(&ts, nullptr);
}

// A holder's random choices: uniform in [lo, hi].
inline std::uint32_t uniform(std::mt19937& rng, std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
}

// When `held` (a Lock, a Semaphore) stops being valid as the library reckons it, in microseconds:
// remaining_ms() counts from the current millisecond of the port's clock, so read that clock on
// both sides and use a reading where both agree (the end is then exactly that millisecond +
// remaining).
template <class Held>
std::int64_t valid_until_us(const Held& held) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        const std::int64_t before = port_ms();
        const std::uint32_t left = held.remaining_ms();
        if (port_ms() == before) return (before + left) * 1000;
    }
    // Never seen in practice; this gives an end no earlier than the true one.
    const std::uint32_t left = held.remaining_ms();
    return (port_ms() + 1 + left) * 1000;
}

}  // namespace soak

#endif  // RESPLOCK_TESTS_SOAK_COMMON_HPP
