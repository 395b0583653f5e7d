#include "resplock/core/lock.hpp"

#include <cstring>

#include "core/lock_rules.hpp"
#include "resplock/core/router.hpp"

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

// key_ and token_ are read only up to key_len_ and token_len_: zeroing them would cost flash.
// NOLINTBEGIN(cppcoreguidelines-pro-type-member-init)
// cppcheck-suppress uninitMemberVar
Lock::Lock(Connection& conn, std::string_view key) noexcept : conn_(conn) {
    if (const Router* router = conn.config().router) check_ = router->lock_check();
    if (!key.empty() && key.size() <= sizeof key_) {
        std::memcpy(key_, key.data(), key.size());
        key_len_ = key.size();
    }
}
// NOLINTEND(cppcoreguidelines-pro-type-member-init)

Status Lock::acquire(std::uint32_t ttl_ms) noexcept {
    if (key_len_ == 0 || !valid_ttl(ttl_ms) || held()) return Status::invalid_argument;
    const resplock_port_t& port = conn_.port();
    char fresh[token_len];
    if (detail::random_token(port, fresh) != Status::ok) return Status::random_failed;
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::string_view args[6] = {"SET"sv, key(),  {fresh, token_len},
                                      "NX"sv,  "PX"sv, {ttl_text, ttl_len}};
    // One clock read: the time the request is sent, and the start of its deadline.
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    Status s = conn_.command(args, 6, reply, Deadline::after(sent_at, conn_.config().timeout_ms));
    if (s == Status::ok) {
        s = detail::set_answer(reply);
        if (s == Status::busy) return s;
    } else {
        s = detail::outcome(conn_, s);
        if (!detail::may_have_run(conn_, s, false)) return s;  // not executed: nothing to keep
    }
    return keep(fresh, ttl_ms, sent_at, s);
}

Status Lock::keep(const char* token, std::uint32_t ttl_ms, std::uint32_t sent_at,
                  Status s) noexcept {
    // Held, or possibly held: keep the token so release() can act for it, but claim validity
    // only on the server's OK (and the replicas' acknowledgement, when asked for).
    std::memcpy(token_, token, token_len);
    token_len_ = token_len;
    if (s != Status::ok) {
        validity_.end();
        return s;
    }
    validity_.start(sent_at, ttl_ms);
    return confirmed(s, sent_at, 0, conn_.config().timeout_ms);
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

// The answer of the release/extend request; forgets the token once the lock is known lost.
Status Lock::owner_result(Status s, const resp::Reply& reply, bool key_only) noexcept {
    s = detail::owner_answer(conn_, s, reply, key_only);
    if (s == Status::expired || s == Status::not_owner) drop();
    return s;
}

Status Lock::release() noexcept {
    if (key_len_ == 0 || token_len_ == 0) return Status::invalid_argument;
    resp::Reply reply;
    const Status s = owner_result(run_script(1, {}, reply, conn_.config().timeout_ms), reply);
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
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    const Status s =
        confirmed(owner_result(run_script(2, {ttl_text, ttl_len}, reply, wait_ms), reply), sent_at,
                  ttl_ms, wait_ms);
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
    token_len_ = token.size();
    validity_.end();
    return Status::ok;
}

void Lock::drop() noexcept {
    token_len_ = 0;
    validity_.end();
}

}  // namespace resplock
