// The counting semaphore against a real redis-server: its script's digest and EVAL fallback, at
// most N holders among many contenders, plain and fair (counted from the times each holder
// recorded), fencing numbers that increase with the order of the grants, a lease that is not
// renewed reclaimed after its TTL, fair mode serving waiters in arrival order, the rule for
// clients stating different limits, a plain waiter woken by a release, the Renewer keeping a lease
// alive, and no key of the semaphore's left without a TTL.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "check.hpp"
#include "lock_cases.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/renewer.hpp"
#include "resplock/variants/semaphore.hpp"

namespace {

using lock_cases::as_ll;
using lock_cases::ms_since;
using lock_cases::server;
using resplock::Semaphore;
using resplock::SemaphoreInfo;
using resplock::Status;
using Clock = std::chrono::steady_clock;

constexpr const char* semaphore_sha = "1615af72c5860cf0ad6da7e930616991ff7ca40a";

struct Client : support::PosixClient {
    explicit Client(std::size_t buf_size = resplock::semaphore_buffer_min())
        : PosixClient(server().port(), buf_size) {}
    std::uint32_t now() const { return port.now_ms(port.ctx); }
};

long long number(const std::string& s) {
    return std::atoll(s.c_str());
}

long long llen(const std::string& key) {
    return number(server().cli({"LLEN", key}));
}

bool wait_for_queue(const std::string& queue, long long n) {
    for (int i = 0; i < 500; ++i) {
        if (llen(queue) >= n) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
}

void clear(const std::string& key) {
    const std::string base = "{" + key + "}";
    server().cli({"DEL", key, base + ":fence", base + ":wake", base + ":q", base + ":w"});
}

std::uint32_t count(Semaphore& sem) {
    SemaphoreInfo info;
    return sem.query(info) == Status::ok ? info.count : 99999U;
}

TEST(server_started) {
    REQUIRE(server().running());
}

TEST(script_matches_its_digest_and_falls_back_to_eval_after_a_flush) {
    clear("sem:flush");
    CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    Client a;
    Semaphore sem(a.conn, "sem:flush", 2);
    std::uint64_t fence = 0;
    CHECK_EQ(sem.acquire(5000, &fence), Status::ok);
    CHECK_EQ(server().cli({"SCRIPT", "EXISTS", semaphore_sha}), std::string("1"));
    CHECK(fence > 0);
    CHECK_EQ(server().cli({"ZCARD", "sem:flush"}), std::string("1"));
    CHECK(number(server().cli({"ZSCORE", "sem:flush", std::string(sem.token())})) > 0);
    const long long pttl = number(server().cli({"PTTL", "sem:flush"}));
    CHECK(pttl > 4000 && pttl <= 5000);
    CHECK_EQ(server().cli({"GET", "{sem:flush}:fence"}), std::to_string(fence));
    CHECK(sem.remaining_ms() > 4000);
    CHECK_EQ(sem.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "sem:flush"}), std::string("0"));
    CHECK_EQ(sem.release(), Status::invalid_argument);  // the token is gone
}

TEST(buffer_min_fits_the_longest_key) {
    const std::string key(RESPLOCK_MAX_KEY_LEN, 'k');
    Client a(resplock::semaphore_buffer_min());
    Semaphore sem(a.conn, key, 2, true);
    CHECK_EQ(sem.try_acquire(5000, 100), Status::ok);
    CHECK_EQ(sem.extend(5000), Status::ok);
    CHECK_EQ(sem.release(), Status::ok);
    Client small(resplock::semaphore_buffer_min() - 300);
    Semaphore refused(small.conn, key, 2);
    CHECK_EQ(refused.acquire(5000), Status::too_large);
}

struct Hold {
    std::int64_t enter_ns;  // after the grant's reply
    std::int64_t exit_ns;   // before the release
    std::int64_t call_ns;   // when the try_acquire that was granted started
    std::uint64_t fence;
};

std::int64_t ns_now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
}

// N = 3, 8 contenders for 2 s: the recorded holds (each inside its lease) never overlap more
// than 3 deep, and a grant that started after another was in holds a larger fencing number.
void contend(const std::string& key, bool fair) {
    clear(key);
    constexpr int contenders = 8;
    std::mutex m;
    std::vector<Hold> holds;
    std::atomic<int> failures{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    int counts[contenders] = {};
    for (int i = 0; i < contenders; ++i) {
        threads.emplace_back([&, i] {
            Client c;
            Semaphore sem(c.conn, key, 3, fair);
            std::uint64_t last = 0;
            while (!stop.load()) {
                const std::int64_t call = ns_now();
                std::uint64_t fence = 0;
                const Status s = sem.try_acquire(5000, 5000, &fence);
                if (s != Status::ok) {
                    ++failures;
                    continue;
                }
                const std::int64_t enter = ns_now();
                if (fence <= last) ++failures;  // each client's own numbers increase too
                last = fence;
                ++counts[i];
                std::this_thread::sleep_for(std::chrono::milliseconds(3));
                const std::int64_t exit = ns_now();
                {
                    std::lock_guard<std::mutex> g(m);
                    holds.push_back({enter, exit, call, fence});
                }
                if (sem.release() != Status::ok) ++failures;
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    stop = true;
    for (auto& t : threads)
        t.join();
    CHECK_EQ(failures.load(), 0);
    REQUIRE(holds.size() > 50);
    // The deepest overlap of the recorded holds: +1 at each enter, -1 at each exit (exits first
    // at equal times).
    std::vector<std::pair<std::int64_t, int>> events;
    for (const Hold& h : holds) {
        events.emplace_back(h.enter_ns, 1);
        events.emplace_back(h.exit_ns, -1);
    }
    std::sort(events.begin(), events.end());
    int inside = 0;
    int deepest = 0;
    for (const auto& e : events) {
        inside += e.second;
        deepest = std::max(deepest, inside);
    }
    // Fencing numbers: all distinct, and larger for a grant whose call started after another
    // grant's reply came in (the server granted them in that order).
    std::vector<Hold> by_enter = holds;
    std::sort(by_enter.begin(), by_enter.end(),
              [](const Hold& a, const Hold& b) { return a.enter_ns < b.enter_ns; });
    std::vector<std::uint64_t> fences;
    int misordered = 0;
    std::uint64_t highest_before = 0;  // highest fence among holds entered before a call
    std::vector<Hold> by_call = holds;
    std::sort(by_call.begin(), by_call.end(),
              [](const Hold& a, const Hold& b) { return a.call_ns < b.call_ns; });
    std::size_t j = 0;
    for (const Hold& h : by_call) {
        while (j < by_enter.size() && by_enter[j].enter_ns < h.call_ns) {
            highest_before = std::max(highest_before, by_enter[j].fence);
            ++j;
        }
        if (h.fence <= highest_before) ++misordered;
        fences.push_back(h.fence);
    }
    std::sort(fences.begin(), fences.end());
    const bool distinct = std::adjacent_find(fences.begin(), fences.end()) == fences.end();
    std::printf("      %s: %zu holds, deepest overlap %d, fences %s, misordered %d\n",
                fair ? "fair" : "plain", holds.size(), deepest, distinct ? "distinct" : "REPEATED",
                misordered);
    const auto [least, most] = std::minmax_element(counts, counts + contenders);
    std::printf("      holds per client: least %d, most %d\n", *least, *most);
    CHECK(deepest <= 3);
    CHECK_EQ(deepest, 3);  // the places were used
    // First come, first served: a client rejoins at the end of the queue, so the counts stay
    // within a turn or two of each other (a tenth more allowed for a client the machine's
    // scheduler kept from rejoining for a while).
    if (fair) CHECK(*most - *least <= 2 + *most / 10);
    CHECK(distinct);
    CHECK_EQ(misordered, 0);
    CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
}

TEST(eight_contenders_never_exceed_three_holders) {
    contend("sem:three", false);
}

TEST(eight_fair_contenders_never_exceed_three_holders) {
    contend("sem:three:fair", true);
}

// A holder that never releases nor renews: its place is free once its TTL ends on the server's
// clock, and its own release then finds no lease.
TEST(a_lease_not_renewed_is_reclaimed_after_its_ttl) {
    clear("sem:reclaim");
    Client a, b;
    Semaphore dead(a.conn, "sem:reclaim", 1), next(b.conn, "sem:reclaim", 1);
    REQUIRE_EQ(dead.acquire(600), Status::ok);
    const std::string token(dead.token());
    CHECK_EQ(next.acquire(5000), Status::busy);
    const auto start = Clock::now();
    CHECK_EQ(next.try_acquire(5000, 4000), Status::ok);
    const auto waited = ms_since(start);
    std::printf("      a 600 ms lease reclaimed after %lld ms\n", as_ll(waited));
    CHECK(waited >= 500);
    CHECK(waited < 1500);
    CHECK_EQ(count(next), 1U);
    // Locally run out: nothing is sent. Adopted elsewhere, the extend reaches the server, which
    // never revives an ended lease.
    CHECK_EQ(dead.extend(5000), Status::expired);
    Client c;
    Semaphore adopted(c.conn, "sem:reclaim", 1);
    REQUIRE_EQ(adopted.adopt(token), Status::ok);
    CHECK_EQ(adopted.extend(5000), Status::expired);
    CHECK(adopted.token().empty());
    CHECK_EQ(server().cli({"ZSCORE", "sem:reclaim", token}), std::string(""));
    CHECK_EQ(count(next), 1U);
    CHECK_EQ(dead.release(), Status::expired);
    CHECK(dead.token().empty());
    CHECK_EQ(next.release(), Status::ok);
}

// Expiry is the server's: a lease whose score is already past is not counted, whatever the
// clients' clocks say.
TEST(a_lease_is_counted_by_the_servers_clock) {
    clear("sem:clock");
    Client a;
    Semaphore sem(a.conn, "sem:clock", 1);
    server().cli({"ZADD", "sem:clock", "1", "ended"});  // 1 ms after the epoch
    server().cli({"ZADD", "sem:clock", "99999999999999", "far"});
    CHECK_EQ(count(sem), 1U);  // "ended" removed, "far" counted
    CHECK_EQ(sem.acquire(1000), Status::busy);
    server().cli({"ZREM", "sem:clock", "far"});
    CHECK_EQ(sem.acquire(1000), Status::ok);
    CHECK_EQ(sem.release(), Status::ok);
}

TEST(a_plain_waiter_is_woken_by_a_release) {
    clear("sem:wake");
    Client a, b;
    Semaphore holder(a.conn, "sem:wake", 1), waiter(b.conn, "sem:wake", 1);
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    Status got = Status::busy;
    Clock::time_point done;
    std::thread t([&] {
        got = waiter.try_acquire(10000, 5000);
        done = Clock::now();
    });
    // Long enough for the backoff to reach its largest pause (250 ms).
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    const auto released = Clock::now();
    CHECK_EQ(holder.release(), Status::ok);
    t.join();
    CHECK_EQ(got, Status::ok);
    const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(done - released);
    std::printf("      woken %lld ms after the release\n", as_ll(after.count()));
    CHECK(after.count() < 150);
    CHECK_EQ(waiter.release(), Status::ok);
}

// Limit 2: two holders, then four fair waiters queued in order; each release hands the place to
// the first waiter still queued.
TEST(fair_waiters_are_served_in_arrival_order) {
    clear("sem:fifo");
    Client a, b;
    Semaphore h1(a.conn, "sem:fifo", 2, true), h2(b.conn, "sem:fifo", 2, true);
    REQUIRE_EQ(h1.acquire(10000), Status::ok);
    REQUIRE_EQ(h2.acquire(10000), Status::ok);
    std::mutex m;
    std::vector<int> order;
    std::vector<std::uint64_t> fences;
    std::atomic<int> inside{0};
    std::atomic<int> overflow{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            Client c;
            Semaphore sem(c.conn, "sem:fifo", 2, true);
            std::uint64_t fence = 0;
            const Status s = sem.try_acquire(10000, 8000, &fence);
            {
                std::lock_guard<std::mutex> g(m);
                order.push_back(s == Status::ok ? i : -1);
                fences.push_back(fence);
            }
            if (s != Status::ok) return;
            if (inside.fetch_add(1) >= 1) ++overflow;  // h2 still holds one place
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            inside.fetch_sub(1);
            if (sem.release() != Status::ok) ++overflow;
        });
        REQUIRE(wait_for_queue("{sem:fifo}:q", i + 1));
    }
    SemaphoreInfo info;
    CHECK_EQ(h1.query(info), Status::ok);
    CHECK_EQ(info.count, 2U);
    CHECK(info.mine);
    CHECK_EQ(info.waiters, 4U);
    CHECK_EQ(h1.release(), Status::ok);
    for (auto& t : threads)
        t.join();
    REQUIRE_EQ(order.size(), std::size_t{4});
    for (int i = 0; i < 4; ++i)
        CHECK_EQ(order[static_cast<std::size_t>(i)], i);
    for (std::size_t i = 1; i < fences.size(); ++i)
        CHECK(fences[i] > fences[i - 1]);
    CHECK_EQ(overflow.load(), 0);
    CHECK_EQ(h2.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "sem:fifo", "{sem:fifo}:q", "{sem:fifo}:w"}),
             std::string("0"));
}

TEST(a_one_shot_attempt_does_not_jump_the_fair_queue) {
    clear("sem:jump");
    Client a, b, c;
    Semaphore holder(a.conn, "sem:jump", 1, true), waiter(b.conn, "sem:jump", 1, true);
    Semaphore late(c.conn, "sem:jump", 1);
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    Status got = Status::busy;
    std::thread t([&] { got = waiter.try_acquire(10000, 5000); });
    REQUIRE(wait_for_queue("{sem:jump}:q", 1));
    // The place is free only for the queued waiter: removing the lease by hand hands nothing,
    // and the next attempt (a plain client's) hands it to the waiter and is busy itself.
    server().cli({"ZREM", "sem:jump", std::string(holder.token())});
    CHECK_EQ(late.acquire(10000), Status::busy);
    t.join();
    CHECK_EQ(got, Status::ok);
    CHECK_EQ(holder.release(), Status::expired);
    CHECK_EQ(waiter.release(), Status::ok);
}

// Each admission checks the admitted client's own limit: after it, the live leases number at most
// the largest limit a current holder stated.
TEST(clients_stating_different_limits) {
    clear("sem:limits");
    Client ca, cb, cc, cd, ce;
    Semaphore a1(ca.conn, "sem:limits", 3), a2(cb.conn, "sem:limits", 3);
    Semaphore a3(cc.conn, "sem:limits", 3), one(cd.conn, "sem:limits", 1);
    Semaphore two(ce.conn, "sem:limits", 2);
    REQUIRE_EQ(a1.acquire(10000), Status::ok);
    CHECK_EQ(one.acquire(10000), Status::busy);  // 1 live, its limit is 1
    CHECK_EQ(two.acquire(10000), Status::ok);    // 1 live < 2
    CHECK_EQ(count(a1), 2U);
    CHECK_EQ(one.acquire(10000), Status::busy);
    CHECK_EQ(a2.acquire(10000), Status::ok);  // 2 live < 3
    CHECK_EQ(count(a1), 3U);
    CHECK_EQ(a3.acquire(10000), Status::busy);  // 3 live: no one's limit admits a fourth
    CHECK_EQ(two.release(), Status::ok);
    CHECK_EQ(two.acquire(10000), Status::busy);  // 2 live, its limit is 2
    CHECK_EQ(a3.acquire(10000), Status::ok);     // the limit-3 clients fill up to 3
    CHECK_EQ(count(a1), 3U);
    CHECK_EQ(a1.release(), Status::ok);
    CHECK_EQ(a2.release(), Status::ok);
    CHECK_EQ(a3.release(), Status::ok);
    // Empty: the smallest limit gets in first, and then a larger one may join it, up to its own.
    CHECK_EQ(one.acquire(10000), Status::ok);
    CHECK_EQ(two.acquire(10000), Status::ok);
    CHECK_EQ(a1.acquire(10000), Status::ok);
    CHECK_EQ(count(a1), 3U);  // the largest limit among the holders: 3
    CHECK_EQ(a2.acquire(10000), Status::busy);
    CHECK_EQ(one.release(), Status::ok);
    CHECK_EQ(two.release(), Status::ok);
    CHECK_EQ(a1.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "sem:limits"}), std::string("0"));
}

TEST(the_renewer_keeps_a_lease_alive) {
    clear("sem:renew");
    Client a, b;
    Semaphore sem(a.conn, "sem:renew", 1), other(b.conn, "sem:renew", 1);
    REQUIRE_EQ(sem.acquire(300), Status::ok);
    resplock::Renewer renewer;
    int lost = 0;
    REQUIRE_EQ(renewer.watch(
                   sem, 300, [](void* user, void*, Status) { ++*static_cast<int*>(user); }, &lost),
               Status::ok);
    const auto start = Clock::now();
    int busy = 0;
    while (ms_since(start) < 1500) {
        const std::uint32_t next = renewer.tick(a.now());
        if (other.acquire(300) == Status::busy) ++busy;
        std::this_thread::sleep_for(std::chrono::milliseconds(next < 20 ? next : 20));
    }
    std::printf("      kept a 300 ms lease for 1.5 s; %d attempts of another client were busy\n",
                busy);
    CHECK_EQ(lost, 0);
    CHECK(sem.held());
    CHECK(busy > 20);
    CHECK(!other.held());
    CHECK_EQ(sem.release(), Status::ok);
    CHECK_EQ(other.acquire(300), Status::ok);
    CHECK_EQ(other.release(), Status::ok);
}

// holders(): one line per live lease, the first to end first, with its owner label and never its
// token; more leases than one reply's page holds.
TEST(holders_lists_labels_and_remaining_time_never_tokens) {
    clear("sem:holders");
    Client c[7];
    std::vector<std::unique_ptr<Semaphore>> sems;
    for (int i = 0; i < 7; ++i) {
        sems.push_back(std::make_unique<Semaphore>(c[i].conn, "sem:holders", 10));
        if (i != 3) REQUIRE_EQ(sems[i]->set_owner("dev-" + std::to_string(i)), Status::ok);
        REQUIRE_EQ(sems[i]->acquire(static_cast<std::uint32_t>(10000 + 1000 * i)), Status::ok);
    }
    Client reader;
    Semaphore view(reader.conn, "sem:holders", 10);
    std::vector<std::pair<std::string, std::uint32_t>> seen;
    CHECK_EQ(view.holders(
                 [](void* ctx, const resplock::SemaphoreHolder& h) noexcept {
                     static_cast<decltype(seen)*>(ctx)->emplace_back(std::string(h.owner),
                                                                     h.remaining_ms);
                 },
                 &seen),
             Status::ok);
    REQUIRE_EQ(seen.size(), std::size_t{7});
    for (int i = 0; i < 7; ++i) {
        const auto& [owner, ms] = seen[static_cast<std::size_t>(i)];
        CHECK_EQ(owner, i == 3 ? std::string() : "dev-" + std::to_string(i));
        // Its TTL less the time since the grant, on the server's clock.
        CHECK(ms <= static_cast<std::uint32_t>(10000 + 1000 * i));
        CHECK(ms > static_cast<std::uint32_t>(10000 + 1000 * i - 2000));
    }
    std::printf("      7 holders in 3 pages: first %s %u ms, last %s %u ms\n",
                seen.front().first.c_str(), seen.front().second, seen.back().first.c_str(),
                seen.back().second);
    for (auto& sem : sems)
        CHECK_EQ(sem->release(), Status::ok);
    int left = 0;
    CHECK_EQ(
        view.holders(
            [](void* ctx, const resplock::SemaphoreHolder&) noexcept { ++*static_cast<int*>(ctx); },
            &left),
        Status::ok);
    CHECK_EQ(left, 0);
}

// After all the above (fair queues, wake lists, fencing counters included), every key of the
// semaphores that is left has a TTL: none grows the server's state for ever.
TEST(no_key_is_left_without_a_ttl) {
    // A last fair waiter that gives up, leaving its entry's keys to expire.
    clear("sem:last");
    Client a, b;
    Semaphore holder(a.conn, "sem:last", 1, true), waiter(b.conn, "sem:last", 1, true);
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    CHECK_EQ(waiter.try_acquire(10000, 200), Status::busy);
    CHECK_EQ(holder.release(), Status::ok);

    std::string cursor = "0";
    int keys = 0;
    int without = 0;
    do {
        std::istringstream lines(
            server().cli({"SCAN", cursor, "MATCH", "*sem:*", "COUNT", "1000"}));
        std::getline(lines, cursor);
        std::string key;
        while (std::getline(lines, key)) {
            if (key.empty()) continue;
            ++keys;
            const long long pttl = number(server().cli({"PTTL", key}));
            if (pttl == -1) {
                ++without;
                std::printf("      no TTL: %s\n", key.c_str());
            }
        }
    } while (cursor != "0");
    std::printf("      %d keys left, each with a TTL\n", keys);
    CHECK(keys > 0);  // the fencing counters at least
    CHECK_EQ(without, 0);
}

}  // namespace
