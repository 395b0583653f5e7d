// Options of one acquisition for resplock::Lock: fencing numbers, once-per-interval locks,
// waking a waiter on release and an owner label in the token (Lock::acquire / try_acquire / release
// with an AcquireOptions, declared in lock.hpp and implemented in src/core/lock.cpp).
#ifndef RESPLOCK_LOCK_OPTIONS_HPP
#define RESPLOCK_LOCK_OPTIONS_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/lock.hpp"

namespace resplock {

// Extra behaviour of one acquisition, for Lock::acquire / try_acquire / release with options.
// Each uses a companion key in KEY's cluster slot, written KEY:fence, KEY:once, KEY:wake below:
// companion_prefix(KEY) + the suffix (resplock/core/companion.hpp), i.e. locks:{job}:fence
// for a key with a hash tag and {locks:job}:fence for one without.
struct AcquireOptions {
    // Also return a fencing number, made by the same script as the SET: the larger of KEY:fence
    // + 1 and the server's clock in microseconds (TIME), stored back in KEY:fence (no TTL). It
    // grows with every granted acquisition (never with a busy one), not by one but with the
    // clock: about 1.8e15 today, up to INT64_MAX from a counter above the clock. While the
    // server keeps KEY:fence it strictly increases. When KEY:fence is lost (a restart without
    // persistence, a failover to a replica that missed the last numbers) the next number comes
    // from the clock, and still exceeds every earlier one as long as the new server's clock is
    // behind the old one's by less than the time since the last number (the failover or restart
    // time, at least). A clock behind by more may give lower numbers: a resource that refuses a
    // lower number then refuses the new holder (liveness lost, not safety); an equal number
    // needs both a clock behind by that much and a lost counter. See docs/variants.md.
    bool fence = false;
    // Non-zero (up to max_ttl_ms): the lock can be taken at most once per this many ms by
    // anyone, even if released early (the marker KEY:once carries that PTTL, on the server's
    // clock). Every party of the key must set it: a plain acquire ignores the marker.
    std::uint32_t once_per_ms = 0;
    // While waiting, block on KEY:wake with BLPOP (bounded by the backoff pause) instead of
    // sleeping, so that a release made with wake hands the lock over at once. Falls back to
    // sleeping for the rest of the wait if the server refuses BLPOP (ACL, old server).
    bool wake = false;
    // An owner label at the front of the token: the token is `owner` + ':' + the random hex of
    // a plain token, so `GET KEY` on the server shows who holds the lock (e.g. a device name).
    // 1..max_owner_len bytes of A-Z a-z 0-9 . _ - (anything else: invalid_argument, nothing
    // sent); empty: no label (the default). The whole token is still what release, extend and
    // every owner check compare; the label adds no secret and is not checked on its own.
    std::string_view owner{};
};

// Smallest connection buffer for every request of the acquisition options (the acquire script's
// EVAL with KEY, KEY:once and KEY:fence at RESPLOCK_MAX_KEY_LEN bytes): larger than
// lock_buffer_min(). A smaller buffer works for shorter keys; a request that does not fit returns
// too_large without being sent.
std::size_t lock_options_buffer_min() noexcept;

}  // namespace resplock

#endif  // RESPLOCK_LOCK_OPTIONS_HPP
