// The reentrant lock against a real redis-server over the POSIX port: nested holds and the hash's
// count, the TTL max rule, one owner id shared by two connections, waiting for a full release,
// lost holds, the plain Lock on the same keys, the scripts' digests and the EVAL fallback, and the
// buffer size the requests need.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/reentrant_lock.hpp"

namespace {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockState;
using resplock::ReentrantInfo;
using resplock::ReentrantLock;
using resplock::Status;

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

// One connection over POSIX sockets with a buffer of `size` bytes.
struct Client : support::PosixClient {
    explicit Client(std::size_t size = 512) : PosixClient(server().port(), size) {}
};

std::string cli(const std::vector<std::string>& args) {
    return server().cli(args);
}
long long pttl(const std::string& key) {
    return std::atoll(cli({"PTTL", key}).c_str());
}
std::string hcount(const std::string& key, const std::string& owner) {
    return cli({"HGET", key, owner});
}
std::int64_t ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 t)
        .count();
}

}  // namespace

TEST(server_starts) {
    REQUIRE(server().running());
}

TEST(nested_acquire_and_release_count_on_the_server) {
    Client c;
    ReentrantLock lock(c.conn, "re:nested", "job-7");
    CHECK_EQ(lock.owner(), std::string_view("job-7"));
    CHECK(lock.token().empty());
    for (unsigned i = 1; i <= 3; ++i) {
        REQUIRE_EQ(lock.acquire(5000), Status::ok);
        CHECK_EQ(lock.count(), i);
        CHECK_EQ(hcount("re:nested", "job-7"), std::to_string(i));
        CHECK_EQ(lock.token(), std::string_view("job-7"));
        CHECK(lock.held());
    }
    CHECK_EQ(cli({"TYPE", "re:nested"}), std::string("hash"));
    ReentrantInfo info;
    CHECK_EQ(lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(info.count, 3U);
    CHECK(info.ttl_ms > 4000 && info.ttl_ms <= 5000);
    for (unsigned left = 2; left >= 1; --left) {
        REQUIRE_EQ(lock.release(), Status::ok);
        CHECK_EQ(lock.count(), left);
        CHECK_EQ(hcount("re:nested", "job-7"), std::to_string(left));
        CHECK(lock.held());  // still held while levels remain
        CHECK_EQ(lock.token(), std::string_view("job-7"));
    }
    REQUIRE_EQ(lock.release(), Status::ok);
    CHECK_EQ(lock.count(), 0U);
    CHECK_EQ(cli({"EXISTS", "re:nested"}), std::string("0"));
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    CHECK_EQ(lock.release(), Status::invalid_argument);  // nothing left to release
    CHECK_EQ(lock.query(info), Status::ok);
    CHECK(info.state == LockState::free);
    CHECK_EQ(info.ttl_ms, std::int64_t{-2});
}

TEST(ttl_never_drops_below_the_largest_asked_for) {
    Client c;
    ReentrantLock lock(c.conn, "re:ttl", "ttl-owner");
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(cli({"HGET", "re:ttl", ""}), std::string("5000"));
    REQUIRE_EQ(lock.acquire(1000), Status::ok);
    CHECK(pttl("re:ttl") > 4000);
    CHECK(lock.remaining_ms() > 4000U);  // validity follows the TTL the server applied
    CHECK_EQ(cli({"HGET", "re:ttl", ""}), std::string("5000"));
    REQUIRE_EQ(lock.acquire(8000), Status::ok);
    CHECK(pttl("re:ttl") > 7000);
    CHECK_EQ(cli({"HGET", "re:ttl", ""}), std::string("8000"));
    CHECK(lock.remaining_ms() > 7000U);
    // extend is bound by the same rule, and raises the stored largest TTL.
    REQUIRE_EQ(lock.extend(1000), Status::ok);
    CHECK(pttl("re:ttl") > 7000);
    CHECK(lock.remaining_ms() > 7000U);
    REQUIRE_EQ(lock.extend(12000), Status::ok);
    CHECK(pttl("re:ttl") > 11000);
    CHECK_EQ(cli({"HGET", "re:ttl", ""}), std::string("12000"));
    CHECK_EQ(hcount("re:ttl", "ttl-owner"), std::string("3"));
    for (int i = 0; i < 3; ++i)
        CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(cli({"EXISTS", "re:ttl"}), std::string("0"));
}

TEST(one_owner_id_on_two_connections_shares_the_hold) {
    Client a, b;
    ReentrantLock la(a.conn, "re:shared", "svc:42"), lb(b.conn, "re:shared", "svc:42");
    REQUIRE_EQ(la.acquire(5000), Status::ok);
    REQUIRE_EQ(lb.acquire(5000), Status::ok);
    CHECK(la.held() && lb.held());
    CHECK_EQ(lb.count(), 2U);
    CHECK_EQ(hcount("re:shared", "svc:42"), std::string("2"));
    REQUIRE_EQ(la.release(), Status::ok);
    CHECK_EQ(la.count(), 1U);
    CHECK(la.token().empty());  // la's own level is released...
    CHECK(!la.held());
    CHECK(lb.held());  // ...while lb still holds the key
    CHECK_EQ(cli({"EXISTS", "re:shared"}), std::string("1"));
    REQUIRE_EQ(lb.release(), Status::ok);
    CHECK_EQ(lb.count(), 0U);
    CHECK_EQ(cli({"EXISTS", "re:shared"}), std::string("0"));
}

TEST(random_owner_ids_differ_and_exclude_each_other) {
    Client a, b;
    ReentrantLock la(a.conn, "re:random"), lb(b.conn, "re:random");
    CHECK(la.owner().empty());
    REQUIRE_EQ(la.acquire(5000), Status::ok);
    CHECK_EQ(la.owner().size(), resplock::token_len);
    CHECK_EQ(lb.acquire(5000), Status::busy);
    CHECK(!lb.held());
    CHECK(lb.token().empty());
    CHECK_EQ(lb.owner().size(), resplock::token_len);  // kept for the object's lifetime
    CHECK(la.owner() != lb.owner());
    const std::string first(la.owner());
    REQUIRE_EQ(la.acquire(5000), Status::ok);  // re-entry with the same random owner id
    CHECK_EQ(la.owner(), std::string_view(first));
    CHECK_EQ(hcount("re:random", first), std::string("2"));
    ReentrantInfo info;
    CHECK_EQ(lb.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    CHECK_EQ(info.count, 0U);
    CHECK_EQ(la.release(), Status::ok);
    CHECK_EQ(la.release(), Status::ok);
    CHECK_EQ(lb.acquire(5000), Status::ok);
    CHECK_EQ(lb.release(), Status::ok);
}

TEST(waiter_gets_the_lock_only_after_the_full_release) {
    Client a, b;
    ReentrantLock holder(a.conn, "re:wait", "holder"), waiter(b.conn, "re:wait", "waiter");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    CHECK_EQ(waiter.try_acquire(10000, 0), Status::busy);

    std::atomic<bool> done{false};
    Status got = Status::ok;
    const auto start = std::chrono::steady_clock::now();
    std::int64_t took = 0;
    std::thread t([&] {
        got = waiter.try_acquire(10000, 5000);
        took = ms_since(start);
        done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_EQ(holder.release(), Status::ok);  // one level left: still busy
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    CHECK(!done);
    const std::int64_t released_at = ms_since(start);
    CHECK_EQ(holder.release(), Status::ok);
    t.join();
    CHECK_EQ(got, Status::ok);
    CHECK(waiter.held());
    CHECK(took >= released_at);
    CHECK(took <= released_at + 250 + 300);  // one backoff step at most, plus scheduling slack
    CHECK_EQ(hcount("re:wait", "waiter"), std::string("1"));
    CHECK_EQ(waiter.release(), Status::ok);
}

TEST(wait_runs_out_while_held) {
    Client a, b;
    ReentrantLock holder(a.conn, "re:wait-out", "holder"), waiter(b.conn, "re:wait-out", "w");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    const auto start = std::chrono::steady_clock::now();
    CHECK_EQ(waiter.try_acquire(10000, 300), Status::busy);
    const std::int64_t took = ms_since(start);
    // The port's clock counts whole milliseconds: the wait may end up to 1 ms early.
    CHECK(took >= 299 && took <= 300 + 300);
    if (check::failed()) std::printf("      took %lld ms\n", static_cast<long long>(took));
    CHECK(waiter.token().empty());
    CHECK_EQ(holder.release(), Status::ok);
}

TEST(not_owner_once_another_owner_took_the_key) {
    Client a, b;
    ReentrantLock la(a.conn, "re:taken", "first"), lb(b.conn, "re:taken", "second");
    REQUIRE_EQ(la.acquire(5000), Status::ok);
    REQUIRE_EQ(la.acquire(5000), Status::ok);
    CHECK_EQ(cli({"DEL", "re:taken"}), std::string("1"));  // as if it had expired
    REQUIRE_EQ(lb.acquire(5000), Status::ok);
    CHECK_EQ(la.extend(5000), Status::not_owner);
    CHECK(!la.held());
    CHECK(la.token().empty());
    CHECK_EQ(la.count(), 0U);
    CHECK_EQ(la.release(), Status::invalid_argument);  // the hold is known lost
    REQUIRE_EQ(la.acquire(5000), Status::busy);
    CHECK_EQ(cli({"DEL", "re:taken"}), std::string("1"));
    REQUIRE_EQ(la.acquire(5000), Status::ok);
    CHECK_EQ(cli({"DEL", "re:taken"}), std::string("1"));
    REQUIRE_EQ(lb.acquire(5000), Status::ok);
    CHECK_EQ(la.release(), Status::not_owner);
    CHECK(la.token().empty());
    CHECK_EQ(hcount("re:taken", "second"), std::string("1"));  // untouched
    CHECK_EQ(lb.release(), Status::ok);
}

TEST(expired_once_the_key_vanished) {
    Client c;
    ReentrantLock lock(c.conn, "re:gone", "o");
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(cli({"DEL", "re:gone"}), std::string("1"));
    CHECK_EQ(lock.release(), Status::expired);
    CHECK(lock.token().empty());
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(cli({"DEL", "re:gone"}), std::string("1"));
    CHECK_EQ(lock.extend(5000), Status::expired);
    CHECK(!lock.held());
    // Expiry by TTL, on the server's clock.
    REQUIRE_EQ(lock.acquire(100), Status::ok);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    CHECK(!lock.held());
    CHECK_EQ(lock.extend(5000), Status::expired);  // local validity ran out: nothing sent
    CHECK_EQ(lock.release(), Status::expired);
    CHECK_EQ(cli({"EXISTS", "re:gone"}), std::string("0"));
}

TEST(plain_lock_on_a_reentrant_key) {
    Client a, b;
    ReentrantLock re(a.conn, "re:interop1", "re-owner");
    REQUIRE_EQ(re.acquire(5000), Status::ok);
    Lock plain(b.conn, "re:interop1");
    CHECK_EQ(plain.acquire(5000), Status::busy);  // SET NX sees the key
    REQUIRE_EQ(plain.adopt("re-owner"), Status::ok);
    CHECK_EQ(plain.extend(5000), Status::not_owner);  // WRONGTYPE
    REQUIRE_EQ(plain.adopt("re-owner"), Status::ok);
    CHECK_EQ(plain.release(), Status::not_owner);
    CHECK_EQ(hcount("re:interop1", "re-owner"), std::string("1"));
    CHECK_EQ(re.release(), Status::ok);
    CHECK_EQ(cli({"EXISTS", "re:interop1"}), std::string("0"));
}

TEST(reentrant_lock_on_a_plain_key) {
    Client a, b;
    Lock plain(a.conn, "re:interop2");
    ReentrantLock re(b.conn, "re:interop2", "re-owner");
    REQUIRE_EQ(plain.acquire(5000), Status::ok);
    CHECK_EQ(re.acquire(5000), Status::busy);
    CHECK_EQ(re.try_acquire(5000, 100), Status::busy);
    ReentrantInfo info;
    CHECK_EQ(re.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    CHECK(info.ttl_ms > 4000);
    CHECK_EQ(plain.release(), Status::ok);

    // A hold lost to a plain lock: release and extend are not_owner and leave the key alone.
    REQUIRE_EQ(re.acquire(5000), Status::ok);
    CHECK_EQ(cli({"DEL", "re:interop2"}), std::string("1"));
    REQUIRE_EQ(plain.acquire(5000), Status::ok);
    CHECK_EQ(re.release(), Status::not_owner);
    REQUIRE_EQ(re.acquire(5000), Status::busy);
    CHECK_EQ(cli({"GET", "re:interop2"}), std::string(plain.token()));
    CHECK_EQ(plain.release(), Status::ok);
    REQUIRE_EQ(re.acquire(5000), Status::ok);
    CHECK_EQ(cli({"DEL", "re:interop2"}), std::string("1"));
    REQUIRE_EQ(plain.acquire(5000), Status::ok);
    CHECK_EQ(re.extend(5000), Status::not_owner);
    CHECK(pttl("re:interop2") > 4000);
    CHECK_EQ(plain.release(), Status::ok);
}

TEST(script_digests_match_the_server) {
    // Were a hard-coded digest not the SHA1 of the text sent, every EVALSHA of that script would
    // fail with NOSCRIPT and fall back to EVAL: with the right ones, each of the four scripts is
    // sent as EVAL exactly once after the cache is flushed.
    CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(cli({"CONFIG", "RESETSTAT"}), std::string("OK"));
    Client c;
    ReentrantLock lock(c.conn, "re:digest", "d");
    ReentrantInfo info;
    for (int round = 0; round < 3; ++round) {
        CHECK_EQ(lock.acquire(5000), Status::ok);
        CHECK_EQ(lock.acquire(5000), Status::ok);
        CHECK_EQ(lock.extend(5000), Status::ok);
        CHECK_EQ(lock.query(info), Status::ok);
        CHECK_EQ(lock.release(), Status::ok);
        CHECK_EQ(lock.release(), Status::ok);
    }
    const std::string stats = cli({"INFO", "commandstats"});
    CHECK(stats.find("cmdstat_eval:calls=4,") != std::string::npos);
    CHECK(stats.find("cmdstat_evalsha:calls=18,") != std::string::npos);
    if (check::failed()) std::printf("      %s\n", stats.c_str());
    // The digests the server computed are the ones the library sends.
    CHECK_EQ(
        cli({"SCRIPT", "EXISTS", "d3bb8a7134ecd71f7dc54ad79459da5cef967ed3",
             "344e084f8992ca5ac8c0f4939276a8f416fe8cdf", "1c4ae5faf4ddbf4062190d5a5fe147af14bfa90e",
             "fe82d83f63f68afc7821a867fc7865b0c31cb17e"}),
        std::string("1\n1\n1\n1"));
}

TEST(release_after_script_flush_uses_eval) {
    Client c;
    ReentrantLock lock(c.conn, "re:flush", "f");
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(hcount("re:flush", "f"), std::string("1"));
    CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.extend(5000), Status::ok);
    CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(cli({"EXISTS", "re:flush"}), std::string("0"));
}

TEST(longest_requests_fit_the_stated_buffer) {
    const std::string key(RESPLOCK_MAX_KEY_LEN, 'k');
    const std::string owner(resplock::max_token_len, 'o');
    std::printf("    reentrant_buffer_min() = %zu, lock_buffer_min() = %zu\n",
                resplock::reentrant_buffer_min(), resplock::lock_buffer_min());
    {
        // One byte short: the EVAL sent after NOSCRIPT does not fit and is refused unsent.
        Client c(resplock::reentrant_buffer_min() - 1);
        ReentrantLock lock(c.conn, key, owner);
        CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
        CHECK_EQ(lock.acquire(resplock::max_ttl_ms), Status::too_large);
        CHECK(!c.conn.request_sent());
        CHECK(lock.token().empty());
        CHECK_EQ(cli({"EXISTS", key}), std::string("0"));
    }
    Client c(resplock::reentrant_buffer_min());
    ReentrantLock lock(c.conn, key, owner);
    ReentrantInfo info;
    CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.acquire(resplock::max_ttl_ms), Status::ok);
    CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.extend(resplock::max_ttl_ms), Status::ok);
    CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.query(info), Status::ok);
    CHECK_EQ(info.count, 1U);
    CHECK_EQ(cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(cli({"EXISTS", key}), std::string("0"));
}

TEST(bad_arguments_are_refused_without_io) {
    Client c;
    const std::string long_key(RESPLOCK_MAX_KEY_LEN + 1, 'k');
    const std::string long_owner(resplock::max_token_len + 1, 'o');
    ReentrantLock no_key(c.conn, ""), big_key(c.conn, long_key, "o"),
        big_owner(c.conn, "re:bad", long_owner);
    ReentrantInfo info;
    for (ReentrantLock* l : {&no_key, &big_key, &big_owner}) {
        CHECK_EQ(l->acquire(5000), Status::invalid_argument);
        CHECK_EQ(l->try_acquire(5000, 100), Status::invalid_argument);
        CHECK_EQ(l->release(), Status::invalid_argument);
        CHECK_EQ(l->extend(5000), Status::invalid_argument);
        CHECK_EQ(l->query(info), Status::invalid_argument);
        CHECK(l->token().empty());
    }
    CHECK(!c.conn.connected());
    ReentrantLock ok(c.conn, "re:bad", "o");
    CHECK_EQ(ok.acquire(0), Status::invalid_argument);
    CHECK_EQ(ok.acquire(resplock::max_ttl_ms + 1), Status::invalid_argument);
    CHECK_EQ(ok.extend(5000), Status::invalid_argument);  // nothing held
    CHECK_EQ(ok.try_acquire(5000, resplock::max_ttl_ms + 1), Status::invalid_argument);
    CHECK(!c.conn.connected());
    CHECK_EQ(cli({"EXISTS", "re:bad"}), std::string("0"));
}
