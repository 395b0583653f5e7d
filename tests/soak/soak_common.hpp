// What the soak holders and the orchestrator agree on: the keys, the log, the TTL range, and the
// clock. CLOCK_MONOTONIC is one clock for every process of a Linux host, so times written to the
// log by different holders can be compared directly.
//
// Log records (one Redis list element each, fields separated by single spaces; times in
// microseconds of CLOCK_MONOTONIC):
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

namespace soak {

inline constexpr const char* keys[] = {"soak:key:0", "soak:key:1", "soak:key:2", "soak:key:3"};
inline constexpr int key_count = 4;
inline constexpr const char* log_key = "soak:log";
inline constexpr std::uint32_t min_ttl_ms = 200;
inline constexpr std::uint32_t max_ttl_ms = 800;

inline std::int64_t mono_us() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace soak

#endif  // RESPLOCK_TESTS_SOAK_COMMON_HPP
