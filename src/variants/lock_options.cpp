// Lock::acquire / try_acquire / release with AcquireOptions: fencing numbers, once-per-interval
// locks and waking a waiter on release. Its own object, so firmware that never uses them does not
// link them.
#include <cstring>

#include "core/lock_rules.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/variants/companion.hpp"
#include "resplock/variants/lock_options.hpp"
#include "variants/lua_scripts.hpp"

namespace resplock {

using namespace std::string_view_literals;
using detail::bulk_size;

namespace {

// The scripts, each commented in its file (embedded in variants/lua_scripts.hpp).
// src/variants/lua/options_acquire.lua: KEYS = key [, key:once] [, key:fence]; ARGV = token,
// ttl [, once_per_ms]. Returns 0 when taken without a fence, the fence number (a bulk string of
// digits) when taken with one, {PTTL} when busy.
constexpr const detail::Script& acquire_script = detail::options_acquire_script;
// src/variants/lua/options_release.lua: KEYS = key, key:wake; ARGV = token. The owner script's
// release (-1 another holder, 0 gone, 1 deleted), waking one waiter on deletion.
constexpr const detail::Script& release_script = detail::options_release_script;

// The acquire script's fence number: a bulk string of 1 to 19 decimal digits, no leading zero,
// from 1 up to INT64_MAX (what INCR can reach). False, leaving `out` alone, for anything else.
bool fence_number(const resp::Value& v, std::uint64_t& out) noexcept {
    if (!v.is(resp::Type::bulk_string) || v.size == 0 || v.size > 19 || v.data[0] == '0') {
        return false;
    }
    constexpr std::uint64_t max = 9223372036854775807U;
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < v.size; ++i) {
        const char c = v.data[i];
        if (c < '0' || c > '9') return false;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (n > (max - digit) / 10) return false;
        n = n * 10 + digit;
    }
    out = n;
    return true;
}

// A companion key of KEY (companion_prefix() + the suffix, in KEY's cluster slot), in a fixed
// buffer (the key is at most RESPLOCK_MAX_KEY_LEN bytes).
class KeyName {
  public:
    // text_ is read only up to len_: zeroing it first would be wasted work.
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init)
    KeyName(std::string_view key, std::string_view suffix) noexcept
        : len_(companion_prefix(key, text_)) {
        std::memcpy(text_ + len_, suffix.data(), suffix.size());
        len_ += suffix.size();
    }
    std::string_view view() const noexcept { return {text_, len_}; }

  private:
    char text_[RESPLOCK_MAX_KEY_LEN + companion_prefix_extra + 6];  // ":fence": longest suffix
    std::size_t len_;
};

}  // namespace

std::size_t lock_options_buffer_min() noexcept {
    // The longest token this build makes: an owner label of max_owner_len bytes, ':', the hex.
    constexpr std::size_t longest_token = max_owner_len + (max_owner_len != 0 ? 1 : 0) + token_len;
    // EVAL <acquire script> 3 key key:once key:fence token ttl once_per_ms
    return detail::eval_size(acquire_script.text.size(), 7,
                             bulk_size(1) + bulk_size(RESPLOCK_MAX_KEY_LEN) +
                                 bulk_size(RESPLOCK_MAX_KEY_LEN + companion_prefix_extra + 5) +
                                 bulk_size(RESPLOCK_MAX_KEY_LEN + companion_prefix_extra + 6) +
                                 bulk_size(longest_token) + 2 * bulk_size(10));
}

void Lock::keep(std::string_view token, std::uint32_t ttl_ms, std::uint32_t sent_at,
                Status s) noexcept {
    // As the plain keep(), for a token of any length up to max_token_len.
    std::memcpy(token_, token.data(), token.size());
    token_len_ = token.size();
    if (s == Status::ok) {
        validity_.start(sent_at, ttl_ms);
    } else {
        validity_.end();
    }
}

Status Lock::acquire_owned(std::uint32_t ttl_ms, std::string_view owner) noexcept {
    // acquire() with a labelled token: the same SET, the same answers.
    if (key_len_ == 0 || !detail::valid_ttl(ttl_ms) || !detail::valid_owner(owner) || held()) {
        return Status::invalid_argument;
    }
    const resplock_port_t& port = conn_.port();
    char buf[max_token_len];
    const std::string_view fresh = detail::owned_token(port, owner, buf);
    if (fresh.empty()) return Status::random_failed;
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::string_view args[6] = {"SET"sv, key(), fresh, "NX"sv, "PX"sv, {ttl_text, ttl_len}};
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    const Deadline deadline = Deadline::after(sent_at, conn_.config().timeout_ms);
    resp::Reply reply;
    Status s = conn_.command(args, 6, reply, deadline);
    if (s == Status::ok) {
        s = detail::set_answer(reply);
        if (s == Status::busy) return s;
    } else {
        s = detail::outcome(conn_, s);
        if (!detail::may_have_run(conn_, s, false)) return s;  // not executed: nothing to keep
    }
    keep(fresh, ttl_ms, sent_at, s);
    return confirmed(s, sent_at, 0, conn_.config().timeout_ms);
}

Status Lock::acquire(std::uint32_t ttl_ms, const AcquireOptions& options,
                     std::uint64_t* fence) noexcept {
    if (!options.fence && options.once_per_ms == 0) {
        return options.owner.empty() ? acquire(ttl_ms) : acquire_owned(ttl_ms, options.owner);
    }
    return try_acquire(ttl_ms, 0, options, fence);  // wait 0: exactly one attempt
}

Status Lock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms, const AcquireOptions& options,
                         std::uint64_t* fence) noexcept {
    const bool set_only = !options.fence && options.once_per_ms == 0 && !options.wake;
    if (set_only && options.owner.empty()) return try_acquire(ttl_ms, wait_ms);
    if (key_len_ == 0 || !detail::valid_ttl(ttl_ms) || options.once_per_ms > max_ttl_ms ||
        (options.fence && fence == nullptr) || wait_ms > max_ttl_ms ||
        !detail::valid_owner(options.owner)) {
        return Status::invalid_argument;
    }
    struct Attempt {
        Lock& lock;
        // cppcheck misses uses through the lambdas' void* context:
        // cppcheck-suppress unusedStructMember
        const AcquireOptions& opts;
        std::uint32_t ttl_ms = 0;
        std::uint64_t* fence_out = nullptr;
        // cppcheck-suppress unusedStructMember
        Deadline until{};              // the caller's deadline: the last pause sleeps, not blocks
        std::int64_t holder_ttl = -1;  // from the last busy reply
        bool blpop = true;             // false once the server refused BLPOP
        // cppcheck-suppress unusedStructMember
        bool set_only = false;  // only an owner label: the plain SET, with a labelled token
    } attempt{*this, options, ttl_ms,  fence, Deadline::after(conn_.port(), wait_ms),
              -1,    true,    set_only};

    static constexpr detail::Acquirer acquirer = {
        [](void* ctx) {
            auto& a = *static_cast<Attempt*>(ctx);
            Lock& lock = a.lock;
            if (a.set_only) return lock.acquire_owned(a.ttl_ms, a.opts.owner);
            Connection& conn = lock.conn_;
            if (lock.held()) return Status::invalid_argument;
            const resplock_port_t& port = conn.port();
            char buf[max_token_len];
            const std::string_view fresh = detail::owned_token(port, a.opts.owner, buf);
            if (fresh.empty()) return Status::random_failed;
            const bool once = a.opts.once_per_ms != 0;
            const KeyName once_key(lock.key(), ":once"sv);
            const KeyName fence_key(lock.key(), ":fence"sv);
            char ttl_text[10];
            char once_text[10];
            std::string_view args[9] = {{}, {}, {}, lock.key()};
            std::size_t n = 4;
            if (once) args[n++] = once_key.view();
            if (a.opts.fence) args[n++] = fence_key.view();
            const char numkeys = static_cast<char>('0' + (n - 3));
            args[2] = {&numkeys, 1};
            args[n++] = fresh;
            args[n++] = {ttl_text, resp::format_decimal(a.ttl_ms, ttl_text)};
            if (once) args[n++] = {once_text, resp::format_decimal(a.opts.once_per_ms, once_text)};
            // The EVAL fallback after a cache flush must fit too: refusing up front keeps a call
            // from working only while the script happens to be cached.
            if (!detail::eval_fits(conn, acquire_script, args, n)) return Status::too_large;

            const std::uint32_t sent_at = port.now_ms(port.ctx);
            const Deadline deadline = Deadline::after(sent_at, conn.config().timeout_ms);
            resp::Reply reply;
            Status s = detail::eval(conn, acquire_script, args, n, reply, deadline);
            if (s == Status::ok) {
                const resp::Value* v = reply.values;
                if (v[0].is(resp::Type::array) && v[0].size == 1 && reply.count == 2 &&
                    v[1].is(resp::Type::integer)) {
                    a.holder_ttl = v[1].integer;
                    return Status::busy;
                }
                // With a fence the grant is the number in decimal digits; without one it is the
                // integer 0. Any other answer is not the script's grant.
                std::uint64_t number = 0;
                if (a.opts.fence ? !fence_number(v[0], number)
                                 : !v[0].is(resp::Type::integer) || v[0].integer != 0) {
                    s = Status::protocol_error;
                } else if (a.opts.fence) {
                    *a.fence_out = number;
                }
            } else {
                // An error from the script may come after its SET (e.g. an ACL without +time).
                s = detail::outcome(conn, s);
                if (!detail::may_have_run(conn, s, true)) return s;  // nothing to keep
            }
            lock.keep(fresh, a.ttl_ms, sent_at, s);
            return lock.confirmed(s, sent_at, 0, conn.config().timeout_ms);
        },
        [](void* ctx) {
            auto& a = *static_cast<Attempt*>(ctx);
            if (!a.set_only) return a.holder_ttl;  // from the script's busy reply
            // As the plain try_acquire: the holder's PTTL, asked for.
            LockInfo info;
            return a.lock.query(info) == Status::ok ? info.ttl_ms : std::int64_t{-1};
        },
        [](void* ctx, std::uint32_t ms) {
            auto& a = *static_cast<Attempt*>(ctx);
            Connection& conn = a.lock.conn_;
            const resplock_port_t& port = conn.port();
            const std::uint32_t start = port.now_ms(port.ctx);
            // Redis ends a BLPOP timeout only at its next cron tick (every 1000/hz ms, 100 ms by
            // default), so BLPOP may return up to that much after the pause. A pause that could
            // then overrun the holder's expiry or the caller's deadline is slept instead: an
            // attempt follows it anyway, and it stays on time.
            const std::uint32_t blocked_max = ms + detail::blpop_late_ms;
            const std::uint32_t left = a.until.remaining(port);
            const bool ends_wait =
                (a.holder_ttl >= 0 && blocked_max > a.holder_ttl) || blocked_max > left;
            if (a.opts.wake && a.blpop && !ends_wait) {
                const KeyName wake_key(a.lock.key(), ":wake"sv);
                // Seconds with three decimals: never 0 (ms >= 1), which would block forever.
                char seconds[16];
                std::size_t len = resp::format_decimal(ms / 1000, seconds, 10);
                seconds[len++] = '.';
                const std::uint32_t frac = ms % 1000;
                seconds[len++] = static_cast<char>('0' + frac / 100);
                seconds[len++] = static_cast<char>('0' + frac / 10 % 10);
                seconds[len++] = static_cast<char>('0' + frac % 10);
                const std::string_view args[3] = {"BLPOP"sv, wake_key.view(), {seconds, len}};
                // The reply may take a round trip more, but never past the caller's deadline.
                const std::uint32_t timeout = conn.config().timeout_ms;
                const std::uint32_t budget =
                    timeout < left - blocked_max ? blocked_max + timeout : left;
                resp::Reply reply;
                const Status s = conn.command(args, 3, reply, Deadline::after(port, budget));
                if (s == Status::ok) return;  // woken by a release, or the pause is over
                // An error reply (NOPERM from an ACL, an old server refusing a decimal
                // timeout): sleep from now on in this wait.
                if (conn.request_sent() && !conn.error_text().empty()) a.blpop = false;
            }
            const std::uint32_t elapsed = port.now_ms(port.ctx) - start;
            if (elapsed < ms) port.sleep_ms(port.ctx, ms - elapsed);
        }};
    return detail::retry(conn_, key(), wait_ms, acquirer, &attempt);
}

Status Lock::release(const AcquireOptions& options) noexcept {
    if (!options.wake) return release();
    if (key_len_ == 0 || token_len_ == 0) return Status::invalid_argument;
    const KeyName wake_key(key(), ":wake"sv);
    std::string_view args[6] = {{}, {}, "2"sv, key(), wake_key.view(), token()};
    Status s = Status::too_large;
    if (detail::eval_fits(conn_, release_script, args, 6)) {
        resp::Reply reply;
        s = owner_result(detail::eval(conn_, release_script, args, 6, reply,
                                      Deadline::after(conn_.port(), conn_.config().timeout_ms)),
                         reply, false);
    }
    // As release(): the caller stops relying on the lock whatever the outcome.
    validity_.end();
    if (s == Status::ok) drop();
    return s;
}

}  // namespace resplock
