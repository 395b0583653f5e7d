#include "resplock/variants/reentrant_lock.hpp"

#include "core/lua_scripts.hpp"
#include "core/outcome.hpp"
#include "core/retry.hpp"
#include "core/script.hpp"
#include "core/token.hpp"
#include "core/write_check.hpp"
#include "variants/lua_scripts.hpp"

namespace resplock {

using namespace std::string_view_literals;

using detail::bulk_size;
using detail::valid_ttl;

namespace {

// The scripts, each commented in its file src/variants/lua/reentrant_*.lua (embedded in
// variants/lua_scripts.hpp). KEYS[1] = the hash, ARGV[1] = owner id, ARGV[2] = TTL. SHA1s are
// checked against the server in the integration tests.

// Busy: returns the key's PTTL. Taken or entered again: {count, TTL applied}.
constexpr const detail::Script& acquire_script = detail::reentrant_acquire_script;
// -2: the key is gone; -1: not this owner's; else the count left (0: the key was deleted).
constexpr const detail::Script& release_script = detail::reentrant_release_script;
// -2 / -1 as release; else the TTL applied.
constexpr const detail::Script& extend_script = detail::reentrant_extend_script;
// {count of ARGV[1] (0 without it), PTTL}.
constexpr const detail::Script& query_script = detail::reentrant_query_script;

constexpr const detail::Script* scripts[] = {&acquire_script, &release_script, &extend_script,
                                             &query_script};
enum : std::size_t { acquire_op, release_op, extend_op, query_op };

// EVAL <text> 1 <key> <owner> [<ttl>] at the longest key and owner id.
constexpr std::size_t eval_size(const detail::Script& s, bool ttl) {
    return detail::eval_size(s.text.size(), ttl ? 4 : 3,
                             bulk_size(1) + bulk_size(RESPLOCK_MAX_KEY_LEN) +
                                 bulk_size(max_token_len) + (ttl ? bulk_size(10) : 0));
}
constexpr std::size_t longest_request = eval_size(acquire_script, true);
static_assert(longest_request >= eval_size(extend_script, true) &&
                  longest_request >= eval_size(release_script, false) &&
                  longest_request >= eval_size(query_script, false),
              "the acquire EVAL is the longest request");

std::uint32_t clamp_count(std::int64_t n) noexcept {
    return n > 0xffffffff ? 0xffffffffU : static_cast<std::uint32_t>(n);
}

}  // namespace

std::size_t reentrant_buffer_min() noexcept {
    return longest_request;
}

ReentrantLock::ReentrantLock(Connection& conn, std::string_view key,
                             std::string_view owner) noexcept
    : conn_(conn), hold_(owner.size() <= max_token_len ? key : std::string_view{}) {
    // The owner id is the hold's token for the object's whole life.
    if (!hold_.key().empty() && !owner.empty()) hold_.keep(owner);
}

Status ReentrantLock::acquire(std::uint32_t ttl_ms) noexcept {
    std::int64_t holder_ttl = -1;
    return attempt(ttl_ms, holder_ttl);
}

Status ReentrantLock::attempt(std::uint32_t ttl_ms, std::int64_t& holder_ttl) noexcept {
    if (key().empty() || !valid_ttl(ttl_ms)) return Status::invalid_argument;
    const resplock_port_t& port = conn_.port();
    if (owner().empty()) {
        char fresh[token_len];
        if (detail::random_token(port, fresh) != Status::ok) return Status::random_failed;
        hold_.keep({fresh, token_len});
    }
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::string_view extra[2] = {owner(), {ttl_text, ttl_len}};
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    Status s = run(acquire_op, extra, 2, reply, Deadline::after(port, conn_.config().timeout_ms));
    if (s == Status::ok) {
        const resp::Value* v = reply.values;
        if (reply.count == 1 && v[0].is(resp::Type::integer)) {
            holder_ttl = v[0].integer;
            drop();  // someone else holds the key: any hold this object had is lost
            return Status::busy;
        }
        if (reply.count == 3 && v[0].is(resp::Type::array) && v[0].size == 2 &&
            v[1].is(resp::Type::integer) && v[1].integer >= 1 && v[2].is(resp::Type::integer) &&
            v[2].integer >= 1 && v[2].integer <= max_ttl_ms) {
            count_ = clamp_count(v[1].integer);
            // The server's count covers every holder of this owner id; it bounds ours (it is 1
            // when the key had expired and was made anew).
            levels_ = levels_ < count_ ? levels_ + 1 : count_;
            unsure_ = false;
            const Validity before = hold_.validity();
            hold_.validity().start(sent_at, static_cast<std::uint32_t>(v[2].integer));
            return confirmed(sent_at, 0, conn_.config().timeout_ms, before);
        }
        s = Status::protocol_error;
    } else {
        s = detail::outcome(conn_, s);
        if (!detail::may_have_run(conn_, s, true)) return s;  // not executed: nothing changed
    }
    // The count may have been added. A first acquisition keeps the owner id for release(); a
    // re-entry keeps its validity, since the script never shortens the PTTL.
    if (levels_ == 0) {
        unsure_ = true;
        hold_.validity().end();
    }
    return s;
}

Status ReentrantLock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    struct Attempt {
        ReentrantLock& lock;
        std::uint32_t ttl_ms;
        std::int64_t holder_ttl;
    } state{*this, ttl_ms, -1};
    static constexpr detail::Acquirer acquirer = {
        [](void* ctx) {
            auto& a = *static_cast<Attempt*>(ctx);
            a.holder_ttl = -1;
            return a.lock.attempt(a.ttl_ms, a.holder_ttl);
        },
        [](void* ctx) { return static_cast<Attempt*>(ctx)->holder_ttl; }, nullptr, nullptr};
    return detail::retry(conn_, key(), wait_ms, acquirer, &state);
}

Status ReentrantLock::run(std::size_t script, const std::string_view* extra,
                          std::size_t extra_count, resp::Reply& reply, Deadline deadline) noexcept {
    std::string_view args[6] = {{}, {}, "1"sv, key()};
    for (std::size_t i = 0; i < extra_count; ++i)
        args[4 + i] = extra[i];
    return detail::eval(conn_, *scripts[script], args, 4 + extra_count, reply, deadline);
}

// Maps the integer reply of the release/extend scripts (-2: gone, -1: another holder), and
// forgets the hold once it is known lost.
Status ReentrantLock::owner_result(Status s, const resp::Reply& reply,
                                   std::int64_t& value) noexcept {
    if (s == Status::ok) {
        const resp::Value& v = reply.top();
        if (!v.is(resp::Type::integer)) return Status::protocol_error;
        value = v.integer;
        s = value == -2   ? Status::expired
            : value == -1 ? Status::not_owner
            : value < 0   ? Status::protocol_error
                          : Status::ok;
    } else {
        return detail::outcome(conn_, s);
    }
    if (s == Status::expired || s == Status::not_owner) drop();
    return s;
}

Status ReentrantLock::release() noexcept {
    if (key().empty() || token().empty()) return Status::invalid_argument;
    auto once = [this](Deadline until) {
        const std::string_view extra[1] = {owner()};
        resp::Reply reply;
        std::int64_t left = 0;
        const Status s = owner_result(run(release_op, extra, 1, reply, until), reply, left);
        if (s == Status::ok) {
            count_ = clamp_count(left);
            if (levels_ > 0) --levels_;
            if (levels_ > count_) levels_ = count_;
        } else if (detail::may_have_run(conn_, s, true)) {
            // It may have run: count the level as released rather than risk taking it twice,
            // and claim no validity, since the key may be gone.
            if (levels_ > 0) --levels_;
            hold_.validity().end();
        } else {
            return s;  // not sent, or the hold is known lost (owner_result dropped it)
        }
        unsure_ = false;
        if (levels_ == 0) hold_.validity().end();
        return s;
    };
    return detail::retry_release(conn_, key(), once);
}

Status ReentrantLock::extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    if (key().empty() || token().empty() || !valid_ttl(ttl_ms)) return Status::invalid_argument;
    if (conn_.config().timeout_ms < wait_ms) wait_ms = conn_.config().timeout_ms;
    if (!hold_.validity().bounds_renewal(conn_.port(), wait_ms)) return Status::expired;
    const resplock_port_t& port = conn_.port();
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    const std::string_view extra[2] = {owner(), {ttl_text, ttl_len}};
    const std::uint32_t sent_at = port.now_ms(port.ctx);
    resp::Reply reply;
    std::int64_t applied = 0;
    const Status s = owner_result(run(extend_op, extra, 2, reply, Deadline::after(port, wait_ms)),
                                  reply, applied);
    if (s != Status::ok) return s;
    if (applied < 1 || applied > max_ttl_ms) return Status::protocol_error;
    const auto ttl = static_cast<std::uint32_t>(applied);
    const Status checked = confirmed(sent_at, ttl, wait_ms, hold_.validity());
    if (checked == Status::ok) hold_.validity().start(sent_at, ttl);
    return checked;
}

Status ReentrantLock::set_replicas(std::uint32_t replicas) noexcept {
    if (replicas > Lock::max_replicas) return Status::invalid_argument;
    replicas_ = static_cast<std::uint8_t>(replicas);
    acknowledged_ = 0;
    return Status::ok;
}

Status ReentrantLock::confirmed(std::uint32_t sent_at, std::uint32_t ttl_ms, std::uint32_t wait_ms,
                                const Validity& before) noexcept {
    if (replicas_ == 0 && conn_.config().router == nullptr) return Status::ok;
    const bool reentry = ttl_ms == 0 && levels_ > 1;
    const Validity earlier = before;  // `before` may be the hold's own, which settle() changes
    struct Level {
        ReentrantLock& lock;
        Status release() const noexcept { return lock.release(); }
    } level{*this};
    const Status s =
        detail::settle(level, conn_, hold_, replicas_, acknowledged_, sent_at, ttl_ms, wait_ms);
    if (s != Status::ok && reentry && levels_ != 0) {
        // The earlier levels stay held, with no more validity than they had (the re-entry raised
        // the PTTL, which a promoted replica may lack).
        hold_.validity() = earlier;
    }
    return s;
}

Status ReentrantLock::query(ReentrantInfo& info) noexcept {
    if (key().empty()) return Status::invalid_argument;
    const std::string_view extra[1] = {owner()};
    resp::Reply reply;
    const Status s = run(query_op, extra, owner().empty() ? 0 : 1, reply,
                         Deadline::after(conn_.port(), conn_.config().timeout_ms));
    if (s != Status::ok) return s;
    const resp::Value* v = reply.values;
    if (reply.count != 3 || !v[0].is(resp::Type::array) || v[0].size != 2 ||
        !v[1].is(resp::Type::integer) || v[1].integer < 0 || !v[2].is(resp::Type::integer)) {
        return Status::protocol_error;
    }
    count_ = clamp_count(v[1].integer);
    info.count = count_;
    info.ttl_ms = v[2].integer;
    info.state = count_ > 0          ? LockState::held_by_me
                 : info.ttl_ms == -2 ? LockState::free
                                     : LockState::held_by_other;
    return Status::ok;
}

void ReentrantLock::drop() noexcept {
    levels_ = 0;
    count_ = 0;
    unsure_ = false;
    hold_.validity().end();
}

}  // namespace resplock
