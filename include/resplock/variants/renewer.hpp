// The renewal driver (watchdog): keeps up to RESPLOCK_MAX_RENEWED locks alive from the caller's
// own loop, with no thread and no heap. The caller calls tick() with the port clock and calls it
// again after the number of milliseconds it returns (or sooner); each tick extends the locks that
// are due and reports the ones that are lost.
//
// Schedule: a watched lock is extended with its watch TTL min(ttl/3, (remaining - margin)/2) ms
// after the tick that sent its last successful renewal, with remaining read once that renewal's
// reply is in (the first time: after watch(), with remaining read at watch()); at least 1 ms. So
// a lock is renewed every third of the TTL, or sooner when its margin would be reached first (a
// margin above about two thirds of the TTL, a lock watched late). A failed renewal that does not
// prove the lock gone (timeout, unknown_outcome, connect_failed, a server error...) is retried
// after min(ttl/10, (remaining - margin)/2) ms, at least 1 ms, while validity lasts.
//
// Loss margin: the time the caller needs to stop the protected work once told (e.g. SIGTERM, a
// grace period, SIGKILL). A lock is reported lost as soon as its validity left falls to its
// margin, so the stop can end before the validity does.
//
// Lost: on_lost(user, lock, why) is called, and the lock is no longer watched, when
//   - the server says the key holds another token (why = not_owner) or is gone (expired), or
//   - the lock's local validity (remaining_ms()) falls to its loss margin before a renewal
//     succeeded (expired), even though the server may not have deleted the key yet: once it
//     runs out nothing guarantees that no one else holds it.
// Work protected by the lock must stop when it is reported lost. A renewal cannot help a process
// that pauses longer than the validity left; only a check at the protected resource (a fencing
// token) can.
//
// Several locks: renewals due together are sent most urgent first (least validity left beyond
// the margin), and each waits for its reply no longer than its own validity left beyond its
// margin, nor half of what any other watched lock has left beyond its margin; losses are checked
// again after every renewal. So one slow or dead server delays neither the renewal nor the loss
// report of a lock on another server past that lock's margin.
#ifndef RESPLOCK_RENEWER_HPP
#define RESPLOCK_RENEWER_HPP

#include <cstddef>
#include <cstdint>

#include "resplock/core/config.h"
#include "resplock/core/status.hpp"
#include "resplock/variants/lock_ref.hpp"

namespace resplock {

class Observer;

class Renewer {
  public:
    // Called from tick() when a watched lock is lost: `lock` is the object given to watch(),
    // `why` is not_owner or expired. The slot is already free, so the callback may unwatch(),
    // release() or watch() again; it must not call tick().
    using LostFn = void (*)(void* user, void* lock, Status why);

    // What tick() returns when nothing is watched.
    static constexpr std::uint32_t idle_ms = 1000;

    Renewer() noexcept = default;
    ~Renewer() = default;
    Renewer(const Renewer&) = delete;
    Renewer& operator=(const Renewer&) = delete;

    // Starts renewing `lock` (which must outlive the watch) with `ttl_ms` on the schedule above
    // (every ttl_ms/3, or sooner for a large margin), and reports it lost once its validity left
    // falls to loss_margin_ms. A renewal grants at most ttl_ms - drift of validity (drift =
    // ttl_ms/100 + 2, as remaining_ms() counts it), which must exceed the margin by 2 ms at least
    // for the next renewal, 1 ms later at the soonest, to come before the margin: so
    // loss_margin_ms may be at most ttl_ms - ttl_ms/100 - 4, and ttl_ms at least 4. L is any lock
    // with Status extend(std::uint32_t ttl, std::uint32_t wait_ms), std::uint32_t remaining_ms()
    // const and std::string_view token() const (resplock::Lock and the other lock kinds), which
    // the Renewer reaches through a LockRef (lock_ref.hpp). Returns ok, invalid_argument (the
    // lock is not held, ttl_ms outside 4..max_ttl_ms, loss_margin_ms above
    // ttl_ms - ttl_ms/100 - 4, or the lock is already watched), or too_large
    // (RESPLOCK_MAX_RENEWED locks are watched already).
    template <class L>
    Status watch(L& lock, std::uint32_t ttl_ms, LostFn on_lost = nullptr, void* user = nullptr,
                 std::uint32_t loss_margin_ms = 0) noexcept {
        return add(LockRef::to(lock), ttl_ms, on_lost, user, loss_margin_ms);
    }

    // Reports a renewal event after each renewal sent and a loss event for each lock reported lost
    // (before on_lost is called), with the lock's key() when its type has one, to `observer`
    // (see "resplock/core/observer.hpp"), which must outlive the Renewer; null: none (the
    // default).
    void set_observer(const Observer* observer) noexcept { observer_ = observer; }

    // Stops renewing `lock`, without any request; nothing happens if it is not watched.
    void unwatch(const void* lock) noexcept;
    // Whether `lock` is watched (it is no longer once released or reported lost).
    bool watches(const void* lock) const noexcept;
    // How many locks are watched.
    std::size_t watching() const noexcept;

    // Renews the locks that are due and reports the lost ones; now_ms is the port clock
    // (port.now_ms) of the locks' connections. A lock whose token() is empty (released by its
    // user) or has changed (released and acquired again) is dropped silently, never renewed.
    // Blocks for the renewals it sends, each bounded by its connection's timeout and as above.
    // Returns the ms after now_ms at which tick() should be called next: the earliest renewal or
    // retry due, or the earliest moment a lock's validity falls to its margin (0: at once; idle_ms
    // when nothing is watched).
    std::uint32_t tick(std::uint32_t now_ms) noexcept;

  private:
    struct Slot {
        LockRef lock;  // refers to no lock: free
        LostFn on_lost = nullptr;
        void* user = nullptr;
        std::uint32_t ttl_ms = 0;
        std::uint32_t margin_ms = 0;  // reported lost once the validity left falls to this
        std::uint32_t due_ms = 0;     // port time of the next renewal, once scheduled
        std::uint32_t left_ms = 0;    // remaining_ms() at watch(), until the first tick schedules
        std::uint32_t token_hash = 0;
        bool scheduled = false;
    };

    Status add(const LockRef& lock, std::uint32_t ttl_ms, LostFn on_lost, void* user,
               std::uint32_t margin_ms) noexcept;
    // Drops released locks, reports lost ones and schedules new ones.
    void check(std::uint32_t now_ms) noexcept;
    // The watched slot most urgently due at now_ms, or null.
    Slot* most_urgent_due(std::uint32_t now_ms) noexcept;
    // How long the renewal of `slot` may wait for its reply (see tick()).
    std::uint32_t wait_for(const Slot& slot) const noexcept;
    void renew(Slot& slot, std::uint32_t now_ms, std::uint32_t wait_ms) noexcept;
    static std::uint32_t slack(const Slot& slot) noexcept;
    void lose(Slot& slot, Status why) noexcept;
    void report(const Slot& slot, int kind, Status status, std::uint32_t ms) const noexcept;

    Slot slots_[RESPLOCK_MAX_RENEWED];
    const Observer* observer_ = nullptr;
};

}  // namespace resplock

#endif  // RESPLOCK_RENEWER_HPP
