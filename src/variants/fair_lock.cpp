// The fair lock (see resplock/variants/fair_lock.hpp): a FIFO queue of waiters on the server and
// a release that hands the lock to the first live one.
#include "resplock/variants/fair_lock.hpp"

#include <cstring>

#include "core/lua_scripts.hpp"
#include "core/names.hpp"
#include "core/outcome.hpp"
#include "core/retry.hpp"
#include "core/script.hpp"
#include "core/token.hpp"
#include "variants/lua_scripts.hpp"

namespace resplock {

using namespace std::string_view_literals;
using detail::bulk_size;

// The fair queue's one script, commented in src/variants/lua/fair.lua (embedded in
// variants/lua_scripts.hpp). KEYS = KEY, BASE:q, BASE:w, BASE:fence; ARGV = op, token, ttl,
// entry_ms, BASE:f:, fence ('1' or '0'). Ops: r release (the owner script's answers: -1, 0, 1;
// hands KEY to the first live waiter), l leave, t attempt, a attempt and join or refresh the
// queue; l, t and a answer {1, PTTL} (with fence: {1, PTTL, number}) when KEY holds the token,
// else {0, PTTL}.
using detail::fair_script;

// The companion keys of one token, in one fixed buffer (built once per call, so that the
// attempts and the blocks below it add no copies of their own to the stack).
class FairLock::Names {
  public:
    Names(std::string_view base, std::string_view token) noexcept
        : queue_(buf_.add(base, ":q"sv)),
          entries_(buf_.add(base, ":w"sv)),
          fence_(buf_.add(base, ":fence"sv)),
          wake_(buf_.add(base, ":f:"sv, token)) {}

    std::string_view queue() const noexcept { return queue_; }      // BASE:q
    std::string_view entries() const noexcept { return entries_; }  // BASE:w
    std::string_view fence() const noexcept { return fence_; }      // BASE:fence
    std::string_view wake() const noexcept { return wake_; }        // BASE:f:TOKEN
    // BASE:f:, the wake lists' prefix.
    std::string_view prefix() const noexcept {
        // BASE:q is as long as BASE:f; no substr(), whose range check could throw.
        const std::size_t n = queue_.size() + 1;
        return {wake_.data(), n < wake_.size() ? n : wake_.size()};
    }

  private:
    detail::NameBuffer<4 * (RESPLOCK_MAX_KEY_LEN + companion_prefix_extra) + 2 + 2 + 6 + 3 +
                       max_token_len>
        buf_;  // declared first: the views below point into it
    std::string_view queue_;
    std::string_view entries_;
    std::string_view fence_;
    std::string_view wake_;
};

std::size_t fair_buffer_min() noexcept {
    // EVAL <script> 4 KEY BASE:q BASE:w BASE:fence op token ttl entry_ms BASE:f: fence
    constexpr std::size_t base = RESPLOCK_MAX_KEY_LEN + companion_prefix_extra;
    return detail::eval_size(fair_script.text.size(), 11,
                             bulk_size(1) + bulk_size(RESPLOCK_MAX_KEY_LEN) +
                                 2 * bulk_size(base + 2) + bulk_size(base + 6) + bulk_size(1) +
                                 bulk_size(max_token_len) + 2 * bulk_size(10) +
                                 bulk_size(base + 3) + bulk_size(1));
}

// base_ is read only up to base_len_.
// NOLINTBEGIN(cppcoreguidelines-pro-type-member-init)
// cppcheck-suppress uninitMemberVar
FairLock::FairLock(Connection& conn, std::string_view key) noexcept
    : base_len_(key.empty() || key.size() > RESPLOCK_MAX_KEY_LEN ? 0
                                                                 : companion_prefix(key, base_)),
      lock_(conn, base_len_ != 0 ? key : std::string_view{}) {}
// NOLINTEND(cppcoreguidelines-pro-type-member-init)

Status FairLock::set_owner(std::string_view owner) noexcept {
    if (!detail::valid_owner(owner)) return Status::invalid_argument;
    if (!owner.empty()) std::memcpy(owner_, owner.data(), owner.size());
    owner_len_ = owner.size();
    return Status::ok;
}

// What a wait keeps between its attempts.
struct FairLock::Wait {
    FairLock& lock;
    const Names& names;
    std::string_view fresh;  // this wait's token (given back by a failed write check: kept again)
    std::uint64_t* fence = nullptr;  // receives the fencing number on a grant (null: none asked)
    std::uint32_t ttl_ms = 0;
    std::uint32_t entry_ms = 0;    // how long the queue keeps an entry that is not refreshed
    std::uint32_t refresh_ms = 0;  // the pause after busy: a waiter refreshes its entry this often
    // cppcheck misses uses through the retry loop's void* context:
    // cppcheck-suppress unusedStructMember
    char op = 't';                 // 't' (one attempt) or 'a' (attempt and queue)
    std::uint32_t sent_at = 0;     // send time of the last attempt answered busy
    std::int64_t holder_ttl = -1;  // the PTTL that answer carried
    Status last = Status::busy;    // the last attempt's status
    // The write check of the last grant (set_replicas(), a router); not ok: the grant was given
    // back.
    Status checked = Status::ok;
    bool joined = false;   // an attempt with op 'a' was answered: there is an entry
    bool refused = false;  // the server refused BLPOP: sleep from then on
};

Status FairLock::attempt(char op, Wait& w) noexcept {
    const resplock_port_t& port = connection().port();
    Hold& hold = lock_.hold();
    // After a grant given back (not_replicated is retried: a failover may have brought a new
    // master), the next attempt asks with the same token.
    if (w.checked != Status::ok && token().empty()) hold.keep(w.fresh);
    w.checked = Status::ok;
    const char fence = w.fence != nullptr ? '1' : '0';
    char ttl_text[10];
    char entry_text[10];
    std::string_view args[13] = {{},
                                 {},
                                 "4"sv,
                                 key(),
                                 w.names.queue(),
                                 w.names.entries(),
                                 w.names.fence(),
                                 {&op, 1},
                                 token(),
                                 {ttl_text, resp::format_decimal(w.ttl_ms, ttl_text)},
                                 {entry_text, resp::format_decimal(w.entry_ms, entry_text)},
                                 w.names.prefix(),
                                 {&fence, 1}};
    if (!detail::eval_fits(connection(), fair_script, args, 13)) {
        hold.drop();  // nothing was sent with this token
        return Status::too_large;
    }
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    Status s = detail::eval(connection(), fair_script, args, 13, reply,
                            Deadline::after(port, connection().config().timeout_ms));
    Validity& validity = hold.validity();
    if (s == Status::ok) {
        const resp::Value* v = reply.values;
        // {0, PTTL} busy; {1, PTTL} held, with the fencing number third when asked for.
        const bool shaped = reply.count >= 3 && v[0].is(resp::Type::array) &&
                            v[1].is(resp::Type::integer) && v[2].is(resp::Type::integer);
        const std::size_t size = shaped && v[1].integer == 1 && w.fence != nullptr ? 3 : 2;
        if (shaped && reply.count == size + 1 && v[0].size == size) {
            if (v[1].integer == 0) {
                w.sent_at = sent_at;
                w.holder_ttl = v[2].integer;
                if (op == 'a') w.joined = true;
                return Status::busy;
            }
            // Held: KEY holds this token with that PTTL, read after this request was sent.
            std::uint64_t number = 0;
            if (v[1].integer == 1 && v[2].integer > 0 && v[2].integer <= max_ttl_ms &&
                (w.fence == nullptr || detail::fence_number(v[3], number))) {
                validity.start(sent_at, static_cast<std::uint32_t>(v[2].integer));
                if (w.fence != nullptr) *w.fence = number;
                return granted(w, sent_at);
            }
        }
        s = Status::protocol_error;
    } else {
        s = detail::outcome(connection(), s);
        // KEY holds a value of another type (GET failed before any write): someone holds it.
        if (s == Status::wrong_type && connection().request_sent()) {
            w.holder_ttl = -1;
            return Status::busy;
        }
        if (!detail::may_have_run(connection(), s, true)) return s;
    }
    validity.end();  // the token stays (release() may undo the script's work), no validity
    return s;
}

Status FairLock::granted(Wait& w, std::uint32_t sent_at) noexcept {
    w.checked = lock_.confirm_grant(
        sent_at, [](void* self) noexcept { return static_cast<FairLock*>(self)->release(); }, this);
    return w.checked;
}

Status FairLock::pause(void* wait, std::uint32_t ms, Deadline until) noexcept {
    auto& w = *static_cast<Wait*>(wait);
    Connection& conn = w.lock.connection();
    const resplock_port_t& port = conn.port();
    // The block is cut to end before the holder's PTTL and the wait run out (an attempt follows).
    const std::uint32_t blocked = detail::block_span(port, ms, until, w.holder_ttl);
    if (w.last != Status::busy || !w.joined || w.refused || blocked == 0) {
        port.sleep_ms(port.ctx, ms);  // not queued, or no time to block: a plain pause
        return Status::busy;
    }
    const std::uint32_t start = port.now_ms(port.ctx);
    resp::Value popped{};
    // Only a hand-off pushes to this waiter's wake list, after setting KEY to its token: the item
    // is its fencing number when it asked for one.
    std::uint64_t number = 0;
    if (detail::block(conn, w.names.wake(), blocked, until, w.refused, &popped) == Status::ok &&
        (w.fence == nullptr || detail::fence_number(popped, number))) {
        // Handed over after the attempt answered busy, which was sent at w.sent_at.
        w.lock.lock_.hold().validity().start(w.sent_at, w.ttl_ms);
        if (w.fence != nullptr) *w.fence = number;
        // The BLPOP that took the item is this connection's write after the hand-off's: a WAIT
        // now covers both. Confirmed, the wait ends here; otherwise the grant was given back and
        // the wait goes on (the hand-off took the entry: the next attempt joins anew).
        if (w.lock.granted(w, port.now_ms(port.ctx)) == Status::ok) return Status::ok;
        w.joined = false;
        return Status::busy;
    }
    // No hand-off (or an item that is no fencing number: the next attempt then answers for the
    // lock, as a malformed grant or with the number).
    const std::uint32_t elapsed = port.now_ms(port.ctx) - start;
    if (w.refused && elapsed < ms) port.sleep_ms(port.ctx, ms - elapsed);
    return Status::busy;
}

Status FairLock::acquire(std::uint32_t ttl_ms, std::uint64_t* fence) noexcept {
    return try_acquire(ttl_ms, 0, fence);
}

Status FairLock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                             std::uint64_t* fence) noexcept {
    if (key().empty() || !detail::valid_ttl(ttl_ms) || wait_ms > max_ttl_ms || held()) {
        return Status::invalid_argument;
    }
    char buf[max_token_len];
    const std::string_view fresh =
        detail::owned_token(connection().port(), {owner_, owner_len_}, buf);
    if (fresh.empty()) return Status::random_failed;
    Hold& hold = lock_.hold();
    hold.keep(fresh);
    const Names names(base(), token());

    std::uint32_t refresh = ttl_ms / 4;  // 0 for a TTL under 4 ms: then 1
    if (refresh > fair_refresh_max_ms) refresh = fair_refresh_max_ms;
    if (refresh == 0) refresh = 1;
    // An entry outlives the block that follows its refresh (one span and Redis's tick) and a
    // span more for the next refresh to arrive; a waiter whose refresh comes later than that is
    // taken for dead and loses its place (it joins again at the end).
    Wait w{*this,   names,
           fresh,   fence,
           ttl_ms,  2 * refresh + detail::blpop_late_ms,
           refresh, wait_ms == 0 ? 't' : 'a'};
    static constexpr detail::Acquirer acquirer = {
        [](void* ctx) {
            auto& a = *static_cast<Wait*>(ctx);
            a.last = a.lock.attempt(a.op, a);
            return a.last;
        },
        [](void* ctx) { return static_cast<Wait*>(ctx)->holder_ttl; },
        [](void* ctx) { return static_cast<Wait*>(ctx)->refresh_ms; }, &FairLock::pause};
    const Status s = detail::retry(connection(), key(), wait_ms, acquirer, &w);
    // A grant whose write check failed was given back, keeping the token only if that failed.
    if (s == Status::ok || w.checked != Status::ok) return w.checked;
    if (detail::retryable(s) && w.joined) {
        // The wait ran out: leave the queue (taking the lock if it was handed over meanwhile).
        const Status left = attempt('l', w);
        if (left == Status::ok || w.checked != Status::ok) return left;
        if (left == Status::busy || !detail::may_have_run(connection(), left, true)) hold.drop();
        return left;
    }
    // Not queued, or a failure: the token stays only if the script may have run with it.
    if (detail::retryable(s) || !detail::may_have_run(connection(), s, true)) hold.drop();
    return s;
}

Status FairLock::release() noexcept {
    if (key().empty() || token().empty()) return Status::invalid_argument;
    const Names names(base(), token());
    std::string_view args[13] = {
        {},      {},    "4"sv, key(),          names.queue(), names.entries(), names.fence(), "r"sv,
        token(), "0"sv, "0"sv, names.prefix(), "0"sv};
    auto once = [&](Deadline until) {
        Status s = Status::too_large;
        if (detail::eval_fits(connection(), fair_script, args, 13)) {
            resp::Reply reply;
            s = detail::owner_answer(
                connection(), detail::eval(connection(), fair_script, args, 13, reply, until),
                reply, false);
        }
        lock_.hold().validity().end();
        if (s == Status::ok || s == Status::expired || s == Status::not_owner) lock_.hold().drop();
        return s;
    };
    return detail::retry_release(connection(), key(), once);
}

Status FairLock::adopt(std::string_view token) noexcept {
    return key().empty() ? Status::invalid_argument : lock_.adopt(token);
}

}  // namespace resplock
