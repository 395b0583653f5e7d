// The trial's checker over histories written by hand: each kind of violation it claims to find is
// found, at the phase where it began, and a clean history yields none.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "check.hpp"
#include "checker.hpp"
#include "resource.hpp"
#include "resource_client.hpp"

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

// A semaphore of limit N: N sessions writing at once are allowed, N + 1 are an overlap.
// Four sessions a, b, c, d: each writes at its start and again at 1000 ms.
Builder four_at_once(int writers) {
    const char* names[] = {"a", "b", "c", "d"};
    Builder b;
    for (int i = 0; i < writers; ++i) {
        const std::int64_t at = 200 + 10 * i;
        b.acquired(at, names[i], static_cast<std::uint64_t>(i + 1), at - 5, at, 5000);
        b.wrote(at + 1, names[i], static_cast<std::uint64_t>(i + 1));
    }
    for (int i = 0; i < writers; ++i)
        b.wrote(1000 + i, names[i], static_cast<std::uint64_t>(i + 1));
    return b;
}

TEST(a_semaphore_of_limit_n_accepts_n_holders_at_once_and_finds_n_plus_one) {
    // Three at once: an overlap for a lock (the second and the third each interleave), none for
    // a semaphore of limit 3.
    Builder three = four_at_once(3);
    Verdict v = trial::check(three.h, Mode::plain, one_phase(), 1);
    CHECK_EQ(total(v, &trial::PhaseResult::overlaps), 2);
    v = trial::check(three.h, Mode::plain, one_phase(), 3);
    CHECK_EQ(total(v, &trial::PhaseResult::overlaps), 0);
    CHECK_EQ(total(v, &trial::PhaseResult::accepted_overlaps), 0);
    CHECK_EQ(v.reached, 0);
    // Four at once: the fourth is one too many for limit 3, and it names the three others.
    Builder four = four_at_once(4);
    v = trial::check(four.h, Mode::plain, one_phase(), 3);
    CHECK_EQ(total(v, &trial::PhaseResult::overlaps), 1);
    CHECK_EQ(total(v, &trial::PhaseResult::accepted_overlaps), 1);
    CHECK_EQ(v.reached, 1);
    REQUIRE(!v.phases[0].findings.empty());
    const trial::Finding& f = v.phases[0].findings[0];
    CHECK(f.what.find("d wrote while a, b, c were still writing (limit 3)") != std::string::npos);
    CHECK(f.context.find("W a 1") != std::string::npos);
    CHECK(f.context.find("W d 4") != std::string::npos);
    // Limit 4 takes them all.
    CHECK_EQ(
        total(trial::check(four.h, Mode::plain, one_phase(), 4), &trial::PhaseResult::overlaps), 0);
    // At a fenced resource that refused the fourth's writes, nothing reached it.
    for (auto& e : four.h)
        if (e.kind == 'W' && e.session == "a" && e.at_us >= 1000 * ms) e.refused = true;
    v = trial::check(four.h, Mode::fenced, one_phase(), 3);
    CHECK_EQ(total(v, &trial::PhaseResult::overlaps), 1);
    CHECK_EQ(total(v, &trial::PhaseResult::accepted_overlaps), 0);
}

TEST(holders_that_follow_one_another_never_count_as_more_than_the_limit) {
    // a and b at once, then c after a ended, then d after b ended: never more than two.
    Builder b;
    b.wrote(100, "a", 1).wrote(110, "b", 2).wrote(200, "a", 1).wrote(210, "c", 3);
    b.wrote(300, "b", 2).wrote(310, "d", 4).wrote(400, "c", 3).wrote(410, "d", 4);
    CHECK_EQ(total(trial::check(b.h, Mode::plain, one_phase(), 2), &trial::PhaseResult::overlaps),
             0);
    CHECK_EQ(total(trial::check(b.h, Mode::plain, one_phase(), 1), &trial::PhaseResult::overlaps),
             3);
    // One write of c before a's last one: three at once.
    b.wrote(190, "c", 3);
    std::stable_sort(b.h.begin(), b.h.end(),
                     [](const Event& x, const Event& y) { return x.at_us < y.at_us; });
    CHECK_EQ(total(trial::check(b.h, Mode::plain, one_phase(), 2), &trial::PhaseResult::overlaps),
             1);
}

TEST(a_fenced_resource_of_limit_n_may_accept_a_number_below_the_highest_but_not_below_n_of_them) {
    // 10, 30, 20: for limit 3 (or 2) 20 is among the highest accepted; for a lock it is stale.
    Builder b;
    b.wrote(100, "a", 10).wrote(110, "c", 30).wrote(120, "b", 20);
    CHECK_EQ(total(trial::check(b.h, Mode::broken, one_phase(), 3), &trial::PhaseResult::order), 0);
    CHECK_EQ(total(trial::check(b.h, Mode::broken, one_phase(), 2), &trial::PhaseResult::order), 0);
    CHECK_EQ(total(trial::check(b.h, Mode::broken, one_phase(), 1), &trial::PhaseResult::order), 1);
    // Then 40: 10 is now below three higher numbers, so accepting it again is a violation for
    // limit 3; for limit 2 already 10 after 30 and 20 was one.
    b.wrote(130, "d", 40).wrote(140, "a", 10);
    CHECK_EQ(total(trial::check(b.h, Mode::broken, one_phase(), 3), &trial::PhaseResult::order), 1);
    CHECK_EQ(total(trial::check(b.h, Mode::broken, one_phase(), 2), &trial::PhaseResult::order), 1);
    // A number written again counts once among the highest.
    Builder c;
    c.wrote(100, "a", 10).wrote(110, "b", 30).wrote(120, "b", 30).wrote(130, "b", 30);
    c.wrote(140, "a", 10);
    CHECK_EQ(total(trial::check(c.h, Mode::broken, one_phase(), 2), &trial::PhaseResult::order), 0);
}

// The resource itself: in fenced mode it refuses what the checker's rule calls stale.
TEST(the_fenced_resource_refuses_a_number_below_the_limit_highest) {
    char dir[] = "/tmp/resplock-test-resource-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string path = std::string(dir) + "/resource";
    auto replies = [&](std::uint32_t limit) {
        trial::Resource resource(path, Mode::fenced, limit);
        trial::ResourceClient client;
        std::string out, reply;
        if (!resource.ok() || !client.connect(path.c_str())) return std::string("no resource");
        for (const char* w : {"W a 10", "W c 30", "W b 20", "W d 40", "W b 20", "W a 10"}) {
            if (!client.request(w, reply)) return std::string("no reply");
            out += reply + " ";
        }
        return out;
    };
    CHECK_EQ(replies(1), std::string("ok ok refused ok refused refused "));
    CHECK_EQ(replies(3), std::string("ok ok ok ok ok refused "));
    rmdir(dir);
}

TEST(a_fault_to_ride_through_must_see_acquisitions_while_it_lasts) {
    std::vector<Phase> phases = one_phase();
    phases[0].heal_us = 5000 * ms;
    phases[0].bound_us = 2000 * ms;
    Builder b;  // acquisitions at 1 s, 2.5 s and 6 s: one within 2 s of the heal
    b.acquired(1000, "a", 1, 990, 1000, 1000).acquired(2500, "b", 2, 2490, 2500, 1000);
    b.acquired(6000, "c", 3, 5990, 6000, 1000);
    Verdict v = trial::check(b.h, Mode::plain, phases);
    CHECK(v.phases[0].live);  // the heal is all that counts, by default
    phases[0].live_throughout = true;
    v = trial::check(b.h, Mode::plain, phases);
    CHECK(!v.phases[0].live);  // 2.5 s to the heal at 5 s without one
    CHECK_EQ(v.reached, 1);
    REQUIRE(!v.phases[0].findings.empty());
    CHECK(v.phases[0].findings[0].what.find("no acquisition for 2500.0 ms from 2500.0 ms") !=
          std::string::npos);
    b.acquired(4000, "d", 4, 3990, 4000, 1000);
    std::stable_sort(b.h.begin(), b.h.end(),
                     [](const Event& x, const Event& y) { return x.at_us < y.at_us; });
    CHECK(trial::check(b.h, Mode::plain, phases).phases[0].live);
}

}  // namespace
