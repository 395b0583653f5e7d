// Bounded proof of the time arithmetic: Deadline (resplock/core/connection.hpp), Validity
// (resplock/core/validity.hpp), max_span_ms and the drift rule ttl/100 + 2, against 64-bit
// reference arithmetic on the true (unwrapped) time, over a port whose clock the test sets.
// The clock windows: every value within 300 of 0 (so also just below 2^32: the wrap) and within
// 300 of 2^31: 1,202 values, W below.
//   deadline_*: Deadline::after(now, ms) for every start in W and every ms in 0 1 2 3 1000,
//     max_span_ms - 2 .. max_span_ms + 2, 2^31 + 1, 2^32 - 2, 2^32 - 1, read (remaining(),
//     overdue()) at every clock value in W and at every elapsed time within 300 of the span and of
//     span + 2^31. remaining() and overdue() must be exact while the clock has moved on by at most
//     span + 2^31 ms (overdue: span + 2^31 - 1), the wrap-safe window; beyond it a 32-bit deadline
//     cannot be told from one in the past (max_span_ms, connection.hpp), so nothing is asserted.
//   hundredth_is_x_over_100: detail::hundredth (the division of the drift rule on ARMv6-M)
//     against x / 100, for the inputs its test lists.
//   validity_*: Validity::start(from, ttl) for every from in W and every ttl in 0..4, 99..103,
//     199..204, 1000, max_ttl_ms - 2 .. max_ttl_ms + 2, 2^32 - 1, read at every clock value in W
//     and every elapsed time within 300 of 0, of the usable span, of 2^31 and below 2^32:
//     remaining() exact (never more than the reference), bounds_renewal() exact; a validity read
//     as run out stays run out on every later read, however far the clock goes (up to 2^33 ms);
//     renewal_unconfirmed() ends it at the earlier of the two ends.
// remaining() of a validity is promised exact only while less than 2^32 ms have passed since
// start() (or since a read that found it run out): see the notes in docs/testing.md.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.hpp"
#include "proof.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/port.h"
#include "resplock/core/validity.hpp"

namespace {

using resplock::Deadline;
using resplock::max_span_ms;
using resplock::max_ttl_ms;
using resplock::Validity;

constexpr std::uint64_t two_31 = std::uint64_t{1} << 31;
constexpr std::uint64_t two_32 = std::uint64_t{1} << 32;

static_assert(max_span_ms == two_31 - 1);
static_assert(max_ttl_ms == max_span_ms);

// A port with only a clock: now_ms returns the value the test set.
struct Clock {
    std::uint32_t now = 0;
    resplock_port_t port{};

    Clock() {
        port.ctx = this;
        port.now_ms = [](void* ctx) { return static_cast<Clock*>(ctx)->now; };
    }
    // The port's reading at true time `t` (ms, unwrapped).
    void at(std::uint64_t t) { now = static_cast<std::uint32_t>(t); }
};

// Every clock value within 300 of 0 (both sides of the wrap) and of 2^31, as 32-bit readings.
std::vector<std::uint32_t> window() {
    std::vector<std::uint32_t> w;
    for (std::uint64_t v = two_32 - 300; v < two_32; ++v)
        w.push_back(static_cast<std::uint32_t>(v));
    for (std::uint64_t v = 0; v <= 300; ++v)
        w.push_back(static_cast<std::uint32_t>(v));
    for (std::uint64_t v = two_31 - 300; v <= two_31 + 300; ++v)
        w.push_back(static_cast<std::uint32_t>(v));
    return w;
}

// Appends every value within 300 of `centre`, in [0, limit).
void around(std::vector<std::uint64_t>& out, std::uint64_t centre, std::uint64_t limit) {
    const std::uint64_t first = centre < 300 ? 0 : centre - 300;
    for (std::uint64_t v = first; v <= centre + 300 && v < limit; ++v)
        out.push_back(v);
}

// ---- Deadline ------------------------------------------------------------------------------

const std::uint64_t deadline_spans[] = {0,
                                        1,
                                        2,
                                        3,
                                        1000,
                                        max_span_ms - 2,
                                        max_span_ms - 1,
                                        max_span_ms,
                                        std::uint64_t{max_span_ms} + 1,
                                        std::uint64_t{max_span_ms} + 2,
                                        two_31 + 1,
                                        two_32 - 2,
                                        two_32 - 1};

struct DeadlineRun {
    unsigned long long cases = 0;
    unsigned long long outside = 0;  // readings past the wrap-safe window (nothing asserted)
    Clock clock;

    // A deadline `ms` after start, read after `elapsed` true ms. Returns false on a mismatch.
    // Plain comparisons in the loop; CHECK_EQ only to report a mismatch.
    bool read(std::uint32_t start, std::uint64_t ms, std::uint64_t elapsed) {
        clock.now = start;
        const Deadline d = Deadline::after(clock.port, static_cast<std::uint32_t>(ms));
        const std::uint64_t span = ms < max_span_ms ? ms : max_span_ms;
        const auto at = static_cast<std::uint32_t>(start + span);
        const std::uint32_t at_now = Deadline::after(start, static_cast<std::uint32_t>(ms)).at_ms;
        clock.at(start + elapsed);
        const bool in_window = elapsed <= span + two_31;
        const bool overdue_in_window = elapsed + 1 <= span + two_31;
        const std::uint64_t left = elapsed < span ? span - elapsed : 0;
        const std::uint64_t late = elapsed > span ? elapsed - span : 0;
        const std::uint32_t remaining = d.remaining(clock.port);
        const std::uint32_t overdue = d.overdue(clock.port);
        ++cases;
        if (!in_window) ++outside;
        if (d.at_ms == at && at_now == at && (!in_window || remaining == left) &&
            (!overdue_in_window || overdue == late)) {
            return true;
        }
        CHECK_EQ(d.at_ms, at);
        CHECK_EQ(at_now, at);
        if (in_window) CHECK_EQ(remaining, left);
        if (overdue_in_window) CHECK_EQ(overdue, late);
        std::printf("      start %u, ms %llu, elapsed %llu\n", start,
                    static_cast<unsigned long long>(ms), static_cast<unsigned long long>(elapsed));
        return false;
    }
};

TEST(deadline_is_exact_in_its_wrap_safe_window) {
    const proof::Timer timer;
    DeadlineRun run;
    const std::vector<std::uint32_t> w = window();
    for (const std::uint64_t ms : deadline_spans) {
        const std::uint64_t span = ms < max_span_ms ? ms : max_span_ms;
        std::vector<std::uint64_t> elapsed;
        around(elapsed, span, two_32);
        around(elapsed, span + two_31, two_32);
        for (const std::uint32_t start : w) {
            // Read at every clock value of the window: the least true time giving that reading.
            for (const std::uint32_t now : w) {
                if (!run.read(start, ms, static_cast<std::uint32_t>(now - start))) return;
            }
            for (const std::uint64_t e : elapsed) {
                if (!run.read(start, ms, e)) return;
            }
        }
    }
    char bound[160];
    std::snprintf(bound, sizeof bound,
                  "1,202 starts x 13 spans x (1,202 readings + elapsed within 300 of span and "
                  "span + 2^31); %llu readings past the window not asserted",
                  run.outside);
    proof::report("time.deadline", bound, run.cases, timer);
}

// ---- Validity ------------------------------------------------------------------------------

std::vector<std::uint64_t> ttls() {
    std::vector<std::uint64_t> t;
    for (std::uint64_t v = 0; v <= 4; ++v)
        t.push_back(v);
    for (std::uint64_t v = 99; v <= 103; ++v)
        t.push_back(v);
    for (std::uint64_t v = 199; v <= 204; ++v)
        t.push_back(v);
    t.push_back(1000);
    for (std::uint64_t v = max_ttl_ms - 2; v <= std::uint64_t{max_ttl_ms} + 2; ++v)
        t.push_back(v);
    t.push_back(two_32 - 1);
    return t;
}

// The reference: a TTL of ttl ms granted by a request sent at true time 0 leaves ttl - ttl/100 -
// 2 ms of use (none when that is not positive); `usable` ms, minus the time since.
std::uint64_t usable(std::uint64_t ttl) {
    const std::uint64_t drift = ttl / 100 + 2;
    return ttl > drift ? ttl - drift : 0;
}

TEST(drift_rule_is_ttl_over_100_plus_2) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    std::vector<std::uint64_t> all;
    around(all, 0, two_32);
    for (std::uint64_t centre = 100; centre <= 1000; centre += 100)
        around(all, centre, two_32);
    around(all, max_ttl_ms, two_32);
    around(all, two_32 - 1, two_32);
    for (const std::uint64_t ttl : all) {
        const auto t = static_cast<std::uint32_t>(ttl);
        ++cases;
        if (!CHECK_EQ(resplock::detail::drift_ms(t), ttl / 100 + 2) ||
            !CHECK_EQ(resplock::detail::valid_ttl(t), ttl >= 1 && ttl <= two_31 - 1)) {
            std::printf("      ttl %u\n", t);
            return;
        }
    }
    proof::report("time.drift",
                  "every ttl within 300 of 0, 100..1000 by 100, 2^31 - 1 and 2^32 - 1", cases,
                  timer);
}

// detail::hundredth, the division drift_ms makes on ARMv6-M, against x / 100: every x below
// 2^24, and for every x from 2^24 up, the first and last value of every block of 100 (x = 100 k
// and 100 k + 99, k up to (2^32 - 1) / 100) whose first value lies within 300 of a multiple of
// 2^16, and every x within 300 of 2^32 - 1 and of 2^31.
TEST(hundredth_is_x_over_100) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    auto check = [&](std::uint64_t x) {
        ++cases;
        const auto v = static_cast<std::uint32_t>(x);
        if (resplock::detail::hundredth(v) == v / 100) return true;
        CHECK_EQ(resplock::detail::hundredth(v), v / 100);
        std::printf("      x %u\n", v);
        return false;
    };
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << 24); ++x)
        if (!check(x)) return;
    for (std::uint64_t base = std::uint64_t{1} << 24; base < two_32; base += 1U << 16) {
        for (std::uint64_t k = (base - 300) / 100; k * 100 <= base + 300 && k * 100 < two_32; ++k)
            if (!check(k * 100) || (k * 100 + 99 < two_32 && !check(k * 100 + 99))) return;
    }
    std::vector<std::uint64_t> ends;
    around(ends, two_32 - 1, two_32);
    around(ends, two_31, two_32);
    for (const std::uint64_t x : ends)
        if (!check(x)) return;
    proof::report("time.hundredth",
                  "every x below 2^24; both ends of each block of 100 within 300 of a multiple of "
                  "2^16; within 300 of 2^31 and 2^32 - 1",
                  cases, timer);
}

struct ValidityRun {
    unsigned long long cases = 0;
    Clock clock;

    // A validity granted at `from` for `ttl` (`granted`: start() done), read once after
    // `elapsed` (< 2^32) true ms. Plain comparisons in the loop; CHECK_EQ only to report.
    bool read(const Validity& granted, std::uint32_t from, std::uint64_t ttl,
              std::uint64_t elapsed) {
        Validity v = granted;  // a copy: each reading of a fresh validity
        const std::uint64_t use = usable(ttl);
        const std::uint64_t left = use > elapsed ? use - elapsed : 0;
        clock.at(from + elapsed);
        ++cases;
        // bounds_renewal first (it reads the clock too): it lowers wait_ms to what is left.
        const std::uint64_t waits[] = {0, left, left + 1, two_32 - 1};
        bool good = v.known() == (use > 0);
        for (const std::uint64_t wait : waits) {
            auto w = static_cast<std::uint32_t>(wait);
            const bool goes = v.bounds_renewal(clock.port, w);
            good = good && goes == (use == 0 || left > 0) &&
                   w == static_cast<std::uint32_t>(use == 0 || wait < left ? wait : left);
        }
        const std::uint32_t remaining = v.remaining(clock.port);
        if (good && remaining == left) return true;
        CHECK_EQ(v.known(), use > 0);
        for (const std::uint64_t wait : waits) {
            auto w = static_cast<std::uint32_t>(wait);
            CHECK_EQ(v.bounds_renewal(clock.port, w), use == 0 || left > 0);
            CHECK_EQ(w, static_cast<std::uint32_t>(use == 0 || wait < left ? wait : left));
        }
        CHECK_EQ(remaining, left);
        std::printf("      from %u, ttl %llu, elapsed %llu\n", from,
                    static_cast<unsigned long long>(ttl), static_cast<unsigned long long>(elapsed));
        return false;
    }
};

TEST(validity_is_never_overestimated) {
    const proof::Timer timer;
    ValidityRun run;
    const std::vector<std::uint32_t> w = window();
    for (const std::uint64_t ttl : ttls()) {
        std::vector<std::uint64_t> elapsed;
        around(elapsed, 0, two_32);
        around(elapsed, usable(ttl), two_32);
        around(elapsed, two_31, two_32);
        around(elapsed, two_32 - 1, two_32);
        for (const std::uint32_t from : w) {
            Validity granted;
            granted.start(from, static_cast<std::uint32_t>(ttl));
            for (const std::uint32_t now : w) {
                if (!run.read(granted, from, ttl, static_cast<std::uint32_t>(now - from))) return;
            }
            for (const std::uint64_t e : elapsed) {
                if (!run.read(granted, from, ttl, e)) return;
            }
        }
    }
    proof::report("time.validity",
                  "1,202 starts x 24 TTLs x (1,202 readings + elapsed within 300 of 0, the usable "
                  "span, 2^31 and 2^32), each read once",
                  run.cases, timer);
}

// The starts the sequences below use: the edges of W.
const std::uint32_t edge_starts[] = {0,
                                     1,
                                     300,
                                     static_cast<std::uint32_t>(two_31 - 300),
                                     static_cast<std::uint32_t>(two_31 - 1),
                                     static_cast<std::uint32_t>(two_31),
                                     static_cast<std::uint32_t>(two_31 + 1),
                                     static_cast<std::uint32_t>(two_31 + 300),
                                     static_cast<std::uint32_t>(two_32 - 300),
                                     static_cast<std::uint32_t>(two_32 - 1)};

TEST(a_validity_read_as_run_out_stays_run_out) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    Clock clock;
    for (const std::uint64_t ttl : ttls()) {
        const std::uint64_t use = usable(ttl);
        // First readings around the end of the validity; later ones up to 2^33 ms on.
        std::vector<std::uint64_t> first;
        around(first, 0, two_32);
        around(first, use, two_32);
        std::vector<std::uint64_t> later_by = {
            0,          1,      2,          two_31 - 1,   two_31,    two_31 + 1,
            two_32 - 1, two_32, two_32 + 1, two_32 + use, 2 * two_32};
        for (const std::uint32_t from : edge_starts) {
            for (const std::uint64_t e1 : first) {
                for (const std::uint64_t by : later_by) {
                    Validity v;
                    v.start(from, static_cast<std::uint32_t>(ttl));
                    clock.at(from + e1);
                    const std::uint32_t left1 = v.remaining(clock.port);
                    const std::uint64_t e2 = e1 + by;
                    clock.at(from + e2);
                    const std::uint32_t left2 = v.remaining(clock.port);
                    ++cases;
                    bool good = CHECK_EQ(left1, use > e1 ? use - e1 : 0);
                    if (good && left1 == 0) {
                        good = CHECK_EQ(left2, 0U);  // run out: for good
                    } else if (good && e2 < two_32) {
                        good = CHECK_EQ(left2, use > e2 ? use - e2 : 0);
                    }
                    if (!good) {
                        std::printf("      from %u, ttl %llu, read after %llu then %llu ms\n", from,
                                    static_cast<unsigned long long>(ttl),
                                    static_cast<unsigned long long>(e1),
                                    static_cast<unsigned long long>(e2));
                        return;
                    }
                }
            }
        }
    }
    proof::report("time.validity_latch",
                  "10 starts x 24 TTLs x first read within 300 of 0 and of the end x 11 later "
                  "reads (0 .. 2^33 ms on)",
                  cases, timer);
}

TEST(an_unconfirmed_renewal_ends_at_the_earlier_end) {
    const proof::Timer timer;
    unsigned long long cases = 0;
    Clock clock;
    const std::vector<std::uint64_t> all = ttls();
    for (const std::uint64_t ttl1 : all) {
        const std::uint64_t use1 = usable(ttl1);
        // When the renewal is sent: around the start and the end of the first validity, and 2^31.
        std::vector<std::uint64_t> sent;
        for (std::uint64_t r = 0; r <= 3; ++r)
            sent.push_back(r);
        for (std::uint64_t r = use1 < 3 ? 0 : use1 - 3; r <= use1 + 3; ++r)
            sent.push_back(r);
        sent.push_back(two_31);
        for (const std::uint64_t ttl2 : all) {
            const std::uint64_t use2 = usable(ttl2);
            for (const std::uint32_t from : edge_starts) {
                for (const std::uint64_t r : sent) {
                    // The reference: the earlier of the two ends, measured from `from`; nothing
                    // if the first had ended when the renewal was sent, or the second gives none.
                    const std::uint64_t end =
                        r >= use1 || use2 == 0 ? 0 : (use1 < r + use2 ? use1 : r + use2);
                    std::vector<std::uint64_t> reads;
                    for (std::uint64_t d = 0; d <= 3; ++d)
                        reads.push_back(r + d);
                    for (std::uint64_t e = end < 3 ? 0 : end - 3; e <= end + 3; ++e) {
                        if (e >= r) reads.push_back(e);
                    }
                    for (const std::uint64_t e : reads) {
                        if (e - r >= two_32) continue;
                        Validity v;
                        v.start(from, static_cast<std::uint32_t>(ttl1));
                        v.renewal_unconfirmed(static_cast<std::uint32_t>(from + r),
                                              static_cast<std::uint32_t>(ttl2));
                        clock.at(from + e);
                        ++cases;
                        if (!CHECK_EQ(v.remaining(clock.port), end > e ? end - e : 0)) {
                            std::printf(
                                "      from %u, ttl %llu, renewal after %llu ms with ttl "
                                "%llu, read after %llu ms\n",
                                from, static_cast<unsigned long long>(ttl1),
                                static_cast<unsigned long long>(r),
                                static_cast<unsigned long long>(ttl2),
                                static_cast<unsigned long long>(e));
                            return;
                        }
                    }
                }
            }
        }
    }
    proof::report("time.renewal_unconfirmed",
                  "24 x 24 TTLs x 10 starts x renewal sent around the start, the end and 2^31, "
                  "read around the send and the expected end",
                  cases, timer);
}

}  // namespace
