// Acquisition options against a real redis-server: fencing numbers (strictly increasing, from the
// server's clock or past a counter above it, and still increasing after the counter is lost or
// the server restarts without persistence), once-per-interval locks and waking a waiter on
// release; their scripts' digests and NOSCRIPT fallback, ACL fallbacks, the buffer they need,
// and mutual exclusion of contending waiters recorded on the server.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "lock_cases.hpp"
#include "ports.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/ports/posix.h"

namespace {

using lock_cases::as_ll;
using lock_cases::ms_since;
using lock_cases::pttl;
using lock_cases::server;
using resplock::AcquireOptions;
using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::Status;
using Clock = std::chrono::steady_clock;

// The acquire script's EVAL needs 991 bytes at RESPLOCK_MAX_KEY_LEN (three keys); 1024 fits.
struct Client : support::PosixClient {
    explicit Client(std::size_t buf_size = 1024, const char* user = nullptr,
                    const char* password = nullptr)
        : PosixClient(server().port(), buf_size, user, password) {}
};

// KEY's companion key with `suffix` (companion_prefix: in KEY's cluster slot).
std::string companion(const std::string& key, const char* suffix) {
    char out[RESPLOCK_MAX_KEY_LEN + resplock::companion_prefix_extra];
    const std::size_t n = resplock::companion_prefix(key, out);
    return std::string(out, n) + suffix;
}

AcquireOptions fenced() {
    AcquireOptions o;
    o.fence = true;
    return o;
}
AcquireOptions once_per(std::uint32_t ms, bool fence = false) {
    AcquireOptions o;
    o.once_per_ms = ms;
    o.fence = fence;
    return o;
}
AcquireOptions waking() {
    AcquireOptions o;
    o.wake = true;
    return o;
}

// `field` (calls=, rejected_calls=, ...) of one command in INFO commandstats; 0 if absent.
long long stat(const std::string& stats, const std::string& command, const char* field = "calls") {
    const std::size_t line = stats.find("cmdstat_" + command + ":");
    if (line == std::string::npos) return 0;
    const std::size_t end = stats.find('\n', line);
    const std::size_t at = stats.find(std::string(field) + "=", line);
    if (at == std::string::npos || at > end) return 0;
    return std::atoll(stats.c_str() + at + std::string(field).size() + 1);
}

long long counter(const std::string& key) {
    return std::atoll(server().cli({"GET", key}).c_str());
}

// A fence number as the server stores it (GET KEY:fence), exactly: up to 2^63 - 1.
std::uint64_t stored(const support::RedisServer& s, const std::string& key) {
    return std::strtoull(s.cli({"GET", key}).c_str(), nullptr, 10);
}

// The server's clock (TIME) in microseconds.
std::uint64_t server_micros(const support::RedisServer& s) {
    const std::string t = s.cli({"TIME"});
    const std::size_t nl = t.find('\n');
    if (nl == std::string::npos) return 0;
    return std::strtoull(t.c_str(), nullptr, 10) * 1000000U +
           std::strtoull(t.c_str() + nl + 1, nullptr, 10);
}

TEST(server_started) {
    REQUIRE(server().running());
}

TEST(scripts_match_their_digests_and_fall_back_to_eval_after_a_flush) {
    // Were a hard-coded SHA1 not the digest of the text sent, every EVALSHA would fail with
    // NOSCRIPT and fall back to EVAL: two uses of each script after a flush must need one EVAL
    // each, and the server then knows both digests.
    for (int pass = 0; pass < 2; ++pass) {
        CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
        CHECK_EQ(server().cli({"CONFIG", "RESETSTAT"}), std::string("OK"));
        Client c;
        Lock lock(c.conn, "opt:digest");
        std::uint64_t fence = 0;
        for (int i = 0; i < 2; ++i) {
            CHECK_EQ(lock.acquire(5000, once_per(pass == 0 ? 1 : 0, true), &fence), Status::ok);
            CHECK_EQ(lock.release(waking()), Status::ok);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the 1 ms marker ends
        }
        const std::string stats = server().cli({"INFO", "commandstats"});
        CHECK_EQ(stat(stats, "eval"), 2LL);
        CHECK_EQ(stat(stats, "evalsha"), 4LL);
        CHECK_EQ(server().cli({"SCRIPT", "EXISTS", "61429715f14556dea4eeee434d0ac26b51123643",
                               "bbdb698c6b97f01e8d686165c74d747ab585f97e"}),
                 std::string("1\n1"));
        if (check::failed()) std::printf("      %s\n", stats.c_str());
    }
}

TEST(fence_numbers_increase_across_two_clients_and_busy_attempts_consume_none) {
    server().cli({"DEL", "opt:fence", "{opt:fence}:fence"});
    Client a, b;
    Lock la(a.conn, "opt:fence"), lb(b.conn, "opt:fence");
    std::uint64_t last = 0;
    for (int round = 0; round < 20; ++round) {
        Lock& first = round % 2 == 0 ? la : lb;
        Lock& second = round % 2 == 0 ? lb : la;
        std::uint64_t f1 = 0, f2 = 0, unused = 12345;
        REQUIRE_EQ(first.acquire(5000, fenced(), &f1), Status::ok);
        const long long before = counter("{opt:fence}:fence");
        CHECK_EQ(second.acquire(5000, fenced(), &unused), Status::busy);
        CHECK_EQ(unused, std::uint64_t{12345});  // set only on ok
        CHECK_EQ(counter("{opt:fence}:fence"), before);
        CHECK_EQ(first.release(), Status::ok);
        REQUIRE_EQ(second.acquire(5000, fenced(), &f2), Status::ok);
        CHECK_EQ(second.release(), Status::ok);
        CHECK(f1 > last);
        CHECK(f2 > f1);
        CHECK_EQ(stored(server(), "{opt:fence}:fence"), f2);  // the last number is kept
        last = f2;
    }
    CHECK_EQ(pttl("{opt:fence}:fence"), -1LL);  // the counter never expires
    std::uint64_t f = 0;
    CHECK_EQ(la.acquire(5000, fenced(), nullptr), Status::invalid_argument);
    CHECK_EQ(la.acquire(5000, once_per(resplock::max_ttl_ms + 1U), &f), Status::invalid_argument);
}

TEST(fence_with_once_per_counts_only_granted_acquisitions) {
    server().cli({"DEL", "opt:both", "{opt:both}:fence", "{opt:both}:once"});
    Client a, b;
    Lock la(a.conn, "opt:both"), lb(b.conn, "opt:both");
    std::uint64_t f = 0;
    REQUIRE_EQ(la.acquire(5000, once_per(800, true), &f), Status::ok);
    const std::uint64_t first = f;
    CHECK(first >= 1);
    CHECK_EQ(la.release(), Status::ok);
    CHECK_EQ(lb.acquire(5000, once_per(800, true), &f), Status::busy);
    CHECK_EQ(f, first);
    CHECK_EQ(stored(server(), "{opt:both}:fence"), first);  // a busy attempt takes no number
    const long long marker = pttl("{opt:both}:once");
    CHECK(marker > 0 && marker <= 800);
    CHECK_EQ(lb.try_acquire(5000, 2000, once_per(800, true), &f), Status::ok);
    CHECK(f > first);
    CHECK_EQ(stored(server(), "{opt:both}:fence"), f);
    CHECK_EQ(lb.release(), Status::ok);
}

// Acquires `lock` with a fence, releases it, and returns the number (0 on any failure).
std::uint64_t fenced_number(Lock& lock) {
    std::uint64_t f = 0;
    if (!CHECK_EQ(lock.acquire(5000, fenced(), &f), Status::ok)) return 0;
    CHECK_EQ(lock.release(), Status::ok);
    return f;
}

TEST(fence_numbers_strictly_increase_over_many_acquisitions) {
    server().cli({"DEL", "opt:many", "{opt:many}:fence"});
    Client c;
    Lock lock(c.conn, "opt:many");
    std::uint64_t last = 0;
    int increases = 0;
    const int rounds = 1000;
    for (int i = 0; i < rounds; ++i) {
        const std::uint64_t f = fenced_number(lock);
        if (!CHECK(f > last)) {
            std::printf("      round %d: %llu after %llu\n", i, static_cast<unsigned long long>(f),
                        static_cast<unsigned long long>(last));
            break;
        }
        last = f;
        ++increases;
    }
    CHECK_EQ(increases, rounds);
    CHECK_EQ(stored(server(), "{opt:many}:fence"), last);
    std::printf("      %d numbers, the last %llu\n", increases,
                static_cast<unsigned long long>(last));
}

TEST(fence_number_is_the_servers_clock_in_microseconds_when_the_counter_is_below_it) {
    server().cli({"SET", "{opt:clock}:fence", "41"});
    Client c;
    Lock lock(c.conn, "opt:clock");
    REQUIRE_EQ(c.conn.connect(resplock::Deadline::after(c.port, 2000)), Status::ok);
    // TIME before and after, on the same server: the script's TIME lies between them.
    const std::uint64_t before = server_micros(server());
    const std::uint64_t f = fenced_number(lock);
    const std::uint64_t after = server_micros(server());
    if (!CHECK(before > 1000000000000000U && before <= f && f <= after)) {
        std::printf("      TIME %llu, number %llu, TIME %llu\n",
                    static_cast<unsigned long long>(before), static_cast<unsigned long long>(f),
                    static_cast<unsigned long long>(after));
    }
    CHECK_EQ(stored(server(), "{opt:clock}:fence"), f);
    CHECK_EQ(pttl("{opt:clock}:fence"), -1LL);  // SET without a TTL, as INCR left it
}

TEST(fence_number_follows_a_counter_above_the_clock_by_one_exactly) {
    // Beyond 2^53 a Lua number (a double) is no longer exact: the script counts with INCR and
    // sends the digits.
    server().cli({"SET", "{opt:high}:fence", "9000000000000000000"});
    Client c;
    Lock lock(c.conn, "opt:high");
    CHECK_EQ(fenced_number(lock), std::uint64_t{9000000000000000001U});
    CHECK_EQ(fenced_number(lock), std::uint64_t{9000000000000000002U});
    CHECK_EQ(server().cli({"GET", "{opt:high}:fence"}), std::string("9000000000000000002"));
    // Up to INT64_MAX, the most INCR holds; past it the script fails after its SET (the error
    // is the server's, the token is kept so release() removes the key) and the counter stays.
    server().cli({"SET", "{opt:high}:fence", "9223372036854775806"});
    CHECK_EQ(fenced_number(lock), std::uint64_t{9223372036854775807U});
    std::uint64_t f = 0;
    CHECK_EQ(lock.acquire(5000, fenced(), &f), Status::server_error);
    CHECK_EQ(f, std::uint64_t{0});
    CHECK(!lock.held());
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(server().cli({"GET", "{opt:high}:fence"}), std::string("9223372036854775807"));
    server().cli({"DEL", "{opt:high}:fence"});
}

TEST(fence_numbers_still_increase_after_the_counter_is_lost) {
    // What a restart without persistence, or a failover to a replica that missed the last
    // numbers, leaves: no KEY:fence. The next number comes from the clock, past every earlier one.
    server().cli({"DEL", "opt:lost", "{opt:lost}:fence"});
    Client c;
    Lock lock(c.conn, "opt:lost");
    std::uint64_t highest = 0;
    for (int round = 0; round < 5; ++round) {
        for (int i = 0; i < 20; ++i) {
            const std::uint64_t f = fenced_number(lock);
            CHECK(f > highest);
            highest = f;
        }
        CHECK_EQ(server().cli({"DEL", "{opt:lost}:fence"}), std::string("1"));
        const std::uint64_t next = fenced_number(lock);
        if (!CHECK(next > highest)) {
            std::printf("      after DEL: %llu, highest before %llu\n",
                        static_cast<unsigned long long>(next),
                        static_cast<unsigned long long>(highest));
        }
        highest = next;
    }
}

TEST(fence_numbers_still_increase_after_a_restart_without_persistence) {
    support::RedisServer own;  // its own server: the others' keys and settings stay
    REQUIRE(own.running());
    std::uint64_t highest = 0;
    {
        support::PosixClient c(own.port(), 1024);
        Lock lock(c.conn, "opt:restart");
        for (int i = 0; i < 10; ++i) {
            const std::uint64_t f = fenced_number(lock);
            CHECK(f > highest);
            highest = f;
        }
    }
    CHECK_EQ(stored(own, "{opt:restart}:fence"), highest);
    own.kill();
    REQUIRE(own.restart());
    CHECK_EQ(own.cli({"EXISTS", "{opt:restart}:fence"}), std::string("0"));  // nothing kept
    support::PosixClient c(own.port(), 1024);
    Lock lock(c.conn, "opt:restart");
    const std::uint64_t next = fenced_number(lock);
    if (!CHECK(next > highest)) {
        std::printf("      after the restart: %llu, highest before %llu\n",
                    static_cast<unsigned long long>(next),
                    static_cast<unsigned long long>(highest));
    }
    CHECK(fenced_number(lock) > next);
}

TEST(once_per_interval_is_busy_until_the_marker_ends_even_after_release) {
    server().cli({"DEL", "opt:once", "{opt:once}:once"});
    Client a, b;
    Lock la(a.conn, "opt:once"), lb(b.conn, "opt:once");
    const auto start = Clock::now();
    REQUIRE_EQ(la.acquire(5000, once_per(800)), Status::ok);
    CHECK_EQ(la.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "opt:once"}), std::string("0"));
    CHECK_EQ(la.acquire(5000, once_per(800)), Status::busy);
    CHECK_EQ(lb.acquire(5000, once_per(800)), Status::busy);
    CHECK(pttl("{opt:once}:once") > 0);
    CHECK_EQ(lb.try_acquire(5000, 2000, once_per(800)), Status::ok);
    const auto waited = ms_since(start);
    // The marker was set by the first acquire: the wait ends when it does (the server's clock).
    if (!CHECK(waited >= 700 && waited < 1500))
        std::printf("      waited %lld ms\n", as_ll(waited));
    CHECK_EQ(lb.release(), Status::ok);
}

TEST(once_per_holder_longer_than_the_interval_still_keeps_others_out) {
    server().cli({"DEL", "opt:long", "{opt:long}:once"});
    Client a, b;
    Lock la(a.conn, "opt:long"), lb(b.conn, "opt:long");
    REQUIRE_EQ(la.acquire(5000, once_per(200)), Status::ok);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    CHECK_EQ(pttl("{opt:long}:once"), -2LL);  // the interval is over
    CHECK_EQ(lb.acquire(5000, once_per(200)), Status::busy);
    CHECK_EQ(lb.try_acquire(5000, 300, once_per(200)), Status::busy);
    CHECK_EQ(la.release(), Status::ok);
    CHECK_EQ(lb.acquire(5000, once_per(200)), Status::ok);
    CHECK_EQ(lb.release(), Status::ok);
}

// One waiter in try_acquire (wake or backoff) while a holder with a 10 s TTL releases after
// hold_ms (with wake). Returns the waiter's requests as the server counted them, and the delay
// from the start of the release to the waiter's acquisition.
struct WaitResult {
    Status status = Status::invalid_argument;
    long long requests = 0;
    long long blpops = 0;
    std::int64_t delay_ms = -1;
    std::string wake_key_exists;
};

WaitResult wait_for_release(bool wake, int hold_ms) {
    server().cli({"DEL", "opt:wake", "{opt:wake}:wake"});
    Client a, b;
    Lock holder(a.conn, "opt:wake"), waiter(b.conn, "opt:wake");
    WaitResult r;
    if (holder.acquire(10000) != Status::ok ||
        b.conn.connect(resplock::Deadline::after(b.port, 2000)) != Status::ok) {
        return r;
    }
    server().cli({"CONFIG", "RESETSTAT"});
    std::atomic<std::int64_t> acquired_at{0};
    const auto t0 = Clock::now();
    std::thread t([&] {
        r.status =
            wake ? waiter.try_acquire(10000, 5000, waking()) : waiter.try_acquire(10000, 5000);
        acquired_at = ms_since(t0);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    const std::int64_t released_at = ms_since(t0);
    const Status released = wake ? holder.release(waking()) : holder.release();
    t.join();
    const std::string stats = server().cli({"INFO", "commandstats"});
    r.wake_key_exists = server().cli({"EXISTS", "{opt:wake}:wake"});
    CHECK_EQ(released, Status::ok);
    r.blpops = stat(stats, "blpop");
    // The waiter's own requests (not the commands the scripts call, which commandstats counts
    // too), less the holder's release script.
    r.requests = (wake ? r.blpops : stat(stats, "set") + stat(stats, "pttl")) +
                 stat(stats, "evalsha") + stat(stats, "eval") - 1;
    r.delay_ms = acquired_at - released_at;
    if (r.status == Status::ok) (void)waiter.release();
    return r;
}

TEST(wake_hands_the_lock_over_at_release_with_fewer_requests_than_backoff) {
    const WaitResult w = wait_for_release(true, 1000);
    const WaitResult s = wait_for_release(false, 1000);
    CHECK_EQ(w.status, Status::ok);
    CHECK_EQ(s.status, Status::ok);
    CHECK(w.blpops >= 1);
    CHECK_EQ(s.blpops, 0LL);
    // The waiter was blocked in BLPOP when the release came: it popped the item at once.
    CHECK_EQ(w.wake_key_exists, std::string("0"));
    CHECK(w.delay_ms >= 0 && w.delay_ms < 100);
    CHECK(w.requests < s.requests);
    std::printf(
        "      wake: %lld requests (%lld BLPOP), acquired %lld ms after the release;"
        " backoff: %lld requests, %lld ms\n",
        w.requests, w.blpops, as_ll(w.delay_ms), s.requests, as_ll(s.delay_ms));
}

TEST(wake_waiter_follows_a_holder_that_never_releases_at_its_ttl) {
    server().cli({"DEL", "opt:dead"});
    Client a, b;
    Lock holder(a.conn, "opt:dead"), waiter(b.conn, "opt:dead");
    REQUIRE_EQ(holder.acquire(600), Status::ok);
    const auto start = Clock::now();
    CHECK_EQ(waiter.try_acquire(5000, 3000, waking()), Status::ok);
    const auto waited = ms_since(start);
    if (!CHECK(waited >= 500 && waited < 900)) std::printf("      waited %lld ms\n", as_ll(waited));
    CHECK_EQ(waiter.release(waking()), Status::ok);
    CHECK_EQ(holder.release(waking()), Status::expired);
}

// Redis ends a BLPOP timeout only at its next timer tick (every 1000/hz ms): a waiter that blocks
// in BLPOP near the end of its wait must still return within the wait plus one call. With hz 1
// the tick comes once a second, so an unbounded BLPOP would overrun a 150 ms wait by up to 1 s.
TEST(wake_waiting_never_overruns_the_wait_by_more_than_one_call) {
    struct RestoreHz {
        ~RestoreHz() { server().cli({"CONFIG", "SET", "hz", "10"}); }
    } restore;
    REQUIRE_EQ(server().cli({"CONFIG", "SET", "hz", "1"}), std::string("OK"));
    server().cli({"DEL", "opt:late", "{opt:late}:wake"});
    Client a, b;
    Lock holder(a.conn, "opt:late"), waiter(b.conn, "opt:late");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    for (int round = 0; round < 3; ++round) {
        const auto start = Clock::now();
        CHECK_EQ(waiter.try_acquire(10000, 150, waking()), Status::busy);
        const auto waited = ms_since(start);
        // 150 ms, then at most a late wake-up (5 ms) and one attempt (reconnect and EVAL).
        CHECK(waited >= 148 && waited < 150 + 60);  // the port clock counts whole ms
        std::printf("      round %d waited %lld ms\n", round, as_ll(waited));
    }
    CHECK_EQ(holder.release(waking()), Status::ok);
}

TEST(wake_falls_back_to_sleeping_when_the_acl_forbids_blpop) {
    server().cli({"DEL", "opt:acl", "{opt:acl}:wake"});
    REQUIRE_EQ(
        server().cli({"ACL",     "SETUSER",  "noblock", "on",    ">pw",    "resetkeys", "~opt:*",
                      "~{opt:*", "-@all",    "+set",    "+get",  "+pttl",  "+pexpire",  "+del",
                      "+eval",   "+evalsha", "+incr",   "+time", "+rpush", "-blpop"}),
        std::string("OK"));
    Client a, b(1024, "noblock", "pw");
    Lock holder(a.conn, "opt:acl"), waiter(b.conn, "opt:acl");
    REQUIRE_EQ(holder.acquire(10000), Status::ok);
    REQUIRE_EQ(waiter.acquire(10000), Status::busy);  // connected and authenticated
    server().cli({"CONFIG", "RESETSTAT"});
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        (void)holder.release(waking());
    });
    const auto start = Clock::now();
    const Status s = waiter.try_acquire(10000, 3000, waking());
    const auto waited = ms_since(start);
    t.join();
    CHECK_EQ(s, Status::ok);
    if (!CHECK(waited >= 350 && waited < 1000))
        std::printf("      waited %lld ms\n", as_ll(waited));
    // Refused once, then never tried again in that wait.
    const std::string stats = server().cli({"INFO", "commandstats"});
    CHECK_EQ(stat(stats, "blpop", "rejected_calls"), 1LL);
    CHECK_EQ(stat(stats, "blpop"), 0LL);
    CHECK_EQ(waiter.release(waking()), Status::ok);

    // Without +time the fence script stops after its SET: the server's error (an ERR naming the
    // ACL) is returned, the lock is not claimed, and the token is kept so release() removes the
    // key the script did set.
    REQUIRE_EQ(server().cli({"ACL", "SETUSER", "noblock", "-time"}), std::string("OK"));
    std::uint64_t f = 0;
    CHECK_EQ(waiter.acquire(10000, fenced(), &f), Status::server_error);
    CHECK(!waiter.held());
    CHECK(!waiter.token().empty());
    CHECK_EQ(server().cli({"GET", "opt:acl"}), std::string(waiter.token()));
    CHECK_EQ(waiter.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "opt:acl"}), std::string("0"));
}

TEST(requests_too_large_for_the_buffer_are_refused_before_sending) {
    // The longest request of the options: the acquire script's EVAL with a key of
    // RESPLOCK_MAX_KEY_LEN bytes whose companions have the longest names (a '}' and no tag:
    // {XY}KEY:once, {XY}KEY:fence), a 10-digit TTL and interval, and a token with the longest
    // owner label: 1024 bytes with 32-digit tokens and 32-byte labels.
    const std::size_t need = 991 + resplock::token_len - 32 +
                             (resplock::max_owner_len != 0 ? resplock::max_owner_len + 1 : 0);
    CHECK_EQ(resplock::lock_options_buffer_min(), need);
    const std::string key(RESPLOCK_MAX_KEY_LEN, '}');
    const std::string once_key = companion(key, ":once"), fence_key = companion(key, ":fence");
    const std::string wake_key = companion(key, ":wake");
    const std::uint32_t ttl = resplock::max_ttl_ms;
    server().cli({"DEL", key, once_key, fence_key});
    CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    Client small(resplock::lock_buffer_min()), short_by_one(need - 1), exact(need);
    Lock ls(small.conn, key), l792(short_by_one.conn, key), l793(exact.conn, key);
    const std::string label(resplock::max_owner_len, 'o');
    AcquireOptions longest = once_per(ttl, true);
    longest.owner = label;
    std::uint64_t f = 0;
    CHECK_EQ(l792.acquire(ttl, longest, &f), Status::too_large);
    CHECK(!short_by_one.conn.request_sent());
    CHECK_EQ(server().cli({"EXISTS", key, once_key, fence_key}), std::string("0"));
    // A buffer of lock_buffer_min() bytes holds it once that minimum covers the options.
    const bool fits = resplock::lock_buffer_min() >= need;
    CHECK_EQ(ls.acquire(ttl, longest, &f), fits ? Status::ok : Status::too_large);
    if (fits) CHECK_EQ(ls.release(), Status::ok);
    server().cli({"DEL", once_key, fence_key});
    CHECK_EQ(l793.acquire(ttl, longest, &f), Status::ok);
    CHECK(f >= 1);
    CHECK_EQ(l793.release(waking()), Status::ok);
    server().cli({"DEL", once_key, wake_key});
    // The plain lock still works with lock_buffer_min().
    CHECK_EQ(ls.acquire(5000), Status::ok);
    CHECK_EQ(ls.release(), Status::ok);
}

TEST(contending_wake_waiters_never_overlap_in_the_servers_record) {
    server().cli({"DEL", "opt:mutex", "{opt:mutex}:fence", "{opt:mutex}:wake", "opt:record"});
    constexpr int kThreads = 4;
    std::atomic<bool> failed{false};
    std::atomic<int> total{0};
    const auto end = Clock::now() + std::chrono::milliseconds(1500);
    std::vector<std::thread> threads;
    for (int id = 0; id < kThreads; ++id) {
        threads.emplace_back([&, id] {
            Client c;
            Lock lock(c.conn, "opt:mutex");
            AcquireOptions o = waking();
            o.fence = true;
            while (Clock::now() < end) {
                std::uint64_t f = 0;
                const Status s = lock.try_acquire(5000, 3000, o, &f);
                if (s == Status::busy) continue;
                if (s != Status::ok) {
                    failed = true;
                    return;
                }
                // While held, record entry and exit on the server through the same connection.
                const std::string in = "+" + std::to_string(id) + ":" + std::to_string(f);
                const std::string out = "-" + std::to_string(id) + ":" + std::to_string(f);
                const std::string_view push_in[3] = {"RPUSH", "opt:record", in};
                const std::string_view push_out[3] = {"RPUSH", "opt:record", out};
                resplock::resp::Reply reply;
                if (c.conn.command(push_in, 3, reply) != Status::ok) failed = true;
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                if (c.conn.command(push_out, 3, reply) != Status::ok) failed = true;
                if (lock.release(o) != Status::ok) failed = true;
                ++total;
            }
        });
    }
    for (std::thread& t : threads)
        t.join();
    CHECK(!failed);
    const std::string record = server().cli({"LRANGE", "opt:record", "0", "-1"});
    std::vector<std::string> entries;
    for (std::size_t at = 0; at < record.size();) {
        const std::size_t nl = record.find('\n', at);
        entries.push_back(record.substr(at, nl == std::string::npos ? nl : nl - at));
        at = nl == std::string::npos ? record.size() : nl + 1;
    }
    CHECK_EQ(entries.size(), static_cast<std::size_t>(2 * total.load()));
    CHECK(total.load() >= 20);
    long long last_fence = 0;
    std::vector<int> per_thread(kThreads, 0);
    for (std::size_t i = 0; i + 1 < entries.size(); i += 2) {
        // Each entry is followed by the same holder's exit: no one else got in between.
        if (!CHECK(entries[i][0] == '+' && entries[i + 1] == "-" + entries[i].substr(1))) {
            std::printf("      overlap at %zu: %s %s\n", i, entries[i].c_str(),
                        entries[i + 1].c_str());
            break;
        }
        const long long f = std::atoll(entries[i].c_str() + entries[i].find(':') + 1);
        CHECK(f > last_fence);
        last_fence = f;
        ++per_thread[std::atoi(entries[i].c_str() + 1)];
    }
    for (int id = 0; id < kThreads; ++id)
        CHECK(per_thread[id] >= 1);
    std::printf("      %d acquisitions by %d threads\n", total.load(), kThreads);
}

}  // namespace
