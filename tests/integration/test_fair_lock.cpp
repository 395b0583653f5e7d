// The fair lock against a real redis-server: its script's digest and EVAL fallback, FIFO order of
// the waiters, hand-off to live waiters only (expired entries skipped, a lock handed to a waiter
// that never picks it up expiring by its TTL), a holder that dies succeeded at its TTL, a waiter
// whose wait ends leaving the queue, exclusion between fair and plain clients, mutual exclusion
// of contending fair clients, and the companion keys' cluster slot checked against a real
// CLUSTER KEYSLOT.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "check.hpp"
#include "lock_cases.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/fair_lock.hpp"

namespace {

using lock_cases::as_ll;
using lock_cases::ms_since;
using lock_cases::server;
using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::FairLock;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
using Clock = std::chrono::steady_clock;

constexpr const char* fair_sha = "5a4fc7e2ab7a23d8dc387fb1dc6fb9adf58e5a39";

struct Client : support::PosixClient {
    explicit Client(std::size_t buf_size = 2560) : PosixClient(server().port(), buf_size) {}
};

long long llen(const std::string& key) {
    return std::atoll(server().cli({"LLEN", key}).c_str());
}

bool wait_for_queue(const std::string& queue, long long n) {
    for (int i = 0; i < 500; ++i) {
        if (llen(queue) >= n) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
}

long long server_ms() {
    const std::string t = server().cli({"TIME"});
    const std::size_t nl = t.find('\n');
    return std::atoll(t.c_str()) * 1000 + std::atoll(t.c_str() + nl + 1) / 1000;
}

TEST(server_started) {
    REQUIRE(server().running());
}

TEST(script_matches_its_digest_and_falls_back_to_eval_after_a_flush) {
    server().cli({"DEL", "fair:flush"});
    CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    Client a;
    FairLock lock(a.conn, "fair:flush");
    CHECK_EQ(lock.acquire(5000), Status::ok);
    // The EVAL fallback loaded the text: the server's digest of it is the SHA1 the library sends.
    CHECK_EQ(server().cli({"SCRIPT", "EXISTS", fair_sha}), std::string("1"));
    CHECK_EQ(server().cli({"GET", "fair:flush"}), std::string(lock.token()));
    CHECK(lock.remaining_ms() > 4000);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "fair:flush"}), std::string("0"));
}

TEST(buffer_min_fits_the_longest_key) {
    const std::string key(RESPLOCK_MAX_KEY_LEN, 'k');
    server().cli({"DEL", key});
    Client a(resplock::fair_buffer_min());
    FairLock lock(a.conn, key);
    CHECK_EQ(lock.try_acquire(5000, 100), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    Client small(resplock::fair_buffer_min() - 200);
    FairLock refused(small.conn, key);
    CHECK_EQ(refused.acquire(5000), Status::too_large);
}

// Waiters B, C, D join in that order while A holds; each takes the lock from the one before.
TEST(waiters_are_served_in_arrival_order) {
    server().cli({"DEL", "fair:fifo"});
    Client a;
    FairLock holder(a.conn, "fair:fifo");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    std::mutex m;
    std::vector<int> order;
    std::atomic<int> overlaps{0};
    std::atomic<int> inside{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            Client c;
            FairLock lock(c.conn, "fair:fifo");
            const Status s = lock.try_acquire(10000, 8000);
            if (s != Status::ok) {
                std::lock_guard<std::mutex> g(m);
                order.push_back(-1);
                return;
            }
            if (inside.fetch_add(1) != 0) ++overlaps;
            {
                std::lock_guard<std::mutex> g(m);
                order.push_back(i);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            inside.fetch_sub(1);
            if (lock.release() != Status::ok) ++overlaps;
        });
        // The next waiter starts once this one is queued.
        REQUIRE(wait_for_queue("{fair:fifo}:q", i + 1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE_EQ(holder.release(), Status::ok);
    for (auto& t : threads)
        t.join();
    REQUIRE_EQ(order.size(), std::size_t{4});
    for (int i = 0; i < 4; ++i)
        CHECK_EQ(order[static_cast<std::size_t>(i)], i);
    CHECK_EQ(overlaps.load(), 0);
    CHECK_EQ(server().cli({"EXISTS", "fair:fifo", "{fair:fifo}:q", "{fair:fifo}:w"}),
             std::string("0"));
}

// A queue entry that expired (its waiter died) is skipped: the lock goes to the next live waiter.
TEST(release_skips_a_waiter_whose_entry_expired) {
    server().cli({"DEL", "fair:dead", "{fair:dead}:q", "{fair:dead}:w"});
    Client a, b;
    FairLock holder(a.conn, "fair:dead"), waiter(b.conn, "fair:dead");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    const std::string past = std::to_string(server_ms() - 1);
    server().cli({"RPUSH", "{fair:dead}:q", "gone"});
    server().cli({"HSET", "{fair:dead}:w", "gone", past + ":10000"});
    Status got = Status::busy;
    std::thread t([&] { got = waiter.try_acquire(10000, 5000); });
    REQUIRE(wait_for_queue("{fair:dead}:q", 2));
    CHECK_EQ(holder.release(), Status::ok);
    t.join();
    CHECK_EQ(got, Status::ok);
    CHECK_EQ(server().cli({"GET", "fair:dead"}), std::string(waiter.token()));
    CHECK_EQ(server().cli({"EXISTS", "{fair:dead}:f:gone"}), std::string("0"));
    CHECK_EQ(waiter.release(), Status::ok);
}

// A release that finds only expired entries drops them and deletes KEY: no one is handed it.
TEST(a_release_with_only_expired_entries_queued_deletes_the_key) {
    server().cli({"DEL", "fair:stale", "{fair:stale}:q", "{fair:stale}:w"});
    Client a;
    FairLock holder(a.conn, "fair:stale");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    const std::string past = std::to_string(server_ms() - 1);
    server().cli({"RPUSH", "{fair:stale}:q", "gone"});
    server().cli({"HSET", "{fair:stale}:w", "gone", past + ":10000"});
    CHECK_EQ(holder.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "fair:stale"}), std::string("0"));
    CHECK_EQ(llen("{fair:stale}:q"), 0LL);
    CHECK_EQ(server().cli({"HEXISTS", "{fair:stale}:w", "gone"}), std::string("0"));
    CHECK_EQ(server().cli({"EXISTS", "{fair:stale}:f:gone"}), std::string("0"));
    CHECK(!holder.held());
}

// A live entry whose waiter never picks the lock up: it is handed the lock, which expires by its
// TTL, and the next waiter follows it then; never before.
TEST(a_lock_handed_to_a_waiter_that_never_picks_it_up_expires_by_its_ttl) {
    server().cli({"DEL", "fair:nobody", "{fair:nobody}:q", "{fair:nobody}:w"});
    Client a, b;
    FairLock holder(a.conn, "fair:nobody"), waiter(b.conn, "fair:nobody");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    const std::string later = std::to_string(server_ms() + 60000);
    server().cli({"RPUSH", "{fair:nobody}:q", "absent"});
    server().cli({"HSET", "{fair:nobody}:w", "absent", later + ":700"});
    Status got = Status::busy;
    Clock::time_point released;
    std::thread t([&] { got = waiter.try_acquire(10000, 5000); });
    REQUIRE(wait_for_queue("{fair:nobody}:q", 2));
    released = Clock::now();
    CHECK_EQ(holder.release(), Status::ok);
    CHECK_EQ(server().cli({"GET", "fair:nobody"}), std::string("absent"));
    const long long left = std::atoll(server().cli({"PTTL", "fair:nobody"}).c_str());
    CHECK(left > 0 && left <= 700);
    t.join();
    const auto waited = ms_since(released);
    CHECK_EQ(got, Status::ok);
    // Never before the handed lock's TTL ran out.
    if (!CHECK(waited >= 650)) std::printf("      waited %lld ms\n", as_ll(waited));
    std::printf("      succeeded the unclaimed hand-off %lld ms after the release (TTL 700)\n",
                as_ll(waited));
    CHECK_EQ(waiter.release(), Status::ok);
}

TEST(a_holder_that_never_releases_is_succeeded_at_its_ttl) {
    server().cli({"DEL", "fair:crash"});
    Client a, b;
    FairLock holder(a.conn, "fair:crash"), waiter(b.conn, "fair:crash");
    REQUIRE_EQ(holder.acquire(600), Status::ok);
    const auto start = Clock::now();
    CHECK_EQ(waiter.try_acquire(5000, 4000), Status::ok);
    const auto waited = ms_since(start);
    CHECK(waited >= 550);
    std::printf("      succeeded a 600 ms holder after %lld ms\n", as_ll(waited));
    // The waiter's validity counts from before the hand-off: never more than its TTL.
    CHECK(waiter.remaining_ms() <= 5000 - 52);
    CHECK_EQ(waiter.release(), Status::ok);
    CHECK_EQ(holder.release(), Status::expired);
}

TEST(a_waiter_whose_wait_runs_out_leaves_the_queue) {
    server().cli({"DEL", "fair:leave", "{fair:leave}:q", "{fair:leave}:w"});
    Client a, b;
    FairLock holder(a.conn, "fair:leave"), waiter(b.conn, "fair:leave");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    CHECK_EQ(waiter.try_acquire(10000, 300), Status::busy);
    CHECK(waiter.token().empty());
    CHECK_EQ(llen("{fair:leave}:q"), 0LL);
    CHECK_EQ(server().cli({"HLEN", "{fair:leave}:w"}), std::string("0"));
    // The release finds nobody to hand over to: the key is deleted.
    CHECK_EQ(holder.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "fair:leave"}), std::string("0"));
}

TEST(a_one_shot_attempt_does_not_jump_the_queue) {
    server().cli({"DEL", "fair:jump", "{fair:jump}:q", "{fair:jump}:w"});
    Client a, b, c;
    FairLock holder(a.conn, "fair:jump"), waiter(b.conn, "fair:jump"), late(c.conn, "fair:jump");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    Status got = Status::busy;
    std::thread t([&] { got = waiter.try_acquire(10000, 5000); });
    REQUIRE(wait_for_queue("{fair:jump}:q", 1));
    // A plain delete (the plain lock's release): KEY is free, but a waiter is queued.
    Lock plain(a.conn, "fair:jump");
    REQUIRE_EQ(plain.adopt(holder.token()), Status::ok);
    CHECK_EQ(plain.release(), Status::ok);
    CHECK_EQ(late.acquire(10000), Status::busy);  // handed it to the waiter instead
    t.join();
    CHECK_EQ(got, Status::ok);
    CHECK_EQ(server().cli({"GET", "fair:jump"}), std::string(waiter.token()));
    CHECK_EQ(waiter.release(), Status::ok);
}

TEST(fair_and_plain_clients_exclude_each_other) {
    server().cli({"DEL", "fair:mixed"});
    Client a, b;
    FairLock fair(a.conn, "fair:mixed");
    Lock plain(b.conn, "fair:mixed");
    REQUIRE_EQ(fair.acquire(10000), Status::ok);
    CHECK_EQ(plain.acquire(10000), Status::busy);
    LockInfo info;
    CHECK_EQ(plain.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    // The plain owner-checked scripts work on a fair holder's key.
    Lock same(b.conn, "fair:mixed");
    REQUIRE_EQ(same.adopt(fair.token()), Status::ok);
    CHECK_EQ(same.extend(20000), Status::ok);
    CHECK(std::atoll(server().cli({"PTTL", "fair:mixed"}).c_str()) > 10000);
    CHECK_EQ(fair.extend(10000), Status::ok);
    CHECK_EQ(fair.release(), Status::ok);

    REQUIRE_EQ(plain.acquire(10000), Status::ok);
    CHECK_EQ(fair.acquire(10000), Status::busy);
    // A fair waiter behind a plain holder takes the lock once the plain release deletes it.
    Status got = Status::busy;
    std::thread t([&] { got = fair.try_acquire(10000, 5000); });
    REQUIRE(wait_for_queue("{fair:mixed}:q", 1));
    CHECK_EQ(plain.release(), Status::ok);
    t.join();
    CHECK_EQ(got, Status::ok);
    CHECK_EQ(plain.acquire(10000), Status::busy);
    CHECK_EQ(fair.release(), Status::ok);
}

TEST(contending_fair_clients_never_hold_at_once_and_share_evenly) {
    server().cli({"DEL", "fair:contend"});
    constexpr int k = 6;
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    std::atomic<int> failures{0};
    std::atomic<bool> stop{false};
    int counts[k] = {};
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i) {
        threads.emplace_back([&, i] {
            Client c;
            FairLock lock(c.conn, "fair:contend");
            while (!stop.load()) {
                const Status s = lock.try_acquire(5000, 5000);
                if (s != Status::ok) {
                    ++failures;
                    continue;
                }
                if (inside.fetch_add(1) != 0) ++overlaps;
                ++counts[i];
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                inside.fetch_sub(1);
                if (lock.release() != Status::ok) ++failures;
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    stop = true;
    for (auto& t : threads)
        t.join();
    int least = counts[0], most = counts[0];
    for (int c : counts) {
        least = c < least ? c : least;
        most = c > most ? c : most;
    }
    std::printf("      acquisitions per client: least %d, most %d\n", least, most);
    CHECK_EQ(overlaps.load(), 0);
    CHECK_EQ(failures.load(), 0);
    // First come, first served: a client rejoins at the end of the queue, so the counts stay
    // within a turn or two of each other (a tenth more allowed for a client the machine's
    // scheduler kept from rejoining for a while); nobody starves.
    CHECK(least > 0);
    CHECK(most - least <= 2 + most / 10);
}

// CRC16/XMODEM, as Redis Cluster uses for key slots.
unsigned crc16(const std::string& s) {
    unsigned crc = 0;
    for (unsigned char c : s) {
        crc ^= static_cast<unsigned>(c) << 8;
        for (int i = 0; i < 8; ++i)
            crc = (crc & 0x8000) != 0 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    return crc;
}

unsigned slot(const std::string& key) {
    const std::size_t open = key.find('{');
    if (open != std::string::npos) {
        const std::size_t close = key.find('}', open + 1);
        if (close != std::string::npos && close > open + 1) {
            return crc16(key.substr(open + 1, close - open - 1)) % 16384;
        }
    }
    return crc16(key) % 16384;
}

TEST(companion_keys_hash_to_the_slot_of_the_key) {
    const std::string dir = "/tmp/resplock-fair-cluster-" + std::to_string(getpid());
    std::system(("mkdir -p " + dir).c_str());
    const std::string conf = dir + "/nodes.conf";
    support::RedisServer node({"--cluster-enabled", "yes", "--cluster-config-file", conf.c_str()});
    REQUIRE(node.running());
    CHECK_EQ(node.cli({"CLUSTER", "KEYSLOT", "123456789"}),
             std::to_string(crc16("123456789") % 16384));
    // Every kind of key: with a tag, without a '}', and with a '}' but no valid tag.
    const char* keys[] = {"job",        "locks:{job}", "a{b",      "{a}{b}", "{",    "plain:key:7",
                          "dev{ice}:1", "{{x}",        "a{b}}",    "a}b",    "{}x}", "}",
                          "{}",         "x{}{y}",      "a{b}c{d}", "{}x"};
    for (const char* k : keys) {
        const std::string key = k;
        char base[RESPLOCK_MAX_KEY_LEN + resplock::companion_prefix_extra];
        const std::size_t n = resplock::companion_prefix(key, base);
        REQUIRE(n > 0);
        const unsigned expected = slot(key);
        CHECK_EQ(node.cli({"CLUSTER", "KEYSLOT", key}), std::to_string(expected));
        for (const char* suffix : {":q", ":w", ":f:0123456789abcdef0123456789abcdef"}) {
            const std::string companion = std::string(base, n) + suffix;
            if (!CHECK_EQ(node.cli({"CLUSTER", "KEYSLOT", companion}), std::to_string(expected))) {
                std::printf("      key %s, companion %s\n", key.c_str(), companion.c_str());
            }
            CHECK_EQ(slot(companion), expected);
        }
        Client a;
        FairLock lock(a.conn, key);
        if (CHECK_EQ(lock.acquire(1000), Status::ok)) CHECK_EQ(lock.release(), Status::ok);
    }
    std::system(("rm -rf " + dir).c_str());
}

}  // namespace
