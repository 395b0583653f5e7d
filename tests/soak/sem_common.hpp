// What the semaphore chaos test (test_soak_semaphore.cpp) and its contenders (sem_holder.cpp)
// agree on: the key, the logs, the TTL range and the records. Times are microseconds of
// CLOCK_BOOTTIME (soak::boot_us(), the POSIX port's clock), one clock for every process of the
// host, so the records of different processes compare directly.
//
// Each contender labels its tokens with the owner "c<pid>" (Semaphore::set_owner), so every token
// it ever sends starts with "c<pid>:": the orchestrator finds a killed contender's leases and
// queue entries on the server by that prefix, logged or not. It appends to the Redis list of its
// mode (log_plain or log_fair) one record per event, fields separated by single spaces, each
// written before the contender acts on what it says:
//   S pid mode limit                 started (mode plain or fair); SIGTERM is handled from here on
//   W pid call_us ttl_ms wait_ms     about to call try_acquire(ttl_ms, wait_ms)
//   A pid token begin_us valid_until_us ttl_ms fence call_us
//                                    granted: begin_us read after the reply, valid_until_us the
//                                    end of its local validity (remaining_ms()), call_us the W's
//   E pid token valid_until_us ttl_ms  extended to ttl_ms; the new end of its validity
//   R pid token end_us               stops using the lease, which was valid at end_us
//   L pid token reason               stopped because its validity ran out ("lapsed") or an extend
//                                    failed ("extend:STATUS"): relied on it up to valid_until_us
//   X pid token status               release() returned status
//   B pid call_us end_us             the wait ran out (busy)
//   U pid token status               try_acquire failed otherwise (token "-" when none was kept)
// A hold is the interval from A's begin_us to R's end_us, or, when no R follows (lapsed, failed
// extend, killed), to the last valid_until_us of its A or E records.
#ifndef RESPLOCK_TESTS_SOAK_SEM_COMMON_HPP
#define RESPLOCK_TESTS_SOAK_SEM_COMMON_HPP

#include <cstdint>

namespace semsoak {

inline constexpr const char* key = "chaos:sem";
inline constexpr const char* log_plain = "chaoslog:plain";
inline constexpr const char* log_fair = "chaoslog:fair";
inline constexpr std::uint32_t limit = 4;
inline constexpr int contenders = 16;
inline constexpr std::uint32_t min_ttl_ms = 300;
inline constexpr std::uint32_t max_ttl_ms = 900;
// The longest a contender works on one lease, extends included.
inline constexpr std::uint32_t max_hold_ms = 1800;

}  // namespace semsoak

#endif  // RESPLOCK_TESTS_SOAK_SEM_COMMON_HPP
