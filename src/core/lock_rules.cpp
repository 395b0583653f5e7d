#include "core/lock_rules.hpp"

namespace resplock {

namespace detail {

using namespace std::string_view_literals;

Status random_token(const resplock_port_t& port, char* out) noexcept {
    // The random bytes go to the second half of `out` and are spelled out in hex in place:
    // byte i is read before digits 2i and 2i+1 overwrite anything unread (saves stack).
    auto* random = reinterpret_cast<std::uint8_t*>(out + RESPLOCK_TOKEN_BYTES);
    if (port.random == nullptr || port.random(port.ctx, random, RESPLOCK_TOKEN_BYTES) != 0) {
        return Status::random_failed;
    }
    static constexpr char hex[] = "0123456789abcdef";
    for (std::size_t i = 0; i < RESPLOCK_TOKEN_BYTES; ++i) {
        const std::uint8_t b = random[i];
        out[2 * i] = hex[b >> 4];
        out[2 * i + 1] = hex[b & 0xf];
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
    const std::uint32_t drift = ttl_ms / 100 + 2;
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
