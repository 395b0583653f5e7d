// The trial's checker over histories written by hand: each kind of violation it claims to find is
// found, at the phase where it began, and a clean history yields none.
#include "check.hpp"
#include "checker.hpp"

namespace {

using trial::Event;
using trial::History;
using trial::Mode;
using trial::Phase;
using trial::Verdict;

constexpr std::int64_t ms = 1000;

// A history built record by record; times in ms.
struct Builder {
    History h;
    Builder& acquired(std::int64_t at, const char* s, std::uint64_t fence, std::int64_t begin,
                      std::int64_t end, std::uint32_t ttl) {
        Event e;
        e.at_us = at * ms;
        e.kind = 'A';
        e.session = s;
        e.fence = fence;
        e.begin_us = begin * ms;
        e.end_us = end * ms;
        e.ttl_ms = ttl;
        h.push_back(e);
        return *this;
    }
    Builder& extended(std::int64_t at, const char* s, std::int64_t end, std::uint32_t ttl) {
        Event e;
        e.at_us = at * ms;
        e.kind = 'E';
        e.session = s;
        e.begin_us = (end - 1) * ms;
        e.end_us = end * ms;
        e.ttl_ms = ttl;
        h.push_back(e);
        return *this;
    }
    Builder& wrote(std::int64_t at, const char* s, std::uint64_t fence, bool refused = false) {
        Event e;
        e.at_us = at * ms;
        e.kind = 'W';
        e.session = s;
        e.fence = fence;
        e.refused = refused;
        e.line = "W " + e.session + " " + std::to_string(fence);
        h.push_back(e);
        return *this;
    }
};

// One phase over the whole history: fault at 0, healed at 100 ms, ends at 10 s.
std::vector<Phase> one_phase() {
    Phase p;
    p.fault = "kill-master";
    p.start_us = 0;
    p.heal_us = 100 * ms;
    p.end_us = 10000 * ms;
    p.bound_us = 1000 * ms;
    return {p};
}

int total(const Verdict& v, int trial::PhaseResult::*count) {
    int n = 0;
    for (const auto& r : v.phases)
        n += r.*count;
    return n;
}

TEST(a_clean_history_has_no_violation) {
    Builder b;
    b.acquired(200, "a", 1, 190, 200, 1000).wrote(210, "a", 1).wrote(900, "a", 1);
    b.extended(950, "a", 950, 1000).wrote(1500, "a", 1);
    b.acquired(1600, "b", 2, 1550, 1600, 1000).wrote(1610, "b", 2).wrote(1700, "b", 2);
    const Verdict v = trial::check(b.h, Mode::fenced, one_phase());
    REQUIRE_EQ(v.phases.size(), std::size_t{1});
    CHECK_EQ(v.phases[0].acquisitions, 2);
    CHECK_EQ(v.phases[0].writes, 5);
    CHECK_EQ(v.reached, 0);
    CHECK(v.phases[0].findings.empty());
    CHECK(v.phases[0].live);
    CHECK_EQ(v.phases[0].recovery_us, 100 * ms);
}

TEST(interleaved_writes_of_two_sessions_are_an_overlap) {
    Builder b;
    b.acquired(200, "a", 1, 190, 200, 1000).wrote(210, "a", 1);
    b.acquired(300, "b", 2, 290, 300, 1000).wrote(310, "b", 2).wrote(320, "a", 1);
    Verdict v = trial::check(b.h, Mode::plain, one_phase());
    CHECK_EQ(total(v, &trial::PhaseResult::overlaps), 1);
    CHECK_EQ(total(v, &trial::PhaseResult::accepted_overlaps), 1);
    CHECK_EQ(v.reached, 1);
    // At a fenced resource the stale write was refused: the overlap never reached it.
    b.h.back().refused = true;
    v = trial::check(b.h, Mode::fenced, one_phase());
    CHECK_EQ(total(v, &trial::PhaseResult::overlaps), 1);
    CHECK_EQ(total(v, &trial::PhaseResult::accepted_overlaps), 0);
    CHECK_EQ(v.reached, 0);
}

TEST(sessions_one_after_the_other_do_not_overlap) {
    Builder b;
    b.acquired(200, "a", 1, 190, 200, 1000).wrote(210, "a", 1).wrote(300, "a", 1);
    b.acquired(300, "b", 2, 300, 300, 1000).wrote(301, "b", 2);
    CHECK_EQ(total(trial::check(b.h, Mode::plain, one_phase()), &trial::PhaseResult::overlaps), 0);
}

TEST(a_write_after_the_lock_surely_ended_is_late) {
    Builder b;
    // Acquired by 200 ms with TTL 1000: the key is gone by 1200 ms (+2 ms granularity).
    b.acquired(200, "a", 1, 190, 200, 1000).wrote(1201, "a", 1).wrote(1203, "a", 1);
    const Verdict v = trial::check(b.h, Mode::plain, one_phase());
    CHECK_EQ(total(v, &trial::PhaseResult::late), 1);
    // An extension that returned at 1000 ms moves the end to 2000 ms.
    Builder c;
    c.acquired(200, "a", 1, 190, 200, 1000).extended(1000, "a", 1000, 1000).wrote(1900, "a", 1);
    CHECK_EQ(total(trial::check(c.h, Mode::plain, one_phase()), &trial::PhaseResult::late), 0);
    // The extension's record may reach the resource after a write it covers.
    Builder e;
    e.acquired(200, "a", 1, 190, 200, 1000).wrote(1900, "a", 1).extended(1950, "a", 1000, 1000);
    CHECK_EQ(total(trial::check(e.h, Mode::plain, one_phase()), &trial::PhaseResult::late), 0);
    // A `resplock run` session (no times) is not judged.
    Builder d;
    d.acquired(200, "a", 1, 0, 0, 0).wrote(9000, "a", 1);
    CHECK_EQ(total(trial::check(d.h, Mode::plain, one_phase()), &trial::PhaseResult::late), 0);
}

TEST(fencing_numbers_out_of_real_time_order_or_repeated_are_found) {
    Builder b;
    b.acquired(200, "a", 13, 190, 200, 1000);
    b.acquired(400, "b", 11, 390, 400, 1000);  // began after a's returned, got a lower number
    CHECK_EQ(total(trial::check(b.h, Mode::plain, one_phase()), &trial::PhaseResult::order), 1);
    Builder c;
    c.acquired(200, "a", 13, 190, 200, 1000).acquired(400, "b", 13, 0, 0, 0);
    CHECK_EQ(total(trial::check(c.h, Mode::plain, one_phase()), &trial::PhaseResult::order), 1);
    // Concurrent calls may get their numbers in either order.
    Builder d;
    d.acquired(200, "a", 13, 150, 200, 1000).acquired(210, "b", 11, 160, 210, 1000);
    CHECK_EQ(total(trial::check(d.h, Mode::plain, one_phase()), &trial::PhaseResult::order), 0);
}

TEST(a_repeated_fencing_number_counts_where_it_was_issued_again) {
    std::vector<Phase> phases = one_phase();
    phases[0].end_us = 1000 * ms;
    Phase second = phases[0];
    second.fault = "restart-empty";
    second.start_us = second.heal_us = 1000 * ms;
    second.end_us = 5000 * ms;
    phases.push_back(second);
    // Tokens in both orders: the phase follows the times, not the tokens.
    for (const char* late : {"a", "z"}) {
        Builder b;
        b.acquired(200, late[0] == 'a' ? "z" : "a", 46, 190, 200, 1000);
        b.acquired(1200, late, 46, 1190, 1200, 1000);
        const Verdict v = trial::check(b.h, Mode::fenced, phases);
        CHECK_EQ(v.phases[0].order, 0);
        CHECK_EQ(v.phases[1].order, 1);
    }
}

TEST(a_fenced_resource_that_accepts_a_lower_number_is_found) {
    Builder b;
    b.wrote(200, "b", 20).wrote(300, "a", 10);
    CHECK_EQ(total(trial::check(b.h, Mode::broken, one_phase()), &trial::PhaseResult::order), 1);
    // A plain resource makes no such promise.
    CHECK_EQ(total(trial::check(b.h, Mode::plain, one_phase()), &trial::PhaseResult::order), 0);
}

TEST(no_acquisition_within_the_bound_after_the_heal_is_a_liveness_violation) {
    Builder b;
    b.acquired(50, "a", 1, 40, 50, 1000).acquired(1200, "b", 2, 1150, 1200, 1000);
    Verdict v = trial::check(b.h, Mode::plain, one_phase());
    CHECK(!v.phases[0].live);
    CHECK_EQ(v.phases[0].recovery_us, 1100 * ms);
    CHECK_EQ(v.reached, 1);
    Builder none;
    v = trial::check(none.h, Mode::plain, one_phase());
    CHECK(!v.phases[0].live);
    CHECK_EQ(v.phases[0].recovery_us, std::int64_t{-1});
}

TEST(a_violation_counts_in_the_phase_where_it_began) {
    std::vector<Phase> phases = one_phase();
    phases[0].end_us = 1000 * ms;
    Phase second = phases[0];
    second.fault = "pause-client";
    second.start_us = second.heal_us = 1000 * ms;
    second.end_us = 5000 * ms;
    phases.push_back(second);
    Builder b;
    b.acquired(200, "a", 1, 190, 200, 5000).wrote(210, "a", 1).acquired(1200, "b", 2, 0, 0, 0);
    b.wrote(1210, "b", 2).wrote(1300, "a", 1);
    const Verdict v = trial::check(b.h, Mode::plain, phases);
    CHECK_EQ(v.phases[0].overlaps, 0);
    CHECK_EQ(v.phases[1].overlaps, 1);
    CHECK(!v.phases[1].findings.empty());
    CHECK(v.phases[1].findings[0].context.find("W b 2") != std::string::npos);
}

TEST(the_longest_time_without_an_accepted_write_is_measured) {
    Builder b;
    b.wrote(100, "a", 1).wrote(400, "a", 1).wrote(2400, "a", 1, true).wrote(3000, "a", 1);
    const Verdict v = trial::check(b.h, Mode::fenced, one_phase());
    CHECK_EQ(v.phases[0].longest_gap_us, 7000 * ms);  // from the last write to the phase's end
    std::vector<Phase> p = one_phase();
    p[0].end_us = 3100 * ms;
    CHECK_EQ(trial::check(b.h, Mode::fenced, p).phases[0].longest_gap_us, 2600 * ms);
}

}  // namespace
