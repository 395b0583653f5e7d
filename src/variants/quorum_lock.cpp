#include "resplock/variants/quorum_lock.hpp"

#include <cstring>

#include "core/lua_scripts.hpp"
#include "core/outcome.hpp"
#include "core/retry.hpp"
#include "core/script.hpp"
#include "core/token.hpp"

namespace resplock {

using namespace std::string_view_literals;

namespace {

// A server's answer that is neither a grant nor a refusal.
bool failure(Status s) noexcept {
    return s != Status::ok && s != Status::busy && s != Status::expired && s != Status::not_owner;
}

// Servers are read one after the other: a reply that arrived in time may be read only once the
// wait for an earlier server has used up its deadline. It is still taken, within a short grace.
Deadline later(const Connection& c, Deadline deadline) noexcept {
    return deadline.remaining(c.port()) >= quorum_read_grace_ms
               ? deadline
               : Deadline::after(c.port(), quorum_read_grace_ms);
}

}  // namespace

// Whether conns[0..count) may serve one quorum lock: 1..RESPLOCK_MAX_SERVERS connections, none
// null, and no two on one connection or on one port context (which holds one transport
// connection): that would put two requests in flight on one transport.
bool QuorumLock::servers_valid(Connection* const* conns, std::size_t count) noexcept {
    if (conns == nullptr || count == 0 || count > RESPLOCK_MAX_SERVERS) return false;
    for (std::size_t i = 0; i < count; ++i) {
        if (conns[i] == nullptr) return false;
        const resplock_port_t& port = conns[i]->port();
        for (std::size_t j = 0; j < i; ++j) {
            const resplock_port_t& other = conns[j]->port();
            if (conns[j] == conns[i] || (other.ctx == port.ctx && other.connect == port.connect)) {
                return false;
            }
        }
    }
    return true;
}

QuorumLock::QuorumLock(Connection* const* conns, std::size_t count, std::string_view key) noexcept
    : conns_{}, hold_(servers_valid(conns, count) ? key : std::string_view{}) {
    if (hold_.key().empty()) return;
    for (std::size_t i = 0; i < count; ++i) {
        conns_[i] = conns[i];
    }
    count_ = count;
}

std::uint32_t QuorumLock::remaining_ms() const noexcept {
    return count_ == 0 ? 0U : hold_.validity().remaining(conns_[0]->port());
}

std::uint32_t QuorumLock::wait_for(std::uint32_t ttl_ms) const noexcept {
    const std::uint32_t wait = ttl_ms / quorum_wait_divisor;
    return wait < quorum_wait_min_ms ? quorum_wait_min_ms : wait;
}

void QuorumLock::round(Op op, std::string_view* args, std::size_t count, std::uint32_t wait_ms,
                       Status (&status)[RESPLOCK_MAX_SERVERS], Seen* seen,
                       const bool* to) noexcept {
    // The plain lock's owner script: its arguments (none, token, token + ttl) say whether it
    // queries, releases or extends.
    const detail::Script* script = op == Op::set ? nullptr : &detail::owner_script;
    if (script != nullptr) {
        args[0] = "EVALSHA"sv;
        args[1] = script->sha1;
    }
    Deadline deadline[RESPLOCK_MAX_SERVERS];
    bool pending[RESPLOCK_MAX_SERVERS];  // sent to in this pass
    for (std::size_t i = 0; i < count_; ++i) {
        pending[i] = to == nullptr || to[i];
        if (!pending[i]) continue;  // its status stays as it is
        Connection& c = *conns_[i];
        const std::uint32_t timeout = c.config().timeout_ms;
        deadline[i] =
            Deadline::after(c.port(), wait_ms != 0 && wait_ms < timeout ? wait_ms : timeout);
        status[i] = c.send(args, count, deadline[i]);
    }
    // Every send() that returned ok gets its receive(). After the EVALSHA pass, the servers
    // that answered NOSCRIPT (restarted, failed over, flushed) get a second pass with the text,
    // within what is left of their deadline.
    for (int pass = 0;; ++pass) {
        for (std::size_t i = 0; i < count_; ++i) {
            if (!pending[i]) continue;
            Connection& c = *conns_[i];
            resp::Reply reply;
            Status s =
                status[i] == Status::ok ? c.receive(reply, later(c, deadline[i])) : status[i];
            if (op == Op::release || op == Op::extend) {
                // The owner script's answer, as for the plain lock (a lost reply: the script
                // may or may not have run).
                s = detail::owner_answer(c, s, reply);
            } else if (s == Status::ok && op == Op::set) {
                s = detail::set_answer(reply);
            } else if (s == Status::ok) {  // query
                const resp::Value* e = reply.values;
                s = Status::protocol_error;
                if (reply.count == 3 && e[0].is(resp::Type::array) &&
                    (e[1].is(resp::Type::bulk_string) || e[1].is(resp::Type::nil_bulk)) &&
                    e[2].is(resp::Type::integer)) {
                    seen[i] = {e[1].is(resp::Type::nil_bulk) ? std::string_view() : e[1].text(),
                               e[2].integer};
                    s = Status::ok;
                }
            }
            status[i] = s;
        }
        if (script == nullptr || pass == 1) return;
        args[0] = "EVAL"sv;
        args[1] = script->text;
        bool again = false;
        for (std::size_t i = 0; i < count_; ++i) {
            pending[i] = (to == nullptr || to[i]) && status[i] == Status::no_script;
            if (pending[i])
                status[i] = conns_[i]->send(args, count, later(*conns_[i], deadline[i]));
            again = again || pending[i];
        }
        if (!again) return;
    }
}

void QuorumLock::remove(std::uint32_t wait_ms, Status (&status)[RESPLOCK_MAX_SERVERS],
                        const bool* to) noexcept {
    std::string_view args[5] = {{}, {}, "1"sv, key(), token()};
    round(Op::release, args, 5, wait_ms, status, nullptr, to);
}

Status QuorumLock::most_common_failure(
    const Status (&status)[RESPLOCK_MAX_SERVERS]) const noexcept {
    Status best = Status::timeout;  // not reached: callers have at least one failure
    std::size_t best_n = 0;
    for (std::size_t i = 0; i < count_; ++i) {
        if (!failure(status[i])) continue;
        std::size_t n = 0;
        for (std::size_t j = i; j < count_; ++j) {
            n += status[j] == status[i] ? 1U : 0U;
        }
        if (n > best_n) {
            best = status[i];
            best_n = n;
        }
    }
    return best;
}

Status QuorumLock::acquire(std::uint32_t ttl_ms) noexcept {
    return acquire(ttl_ms, AcquireOptions{});
}

Status QuorumLock::acquire(std::uint32_t ttl_ms, const AcquireOptions& options) noexcept {
    if (count_ == 0 || !detail::valid_ttl(ttl_ms) || held() || options.fence ||
        options.once_per_ms != 0 || options.wake || !detail::valid_owner(options.owner)) {
        return Status::invalid_argument;
    }
    const resplock_port_t& port = conns_[0]->port();
    char buf[max_token_len];
    const std::string_view fresh = detail::owned_token(port, options.owner, buf);
    if (fresh.empty()) return Status::random_failed;
    hold_.keep(fresh);
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    std::string_view args[6] = {"SET"sv, key(), token(), "NX"sv, "PX"sv, {ttl_text, ttl_len}};
    const std::uint32_t wait = wait_for(ttl_ms);
    Status status[RESPLOCK_MAX_SERVERS];
    const std::uint32_t started = port.now_ms(port.ctx);
    round(Op::set, args, 6, wait, status);
    std::size_t busy = 0;
    granted_ = 0;
    for (std::size_t i = 0; i < count_; ++i) {
        granted_ += status[i] == Status::ok ? 1U : 0U;
        busy += status[i] == Status::busy ? 1U : 0U;
    }
    hold_.validity().start(started, ttl_ms);
    if (granted_ >= quorum() && held()) return Status::ok;

    // Not held: take back every key this token may have set, on every server, so that a
    // minority of stray keys does not block others until their TTL ends.
    hold_.validity().end();
    const Status s = granted_ >= quorum()       ? Status::timeout
                     : count_ - busy < quorum() ? Status::busy
                                                : most_common_failure(status);
    remove(wait, status);
    hold_.drop();
    return s;
}

Status QuorumLock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    return try_acquire(ttl_ms, wait_ms, AcquireOptions{});
}

Status QuorumLock::try_acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                               const AcquireOptions& options) noexcept {
    if (count_ == 0) return Status::invalid_argument;
    struct Attempt {
        QuorumLock& lock;
        std::uint32_t ttl_ms;
        // cppcheck misses uses through the lambda's void* context:
        // cppcheck-suppress unusedStructMember
        const AcquireOptions& options;
    } attempt{*this, ttl_ms, options};
    static constexpr detail::Acquirer acquirer = {[](void* ctx) {
                                                      auto& a = *static_cast<Attempt*>(ctx);
                                                      return a.lock.acquire(a.ttl_ms, a.options);
                                                  },
                                                  nullptr, nullptr, nullptr};
    return detail::retry(*conns_[0], key(), wait_ms, acquirer, &attempt);
}

Status QuorumLock::extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    if (count_ == 0 || token().empty() || !detail::valid_ttl(ttl_ms))
        return Status::invalid_argument;
    std::uint32_t wait = wait_for(ttl_ms);
    if (wait_ms < wait) wait = wait_ms > 0 ? wait_ms : 1U;  // round() reads 0 as no bound
    if (!hold_.validity().bounds_renewal(conns_[0]->port(), wait)) return Status::expired;
    const resplock_port_t& port = conns_[0]->port();
    char ttl_text[10];
    const std::size_t ttl_len = resp::format_decimal(ttl_ms, ttl_text);
    std::string_view args[6] = {{}, {}, "1"sv, key(), token(), {ttl_text, ttl_len}};
    Status status[RESPLOCK_MAX_SERVERS];
    const std::uint32_t started = port.now_ms(port.ctx);
    round(Op::extend, args, 6, wait, status);
    std::size_t lost = 0;
    bool other = false;
    granted_ = 0;
    for (std::size_t i = 0; i < count_; ++i) {
        granted_ += status[i] == Status::ok ? 1U : 0U;
        lost += status[i] == Status::expired || status[i] == Status::not_owner ? 1U : 0U;
        other = other || status[i] == Status::not_owner;
    }
    if (granted_ >= quorum()) {
        hold_.validity().start(started, ttl_ms);
        if (held()) return Status::ok;
        hold_.validity().end();
        return Status::timeout;
    }
    if (count_ - lost < quorum()) {
        hold_.validity().end();
        return other ? Status::not_owner : Status::expired;
    }
    // Some servers did not confirm: the renewal may or may not have run there.
    hold_.validity().renewal_unconfirmed(started, ttl_ms);
    return most_common_failure(status);
}

Status QuorumLock::release() noexcept {
    if (count_ == 0 || token().empty()) return Status::invalid_argument;
    Status status[RESPLOCK_MAX_SERVERS];
    // The servers the next attempt sends to: all at first, then those that refused the release
    // before running it (an answer, or a release that may have run, is never asked again).
    bool to[RESPLOCK_MAX_SERVERS];
    for (bool& t : to)
        t = true;
    const resplock_port_t& port = conns_[0]->port();
    auto once = [&](Deadline until) {
        const std::uint32_t left = until.remaining(port);
        remove(left != 0 ? left : 1U, status, to);  // (0 would be each server's own timeout)
        std::size_t answered = 0;
        for (std::size_t i = 0; i < count_; ++i) {
            to[i] = detail::retryable(status[i]);
            answered += failure(status[i]) ? 0U : 1U;
        }
        return answered < quorum() ? most_common_failure(status) : Status::ok;
    };
    Status s = detail::retry_release(*conns_[0], key(), once);
    hold_.validity().end();
    if (s != Status::ok) return s;
    bool deleted = false;
    bool other = false;
    for (std::size_t i = 0; i < count_; ++i) {
        deleted = deleted || status[i] == Status::ok;
        other = other || status[i] == Status::not_owner;
    }
    hold_.drop();
    return deleted ? Status::ok : other ? Status::not_owner : Status::expired;
}

Status QuorumLock::query(LockInfo& info) noexcept {
    if (count_ == 0) return Status::invalid_argument;
    std::string_view args[4] = {{}, {}, "1"sv, key()};
    Status status[RESPLOCK_MAX_SERVERS];
    Seen seen[RESPLOCK_MAX_SERVERS];
    round(Op::query, args, 4, 0, status, seen);
    std::size_t answered = 0;
    for (std::size_t i = 0; i < count_; ++i) {
        answered += status[i] == Status::ok ? 1U : 0U;
    }
    if (answered < quorum()) return most_common_failure(status);
    info = {LockState::free, -2};
    for (std::size_t i = 0; i < count_; ++i) {
        if (status[i] != Status::ok || seen[i].value.data() == nullptr) continue;
        std::size_t same = 0;
        std::int64_t ttl = seen[i].ttl_ms;
        for (std::size_t j = 0; j < count_; ++j) {
            if (status[j] != Status::ok || seen[j].value.data() == nullptr ||
                seen[j].value != seen[i].value) {
                continue;
            }
            ++same;
            // -1 (no TTL) counts as the longest.
            if (ttl < 0 || (seen[j].ttl_ms >= 0 && seen[j].ttl_ms < ttl)) ttl = seen[j].ttl_ms;
        }
        if (same >= quorum()) {
            const bool mine = !token().empty() && seen[i].value == token();
            info = {mine ? LockState::held_by_me : LockState::held_by_other, ttl};
            break;
        }
    }
    return Status::ok;
}

Status QuorumLock::adopt(std::string_view token) noexcept {
    if (count_ == 0 || token.empty() || token.size() > max_token_len) {
        return Status::invalid_argument;
    }
    hold_.keep(token);
    return Status::ok;
}

void QuorumLock::close() noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
        conns_[i]->close();
    }
}

}  // namespace resplock
