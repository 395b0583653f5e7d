// The counting semaphore (see resplock/variants/semaphore.hpp): leases in a sorted set on the
// server's clock, a FIFO queue with hand-off for the fair mode, a wake list for the plain one.
#include "resplock/variants/semaphore.hpp"

#include <cstring>

#include "core/names.hpp"
#include "core/outcome.hpp"
#include "core/retry.hpp"
#include "core/script.hpp"
#include "core/token.hpp"
#include "core/write_check.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/variants/fair_lock.hpp"
#include "variants/lua_scripts.hpp"

namespace resplock {

using namespace std::string_view_literals;
using detail::bulk_size;

// The semaphore's one script, commented in src/variants/lua/semaphore.lua (embedded in
// variants/lua_scripts.hpp). KEYS = KEY, BASE:fence, BASE:wake, BASE:q, BASE:w; ARGV = op, token,
// ttl, limit, entry_ms, BASE:f:. Ops t (attempt), a (attempt and queue), l (leave) answer
// {fence, ms} when the caller holds a lease, else the ms until the earliest lease ends (-1: none
// lives); r (release) and e (extend) answer 1 or 0; q (query) {count, ms of the caller's lease or
// -2, live waiters}.
using detail::semaphore_script;

namespace {

constexpr std::size_t base_max = RESPLOCK_MAX_KEY_LEN + companion_prefix_extra;

}  // namespace

// The companion keys of one token, in one fixed buffer (built once per call, so that the attempts
// and the blocks below it add no copies of their own to the stack).
class Semaphore::Names {
  public:
    Names(std::string_view base, std::string_view token) noexcept
        : fence_(buf_.add(base, ":fence"sv)),
          wake_(buf_.add(base, ":wake"sv)),
          queue_(buf_.add(base, ":q"sv)),
          entries_(buf_.add(base, ":w"sv)),
          own_(buf_.add(base, ":f:"sv, token)) {}

    std::string_view fence() const noexcept { return fence_; }      // BASE:fence
    std::string_view wake() const noexcept { return wake_; }        // BASE:wake
    std::string_view queue() const noexcept { return queue_; }      // BASE:q
    std::string_view entries() const noexcept { return entries_; }  // BASE:w
    std::string_view own() const noexcept { return own_; }          // BASE:f:TOKEN
    // BASE:f:, the wake lists' prefix.
    std::string_view prefix() const noexcept {
        // BASE:q is as long as BASE:f; no substr(), whose range check could throw.
        const std::size_t n = queue_.size() + 1;
        return {own_.data(), n < own_.size() ? n : own_.size()};
    }

  private:
    detail::NameBuffer<5 * base_max + 6 + 5 + 2 + 2 + 3 + max_token_len>
        buf_;  // declared first: the views below point into it
    std::string_view fence_;
    std::string_view wake_;
    std::string_view queue_;
    std::string_view entries_;
    std::string_view own_;
};

std::size_t semaphore_buffer_min() noexcept {
    // EVAL <script> 5 KEY BASE:fence BASE:wake BASE:q BASE:w op token ttl limit entry_ms BASE:f:
    // The ttl takes up to 10 digits and the limit 5 in every request. An attempt sends a fresh
    // token (an owner label, ':', the hex) and an entry_ms of up to 4 digits (2 x
    // fair_refresh_max_ms + Redis's tick); a release, an extend or a query the token kept, which
    // adopt() lets be max_token_len bytes, and entry_ms 0.
    constexpr std::size_t fresh = max_owner_len + (max_owner_len != 0 ? 1 : 0) + token_len;
    constexpr std::size_t attempt = bulk_size(fresh) + bulk_size(4);
    constexpr std::size_t owner = bulk_size(max_token_len) + bulk_size(1);
    return detail::eval_size(
        semaphore_script.text.size(), 12,
        bulk_size(1) + bulk_size(RESPLOCK_MAX_KEY_LEN) + bulk_size(base_max + 6) +
            bulk_size(base_max + 5) + 2 * bulk_size(base_max + 2) + bulk_size(1) + bulk_size(10) +
            bulk_size(5) + bulk_size(base_max + 3) + (attempt > owner ? attempt : owner));
}

// base_ is read only up to base_len_, owner_ up to owner_len_.
// NOLINTBEGIN(cppcoreguidelines-pro-type-member-init)
// cppcheck-suppress uninitMemberVar
Semaphore::Semaphore(Connection& conn, std::string_view key, std::uint32_t limit,
                     bool fair) noexcept
    : conn_(conn),
      hold_(limit >= 1 && limit <= max_limit ? key : std::string_view{}),
      base_len_(hold_.key().empty() ? 0 : companion_prefix(key, base_)),
      limit_(hold_.key().empty() ? 0 : limit),
      fair_(fair) {}
// NOLINTEND(cppcoreguidelines-pro-type-member-init)

Status Semaphore::set_owner(std::string_view owner) noexcept {
    if (!detail::valid_owner(owner)) return Status::invalid_argument;
    if (!owner.empty()) std::memcpy(owner_, owner.data(), owner.size());
    owner_len_ = owner.size();
    return Status::ok;
}

// What a wait keeps between its attempts.
struct Semaphore::Wait {
    Semaphore& sem;
    const Names& names;
    std::string_view fresh;  // this wait's token (given back by a failed write check: kept again)
    std::uint32_t ttl_ms = 0;
    std::uint32_t entry_ms = 0;      // how long the queue keeps an entry that is not refreshed
    std::uint32_t refresh_ms = 0;    // the pause after busy of a queued waiter
    std::uint64_t* fence = nullptr;  // receives the fencing number on a grant (may be null)
    char op = 't';                   // 't' (attempt) or 'a' (attempt and queue: the fair mode)
    std::uint32_t sent_at = 0;       // send time of the last attempt answered busy
    std::int64_t holder_ttl = -1;    // that answer: ms until the earliest lease ends (-1: unknown)
    Status last = Status::busy;      // the last attempt's status
    // The write check of the last attempt's grant (set_replicas(), a router); not ok: settle()
    // gave the lease back.
    Status checked = Status::ok;
    bool joined = false;   // an attempt with op 'a' was answered: there is an entry
    bool refused = false;  // the server refused BLPOP: sleep from then on
};

Status Semaphore::attempt(char op, Wait& w) noexcept {
    const resplock_port_t& port = conn_.port();
    // After a grant given back (not_replicated is retried: a failover may have brought a new
    // master), the next attempt asks with the same token.
    if (w.checked != Status::ok && token().empty()) hold_.keep(w.fresh);
    w.checked = Status::ok;
    char ttl_text[10];
    char limit_text[10];
    char entry_text[10];
    std::string_view args[14] = {{},
                                 {},
                                 "5"sv,
                                 key(),
                                 w.names.fence(),
                                 w.names.wake(),
                                 w.names.queue(),
                                 w.names.entries(),
                                 {&op, 1},
                                 token(),
                                 {ttl_text, resp::format_decimal(w.ttl_ms, ttl_text)},
                                 {limit_text, resp::format_decimal(limit_, limit_text)},
                                 {entry_text, resp::format_decimal(w.entry_ms, entry_text)},
                                 w.names.prefix()};
    if (!detail::eval_fits(conn_, semaphore_script, args, 14)) {
        hold_.drop();  // nothing was sent with this token
        return Status::too_large;
    }
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    Status s = detail::eval(conn_, semaphore_script, args, 14, reply,
                            Deadline::after(sent_at, conn_.config().timeout_ms));
    Validity& validity = hold_.validity();
    if (s == Status::ok) {
        const resp::Value* v = reply.values;
        if (reply.count == 1 && v[0].is(resp::Type::integer) && v[0].integer >= -1) {
            w.sent_at = sent_at;
            w.holder_ttl = v[0].integer;
            if (op == 'a') w.joined = true;
            return Status::busy;
        }
        // Granted: the lease has v[2] ms left, read after this request was sent; never more than
        // this wait asked for (a lease granted or handed over for it has no more).
        std::uint64_t number = 0;
        if (reply.count == 3 && v[0].is(resp::Type::array) && v[0].size == 2 &&
            detail::fence_number(v[1], number) && v[2].is(resp::Type::integer) &&
            v[2].integer > 0 && v[2].integer <= w.ttl_ms) {
            validity.start(sent_at, static_cast<std::uint32_t>(v[2].integer));
            if (w.fence != nullptr) *w.fence = number;
            return granted(w, sent_at);
        }
        s = Status::protocol_error;
    } else {
        s = detail::outcome(conn_, s);
        if (!detail::may_have_run(conn_, s, true)) return s;
    }
    validity.end();  // the token stays (release() may undo the script's work), no validity
    return s;
}

Status Semaphore::pause(void* wait, std::uint32_t ms, Deadline until) noexcept {
    auto& w = *static_cast<Wait*>(wait);
    Connection& conn = w.sem.conn_;
    const resplock_port_t& port = conn.port();
    // The block is cut to end before the earliest lease and the wait run out (an attempt
    // follows).
    const std::uint32_t blocked = detail::block_span(port, ms, until, w.holder_ttl);
    // The fair mode blocks on its own list once queued; the plain mode on BASE:wake.
    const bool queued = w.op == 'a';
    if (w.last != Status::busy || (queued && !w.joined) || w.refused || blocked == 0) {
        port.sleep_ms(port.ctx, ms);  // nothing to block on, or no time to: a plain pause
        return Status::busy;
    }
    const std::uint32_t start = port.now_ms(port.ctx);
    resp::Value popped{};
    const Status s = detail::block(conn, queued ? w.names.own() : w.names.wake(), blocked, until,
                                   w.refused, &popped);
    std::uint64_t number = 0;
    // Only a hand-off pushes to a waiter's own list, after granting its lease: the item is the
    // lease's fencing number. Its validity counts from the attempt answered busy before it.
    if (queued && s == Status::ok && detail::fence_number(popped, number)) {
        w.sem.hold_.validity().start(w.sent_at, w.ttl_ms);
        if (w.fence != nullptr) *w.fence = number;
        // The BLPOP that took the item is this connection's write after the hand-off's: a WAIT
        // now covers both. Confirmed, the wait ends here; otherwise the lease was given back and
        // the wait goes on, as after any grant whose check failed: the next attempt asks again
        // with the same token, joining the queue anew (the hand-off took the entry).
        if (w.sem.granted(w, port.now_ms(port.ctx)) == Status::ok) return Status::ok;
        w.joined = false;
        return Status::busy;
    }
    // Woken in the plain mode, or no hand-off: an attempt follows (a hand-off whose item was not
    // a number is then answered by that attempt, as a malformed grant).
    const std::uint32_t elapsed = port.now_ms(port.ctx) - start;
    if (w.refused && elapsed < ms) port.sleep_ms(port.ctx, ms - elapsed);
    return Status::busy;
}

Status Semaphore::acquire(std::uint32_t ttl_ms, std::uint64_t* fence) noexcept {
    return try_acquire(ttl_ms, 0, fence);
}

Status Semaphore::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                              std::uint64_t* fence) noexcept {
    if (key().empty() || !detail::valid_ttl(ttl_ms) || wait_ms > max_ttl_ms || held()) {
        return Status::invalid_argument;
    }
    char buf[max_token_len];
    const std::string_view fresh = detail::owned_token(conn_.port(), {owner_, owner_len_}, buf);
    if (fresh.empty()) return Status::random_failed;
    hold_.keep(fresh);
    const Names names(base(), token());

    // As the fair lock: a queued waiter refreshes its entry every quarter of its TTL, at most
    // every fair_refresh_max_ms, and the entry outlives a block, Redis's tick and one more span.
    std::uint32_t refresh = ttl_ms / 4;
    if (refresh > fair_refresh_max_ms) refresh = fair_refresh_max_ms;
    if (refresh == 0) refresh = 1;
    const bool queue = fair_ && wait_ms != 0;
    // entry_ms 0 when not queued: the script reads it only to queue.
    Wait w{
        *this,   names, token(),          ttl_ms, queue ? 2 * refresh + detail::blpop_late_ms : 0,
        refresh, fence, queue ? 'a' : 't'};
    // The queued waiter comes back at its refresh interval; the plain one after the backoff.
    static constexpr detail::Acquirer queued = {
        [](void* ctx) {
            auto& a = *static_cast<Wait*>(ctx);
            a.last = a.sem.attempt(a.op, a);
            return a.last;
        },
        [](void* ctx) { return static_cast<Wait*>(ctx)->holder_ttl; },
        [](void* ctx) { return static_cast<Wait*>(ctx)->refresh_ms; }, &Semaphore::pause};
    static constexpr detail::Acquirer plain = {queued.attempt, queued.holder_ttl, nullptr,
                                               &Semaphore::pause};
    const Status s = detail::retry(conn_, key(), wait_ms, queue ? queued : plain, &w);
    // A grant whose write check failed was given back, keeping the token only if that failed.
    if (s == Status::ok || w.checked != Status::ok) return w.checked;
    if (detail::retryable(s) && w.joined) {
        // The wait ran out: leave the queue (taking a lease handed over meanwhile).
        const Status left = attempt('l', w);
        if (left == Status::ok || w.checked != Status::ok) return left;
        if (left == Status::busy || !detail::may_have_run(conn_, left, true)) hold_.drop();
        return left;
    }
    // Not queued, or a failure: the token stays only if the script may have run with it.
    if (detail::retryable(s) || !detail::may_have_run(conn_, s, true)) hold_.drop();
    return s;
}

Status Semaphore::run(const Names& names, char op, std::string_view ttl, resp::Reply& reply,
                      Deadline until, std::string_view entry) noexcept {
    char limit_text[10];
    std::string_view args[14] = {{},
                                 {},
                                 "5"sv,
                                 key(),
                                 names.fence(),
                                 names.wake(),
                                 names.queue(),
                                 names.entries(),
                                 {&op, 1},
                                 token().empty() ? ""sv : token(),
                                 ttl,
                                 {limit_text, resp::format_decimal(limit_, limit_text)},
                                 entry,
                                 names.prefix()};
    if (!detail::eval_fits(conn_, semaphore_script, args, 14)) return Status::too_large;
    return detail::eval(conn_, semaphore_script, args, 14, reply, until);
}

Status Semaphore::release() noexcept {
    if (key().empty() || token().empty()) return Status::invalid_argument;
    return give_back(Names(base(), token()));
}

Status Semaphore::give_back(const Names& names) noexcept {
    auto once = [&](Deadline until) {
        resp::Reply reply;
        // Companion keys are touched too: a WRONGTYPE says nothing of the lease (key_only false).
        const Status s =
            detail::owner_answer(conn_, run(names, 'r', "0"sv, reply, until), reply, false);
        hold_.validity().end();
        if (s == Status::ok || s == Status::expired || s == Status::not_owner) hold_.drop();
        return s;
    };
    return detail::retry_release(conn_, key(), once);
}

Status Semaphore::extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    if (key().empty() || token().empty() || !detail::valid_ttl(ttl_ms)) {
        return Status::invalid_argument;
    }
    if (conn_.config().timeout_ms < wait_ms) wait_ms = conn_.config().timeout_ms;
    Validity& validity = hold_.validity();
    if (!validity.bounds_renewal(conn_.port(), wait_ms)) return Status::expired;
    const resplock_port_t& port = conn_.port();
    const Names names(base(), token());
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    Status s = detail::owner_answer(
        conn_, run(names, 'e', {ttl_text, ttl_len}, reply, Deadline::after(sent_at, wait_ms)),
        reply, false);
    // The check keeps no more validity than before when it fails (settle()).
    if (s == Status::ok) s = confirmed(names, sent_at, ttl_ms, wait_ms);
    if (s == Status::ok) {
        validity.start(sent_at, ttl_ms);
    } else if (s == Status::expired || s == Status::not_owner) {
        hold_.drop();
    } else if (detail::may_have_run(conn_, s, true)) {
        // The renewal may have run: a shorter TTL then ends the lease before the old validity.
        validity.renewal_unconfirmed(sent_at, ttl_ms);
    }
    return s;
}

Status Semaphore::query(SemaphoreInfo& info) noexcept {
    if (key().empty()) return Status::invalid_argument;
    resp::Reply reply;
    const Status s = run(Names(base(), token()), 'q', "0"sv, reply, timeout());
    if (s != Status::ok) return s;
    const resp::Value* v = reply.values;
    if (reply.count != 4 || !v[0].is(resp::Type::array) || v[0].size != 3) {
        return Status::protocol_error;
    }
    for (int i = 1; i < 4; ++i) {
        if (!v[i].is(resp::Type::integer) || v[i].integer < (i == 2 ? -2 : 0) ||
            v[i].integer > max_ttl_ms) {
            return Status::protocol_error;
        }
    }
    info.count = static_cast<std::uint32_t>(v[1].integer);
    info.mine = v[2].integer >= 0 && !token().empty();
    info.ttl_ms = info.mine ? v[2].integer : -2;
    info.waiters = static_cast<std::uint32_t>(v[3].integer);
    return Status::ok;
}

Status Semaphore::set_replicas(std::uint32_t replicas) noexcept {
    if (replicas > Lock::max_replicas) return Status::invalid_argument;
    replicas_ = static_cast<std::uint8_t>(replicas);
    acknowledged_ = 0;
    return Status::ok;
}

Status Semaphore::confirmed(const Names& names, std::uint32_t sent_at, std::uint32_t ttl_ms,
                            std::uint32_t wait_ms) noexcept {
    if (replicas_ == 0 && conn_.config().router == nullptr) return Status::ok;
    // A grant not confirmed is given back with the names already made (no second copy of them
    // on the stack).
    struct Lease {
        Semaphore& sem;
        const Names& names;
        Status release() noexcept { return sem.give_back(names); }
    } lease{*this, names};
    return detail::settle(lease, conn_, hold_, replicas_, acknowledged_, sent_at, ttl_ms, wait_ms);
}

Status Semaphore::granted(Wait& w, std::uint32_t sent_at) noexcept {
    w.checked = confirmed(w.names, sent_at, 0, conn_.config().timeout_ms);
    return w.checked;
}

Status Semaphore::holders(HolderVisit visit, void* ctx) noexcept {
    if (key().empty() || visit == nullptr) return Status::invalid_argument;
    // The array's header leaves RESPLOCK_MAX_REPLY_VALUES - 1 values: a label and ms for each.
    constexpr std::uint32_t page = (RESPLOCK_MAX_REPLY_VALUES - 1) / 2;
    static_assert(page >= 1, "holders() needs RESPLOCK_MAX_REPLY_VALUES of 3 or more");
    char page_text[10];
    const std::string_view count{page_text, resp::format_decimal(page, page_text)};
    const Deadline until = timeout();
    const Names names(base(), token());
    // Never more leases than the largest limit: the bound ends the loop whatever the server says.
    for (std::uint32_t from = 0; from <= max_limit; from += page) {
        if (from != 0 && until.remaining(conn_.port()) == 0) return Status::busy;
        char from_text[10];
        const std::size_t from_len = resp::format_decimal(from, from_text);
        resp::Reply reply;
        const Status s = run(names, 'h', {from_text, from_len}, reply, until, count);
        if (s != Status::ok) return s;
        const resp::Value* v = reply.values;
        if (!v[0].is(resp::Type::array) || v[0].size % 2 != 0 || v[0].size > 2 * page ||
            reply.count != v[0].size + 1) {
            return Status::protocol_error;
        }
        for (std::size_t i = 1; i < reply.count; i += 2) {
            if (!v[i].is(resp::Type::bulk_string) || v[i].size > max_owner_len ||
                !v[i + 1].is(resp::Type::integer) || v[i + 1].integer < 0 ||
                v[i + 1].integer > max_ttl_ms) {
                return Status::protocol_error;
            }
        }
        for (std::size_t i = 1; i < reply.count; i += 2) {
            visit(ctx, {{v[i].data, v[i].size}, static_cast<std::uint32_t>(v[i + 1].integer)});
        }
        if (v[0].size < 2 * page) return Status::ok;
    }
    return Status::ok;
}

Status Semaphore::adopt(std::string_view token) noexcept {
    if (key().empty() || token.empty() || token.size() > max_token_len) {
        return Status::invalid_argument;
    }
    hold_.keep(token);
    return Status::ok;
}

}  // namespace resplock
