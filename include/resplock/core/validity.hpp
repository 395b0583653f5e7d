// How long a holder may rely on a lock it was granted: Validity, and the TTL rules every lock
// kind shares (the largest TTL, the clock-drift allowance).
#ifndef RESPLOCK_VALIDITY_HPP
#define RESPLOCK_VALIDITY_HPP

#include <cstdint>

#include "resplock/core/connection.hpp"
#include "resplock/core/port.h"

namespace resplock {

// Largest TTL accepted (2^31 - 1 ms, about 24.8 days): keeps every clock span wrap-safe.
inline constexpr std::uint32_t max_ttl_ms = max_span_ms;

namespace detail {

// x / 100 by shifts and subtractions (a restoring division; the quotient is below 2^26). A core
// with neither a divide instruction nor a 64-bit product (ARMv6-M: Cortex-M0, M0+, M1) would
// link a library routine for the division, several times the size of this loop. The quotient
// takes one bit per step, from 100 * 2^25 down to 100 itself.
constexpr std::uint32_t hundredth(std::uint32_t x) noexcept {
    std::uint32_t q = 0;
    for (std::uint32_t step = std::uint32_t{100} << 25; step >= 100; step >>= 1) {
        q <<= 1;
        if (x >= step) {
            x -= step;
            ++q;
        }
    }
    return q;
}

// The clock-drift allowance a validity of ttl_ms loses (ttl/100 + 2 ms): Validity::start and the
// renewal driver's refusal of margins no renewal can outlast count it alike.
constexpr std::uint32_t drift_ms(std::uint32_t ttl_ms) noexcept {
#if defined(__ARM_ARCH_6M__)
    return hundredth(ttl_ms) + 2;
#else
    return ttl_ms / 100 + 2;  // a multiplication where the core has a 64-bit product
#endif
}

inline bool valid_ttl(std::uint32_t ttl_ms) noexcept {
    return ttl_ms >= 1 && ttl_ms <= max_ttl_ms;
}

}  // namespace detail

// The TTL, minus the time since the request that set it was sent, minus a clock-drift allowance
// of ttl/100 + 2 ms.
// Kept as a start time and a span, and read as span - (now - start) in unsigned arithmetic, so
// the 32-bit clock's wrap does not disturb it; once read as run out it stays run out, however far
// the clock goes on. The limit: a validity not read at all for 2^32 ms (about 49.7 days, e.g. a
// device suspended that long, the port's clock counting through suspend) cannot tell that time
// from none, and reads as its span minus the time past the last multiple of 2^32 ms
// (tests/proofs/proof_time.cpp). A holder that may be suspended that long gives its lock back
// first.
class Validity {
  public:
    // Granted (or renewed) by a request sent at port time from_ms with this TTL.
    void start(std::uint32_t from_ms, std::uint32_t ttl_ms) noexcept;
    // A renewal sent at from_ms whose outcome is unknown: it may or may not have run, so the
    // validity ends at the earlier of the old end and the new one.
    void renewal_unconfirmed(std::uint32_t from_ms, std::uint32_t ttl_ms) noexcept;
    void end() noexcept { known_ = false; }
    // Whether a validity was granted since the last end() (it may have run out since).
    bool known() const noexcept { return known_; }
    // Milliseconds left on the port's clock; 0 once run out or when not known.
    std::uint32_t remaining(const resplock_port_t& port) const noexcept;
    // For a renewal about to be sent: false once this validity has run out (the lock is then
    // expired, and a renewal confirmed now would be of no use); else lowers wait_ms to the
    // validity left, when it is known, so that no renewal is awaited past it.
    bool bounds_renewal(const resplock_port_t& port, std::uint32_t& wait_ms) const noexcept {
        if (!known_) return true;  // unknown (an adopted token): the renewal goes out
        const std::uint32_t left = remaining(port);
        if (left < wait_ms) wait_ms = left;
        return left > 0;
    }

  private:
    std::uint32_t from_ms_ = 0;  // port clock when the granting request was sent
    std::uint32_t span_ms_ = 0;  // usable validity from then
    bool known_ = false;
    mutable bool lapsed_ = false;  // set by remaining() once it reads 0
};

}  // namespace resplock

#endif  // RESPLOCK_VALIDITY_HPP
