// The counting semaphore against a real Redis Cluster on 127.0.0.1 (three masters with a replica
// each), always through a Cluster router whose first node does not serve the key's slot: every
// operation (acquire, extend, query, release, a fair hand-off) follows a MOVED there; every key
// the semaphore creates (KEY, its fencing counter, the plain wake list, the fair queue and its
// entries, a fair waiter's wake list) lives in KEY's slot as CLUSTER KEYSLOT computes it; six
// contenders with limit 3 never hold more than three leases at once (from the times they
// recorded), plain and fair; fair waiters are served in arrival order; and no key of the
// semaphore is left without a TTL.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "redis_cluster.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/ha/cluster.hpp"
#include "resplock/variants/semaphore.hpp"

namespace {

using resplock::EventKind;
using resplock::Semaphore;
using resplock::SemaphoreInfo;
using resplock::Status;
using support::RedisCluster;
using Clock = std::chrono::steady_clock;

RedisCluster& cluster() {
    static RedisCluster c;
    return c;
}

// The MOVED redirections one client's commands followed (its observer's redirect events), and
// the node the last one named. A client is used by one thread at a time.
struct Redirects {
    int moved = 0;
    int other = 0;  // ASK, or anything else
    std::string last;

    static void record(void* user, const resplock::Event* e) {
        if (resplock::kind_of(*e) != EventKind::redirect) return;
        auto& r = *static_cast<Redirects*>(user);
        const std::string text = e->key != nullptr ? std::string(e->key, e->key_len) : "";
        if (text.rfind("MOVED ", 0) == 0) {
            ++r.moved;
            r.last = text;
        } else {
            ++r.other;
        }
    }
};

// A connection whose first node is `via`, with a Cluster router and a buffer of
// semaphore_buffer_min() bytes.
struct Client {
    resplock_posix_t ctx;
    resplock_port_t port = support::posix_port(ctx);
    Redirects redirects;
    resplock::Observer observer{&Redirects::record, &redirects};
    resplock::Cluster router;
    resplock::ConnectionConfig config;
    std::vector<char> buf = std::vector<char>(resplock::semaphore_buffer_min());
    resplock::Connection conn;

    explicit Client(std::size_t via)
        : config(make(via)), conn(port, config, buf.data(), buf.size()) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    resplock::ConnectionConfig make(std::size_t via) {
        resplock::ConnectionConfig c;
        c.host = "127.0.0.1";
        c.port = cluster().node(via).port();
        c.router = &router;
        c.observer = &observer;
        c.timeout_ms = 2000;
        return c;
    }
};

std::string base_of(const std::string& key) {
    char out[RESPLOCK_MAX_KEY_LEN + resplock::companion_prefix_extra];
    const std::size_t n = resplock::companion_prefix(key, out);
    return std::string(out, n);
}

long long number(const std::string& s) {
    return std::atoll(s.c_str());
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) out.push_back(line);
    }
    return out;
}

// The keys of node i that belong to the semaphore on `key`: KEY itself and every name under its
// companion prefix.
std::vector<std::string> semaphore_keys(std::size_t i, const std::string& key) {
    const std::string base = base_of(key);
    std::vector<std::string> out;
    for (const std::string& k : lines(cluster().node(i).cli({"KEYS", "*"}))) {
        if (k == key || k.rfind(base + ":", 0) == 0) out.push_back(k);
    }
    return out;
}

// The masters (nodes 0..2) other than `owner`.
std::size_t other(std::size_t owner, int n) {
    return (owner + static_cast<std::size_t>(n)) % RedisCluster::master_count;
}

// A key of the semaphore whose slot node `owner` serves, with nothing left of earlier runs.
std::string fresh_key(std::size_t owner, const std::string& prefix) {
    const std::string key = cluster().key_on(owner, prefix);
    const std::string base = base_of(key);
    cluster().node(owner).cli(
        {"DEL", key, base + ":fence", base + ":wake", base + ":q", base + ":w"});
    return key;
}

bool wait_for_queue(std::size_t owner, const std::string& key, long long n) {
    const std::string queue = base_of(key) + ":q";
    return support::wait_until(
        [&] {
            return number(cluster().node(owner).cli({"LLEN", queue})) >= n;
        },
        5);
}

TEST(cluster_starts) {
    REQUIRE(cluster().ok());
    REQUIRE_EQ(cluster().size(), std::size_t{6});
    CHECK(cluster().healthy());
    for (std::size_t i = 0; i < RedisCluster::master_count; ++i) {
        CHECK(cluster().is_master(i));
        const std::size_t replica = cluster().replica_of(i);
        CHECK_EQ(replica, i + RedisCluster::master_count);
        if (replica < cluster().size()) CHECK(cluster().linked(replica));
    }
}

// Each operation from a connection of its own whose first node does not serve the slot: each
// follows one MOVED to the owner, and the owner holds what the operation did.
TEST(every_operation_follows_moved_to_the_slots_owner) {
    REQUIRE(cluster().ok());
    const std::size_t owner = 1;
    const std::string key = fresh_key(owner, "csem:ops:");
    const unsigned slot = cluster().slot(key);
    REQUIRE_EQ(cluster().owner(slot), owner);
    const std::string owner_port = ":" + std::to_string(cluster().node(owner).port());
    auto moved_once = [&](const Client& c) {
        if (!CHECK_EQ(c.redirects.moved, 1)) return;
        CHECK_EQ(c.redirects.other, 0);
        CHECK(c.redirects.last.rfind("MOVED " + std::to_string(slot) + " ", 0) == 0);
        CHECK(c.redirects.last.size() > owner_port.size() &&
              c.redirects.last.compare(c.redirects.last.size() - owner_port.size(),
                                       owner_port.size(), owner_port) == 0);
        std::printf("      followed %s\n", c.redirects.last.c_str());
        CHECK_EQ(static_cast<unsigned>(c.router.node().port),
                 static_cast<unsigned>(cluster().node(owner).port()));
    };

    Client a(other(owner, 1));
    Semaphore sa(a.conn, key, 3);
    std::uint64_t fence = 0;
    REQUIRE_EQ(sa.acquire(5000, &fence), Status::ok);
    moved_once(a);
    const std::string token(sa.token());
    CHECK(fence > 0);
    CHECK(sa.remaining_ms() > 4000);
    const long long score = number(cluster().node(owner).cli({"ZSCORE", key, token}));
    CHECK(score > 0);
    CHECK_EQ(cluster().node(owner).cli({"GET", base_of(key) + ":fence"}), std::to_string(fence));

    // Extend, through another node, by a semaphore that adopts the token.
    Client b(other(owner, 2));
    Semaphore sb(b.conn, key, 3);
    REQUIRE_EQ(sb.adopt(token), Status::ok);
    CHECK_EQ(sb.extend(20000), Status::ok);
    moved_once(b);
    CHECK(sb.remaining_ms() > 19000);
    CHECK(number(cluster().node(owner).cli({"ZSCORE", key, token})) > score + 10000);
    CHECK(number(cluster().node(owner).cli({"PTTL", key})) > 19000);

    // Query from a third connection: one lease, not its own.
    Client c(other(owner, 1));
    Semaphore sc(c.conn, key, 3);
    SemaphoreInfo info;
    REQUIRE_EQ(sc.query(info), Status::ok);
    moved_once(c);
    CHECK_EQ(info.count, 1U);
    CHECK(!info.mine);
    CHECK_EQ(info.waiters, 0U);
    // Its owner's view (over a connection that already knows the owner: no more redirects).
    REQUIRE_EQ(sa.query(info), Status::ok);
    CHECK(info.mine);
    CHECK(info.ttl_ms > 19000);
    CHECK_EQ(a.redirects.moved, 1);

    // Release from a fourth connection.
    Client d(other(owner, 2));
    Semaphore sd(d.conn, key, 3);
    REQUIRE_EQ(sd.adopt(token), Status::ok);
    CHECK_EQ(sd.release(), Status::ok);
    moved_once(d);
    CHECK_EQ(cluster().node(owner).cli({"EXISTS", key}), std::string("0"));
    CHECK_EQ(sa.release(), Status::expired);  // removed by the adopter
    // The fencing counter outlives nobody: it ends with the last lease's TTL.
    const long long fence_ttl =
        number(cluster().node(owner).cli({"PTTL", base_of(key) + ":fence"}));
    CHECK(fence_ttl > 0 && fence_ttl <= 20000);
}

// Every key the semaphore creates, listed from the owner's own keys at four moments: KEY and the
// fencing counter (leases held), the fair queue and its entries (waiters queued), a fair waiter's
// wake list (a place handed to a waiter that is gone), the plain wake list (a release with no
// queue). Each is in KEY's slot by CLUSTER KEYSLOT, and no other node has any of them.
TEST(every_key_of_the_semaphore_is_in_its_slot) {
    REQUIRE(cluster().ok());
    const std::size_t owner = 2;
    const std::string key = fresh_key(owner, "csem:slot:");
    const std::string base = base_of(key);
    const unsigned slot = cluster().slot(key);
    REQUIRE_EQ(cluster().owner(slot), owner);
    std::set<std::string> seen;
    auto snapshot = [&] {
        for (const std::string& k : semaphore_keys(owner, key))
            seen.insert(k);
        for (std::size_t i = 0; i < RedisCluster::master_count; ++i) {
            if (i != owner) CHECK(semaphore_keys(i, key).empty());
        }
    };

    Client c1(other(owner, 1)), c2(other(owner, 2));
    Semaphore h1(c1.conn, key, 2, true), h2(c2.conn, key, 2, true);
    REQUIRE_EQ(h1.acquire(10000), Status::ok);
    REQUIRE_EQ(h2.acquire(10000), Status::ok);
    snapshot();

    // A fair waiter in a process of its own, killed while queued: its entry stays until it
    // expires (entry lifetime 2 x 1 s + 100 ms for a TTL of 4 s), so a release hands it a place
    // and pushes the lease's number to its wake list, which nobody pops.
    std::fflush(stdout);
    const pid_t parent = getpid();
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(125);
        Client w(other(owner, 1));
        Semaphore sem(w.conn, key, 2, true);
        (void)sem.set_owner("gone");
        (void)sem.try_acquire(4000, 20000);
        _exit(0);
    }
    const bool queued = wait_for_queue(owner, key, 1);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    REQUIRE(queued);
    const std::string gone = cluster().node(owner).cli({"LINDEX", base + ":q", "0"});
    REQUIRE(gone.rfind("gone:", 0) == 0);
    // A live fair waiter behind it.
    Client c3(other(owner, 2));
    Semaphore live(c3.conn, key, 2, true);
    std::atomic<int> got{-1};
    std::thread waiter([&] { got = static_cast<int>(live.try_acquire(10000, 8000)); });
    const bool both = wait_for_queue(owner, key, 2);
    snapshot();                          // the queue and its entries
    CHECK_EQ(h1.release(), Status::ok);  // to the gone waiter
    CHECK_EQ(cluster().node(owner).cli({"LRANGE", base + ":f:" + gone, "0", "-1"}).empty(), false);
    snapshot();                          // its wake list
    CHECK_EQ(h2.release(), Status::ok);  // to the live one
    waiter.join();
    REQUIRE(both);
    CHECK_EQ(got.load(), static_cast<int>(Status::ok));
    CHECK(number(cluster().node(owner).cli({"ZSCORE", key, gone})) > 0);  // the gone one's lease
    CHECK_EQ(live.release(), Status::ok);  // no queue left: the plain wake list
    snapshot();

    const std::set<std::string> expected = {key,         base + ":fence", base + ":q",
                                            base + ":w", base + ":wake",  base + ":f:" + gone};
    for (const std::string& k : expected) {
        if (!CHECK(seen.count(k) != 0)) std::printf("      not seen: %s\n", k.c_str());
    }
    int checked = 0;
    for (const std::string& k : seen) {
        const long long s = number(cluster().node(owner).cli({"CLUSTER", "KEYSLOT", k}));
        std::printf("      %s: slot %lld\n", k.c_str(), s);
        CHECK_EQ(s, static_cast<long long>(slot));
        ++checked;
    }
    std::printf("      %d keys of the semaphore seen, all in slot %u\n", checked, slot);
    CHECK(checked >= static_cast<int>(expected.size()));
    // What is left has a TTL: the gone waiter's lease, the counter, the plain wake list.
    for (const std::string& k : semaphore_keys(owner, key)) {
        const long long pttl = number(cluster().node(owner).cli({"PTTL", k}));
        if (!CHECK(pttl > 0)) std::printf("      no TTL: %s\n", k.c_str());
    }
}

struct Hold {
    std::int64_t enter_ns;  // after the grant's reply
    std::int64_t exit_ns;   // before the release
    std::uint64_t fence;
};

std::int64_t ns_now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
}

// Limit 3, six contender threads for 2 s, each with a connection whose first node is not the
// owner: the recorded holds never overlap more than three deep, and the places were used.
void contend(bool fair) {
    const std::size_t owner = 0;
    const std::string key = fresh_key(owner, fair ? "csem:fair:" : "csem:plain:");
    constexpr int contenders = 6;
    std::mutex m;
    std::vector<Hold> holds;
    std::atomic<int> failures{0};
    std::atomic<int> moved{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    int counts[contenders] = {};
    for (int i = 0; i < contenders; ++i) {
        threads.emplace_back([&, i] {
            Client c(other(owner, 1 + i % 2));
            Semaphore sem(c.conn, key, 3, fair);
            while (!stop.load()) {
                std::uint64_t fence = 0;
                const Status s = sem.try_acquire(5000, 5000, &fence);
                if (s != Status::ok) {
                    ++failures;
                    continue;
                }
                const std::int64_t enter = ns_now();
                ++counts[i];
                std::this_thread::sleep_for(std::chrono::milliseconds(3));
                const std::int64_t exit = ns_now();
                {
                    std::lock_guard<std::mutex> g(m);
                    holds.push_back({enter, exit, fence});
                }
                if (sem.release() != Status::ok) ++failures;
            }
            moved += c.redirects.moved;
            if (c.redirects.other != 0) ++failures;
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    stop = true;
    for (auto& t : threads)
        t.join();
    CHECK_EQ(failures.load(), 0);
    REQUIRE(holds.size() > 30);
    std::vector<std::pair<std::int64_t, int>> events;
    for (const Hold& h : holds) {
        events.emplace_back(h.enter_ns, 1);
        events.emplace_back(h.exit_ns, -1);
    }
    std::sort(events.begin(), events.end());  // exits first at equal times
    int inside = 0;
    int deepest = 0;
    for (const auto& e : events) {
        inside += e.second;
        deepest = std::max(deepest, inside);
    }
    std::vector<std::uint64_t> fences;
    for (const Hold& h : holds)
        fences.push_back(h.fence);
    std::sort(fences.begin(), fences.end());
    const bool distinct = std::adjacent_find(fences.begin(), fences.end()) == fences.end();
    const auto [least, most] = std::minmax_element(counts, counts + contenders);
    std::printf("      %s: %zu holds, deepest overlap %d, holds per client %d..%d, MOVED %d\n",
                fair ? "fair" : "plain", holds.size(), deepest, *least, *most, moved.load());
    CHECK(deepest <= 3);
    CHECK_EQ(deepest, 3);
    CHECK(distinct);
    CHECK(moved.load() >= contenders);  // each connection started on a node without the slot
    if (fair) CHECK(*most - *least <= 2 + *most / 10);
    CHECK_EQ(cluster().node(owner).cli({"EXISTS", key}), std::string("0"));
}

TEST(six_contenders_never_exceed_three_holders) {
    REQUIRE(cluster().ok());
    contend(false);
}

TEST(six_fair_contenders_never_exceed_three_holders) {
    REQUIRE(cluster().ok());
    contend(true);
}

// Limit 2: two holders, then four fair waiters queued in order, each through a node that does not
// serve the slot; each release hands the freed place to the first waiter still queued, whose
// blocked wait returns with it.
TEST(fair_hand_off_in_arrival_order_through_the_cluster) {
    REQUIRE(cluster().ok());
    const std::size_t owner = 1;
    const std::string key = fresh_key(owner, "csem:fifo:");
    Client a(other(owner, 1)), b(other(owner, 2));
    Semaphore h1(a.conn, key, 2, true), h2(b.conn, key, 2, true);
    REQUIRE_EQ(h1.acquire(10000), Status::ok);
    REQUIRE_EQ(h2.acquire(10000), Status::ok);
    std::mutex m;
    std::vector<int> order;
    std::vector<std::uint64_t> fences;
    std::atomic<int> inside{0};
    std::atomic<int> overflow{0};
    std::atomic<int> moved{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            Client c(other(owner, 1 + i % 2));
            Semaphore sem(c.conn, key, 2, true);
            std::uint64_t fence = 0;
            const Status s = sem.try_acquire(10000, 8000, &fence);
            moved += c.redirects.moved;
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
        if (!wait_for_queue(owner, key, i + 1)) {
            CHECK(false);
            break;
        }
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
    CHECK_EQ(moved.load(), 4);
    CHECK_EQ(h2.release(), Status::ok);
    CHECK_EQ(cluster().node(owner).cli({"EXISTS", key, base_of(key) + ":q", base_of(key) + ":w"}),
             std::string("0"));
}

// After all the above, on every master: each key of the semaphores has a TTL.
TEST(no_key_is_left_without_a_ttl) {
    REQUIRE(cluster().ok());
    int keys = 0;
    int without = 0;
    for (std::size_t i = 0; i < RedisCluster::master_count; ++i) {
        for (const std::string& k : lines(cluster().node(i).cli({"KEYS", "*csem:*"}))) {
            ++keys;
            const long long pttl = number(cluster().node(i).cli({"PTTL", k}));
            if (pttl == -1) {
                ++without;
                std::printf("      no TTL: %s on node %zu\n", k.c_str(), i);
            }
        }
    }
    std::printf("      %d keys left, each with a TTL\n", keys);
    CHECK(keys > 0);  // the fencing counters at least
    CHECK_EQ(without, 0);
}

}  // namespace
