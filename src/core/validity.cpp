#include "resplock/core/validity.hpp"

namespace resplock {

void Validity::start(std::uint32_t from_ms, std::uint32_t ttl_ms) noexcept {
    // A TTL at or below the drift allowance gives no validity at all.
    const std::uint32_t drift = detail::drift_ms(ttl_ms);
    known_ = ttl_ms > drift;
    lapsed_ = !known_;
    from_ms_ = from_ms;
    span_ms_ = known_ ? ttl_ms - drift : 0U;
}

void Validity::renewal_unconfirmed(std::uint32_t from_ms, std::uint32_t ttl_ms) noexcept {
    if (!known_ || lapsed_) return;
    // What the old validity still had at from_ms (the renewal is sent after it started).
    const std::uint32_t elapsed = from_ms - from_ms_;
    if (elapsed >= span_ms_) {
        lapsed_ = true;
        return;
    }
    const std::uint32_t old_left = span_ms_ - elapsed;
    start(from_ms, ttl_ms);
    if (known_ && span_ms_ > old_left) span_ms_ = old_left;
}

std::uint32_t Validity::remaining(const resplock_port_t& port) const noexcept {
    if (!known_ || lapsed_) return 0U;
    const std::uint32_t elapsed = port.now_ms(port.ctx) - from_ms_;
    if (elapsed >= span_ms_) {
        lapsed_ = true;  // never again, however far the clock goes on
        return 0U;
    }
    return span_ms_ - elapsed;
}

}  // namespace resplock
