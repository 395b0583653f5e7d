#include "resplock/core/lock.hpp"

#include <cstring>

#include "core/lock_rules.hpp"

namespace resplock {

using namespace std::string_view_literals;

using detail::bulk_size;
using detail::owner_script;
using detail::valid_ttl;

std::size_t lock_buffer_min() noexcept {
    // EVAL <owner script> 1 <key> <token> <ttl>: the extend, the longest request a Lock sends.
    return detail::eval_size(
        owner_script.text.size(), 4,
        bulk_size(1) + bulk_size(RESPLOCK_MAX_KEY_LEN) + bulk_size(max_token_len) + bulk_size(10));
}

namespace {

// The fixed parts of the plain lock's requests, encoded once at compile time: each call writes
// only what varies (key, token, TTL) after them.
constexpr std::string_view set_head = "*6\r\n$3\r\nSET\r\n"sv;  // SET key token NX PX ttl
constexpr std::string_view set_flags = "\r\n$2\r\nNX\r\n$2\r\nPX\r\n"sv;
// The owner script's requests: *5 (release: key, token) or *6 (extend: key, token, ttl), then
// EVALSHA <SHA1> 1, or EVAL <text> 1 after a NOSCRIPT.
constexpr char counts[] = "*5\r\n*6\r\n";
constexpr std::string_view numkeys = "\r\n$1\r\n1\r\n"sv;
constexpr std::size_t script_len = owner_script.text.size();
static_assert(script_len >= 100 && script_len <= 999 && owner_script.sha1.size() == 40,
              "the heads below spell these lengths");
struct Head {
    char bytes[18 + 40 + 9];
};
constexpr Head evalsha_head() noexcept {
    Head h{};
    std::size_t n = 0;
    for (const char c : "$7\r\nEVALSHA\r\n$40\r\n"sv)
        h.bytes[n++] = c;
    for (const char c : owner_script.sha1)
        h.bytes[n++] = c;
    for (const char c : numkeys)
        h.bytes[n++] = c;
    return h;
}
constexpr Head evalsha = evalsha_head();
constexpr char eval_head[] = {'$',
                              '4',
                              '\r',
                              '\n',
                              'E',
                              'V',
                              'A',
                              'L',
                              '\r',
                              '\n',
                              '$',
                              static_cast<char>('0' + script_len / 100),
                              static_cast<char>('0' + script_len / 10 % 10),
                              static_cast<char>('0' + script_len % 10),
                              '\r',
                              '\n'};

// $<n> CR LF for a bulk string of n bytes (n < 1000); returns its length.
std::size_t bulk_head(std::size_t n, char (&out)[6]) noexcept {
    out[0] = '$';
    const std::size_t d = resp::format_decimal(static_cast<std::uint32_t>(n), out + 1, 3);
    out[d + 1] = '\r';
    out[d + 2] = '\n';
    return d + 3;
}

}  // namespace

// key_ and token_ are read only up to key_len_ and token_len_: zeroing them would cost flash.
// NOLINTBEGIN(cppcoreguidelines-pro-type-member-init)
// cppcheck-suppress uninitMemberVar
Lock::Lock(Connection& conn, std::string_view key) noexcept : conn_(conn) {
    if (key.empty() || key.size() > RESPLOCK_MAX_KEY_LEN) return;
    key_[0] = '$';
    const std::size_t d = resp::format_decimal(static_cast<std::uint32_t>(key.size()), key_ + 1, 5);
    key_[d + 1] = '\r';
    key_[d + 2] = '\n';
    key_at_ = static_cast<std::uint8_t>(d + 3);
    std::memcpy(key_ + key_at_, key.data(), key.size());
    key_[key_at_ + key.size()] = '\r';
    key_[key_at_ + key.size() + 1] = '\n';
    key_len_ = static_cast<std::uint16_t>(key.size());
}
// NOLINTEND(cppcoreguidelines-pro-type-member-init)

Status Lock::acquire(std::uint32_t ttl_ms) noexcept {
    if (key_len_ == 0 || !valid_ttl(ttl_ms) || held()) return Status::invalid_argument;
    const resplock_port_t& port = conn_.port();
    // The request after the key: $<token_len> CR LF token, the flags, then the TTL.
    static_assert(token_len >= 10 && token_len <= 99, "a two-digit token length");
    char tail[5 + token_len + set_flags.size() + resp::decimal_bulk_max] = {
        '$', static_cast<char>('0' + token_len / 10), static_cast<char>('0' + token_len % 10), '\r',
        '\n'};
    char* const fresh = tail + 5;
    if (detail::random_token(port, fresh) != Status::ok) return Status::random_failed;
    std::memcpy(fresh + token_len, set_flags.data(), set_flags.size());
    const std::size_t tail_len =
        5 + token_len + set_flags.size() +
        resp::encode_decimal_bulk(ttl_ms, fresh + token_len + set_flags.size());
    const std::string_view parts[3] = {set_head, key_bulk(), {tail, tail_len}};
    // One clock read: the time the request is sent, and the start of its deadline.
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    Status s =
        conn_.command_encoded(parts, 3, reply, Deadline::after(sent_at, conn_.config().timeout_ms));
    if (s == Status::ok) {
        s = detail::set_answer(reply);
        if (s == Status::busy) return s;
    } else {
        s = detail::outcome(conn_, s);
        if (!detail::may_have_run(conn_, s, false)) return s;  // not executed: nothing to keep
    }
    keep(fresh, ttl_ms, sent_at, s);
    return s;
}

void Lock::keep(const char* token, std::uint32_t ttl_ms, std::uint32_t sent_at, Status s) noexcept {
    // Held, or possibly held: keep the token so release() can act for it, but claim validity
    // only on the server's OK.
    std::memcpy(token_, token, token_len);
    token_len_ = token_len;
    if (s == Status::ok) {
        validity_.start(sent_at, ttl_ms);
    } else {
        validity_.end();
    }
}

Status Lock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    struct Attempt {
        Lock& lock;
        std::uint32_t ttl_ms;
    } attempt{*this, ttl_ms};
    static constexpr detail::Acquirer acquirer = {
        [](void* ctx) {
            auto& a = *static_cast<Attempt*>(ctx);
            return a.lock.acquire(a.ttl_ms);
        },
        [](void* ctx) {
            // The holder's PTTL: the lock may be free before the backoff ends.
            LockInfo info;
            return static_cast<Attempt*>(ctx)->lock.query(info) == Status::ok ? info.ttl_ms
                                                                              : std::int64_t{-1};
        },
        nullptr};
    return detail::retry(conn_, key(), wait_ms, acquirer, &attempt);
}

Status Lock::run_script(std::size_t argc, std::string_view ttl, resp::Reply& reply,
                        std::uint32_t wait_ms) noexcept {
    std::string_view args[6] = {{}, {}, "1"sv, key(), token(), ttl};
    return detail::eval(conn_, owner_script, args, 4 + argc, reply,
                        Deadline::after(conn_.port(), wait_ms));
}

Status Lock::run_owner(std::string_view tail, resp::Reply& reply, Deadline deadline) noexcept {
    char token_head[6];
    const std::size_t head_len = bulk_head(token_len_, token_head);
    // EVALSHA in parts[2..8); on NOSCRIPT, EVAL in parts[0..8).
    std::string_view parts[8] = {{},
                                 {},
                                 {counts + (tail.size() > 2 ? 4 : 0), 4},
                                 {evalsha.bytes, sizeof evalsha.bytes},
                                 key_bulk(),
                                 {token_head, head_len},
                                 token(),
                                 tail};
    const Status s = conn_.command_encoded(parts + 2, 6, reply, deadline);
    // NOSCRIPT: the server's script cache is empty (restart, failover, SCRIPT FLUSH): send the
    // text once.
    if (s != Status::no_script) return s;
    parts[0] = parts[2];
    parts[1] = {eval_head, sizeof eval_head};
    parts[2] = owner_script.text;
    parts[3] = numkeys;
    return conn_.command_encoded(parts, 8, reply, deadline);
}

// The answer of the release/extend request; forgets the token once the lock is known lost.
Status Lock::owner_result(Status s, const resp::Reply& reply) noexcept {
    s = detail::owner_answer(conn_, s, reply);
    if (s == Status::expired || s == Status::not_owner) drop();
    return s;
}

Status Lock::release() noexcept {
    if (key_len_ == 0 || token_len_ == 0) return Status::invalid_argument;
    resp::Reply reply;
    const Status s = owner_result(
        run_owner("\r\n"sv, reply, Deadline::after(conn_.port(), conn_.config().timeout_ms)),
        reply);
    // Whatever the outcome, the caller stops relying on the lock; the token stays for a retry
    // unless the release is done or the key is known lost.
    validity_.end();
    if (s == Status::ok) drop();
    return s;
}

Status Lock::extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    if (key_len_ == 0 || token_len_ == 0 || !valid_ttl(ttl_ms)) return Status::invalid_argument;
    if (conn_.config().timeout_ms < wait_ms) wait_ms = conn_.config().timeout_ms;
    if (!validity_.bounds_renewal(conn_.port(), wait_ms)) return Status::expired;
    const resplock_port_t& port = conn_.port();
    // CR LF after the token, then the TTL.
    char tail[2 + resp::decimal_bulk_max] = {'\r', '\n'};
    const std::size_t tail_len = 2 + resp::encode_decimal_bulk(ttl_ms, tail + 2);
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    const Status s =
        owner_result(run_owner({tail, tail_len}, reply, Deadline::after(sent_at, wait_ms)), reply);
    // Unconfirmed, the renewal may still have run, and a shorter TTL then ends the key before
    // the old validity would have.
    if (s == Status::ok) {
        validity_.start(sent_at, ttl_ms);
    } else if (detail::may_have_run(conn_, s, false)) {
        validity_.renewal_unconfirmed(sent_at, ttl_ms);
    }
    return s;
}

Status Lock::query(LockInfo& info) noexcept {
    if (key_len_ == 0) return Status::invalid_argument;
    resp::Reply reply;
    const Status s = run_script(0, {}, reply, conn_.config().timeout_ms);
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
    token_len_ = static_cast<std::uint8_t>(token.size());
    validity_.end();
    return Status::ok;
}

void Lock::drop() noexcept {
    token_len_ = 0;
    validity_.end();
}

}  // namespace resplock
