#include "resplock/lock.hpp"

#include <cstring>

namespace resplock {

using namespace std::string_view_literals;

namespace {

// The owner script: KEYS[1] = key, ARGV[1] = token, ARGV[2] = ttl. With a token it returns -1
// when another value holds the key, 0 when the key is gone, and otherwise deletes the key (no
// ttl: release) or sets its PTTL (ttl: extend) and returns 1. With no token it returns
// {value, PTTL} (query). One script keeps one entry in the server's cache and one text here.
// Its SHA1 is checked against the server's own SCRIPT LOAD in the integration tests.
constexpr std::string_view script_sha1 = "b9f09aef22a6677cd9ff71057c841e654a492713";
constexpr std::string_view script_text =
    "local k,a,r=KEYS[1],ARGV,redis.call local v=r('get',k) if not a[1] then return "
    "{v,r('pttl',k)} end if v~=a[1] then return v and -1 or 0 end if a[2] then return "
    "r('pexpire',k,a[2]) end return r('del',k)";

constexpr std::size_t digits(std::size_t n) {
    return n < 10 ? 1 : 1 + digits(n / 10);
}
constexpr std::size_t bulk_size(std::size_t n) {
    return 1 + digits(n) + 2 + n + 2;
}

// The reply to a request that went out was lost: the server's state is unknown.
bool reply_lost(Status s) noexcept {
    return s == Status::timeout || s == Status::closed || s == Status::io_error;
}

// The reply arrived but could not be read: the request was probably executed.
bool reply_malformed(Status s) noexcept {
    return s == Status::protocol_error || s == Status::too_large;
}

// Port clock time at which a validity of ttl_ms counted from from_ms ends (see remaining_ms).
std::uint32_t valid_until(std::uint32_t from_ms, std::uint32_t ttl_ms) noexcept {
    return from_ms + ttl_ms - (ttl_ms / 100 + 2);
}

bool valid_ttl(std::uint32_t ttl_ms) noexcept {
    return ttl_ms >= 1 && ttl_ms <= max_ttl_ms;
}

}  // namespace

std::size_t lock_buffer_min() noexcept {
    // *5 EVAL <extend script> 1 <key> <token> <ttl>: the longest request a Lock sends.
    constexpr std::size_t extend_eval = 4 + bulk_size(4) + bulk_size(script_text.size()) +
                                        bulk_size(1) + bulk_size(RESPLOCK_MAX_KEY_LEN) +
                                        bulk_size(max_token_len) + bulk_size(10);
    return extend_eval;
}

// key_ and token_ are read only up to key_len_ and token_len_: zeroing them would cost flash.
// NOLINTBEGIN(cppcoreguidelines-pro-type-member-init)
// cppcheck-suppress uninitMemberVar
Lock::Lock(Connection& conn, std::string_view key) noexcept : conn_(conn) {
    if (!key.empty() && key.size() <= sizeof key_) {
        std::memcpy(key_, key.data(), key.size());
        key_len_ = key.size();
    }
}
// NOLINTEND(cppcoreguidelines-pro-type-member-init)

Status Lock::acquire(std::uint32_t ttl_ms) noexcept {
    if (key_len_ == 0 || !valid_ttl(ttl_ms) || held()) return Status::invalid_argument;
    const resplock_port_t& port = conn_.port();
    // The random bytes go to the second half of `fresh` and are spelled out in hex in place:
    // byte i is read before digits 2i and 2i+1 overwrite anything unread (saves stack).
    char fresh[token_len];
    auto* random = reinterpret_cast<std::uint8_t*>(fresh + RESPLOCK_TOKEN_BYTES);
    if (port.random == nullptr || port.random(port.ctx, random, RESPLOCK_TOKEN_BYTES) != 0) {
        return Status::random_failed;
    }
    static constexpr char hex[] = "0123456789abcdef";
    for (std::size_t i = 0; i < RESPLOCK_TOKEN_BYTES; ++i) {
        const std::uint8_t b = random[i];
        fresh[2 * i] = hex[b >> 4];
        fresh[2 * i + 1] = hex[b & 0xf];
    }
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::string_view args[6] = {"SET"sv, key(),  {fresh, token_len},
                                      "NX"sv,  "PX"sv, {ttl_text, ttl_len}};
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    Status s = conn_.command(args, 6, reply);
    if (s == Status::ok) {
        const resp::Value& v = reply.top();
        if (v.is(resp::Type::nil_bulk)) return Status::busy;
        if (!v.is(resp::Type::simple_string) || !v.equals("OK"sv)) s = Status::protocol_error;
    } else if (reply_lost(s) && conn_.request_sent()) {
        s = Status::unknown_outcome;
    } else if (!(reply_malformed(s) && conn_.request_sent())) {
        return s;  // not executed: nothing to keep
    }
    // Held, or possibly held: keep the token so release() can act for it, but claim validity
    // only on the server's OK.
    std::memcpy(token_, fresh, token_len);
    token_len_ = token_len;
    ttl_ms_ = ttl_ms;
    valid_from_ms_ = sent_at;
    validity_known_ = s == Status::ok;
    return s;
}

Status Lock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    if (wait_ms > max_ttl_ms) return Status::invalid_argument;  // would wrap the deadline
    const resplock_port_t& port = conn_.port();
    const Deadline deadline = Deadline::after(port, wait_ms);
    std::uint32_t backoff = RESPLOCK_RETRY_MIN_MS;
    for (;;) {
        const Status s = acquire(ttl_ms);
        // Busy, no connection yet, or a server that did not run the command (loading, running a
        // script): nothing can be held, so retry.
        const bool retry = s == Status::busy || s == Status::timeout || s == Status::closed ||
                           s == Status::io_error || s == Status::connect_failed ||
                           s == Status::loading || s == Status::server_busy;
        if (!retry || deadline.remaining(port) == 0) return s;

        // Jitter spreads contending waiters over [backoff/2, backoff].
        std::uint32_t pause = backoff;
        std::uint8_t r = 0;
        if (port.random != nullptr && port.random(port.ctx, &r, 1) == 0) {
            pause = backoff / 2 + (backoff / 2) * r / 255U;
        }
        backoff = backoff >= RESPLOCK_RETRY_MAX_MS / 2 ? RESPLOCK_RETRY_MAX_MS : backoff * 2;
        std::int64_t ttl_left = -1;
        if (s == Status::busy && holder_ttl(ttl_left) == Status::ok) {
            // Never sleep past the moment the holder's lock expires (-2: already gone).
            if (ttl_left == -2) pause = 0;
            if (ttl_left >= 0 && ttl_left < pause) pause = static_cast<std::uint32_t>(ttl_left);
        }
        const std::uint32_t left = deadline.remaining(port);
        if (left == 0) return s;  // the PTTL used up the wait: no attempt after the deadline
        if (pause > left) pause = left;
        if (pause > 0) port.sleep_ms(port.ctx, pause);
    }
}

Status Lock::holder_ttl(std::int64_t& ttl_ms) noexcept {
    const std::string_view args[2] = {"PTTL"sv, key()};
    resp::Reply reply;
    const Status s = conn_.command(args, 2, reply);
    if (s != Status::ok) return s;
    if (!reply.top().is(resp::Type::integer)) return Status::protocol_error;
    ttl_ms = reply.top().integer;
    return Status::ok;
}

Status Lock::run_script(const std::string_view* extra, std::size_t extra_count, resp::Reply& reply,
                        Deadline deadline) noexcept {
    std::string_view args[6] = {"EVALSHA"sv, script_sha1, "1"sv, key()};
    for (std::size_t i = 0; i < extra_count; ++i)
        args[4 + i] = extra[i];
    Status s = conn_.command(args, 4 + extra_count, reply, deadline);
    if (s == Status::no_script) {
        // The server's script cache is empty (restart, failover, SCRIPT FLUSH): send the text.
        args[0] = "EVAL"sv;
        args[1] = script_text;
        s = conn_.command(args, 4 + extra_count, reply, deadline);
    }
    return s;
}

// Maps the reply of the release/extend scripts, and forgets the token once it is known lost.
Status Lock::owner_result(Status s, const resp::Reply& reply) noexcept {
    if (s == Status::ok) {
        const resp::Value& v = reply.top();
        if (!v.is(resp::Type::integer)) return Status::protocol_error;
        s = v.integer == 1    ? Status::ok
            : v.integer == 0  ? Status::expired
            : v.integer == -1 ? Status::not_owner
                              : Status::protocol_error;
    } else if (s == Status::wrong_type && conn_.request_sent()) {
        s = Status::not_owner;  // another kind of value holds the key: not ours (the reply to
                                // our request, not to the handshake's SELECT)
    } else if (reply_lost(s) && conn_.request_sent()) {
        return Status::unknown_outcome;
    }
    if (s == Status::expired || s == Status::not_owner) drop();
    return s;
}

Status Lock::release() noexcept {
    if (key_len_ == 0 || token_len_ == 0) return Status::invalid_argument;
    resp::Reply reply;
    const std::string_view token_arg = token();
    const Status s = owner_result(
        run_script(&token_arg, 1, reply, Deadline::after(conn_.port(), conn_.config().timeout_ms)),
        reply);
    // Whatever the outcome, the caller stops relying on the lock; the token stays for a retry
    // unless the release is done or the key is known lost.
    validity_known_ = false;
    if (s == Status::ok) drop();
    return s;
}

Status Lock::extend(std::uint32_t ttl_ms) noexcept {
    if (key_len_ == 0 || token_len_ == 0 || !valid_ttl(ttl_ms)) return Status::invalid_argument;
    // A renewal that cannot be confirmed while the lock is still valid is of no use: wait for
    // it no longer than the validity left.
    std::uint32_t wait_ms = conn_.config().timeout_ms;
    if (validity_known_) {
        const std::uint32_t left = remaining_ms();
        if (left == 0) return Status::expired;
        if (left < wait_ms) wait_ms = left;
    }
    const resplock_port_t& port = conn_.port();
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::string_view extra[2] = {token(), {ttl_text, ttl_len}};
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    const Status s =
        owner_result(run_script(extra, 2, reply, Deadline::after(port, wait_ms)), reply);
    // Unconfirmed, the renewal may still have run, and a shorter TTL then ends the key before
    // the old validity would have: keep whichever end comes first.
    const bool maybe_ran = s == Status::unknown_outcome || reply_malformed(s);
    if (s == Status::ok || (maybe_ran && validity_known_ &&
                            static_cast<std::int32_t>(valid_until(sent_at, ttl_ms) -
                                                      valid_until(valid_from_ms_, ttl_ms_)) < 0)) {
        ttl_ms_ = ttl_ms;
        valid_from_ms_ = sent_at;
        validity_known_ = true;
    }
    return s;
}

Status Lock::query(LockInfo& info) noexcept {
    if (key_len_ == 0) return Status::invalid_argument;
    resp::Reply reply;
    const Status s =
        run_script(nullptr, 0, reply, Deadline::after(conn_.port(), conn_.config().timeout_ms));
    if (s != Status::ok) return s;
    const resp::Value* v = reply.values;
    if (reply.count != 3 || !v[0].is(resp::Type::array) || v[0].size != 2 ||
        !v[2].is(resp::Type::integer)) {
        return Status::protocol_error;
    }
    if (v[1].is(resp::Type::nil_bulk)) {
        info = {LockState::free, -2};
    } else if (v[1].is(resp::Type::bulk_string)) {
        const bool mine = token_len_ != 0 && v[1].equals(token());
        info = {mine ? LockState::held_by_me : LockState::held_by_other, v[2].integer};
    } else {
        return Status::protocol_error;
    }
    return Status::ok;
}

Status Lock::adopt(std::string_view token) noexcept {
    if (token.empty() || token.size() > max_token_len) return Status::invalid_argument;
    std::memcpy(token_, token.data(), token.size());
    token_len_ = token.size();
    validity_known_ = false;
    return Status::ok;
}

std::uint32_t Lock::remaining_ms() const noexcept {
    if (token_len_ == 0 || !validity_known_) return 0;
    const resplock_port_t& port = conn_.port();
    const std::uint32_t elapsed = port.now_ms(port.ctx) - valid_from_ms_;
    // ttl - drift, negative for a TTL below the drift allowance.
    const auto usable = static_cast<std::int32_t>(valid_until(0, ttl_ms_));
    return usable <= 0 || elapsed >= static_cast<std::uint32_t>(usable)
               ? 0U
               : static_cast<std::uint32_t>(usable) - elapsed;
}

void Lock::drop() noexcept {
    token_len_ = 0;
    validity_known_ = false;
}

}  // namespace resplock
