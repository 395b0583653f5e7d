// What one key holds, as the library's lock kinds write it: inspect_key() reads KEY and its
// companions (BASE:fence, BASE:q, BASE:w; BASE = resplock::companion_prefix(KEY)) in one script
// on the server, which returns owner labels only: a token never leaves the server.
//   lock       a string holding a token (LABEL:hex or hex)
//   fair       the same, with a fair queue BASE:q or its entries BASE:w beside it
//   reentrant  a hash with the field "" (the TTL) and an owner id's hold count
//   semaphore  a sorted set of leases (token -> expiry on the server's clock)
// Anything else is `other`: not a lock, but held all the same (it blocks every acquisition until
// it expires or is deleted); an absent key is `none`.
#ifndef RESPLOCK_TOOL_INSPECT_HPP
#define RESPLOCK_TOOL_INSPECT_HPP

#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/status.hpp"

namespace resplock_cli {

enum class Kind { none, lock, fair, reentrant, semaphore, other };

// The name a kind has in the tool's output ("lock", "fair", ...; "none" and "other" too).
const char* kind_name(Kind kind);

struct KeyView {
    Kind kind = Kind::none;
    std::int64_t pttl = -2;                    // KEY's PTTL: -1 no expiry, -2 absent
    char owner[RESPLOCK_MAX_OWNER_LEN + 1]{};  // the holder's label (not for a semaphore)
    bool has_owner = false;                    // a holder whose token carries a label
    std::uint64_t fence = 0;                   // BASE:fence, when has_fence
    bool has_fence = false;
    std::uint32_t waiters = 0;  // entries in the fair queue BASE:q (fair lock or semaphore)
    // semaphore: live leases; reentrant: the holder's hold count; lock, fair, other: 1 when held
    std::uint32_t count = 0;

    // Whether KEY is held, the one answer of `status --json`, `status --verbose` and `list`, the
    // same as `status`'s and as an acquisition's (busy): any value holds KEY, a value no lock kind
    // writes (`other`) included; a semaphore or a reentrant lock while its count is not 0.
    bool held() const { return kind != Kind::none && count != 0; }
};

// Reads what `key` (1..RESPLOCK_MAX_KEY_LEN bytes) holds on the server of conn into view.
// Returns ok, invalid_argument (key too long), or the connection's failures.
resplock::Status inspect_key(resplock::Connection& conn, std::string_view key, KeyView& view);

// Whether `key` is a companion a lock kind writes beside its lock (BASE:fence, BASE:once,
// BASE:wake, BASE:q, BASE:w, BASE:f:TOKEN, where BASE carries a hash tag), given its Redis type
// (TYPE's answer): such keys are not locks of their own.
bool is_companion(std::string_view key, std::string_view type);

// One live lease of a semaphore, for visit.
using LeaseVisit = void (*)(void* ctx, std::string_view label, std::uint32_t remaining_ms);

// Visits the live leases of the semaphore at `key`, the first to end first, with their labels
// (cleaned: a byte no label may hold is '?'; empty for none). Bounded memory: read by pages.
resplock::Status visit_leases(resplock::Connection& conn, std::string_view key, LeaseVisit visit,
                              void* ctx);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_INSPECT_HPP
