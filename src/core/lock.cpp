// The plain lock: SET NX PX, the owner script, the options' acquire script and the write check
// (replicas' WAIT, a router's confirmation). A firmware links only the calls it makes: each
// function is its own section, and the write check is reached only through the pointer that
// set_replicas() or a Router installs.
#include "resplock/core/lock.hpp"

#include <cstring>

#include "core/lua_scripts.hpp"
#include "core/outcome.hpp"
#include "core/retry.hpp"
#include "core/script.hpp"
#include "core/token.hpp"
#include "core/write_check.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/router.hpp"

namespace resplock {

using namespace std::string_view_literals;

using detail::bulk_size;
using detail::owner_script;
using detail::valid_ttl;

namespace {

// The scripts, each commented in its file under src/core/lua/ (embedded in core/lua_scripts.hpp).
// owner.lua: KEYS = key; ARGV = [token [, ttl]]. Query ({value, PTTL}) without a token; with one,
// -1 another holder, 0 gone, else 1 after the release (no ttl) or the extend (ttl).
// options_acquire.lua: KEYS = key [, key:once] [, key:fence]; ARGV = token, ttl [, once_per_ms].
// Returns 0 when taken without a fence, the fence number (a bulk string of digits) when taken
// with one, {PTTL} when busy.
constexpr const detail::Script& acquire_script = detail::options_acquire_script;
// options_release.lua: KEYS = key, key:wake; ARGV = token. The owner script's release, waking
// one waiter on deletion.
constexpr const detail::Script& release_script = detail::options_release_script;

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

std::size_t lock_buffer_min() noexcept {
    // EVAL <owner script> 1 <key> <token> <ttl>: the extend, the longest request a Lock sends.
    return detail::eval_size(
        owner_script.text.size(), 4,
        bulk_size(1) + bulk_size(RESPLOCK_MAX_KEY_LEN) + bulk_size(max_token_len) + bulk_size(10));
}

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

Lock::Lock(Connection& conn, std::string_view key) noexcept : conn_(conn), hold_(key) {
    if (const Router* router = conn.config().router) check_ = router->lock_check();
}

// ---------------------------------------------------------------------------------------------
// Acquisition

// Inlined into each caller: a frame of its own would take the plain lock's deepest call past the
// stack budget (tests/target).
inline __attribute__((always_inline)) Status Lock::set(std::uint32_t ttl_ms,
                                                       std::string_view token) noexcept {
    const resplock_port_t& port = conn_.port();
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::string_view args[6] = {"SET"sv, key(), token, "NX"sv, "PX"sv, {ttl_text, ttl_len}};
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
    return keep(token, ttl_ms, sent_at, s);
}

Status Lock::acquire(std::uint32_t ttl_ms) noexcept {
    if (key().empty() || !valid_ttl(ttl_ms) || held()) return Status::invalid_argument;
    char fresh[token_len];
    if (detail::random_token(conn_.port(), fresh) != Status::ok) return Status::random_failed;
    return set(ttl_ms, {fresh, token_len});
}

Status Lock::keep(std::string_view token, std::uint32_t ttl_ms, std::uint32_t sent_at,
                  Status s) noexcept {
    // Held, or possibly held: keep the token so release() can act for it, but claim validity
    // only on the server's OK (and the replicas' acknowledgement, when asked for).
    hold_.keep(token);
    if (s != Status::ok) return s;
    hold_.validity().start(sent_at, ttl_ms);
    return confirmed(s, sent_at, 0, conn_.config().timeout_ms);
}

// An attempt of try_acquire(), or of release(): `value` is the TTL of an acquisition, or the
// deadline (Deadline::at_ms) up to which a release's request is awaited.
struct Lock::Attempt {
    Lock& lock;
    std::uint32_t value;
    // cppcheck-suppress unusedStructMember
    bool release;
};

// One copy of the retry loop for try_acquire() and release(): a plain lock's firmware calls both,
// and a second copy would cost it about 250 B of flash (docs/footprint.md). The release's deadline
// is taken here, so that release() needs no frame of its own: its stack is try_acquire()'s.
Status Lock::repeat(std::uint32_t ttl_ms, std::uint32_t wait_ms, bool release) noexcept {
    Attempt attempt{*this, release ? detail::release_deadline(conn_).at_ms : ttl_ms, release};
    static constexpr detail::Acquirer acquirer = {
        [](void* ctx) {
            auto& a = *static_cast<Attempt*>(ctx);
            return a.release ? a.lock.release_once({a.value}) : a.lock.acquire(a.value);
        },
        [](void* ctx) {
            // After busy (an acquisition's only): the holder's PTTL, the lock may be free before
            // the backoff ends.
            LockInfo info;
            return static_cast<Attempt*>(ctx)->lock.query(info) == Status::ok ? info.ttl_ms
                                                                              : std::int64_t{-1};
        },
        nullptr, nullptr};
    return detail::retry(conn_, key(), wait_ms, acquirer, &attempt);
}

Status Lock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    return repeat(ttl_ms, wait_ms, false);
}

// ---------------------------------------------------------------------------------------------
// Acquisition with options

Status Lock::acquire(std::uint32_t ttl_ms, const AcquireOptions& options,
                     std::uint64_t* fence) noexcept {
    if (options.fence || options.once_per_ms != 0) return try_acquire(ttl_ms, 0, options, fence);
    if (options.owner.empty()) return acquire(ttl_ms);
    // A labelled token: the same SET, the same answers.
    if (key().empty() || !valid_ttl(ttl_ms) || !detail::valid_owner(options.owner) || held()) {
        return Status::invalid_argument;
    }
    char buf[max_token_len];
    const std::string_view fresh = detail::owned_token(conn_.port(), options.owner, buf);
    return fresh.empty() ? Status::random_failed : set(ttl_ms, fresh);
}

// What one wait with options keeps between its attempts.
struct Lock::OptionsWait {
    Lock& lock;
    const AcquireOptions& options;
    std::uint32_t ttl_ms;
    std::uint64_t* fence;
    std::int64_t holder_ttl;  // from the last busy reply (-1: unknown)
    bool script;              // the acquire script; else the SET (an owner label alone)
    bool refused;             // the server refused BLPOP: sleep from then on
};

Status Lock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms, const AcquireOptions& options,
                         std::uint64_t* fence) noexcept {
    // Fence, once-per or wake: the acquire script, whose busy reply carries the holder's PTTL.
    const bool script = options.fence || options.once_per_ms != 0 || options.wake;
    if (!script && options.owner.empty()) return try_acquire(ttl_ms, wait_ms);
    if (key().empty() || !valid_ttl(ttl_ms) || options.once_per_ms > max_ttl_ms ||
        (options.fence && fence == nullptr) || !detail::valid_owner(options.owner)) {
        return Status::invalid_argument;
    }
    OptionsWait w{*this, options, ttl_ms, fence, -1, script, false};
    static constexpr detail::Acquirer acquirer = {
        [](void* ctx) {
            auto& a = *static_cast<OptionsWait*>(ctx);
            return a.lock.options_attempt(a);
        },
        [](void* ctx) {
            auto& a = *static_cast<OptionsWait*>(ctx);
            if (a.script) return a.holder_ttl;  // from the script's busy reply
            // As the plain try_acquire: the holder's PTTL, asked for.
            LockInfo info;
            return a.lock.query(info) == Status::ok ? info.ttl_ms : std::int64_t{-1};
        },
        nullptr, &Lock::options_pause};
    return detail::retry(conn_, key(), wait_ms, acquirer, &w);
}

Status Lock::options_attempt(OptionsWait& w) noexcept {
    if (held()) return Status::invalid_argument;
    const AcquireOptions& o = w.options;
    char buf[max_token_len];
    const std::string_view fresh = detail::owned_token(conn_.port(), o.owner, buf);
    if (fresh.empty()) return Status::random_failed;
    if (!w.script) return set(w.ttl_ms, fresh);

    const bool once = o.once_per_ms != 0;
    const KeyName once_key(key(), ":once"sv);
    const KeyName fence_key(key(), ":fence"sv);
    char ttl_text[10];
    // In scope for as long as args views it, until the request is sent:
    // cppcheck-suppress variableScope
    char once_text[10];
    std::string_view args[9] = {{}, {}, {}, key()};
    std::size_t n = 4;
    if (once) args[n++] = once_key.view();
    if (o.fence) args[n++] = fence_key.view();
    const char numkeys = static_cast<char>('0' + (n - 3));
    args[2] = {&numkeys, 1};
    args[n++] = fresh;
    args[n++] = {ttl_text, resp::format_decimal(w.ttl_ms, ttl_text)};
    if (once) args[n++] = {once_text, resp::format_decimal(o.once_per_ms, once_text)};
    // The EVAL fallback after a cache flush must fit too: refusing up front keeps a call from
    // working only while the script happens to be cached.
    if (!detail::eval_fits(conn_, acquire_script, args, n)) return Status::too_large;

    const resplock_port_t& port = conn_.port();
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    Status s = detail::eval(conn_, acquire_script, args, n, reply,
                            Deadline::after(sent_at, conn_.config().timeout_ms));
    if (s == Status::ok) {
        const resp::Value* v = reply.values;
        if (v[0].is(resp::Type::array) && v[0].size == 1 && reply.count == 2 &&
            v[1].is(resp::Type::integer)) {
            w.holder_ttl = v[1].integer;
            return Status::busy;
        }
        // With a fence the grant is the number in decimal digits; without one it is the integer
        // 0. Any other answer is not the script's grant.
        std::uint64_t number = 0;
        if (o.fence ? !detail::fence_number(v[0], number)
                    : !v[0].is(resp::Type::integer) || v[0].integer != 0) {
            s = Status::protocol_error;
        } else if (o.fence) {
            *w.fence = number;
        }
    } else {
        // An error from the script may come after its SET (e.g. an ACL without +time).
        s = detail::outcome(conn_, s);
        if (!detail::may_have_run(conn_, s, true)) return s;  // nothing to keep
    }
    return keep(fresh, w.ttl_ms, sent_at, s);
}

Status Lock::options_pause(void* wait, std::uint32_t ms, Deadline until) noexcept {
    auto& w = *static_cast<OptionsWait*>(wait);
    Connection& conn = w.lock.conn_;
    const resplock_port_t& port = conn.port();
    const std::uint32_t start = port.now_ms(port.ctx);
    // A block may end up to blpop_late_ms after its timeout: one that could then overrun the
    // holder's expiry or the caller's deadline is slept instead (an attempt follows it anyway).
    const std::uint32_t blocked_max = ms + detail::blpop_late_ms;
    const bool overruns =
        (w.holder_ttl >= 0 && blocked_max > w.holder_ttl) || blocked_max > until.remaining(port);
    if (w.options.wake && !w.refused && !overruns) {
        const KeyName wake_key(w.lock.key(), ":wake"sv);
        const Status s = detail::block(conn, wake_key.view(), ms, until, w.refused);
        // Woken by a release, or the pause is over: an attempt follows.
        if (s == Status::ok || s == Status::busy) return Status::busy;
    }
    const std::uint32_t elapsed = port.now_ms(port.ctx) - start;
    if (elapsed < ms) port.sleep_ms(port.ctx, ms - elapsed);
    return Status::busy;
}

Status Lock::release(const AcquireOptions& options) noexcept {
    if (!options.wake) return release();
    if (key().empty() || token().empty()) return Status::invalid_argument;
    const KeyName wake_key(key(), ":wake"sv);
    std::string_view args[6] = {{}, {}, "2"sv, key(), wake_key.view(), token()};
    auto once = [&](Deadline until) {
        Status s = Status::too_large;
        if (detail::eval_fits(conn_, release_script, args, 6)) {
            resp::Reply reply;
            s = owner_result(detail::eval(conn_, release_script, args, 6, reply, until), reply,
                             false);
        }
        // As release(): the caller stops relying on the lock whatever the outcome.
        hold_.validity().end();
        if (s == Status::ok) hold_.drop();
        return s;
    };
    return detail::retry_release(conn_, key(), once);
}

// ---------------------------------------------------------------------------------------------
// The owner script: release, extend, query

Status Lock::run_script(std::size_t argc, std::string_view ttl, resp::Reply& reply,
                        Deadline until) noexcept {
    std::string_view args[6] = {{}, {}, "1"sv, key(), token(), ttl};
    return detail::eval_inline(conn_, owner_script, args, 4 + argc, reply, until);
}

// The answer of the release/extend request; forgets the token once the lock is known lost.
Status Lock::owner_result(Status s, const resp::Reply& reply, bool key_only) noexcept {
    s = detail::owner_answer(conn_, s, reply, key_only);
    if (s == Status::expired || s == Status::not_owner) hold_.drop();
    return s;
}

Status Lock::release() noexcept {
    if (key().empty() || token().empty()) return Status::invalid_argument;
    // detail::retry_release(), spelled out over the loop try_acquire() shares.
    return repeat(0, detail::release_retry_ms(conn_), true);
}

Status Lock::release_once(Deadline until) noexcept {
    resp::Reply reply;
    const Status s = owner_result(run_script(1, {}, reply, until), reply);
    // Whatever the outcome, the caller stops relying on the lock; the token stays for a retry
    // unless the release is done or the key is known lost.
    hold_.validity().end();
    if (s == Status::ok) hold_.drop();
    return s;
}

Status Lock::extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    if (key().empty() || token().empty() || !valid_ttl(ttl_ms)) return Status::invalid_argument;
    if (conn_.config().timeout_ms < wait_ms) wait_ms = conn_.config().timeout_ms;
    Validity& validity = hold_.validity();
    if (!validity.bounds_renewal(conn_.port(), wait_ms)) return Status::expired;
    const resplock_port_t& port = conn_.port();
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    const Status s = confirmed(
        owner_result(run_script(2, {ttl_text, ttl_len}, reply, Deadline::after(sent_at, wait_ms)),
                     reply),
        sent_at, ttl_ms, wait_ms);
    // Unconfirmed, the renewal may still have run, and a shorter TTL then ends the key before
    // the old validity would have.
    if (s == Status::ok) {
        validity.start(sent_at, ttl_ms);
    } else if (detail::may_have_run(conn_, s, false)) {
        validity.renewal_unconfirmed(sent_at, ttl_ms);
    }
    return s;
}

Status Lock::query(LockInfo& info) noexcept {
    if (key().empty()) return Status::invalid_argument;
    resp::Reply reply;
    const Status s =
        run_script(0, {}, reply, Deadline::after(conn_.port(), conn_.config().timeout_ms));
    if (s != Status::ok) return s;
    const resp::Value* v = reply.values;
    if (reply.count != 3 || !v[0].is(resp::Type::array) || v[0].size != 2 ||
        !v[2].is(resp::Type::integer)) {
        return Status::protocol_error;
    }
    if (v[1].is(resp::Type::nil_bulk)) {
        info = {LockState::free, -2};
    } else if (v[1].is(resp::Type::bulk_string)) {
        const bool mine = !token().empty() && v[1].equals(token());
        info = {mine ? LockState::held_by_me : LockState::held_by_other, v[2].integer};
    } else {
        return Status::protocol_error;
    }
    return Status::ok;
}

Status Lock::adopt(std::string_view token) noexcept {
    if (token.empty() || token.size() > max_token_len) return Status::invalid_argument;
    hold_.keep(token);
    return Status::ok;
}

// ---------------------------------------------------------------------------------------------
// The write check

Status Lock::set_replicas(std::uint32_t replicas) noexcept {
    if (replicas > max_replicas) return Status::invalid_argument;
    replicas_ = static_cast<std::uint8_t>(replicas);
    acknowledged_ = 0;
    check_ = replicas != 0 || conn_.config().router != nullptr ? &Lock::settle : nullptr;
    return Status::ok;
}

Lock::WriteCheck Lock::write_check() noexcept {
    return &Lock::settle;
}

Status Lock::confirm_grant(std::uint32_t sent_at, GiveBack give_back, void* owner) noexcept {
    if (check_ == nullptr) return Status::ok;
    struct Grant {
        GiveBack give_back;
        void* owner;
        Status release() const noexcept { return give_back(owner); }
    } grant{give_back, owner};
    return detail::settle(grant, conn_, hold_, replicas_, acknowledged_, sent_at, 0,
                          conn_.config().timeout_ms);
}

Status Lock::settle(Lock& lock, std::uint32_t sent_at, std::uint32_t ttl_ms,
                    std::uint32_t wait_ms) noexcept {
    return detail::settle(lock, lock.conn_, lock.hold_, lock.replicas_, lock.acknowledged_, sent_at,
                          ttl_ms, wait_ms);
}

}  // namespace resplock
