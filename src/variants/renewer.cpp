#include "resplock/variants/renewer.hpp"

#include "resplock/core/observer.hpp"
#include "resplock/core/validity.hpp"

namespace resplock {

namespace {

// FNV-1a: tells a new hold (released, then acquired again by the same object) from the watched
// one without keeping a copy of the token.
std::uint32_t token_hash(std::string_view token) noexcept {
    std::uint32_t h = 2166136261U;
    for (const char c : token) {
        // Plain loops here and below: the <algorithm> forms cost flash on small targets.
        // cppcheck-suppress useStlAlgorithm
        h = (h ^ static_cast<unsigned char>(c)) * 16777619U;
    }
    return h;
}

// Whether a renewal can outlast the margin: it grants ttl - drift of validity at most, which
// must exceed the margin by 2 ms, since the next renewal is due 1 ms later at the soonest and must
// still find some.
bool renewable(std::uint32_t ttl_ms, std::uint32_t margin_ms) noexcept {
    return margin_ms < ttl_ms && ttl_ms - margin_ms >= detail::drift_ms(ttl_ms) + 2;
}

// When the next renewal (or retry) is due, in ms from the last one: `every_ms`, or half of the
// validity left beyond the margin (slack_ms), whichever comes first, so that it lands while
// validity lasts; at least 1 ms, so that a tick renews a lock once.
std::uint32_t next_in(std::uint32_t every_ms, std::uint32_t slack_ms) noexcept {
    const std::uint32_t in = slack_ms / 2 < every_ms ? slack_ms / 2 : every_ms;
    return in > 0 ? in : 1U;
}

bool due(std::uint32_t at_ms, std::uint32_t now_ms) noexcept {
    return static_cast<std::int32_t>(at_ms - now_ms) <= 0;
}

}  // namespace

Status Renewer::add(const LockRef& lock, std::uint32_t ttl_ms, LostFn on_lost, void* user,
                    std::uint32_t margin_ms) noexcept {
    const std::uint32_t left = lock.remaining_ms();
    const std::string_view token = lock.token();
    if (!detail::valid_ttl(ttl_ms) || !renewable(ttl_ms, margin_ms) || left == 0 || token.empty()) {
        return Status::invalid_argument;
    }
    Slot* free = nullptr;
    for (Slot& s : slots_) {
        if (s.lock.object() == lock.object()) return Status::invalid_argument;
        if (s.lock.object() == nullptr && free == nullptr) free = &s;
    }
    // Every slot in use: a compile-time limit (RESPLOCK_MAX_RENEWED) is reached.
    if (free == nullptr) return Status::too_large;
    // A free slot is Slot{}: set what differs (field by field, which costs less flash than
    // assigning a whole Slot).
    free->lock = lock;
    free->on_lost = on_lost;
    free->user = user;
    free->ttl_ms = ttl_ms;
    free->margin_ms = margin_ms;
    free->left_ms = left;
    free->token_hash = token_hash(token);
    return Status::ok;
}

void Renewer::unwatch(const void* lock) noexcept {
    for (Slot& s : slots_) {
        // cppcheck-suppress useStlAlgorithm
        if (s.lock.object() != nullptr && s.lock.object() == lock) s = Slot{};
    }
}

bool Renewer::watches(const void* lock) const noexcept {
    for (const Slot& s : slots_) {
        // cppcheck-suppress useStlAlgorithm
        if (s.lock.object() != nullptr && s.lock.object() == lock) return true;
    }
    return false;
}

std::size_t Renewer::watching() const noexcept {
    std::size_t n = 0;
    for (const Slot& s : slots_) {
        // cppcheck-suppress useStlAlgorithm
        if (s.lock.object() != nullptr) ++n;
    }
    return n;
}

void Renewer::report(const Slot& slot, int kind, Status status, std::uint32_t ms) const noexcept {
    if (observer_ == nullptr) return;
    const std::string_view key = slot.lock.key();
    observer_->report({static_cast<resplock_event_kind_t>(kind),
                       static_cast<resplock_status_t>(status), slot.ttl_ms, ms,
                       key.empty() ? nullptr : key.data(), key.size()});
}

void Renewer::lose(Slot& slot, Status why) noexcept {
    report(slot, RESPLOCK_EVENT_loss, why, 0);
    // Free the slot first: the callback may unwatch, release or watch again.
    const Slot was = slot;
    slot = Slot{};
    if (was.on_lost != nullptr) was.on_lost(was.user, was.lock.object(), why);
}

std::uint32_t Renewer::slack(const Slot& s) noexcept {
    const std::uint32_t left = s.lock.remaining_ms();
    return left > s.margin_ms ? left - s.margin_ms : 0U;
}

void Renewer::check(std::uint32_t now_ms) noexcept {
    for (Slot& s : slots_) {
        if (s.lock.object() == nullptr) continue;
        const std::string_view token = s.lock.token();
        if (token.empty() || token_hash(token) != s.token_hash) {
            s = Slot{};  // released by its user: not ours to renew any more
            continue;
        }
        if (slack(s) == 0) {
            lose(s, Status::expired);
            continue;
        }
        if (!s.scheduled) {
            // First renewal: counted from watch(), with the validity the lock had then (it may
            // have been watched late, or acquired with a shorter TTL).
            const std::uint32_t left = s.lock.remaining_ms();
            const std::uint32_t since_watch = s.left_ms > left ? s.left_ms - left : 0U;
            const std::uint32_t slack_then = s.left_ms > s.margin_ms ? s.left_ms - s.margin_ms : 0U;
            s.due_ms = now_ms - since_watch + next_in(s.ttl_ms / 3, slack_then);
            s.scheduled = true;
        }
    }
}

Renewer::Slot* Renewer::most_urgent_due(std::uint32_t now_ms) noexcept {
    Slot* best = nullptr;
    std::uint32_t best_slack = 0;
    for (Slot& s : slots_) {
        if (s.lock.object() == nullptr || !s.scheduled || !due(s.due_ms, now_ms)) continue;
        const std::uint32_t sl = slack(s);
        if (best == nullptr || sl < best_slack) {
            best = &s;
            best_slack = sl;
        }
    }
    return best;
}

std::uint32_t Renewer::wait_for(const Slot& slot) const noexcept {
    // Its own renewal is of no use past its margin; and every other lock keeps at least half of
    // what it has before its margin, for its own renewal after this one.
    std::uint32_t wait = slack(slot);
    for (const Slot& s : slots_) {
        if (s.lock.object() == nullptr || &s == &slot) continue;
        const std::uint32_t half = slack(s) / 2;
        if (half < wait) wait = half;
    }
    return wait > 0 ? wait : 1U;
}

void Renewer::renew(Slot& s, std::uint32_t now_ms, std::uint32_t wait_ms) noexcept {
    const Status st = s.lock.extend(s.ttl_ms, wait_ms);
    report(s, RESPLOCK_EVENT_renewal, st, s.lock.remaining_ms());
    if (st == Status::ok) {
        // The slack just after this renewal, round trip included: with a large margin it is less
        // than a third of the TTL.
        s.due_ms = now_ms + next_in(s.ttl_ms / 3, slack(s));
        return;
    }
    if (st == Status::not_owner || st == Status::expired) return lose(s, st);
    // Not a "no" from the server: retry while validity lasts, well before the margin is reached.
    const std::uint32_t left = slack(s);
    if (left == 0) return lose(s, Status::expired);
    s.due_ms = now_ms + next_in(s.ttl_ms / 10, left);
}

std::uint32_t Renewer::tick(std::uint32_t now_ms) noexcept {
    check(now_ms);
    // Each due lock once (a renewal schedules it after now_ms), most urgent first; a renewal
    // leaves the others time for theirs, and losses are checked after each.
    for (Slot* s = most_urgent_due(now_ms); s != nullptr; s = most_urgent_due(now_ms)) {
        renew(*s, now_ms, wait_for(*s));
        check(now_ms);
    }
    // The next renewal, or the next loss to report, whichever comes first. A lock watched by a
    // lost callback after check() had passed its slot is not scheduled yet: at once.
    bool any = false;
    std::uint32_t next = max_ttl_ms;
    for (const Slot& s : slots_) {
        if (s.lock.object() == nullptr) continue;
        any = true;
        const std::uint32_t wait = !s.scheduled || due(s.due_ms, now_ms) ? 0U : s.due_ms - now_ms;
        const std::uint32_t loss = slack(s);
        if (wait < next) next = wait;
        if (loss < next) next = loss;
    }
    return any ? next : idle_ms;
}

}  // namespace resplock
