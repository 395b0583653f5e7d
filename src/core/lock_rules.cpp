#include "core/lock_rules.hpp"

namespace resplock {

namespace detail {

using namespace std::string_view_literals;

Status random_token(const resplock_port_t& port, char (&out)[token_len]) noexcept {
    // The random bytes go to the end of `out` and are spelled out in hex in place, two at a
    // time: bytes i and i+1 are read before digits 2i..2i+3 overwrite anything unread (saves
    // stack).
    std::uint8_t* const random = reinterpret_cast<std::uint8_t*>(out + RESPLOCK_TOKEN_BYTES);
    if (port.random == nullptr || port.random(port.ctx, random, RESPLOCK_TOKEN_BYTES) != 0) {
        return Status::random_failed;
    }
    for (std::size_t i = 0; i < RESPLOCK_TOKEN_BYTES; i += 2) {
        // One nibble per byte of x, in the order of the digits: high, low, high, low (for an odd
        // count, the last byte pairs with a zero whose digits are not written).
        const std::uint32_t pair =
            random[i] | (i + 1 < RESPLOCK_TOKEN_BYTES ? std::uint32_t{random[i + 1]} << 16 : 0U);
        std::uint32_t x = ((pair >> 4) & 0x000f000fU) | ((pair & 0x000f000fU) << 8);
        // '0' + n, plus 39 more ('a' - '0' - 10) where n > 9: bit 4 of n + 6 says which.
        x += 0x30303030U + (((x + 0x06060606U) >> 4) & 0x01010101U) * 39U;
        out[2 * i] = static_cast<char>(x);
        out[2 * i + 1] = static_cast<char>(x >> 8);
        if (i + 1 < RESPLOCK_TOKEN_BYTES) {
            out[2 * i + 2] = static_cast<char>(x >> 16);
            out[2 * i + 3] = static_cast<char>(x >> 24);
        }
    }
    return Status::ok;
}

Status eval(Connection& conn, const Script& script, std::string_view* args, std::size_t count,
            resp::Reply& reply, Deadline deadline) noexcept {
    for (bool by_text = false;; by_text = true) {
        args[0] = {"EVALSHA", by_text ? 4U : 7U};  // EVAL is its prefix
        args[1] = by_text ? script.text : script.sha1;
        const Status s = conn.command(args, count, reply, deadline);
        // NOSCRIPT: the server's script cache is empty (restart, failover, SCRIPT FLUSH): send
        // the text once.
        if (s != Status::no_script || by_text) return s;
    }
}

}  // namespace detail

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
