// QuorumLock (src/variants/quorum_lock.cpp) over three or five mock ports sharing one clock: the
// exact requests each server gets; grants by all, a majority or a minority (and the keys taken
// back on every server then, even where the reply was lost); busy; validity counted from before
// the first send, with each server waited for a tenth of the TTL; extend, release and query with
// their majorities and a NOSCRIPT second pass only where needed; adopt; invalid constructions.
#include <cstring>

#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/quorum_lock.hpp"
#include "wire.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::LockInfo;
using resplock::LockState;
using resplock::QuorumLock;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

using support::with_timeout;
using wire::noscript;
using wire::owner_sha;
using wire::owner_text;
using wire::token0;
using wire::token1;
using wire::zeros;

constexpr std::size_t max_servers = 5;

// Requests for key "k".
std::string_view set(std::string_view token, std::string_view ttl = "1000") {
    return wire::cmd({"SET", "k", token, "NX", "PX", ttl});
}
const std::string_view release0 = wire::cmd({"EVALSHA", owner_sha, "1", "k", token0});
const std::string_view release0_text = wire::cmd({"EVAL", owner_text, "1", "k", token0});
const std::string_view extend0 = wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "2000"});
const std::string_view query_k = wire::cmd({"EVALSHA", owner_sha, "1", "k"});

// The servers' mock ports, seen by the lock through ports that read one shared clock (the
// quorum lock requires it): whatever one mock's clock moves by (a timeout, a delay, a sleep),
// every server's clock moves by.
struct Servers {
    MockPort mocks[max_servers];
    std::uint32_t now = mocks[0].now_ms;
    std::uint32_t seen[max_servers];
    struct Link {
        Servers* servers;
        std::size_t index;
    } links[max_servers];

    Servers() {
        for (std::size_t i = 0; i < max_servers; ++i) {
            seen[i] = now;
            links[i] = {this, i};
        }
    }
    Servers(const Servers&) = delete;
    Servers& operator=(const Servers&) = delete;

    void sync() {
        for (std::size_t i = 0; i < max_servers; ++i)
            now += mocks[i].now_ms - seen[i];
        for (std::size_t i = 0; i < max_servers; ++i)
            mocks[i].now_ms = seen[i] = now;
    }
    void advance(std::uint32_t ms) {
        sync();
        now += ms;
        sync();
    }

    static Link& link(void* ctx) { return *static_cast<Link*>(ctx); }
    static resplock_port_t inner(void* ctx) {
        return link(ctx).servers->mocks[link(ctx).index].port();
    }
    static std::int32_t connect(void* ctx, const char* host, std::uint16_t port, std::uint32_t ms) {
        const resplock_port_t p = inner(ctx);
        const std::int32_t r = p.connect(p.ctx, host, port, ms);
        link(ctx).servers->sync();
        return r;
    }
    static std::int32_t send(void* ctx, const std::uint8_t* data, std::size_t len,
                             std::uint32_t ms) {
        const resplock_port_t p = inner(ctx);
        const std::int32_t r = p.send(p.ctx, data, len, ms);
        link(ctx).servers->sync();
        return r;
    }
    static std::int32_t recv(void* ctx, std::uint8_t* buf, std::size_t len, std::uint32_t ms) {
        const resplock_port_t p = inner(ctx);
        const std::int32_t r = p.recv(p.ctx, buf, len, ms);
        link(ctx).servers->sync();
        return r;
    }
    static void close(void* ctx) {
        const resplock_port_t p = inner(ctx);
        p.close(p.ctx);
    }
    static std::uint32_t now_ms(void* ctx) {
        link(ctx).servers->sync();
        return link(ctx).servers->now;
    }
    static void sleep_ms(void* ctx, std::uint32_t ms) {
        const resplock_port_t p = inner(ctx);
        p.sleep_ms(p.ctx, ms);
        link(ctx).servers->sync();
    }
    static std::int32_t random(void* ctx, std::uint8_t* buf, std::size_t len) {
        const resplock_port_t p = inner(ctx);
        return p.random(p.ctx, buf, len);
    }
    resplock_port_t port(std::size_t i) {
        return {&links[i], connect, send, recv, close, now_ms, sleep_ms, random};
    }
};

struct Fixture {
    std::size_t n;
    Servers servers;
    MockPort* mocks = servers.mocks;
    resplock_port_t ports[max_servers] = {servers.port(0), servers.port(1), servers.port(2),
                                          servers.port(3), servers.port(4)};
    char bufs[max_servers][512];
    ConnectionConfig config;
    Connection c0{ports[0], config, bufs[0], sizeof bufs[0]};
    Connection c1{ports[1], config, bufs[1], sizeof bufs[1]};
    Connection c2{ports[2], config, bufs[2], sizeof bufs[2]};
    Connection c3{ports[3], config, bufs[3], sizeof bufs[3]};
    Connection c4{ports[4], config, bufs[4], sizeof bufs[4]};
    Connection* conns[max_servers] = {&c0, &c1, &c2, &c3, &c4};
    QuorumLock lock;

    explicit Fixture(std::size_t count = 3, ConnectionConfig c = {})
        : n(count), config(c), lock(conns, count, "k") {}

    MockPort& operator[](std::size_t i) { return mocks[i]; }
    std::uint32_t now() {
        servers.sync();
        return servers.now;
    }
    void advance(std::uint32_t ms) { servers.advance(ms); }
    // The first connection's random source gives tokens and jitter: make it constant.
    void constant_random() {
        mocks[0].random_next = 0;
        mocks[0].random_step = 0;
    }
    // Every server grants SET k token NX PX 1000 on a new connection.
    void acquired() {
        for (std::size_t i = 0; i < n; ++i)
            mocks[i].on_connect().expect(set(token0)).reply("+OK\r\n");
        CHECK_EQ(lock.acquire(1000), Status::ok);
    }
    bool done() const {
        bool all = true;
        for (std::size_t i = 0; i < max_servers; ++i) {
            if (!mocks[i].done()) {
                std::printf("    server %u: %s\n", static_cast<unsigned>(i),
                            mocks[i].mismatch() != nullptr ? mocks[i].mismatch() : "steps left");
                all = false;
            }
        }
        return all;
    }
    std::uint32_t connects() const {
        std::uint32_t c = 0;
        for (const MockPort& m : servers.mocks)
            c += m.connects;
        return c;
    }
};

}  // namespace

// ---- acquire ----

TEST(acquire_sets_the_key_on_every_server) {
    Fixture f;
    f.acquired();
    CHECK_EQ(f.lock.granted(), 3U);
    CHECK_EQ(f.lock.quorum(), 2U);
    CHECK(f.lock.token() == token0);
    CHECK_EQ(f.lock.remaining_ms(), 988U);
    CHECK(f.done());
}

TEST(acquire_held_with_a_majority_and_nothing_sent_to_the_others) {
    Fixture f;
    f[0].on_connect().expect(set(token0)).reply("+OK\r\n");
    f[1].on_connect().expect(set(token0)).reply("$-1\r\n");
    f[2].on_connect().expect(set(token0)).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.granted(), 2U);
    CHECK(f.lock.held());
    CHECK_EQ(f.lock.remaining_ms(), 988U);
    CHECK(f.done());
}

TEST(acquire_five_servers_three_grants_hold_despite_failures) {
    Fixture f(5, with_timeout(100));
    f[0].on_connect().expect(set(token0)).reply("+OK\r\n");
    f[1].on_connect().expect(set(token0)).recv_closed();
    f[2].on_connect().expect(set(token0)).reply("+OK\r\n");
    f[3].on_connect(RESPLOCK_PORT_REFUSED);
    f[4].on_connect().expect(set(token0)).reply("+OK\r\n");
    CHECK_EQ(f.lock.quorum(), 3U);
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.granted(), 3U);
    CHECK_EQ(f.lock.remaining_ms(), 988U);
    CHECK(f.done());
}

TEST(acquire_by_a_minority_takes_back_every_key_even_where_the_reply_was_lost) {
    Fixture f;
    f[0].on_connect().expect(set(token0)).reply("+OK\r\n").expect(release0).reply(":1\r\n");
    // Its SET may have run: the delete goes there too, on a new connection.
    f[1].on_connect()
        .expect(set(token0))
        .recv_timeout()
        .on_connect()
        .expect(release0)
        .reply(":1\r\n");
    f[2].on_connect().expect(set(token0)).reply("$-1\r\n").expect(release0).reply(":-1\r\n");
    const std::uint32_t start = f.now();
    CHECK_EQ(f.lock.acquire(1000), Status::timeout);
    CHECK_EQ(f.lock.granted(), 1U);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    // Server 1 was waited for a tenth of the TTL, not the connection's 2000 ms.
    CHECK_EQ(f.now() - start, 100U);
    CHECK(f.done());
}

TEST(acquire_busy_when_a_majority_is_impossible_and_keys_taken_back) {
    Fixture f(5);
    for (std::size_t i = 0; i < 5; ++i) {
        const bool granted = i == 1 || i == 4;
        f[i].on_connect()
            .expect(set(token0))
            .reply(granted ? "+OK\r\n" : "$-1\r\n")
            .expect(release0)
            .reply(granted ? ":1\r\n" : ":-1\r\n");
    }
    CHECK_EQ(f.lock.acquire(1000), Status::busy);
    CHECK_EQ(f.lock.granted(), 2U);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK(f.done());
}

TEST(acquire_returns_the_failure_most_servers_share) {
    // Two refused, one LOADING, two granted: connect_failed; the refused ones are tried again
    // for the delete.
    Fixture f(5);
    f[0].on_connect(RESPLOCK_PORT_REFUSED).on_connect(RESPLOCK_PORT_REFUSED);
    f[1].on_connect()
        .expect(set(token0))
        .reply("-LOADING Redis is loading the dataset in memory\r\n")
        .expect(release0)
        .reply(":0\r\n");
    f[2].on_connect().expect(set(token0)).reply("+OK\r\n").expect(release0).reply(":1\r\n");
    f[3].on_connect(RESPLOCK_PORT_REFUSED).on_connect().expect(release0).reply(":0\r\n");
    f[4].on_connect().expect(set(token0)).reply("+OK\r\n").expect(release0).reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::connect_failed);
    CHECK(f.lock.token().empty());
    CHECK(f.done());
    // A tie goes to the first server's failure.
    Fixture g;
    g[0].on_connect()
        .expect(set(token1))
        .reply("-READONLY You can't write.\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token1}));
    g[0].reply(":0\r\n");
    g[1].on_connect()
        .expect(set(token1))
        .reply("-OOM command not allowed\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token1}));
    g[1].reply(":0\r\n");
    g[2].on_connect()
        .expect(set(token1))
        .reply("+OK\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token1}));
    g[2].reply(":1\r\n");
    g[0].random_next = 0x10;
    CHECK_EQ(g.lock.acquire(1000), Status::read_only);
    CHECK(g.done());
}

TEST(acquire_validity_counts_from_before_the_first_send) {
    Fixture f;
    f[0].on_connect().expect(set(token0)).recv_delay(30).reply("+OK\r\n");
    f[1].on_connect().expect(set(token0)).reply("+OK\r\n");
    f[2].on_connect().expect(set(token0)).recv_delay(40).reply("+OK\r\n");
    const std::uint32_t start = f.now();
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.now() - start, 70U);
    CHECK_EQ(f.lock.remaining_ms(), 988U - 70U);
    CHECK(f.done());
}

TEST(acquire_waits_for_each_server_a_tenth_of_the_ttl) {
    // TTL 1000: 100 ms for the silent server 1; server 2's reply, read after server 1's wait
    // (and its own) ran out, still counts within the grace.
    Fixture f;
    f[0].on_connect().expect(set(token0)).reply("+OK\r\n");
    f[1].on_connect().expect(set(token0)).recv_timeout();
    f[2].on_connect().expect(set(token0)).reply("+OK\r\n");
    const std::uint32_t start = f.now();
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.now() - start, 100U);
    CHECK_EQ(f.lock.granted(), 2U);
    CHECK_EQ(f.lock.remaining_ms(), 988U - 100U);
    CHECK(f.done());
}

TEST(acquire_wait_is_at_least_10_ms_and_at_most_the_connection_timeout) {
    // TTL 50: a tenth is 5 ms, the floor 10 ms.
    {
        Fixture f;
        f[0].on_connect().expect(set(token0, "50")).reply("+OK\r\n");
        f[1].on_connect().expect(set(token0, "50")).recv_timeout();
        f[2].on_connect().expect(set(token0, "50")).reply("+OK\r\n");
        const std::uint32_t start = f.now();
        CHECK_EQ(f.lock.acquire(50), Status::ok);
        CHECK_EQ(f.now() - start, 10U);
        CHECK_EQ(f.lock.remaining_ms(), 48U - 10U);
        CHECK(f.done());
    }
    // TTL 10000 with a 30 ms connection timeout: 30 ms.
    Fixture f(3, with_timeout(30));
    f[0].on_connect().expect(set(token0, "10000")).reply("+OK\r\n");
    f[1].on_connect().expect(set(token0, "10000")).recv_timeout();
    f[2].on_connect().expect(set(token0, "10000")).reply("+OK\r\n");
    const std::uint32_t start = f.now();
    CHECK_EQ(f.lock.acquire(10000), Status::ok);
    CHECK_EQ(f.now() - start, 30U);
    CHECK(f.done());
}

TEST(acquire_granted_after_the_validity_ran_out_is_timeout_and_taken_back) {
    // TTL 10: 8 ms of validity (drift 2), a wait of 10 ms; the first reply comes after 9 ms.
    Fixture f;
    const std::string_view rel = wire::cmd({"EVALSHA", owner_sha, "1", "k", token0});
    f[0].on_connect()
        .expect(set(token0, "10"))
        .recv_delay(9)
        .reply("+OK\r\n")
        .expect(rel)
        .reply(":1\r\n");
    f[1].on_connect().expect(set(token0, "10")).reply("+OK\r\n").expect(rel).reply(":1\r\n");
    f[2].on_connect().expect(set(token0, "10")).reply("+OK\r\n").expect(rel).reply(":0\r\n");
    CHECK_EQ(f.lock.acquire(10), Status::timeout);
    CHECK_EQ(f.lock.granted(), 3U);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK(f.done());
}

TEST(acquire_reads_only_an_exact_ok_as_a_grant) {
    Fixture f;
    f[0].on_connect().expect(set(token0)).reply("+QUEUED\r\n").expect(release0).reply(":0\r\n");
    f[1].on_connect().expect(set(token0)).reply(":1\r\n").expect(release0).reply(":0\r\n");
    f[2].on_connect().expect(set(token0)).reply("+OK\r\n").expect(release0).reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::protocol_error);
    CHECK_EQ(f.lock.granted(), 1U);
    CHECK(f.lock.token().empty());
    CHECK(f.done());
}

TEST(acquire_refused_before_sending) {
    Fixture f;
    CHECK_EQ(f.lock.acquire(0), Status::invalid_argument);
    CHECK_EQ(f.lock.acquire(resplock::max_ttl_ms + 1), Status::invalid_argument);
    f[0].random_fails = true;
    CHECK_EQ(f.lock.acquire(1000), Status::random_failed);
    CHECK(f.lock.token().empty());
    CHECK_EQ(f.connects(), 0U);
    f[0].random_fails = false;
    f.acquired();
    CHECK_EQ(f.lock.acquire(1000), Status::invalid_argument);  // already held
    CHECK(f.lock.token() == token0);
    CHECK(f.done());
}

TEST(try_acquire_repeats_busy_attempts_until_held) {
    Fixture f;
    f.constant_random();
    const std::string_view rel = wire::cmd({"EVALSHA", owner_sha, "1", "k", zeros});
    f[0].on_connect().expect(set(zeros)).reply("$-1\r\n").expect(rel).reply(":-1\r\n");
    f[1].on_connect().expect(set(zeros)).reply("$-1\r\n").expect(rel).reply(":-1\r\n");
    f[2].on_connect().expect(set(zeros)).reply("+OK\r\n").expect(rel).reply(":1\r\n");
    for (std::size_t i = 0; i < 3; ++i)
        f[i].expect(set(zeros)).reply("+OK\r\n");
    const std::uint32_t start = f.now();
    CHECK_EQ(f.lock.try_acquire(1000, 1000), Status::ok);
    CHECK_EQ(f[0].sleeps, 1U);
    CHECK_EQ(f[0].slept_ms, 5U);
    CHECK_EQ(f.now() - start, 5U);
    CHECK_EQ(f.lock.remaining_ms(), 988U);
    CHECK(f.done());
}

TEST(try_acquire_with_no_wait_is_one_attempt_and_a_long_wait_is_refused) {
    Fixture f;
    for (std::size_t i = 0; i < 3; ++i)
        f[i].on_connect().expect(set(token0)).reply("$-1\r\n").expect(release0).reply(":-1\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 0), Status::busy);
    CHECK_EQ(f[0].sleeps, 0U);
    CHECK_EQ(f.lock.try_acquire(1000, resplock::max_ttl_ms + 1), Status::invalid_argument);
    CHECK(f.done());
}

// 2^31 ms (24.8 days) after the hold lapsed, a signed clock difference would read it as valid
// again, and acquire() would refuse to run (invalid_argument).
TEST(a_lapsed_hold_stays_lapsed_when_the_clock_moves_on_by_2_31_ms) {
    Fixture f;
    f.acquired();
    f.advance(0x80000000U + 2000U);
    CHECK(!f.lock.held());
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    for (std::size_t i = 0; i < 3; ++i)
        f[i].expect(set(token1)).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK(f.lock.held());
    CHECK(f.done());
}

// ---- extend ----

TEST(extend_confirmed_by_a_majority_restarts_validity_from_before_the_request) {
    Fixture f;
    f.acquired();
    f.advance(500);
    f[0].expect(extend0).reply(":1\r\n");
    f[1].expect(extend0).reply(":0\r\n");
    f[2].expect(extend0).recv_delay(20).reply(":1\r\n");
    CHECK_EQ(f.lock.extend(2000), Status::ok);
    CHECK_EQ(f.lock.granted(), 2U);
    CHECK_EQ(f.lock.remaining_ms(), 2000U - 22U - 20U);
    CHECK(f.done());
}

TEST(extend_sends_the_text_only_to_the_servers_that_lack_the_script) {
    Fixture f;
    f.acquired();
    f[0].expect(extend0).reply(":1\r\n");
    f[1].expect(extend0).reply(noscript).expect(
        wire::cmd({"EVAL", owner_text, "1", "k", token0, "2000"}));
    f[1].reply(":1\r\n");
    f[2].expect(extend0).reply(":1\r\n");
    CHECK_EQ(f.lock.extend(2000), Status::ok);
    CHECK_EQ(f.lock.granted(), 3U);
    CHECK(f.done());
}

TEST(extend_lost_on_a_majority_is_expired_or_not_owner_and_keeps_the_token) {
    {
        Fixture f;
        f.acquired();
        f[0].expect(extend0).reply(":0\r\n");
        f[1].expect(extend0).reply(":1\r\n");
        f[2].expect(extend0).reply(":0\r\n");
        CHECK_EQ(f.lock.extend(2000), Status::expired);
        CHECK(!f.lock.held());
        CHECK(f.lock.token() == token0);  // release() can remove what is left
        CHECK(f.done());
    }
    Fixture f;
    f.acquired();
    f[0].expect(extend0).reply(":0\r\n");
    f[1].expect(extend0).reply(
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    f[2].expect(extend0).reply(":1\r\n");
    CHECK_EQ(f.lock.extend(2000), Status::not_owner);
    CHECK(!f.lock.held());
    CHECK(f.lock.token() == token0);
    CHECK(f.done());
}

TEST(extend_unconfirmed_keeps_the_earlier_end_and_reports_the_common_failure) {
    Fixture f;
    f.acquired();
    f.advance(400);  // 588 ms of validity left
    f[0].expect(extend0).reply(":1\r\n");
    f[1].expect(extend0).recv_timeout();  // a tenth of the 2000 ms TTL: 200 ms
    f[2].expect(extend0).recv_closed();
    const std::uint32_t start = f.now();
    CHECK_EQ(f.lock.extend(2000), Status::unknown_outcome);
    CHECK_EQ(f.now() - start, 200U);
    CHECK_EQ(f.lock.granted(), 1U);
    // The renewal may or may not have run: the old end (588 ms after the request) stands.
    CHECK_EQ(f.lock.remaining_ms(), 588U - 200U);
    CHECK(f.lock.token() == token0);
    CHECK(f.done());
}

TEST(extend_after_the_validity_ran_out_sends_nothing) {
    Fixture f;
    f.acquired();
    f.advance(988);
    CHECK_EQ(f.lock.extend(2000), Status::expired);
    CHECK(f.lock.token() == token0);
    CHECK(f.done());
}

TEST(extend_waits_no_longer_than_the_validity_left_nor_wait_ms) {
    // 38 ms of validity left: each server is waited for 38 ms from its send; the later ones are
    // read within the grace once the first wait is over.
    {
        Fixture f;
        f.acquired();
        f.advance(950);
        for (std::size_t i = 0; i < 3; ++i)
            f[i].expect(extend0).recv_timeout();
        const std::uint32_t start = f.now();
        CHECK_EQ(f.lock.extend(2000), Status::unknown_outcome);
        CHECK_EQ(f.now() - start, 38U + 2U * resplock::quorum_read_grace_ms);
        CHECK(!f.lock.held());
        CHECK(f.done());
    }
    Fixture f;
    f.acquired();
    for (std::size_t i = 0; i < 3; ++i)
        f[i].expect(extend0).recv_timeout();
    const std::uint32_t start = f.now();
    CHECK_EQ(f.lock.extend(2000, 20), Status::unknown_outcome);
    CHECK_EQ(f.now() - start, 20U + 2U * resplock::quorum_read_grace_ms);
    CHECK_EQ(f.lock.remaining_ms(), 988U - 30U);
    CHECK(f.done());
}

TEST(extend_confirmed_too_late_is_timeout) {
    Fixture f;
    f.acquired();
    const std::string_view ext = wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "10"});
    f[0].expect(ext).recv_delay(9).reply(":1\r\n");
    f[1].expect(ext).reply(":1\r\n");
    f[2].expect(ext).reply(":1\r\n");
    CHECK_EQ(f.lock.extend(10), Status::timeout);
    CHECK(!f.lock.held());
    CHECK(f.lock.token() == token0);
    CHECK(f.done());
}

TEST(extend_refused_without_a_token_or_with_a_bad_ttl) {
    Fixture f;
    CHECK_EQ(f.lock.extend(1000), Status::invalid_argument);
    REQUIRE_EQ(f.lock.adopt(token0), Status::ok);
    CHECK_EQ(f.lock.extend(0), Status::invalid_argument);
    CHECK_EQ(f.lock.extend(resplock::max_ttl_ms + 1), Status::invalid_argument);
    CHECK_EQ(f.connects(), 0U);
}

// ---- release ----

TEST(release_deletes_on_every_server_and_forgets_the_token) {
    Fixture f;
    f.acquired();
    for (std::size_t i = 0; i < 3; ++i)
        f[i].expect(release0).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(!f.lock.held());
    CHECK_EQ(f.lock.release(), Status::invalid_argument);
    CHECK(f.done());
}

TEST(release_answered_by_a_majority_is_done) {
    Fixture f(3, with_timeout(100));
    f.acquired();
    f[0].expect(release0).reply(":1\r\n");
    f[1].expect(release0).recv_timeout();  // the connection's timeout: 100 ms
    f[2].expect(release0).reply(":0\r\n");
    const std::uint32_t start = f.now();
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK_EQ(f.now() - start, 100U);
    CHECK(f.lock.token().empty());
    CHECK(f.done());
}

TEST(release_answered_by_a_minority_keeps_the_token_for_a_retry) {
    Fixture f(3, with_timeout(100));
    f.acquired();
    f[0].expect(release0).reply(":1\r\n");
    f[1].expect(release0).recv_timeout();
    f[2].expect(release0).recv_closed();
    CHECK_EQ(f.lock.release(), Status::unknown_outcome);
    CHECK(f.lock.token() == token0);
    CHECK(!f.lock.held());
    // The retry reaches every server again (the first answers 0 now: gone).
    f[0].expect(release0).reply(":0\r\n");
    f[1].on_connect().expect(release0).reply(":1\r\n");
    f[2].on_connect().expect(release0).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.done());
}

TEST(release_refused_by_a_majority_is_sent_again_only_where_it_was_refused) {
    Fixture f;
    f.acquired();
    f[0].expect(release0).reply(":1\r\n");
    f[1].expect(release0).reply("-LOADING Redis is loading the dataset in memory\r\n");
    f[2].expect(release0).reply("-NOREPLICAS Not enough good replicas to write.\r\n");
    // The second attempt goes to the two that refused; the first server is not asked again.
    // The majority has answered then: a refusal left on a minority is not asked again either.
    f[1].expect(release0).reply(":1\r\n");
    f[2].expect(release0).reply("-BUSY Redis is busy running a script\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.done());
}

TEST(release_answered_by_a_majority_is_not_sent_again_where_it_was_refused) {
    Fixture f;
    f.acquired();
    f[0].expect(release0).reply(":1\r\n");
    f[1].expect(release0).reply(":1\r\n");
    f[2].expect(release0).reply("-LOADING Redis is loading the dataset in memory\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.done());
}

TEST(release_sends_the_text_only_to_the_servers_that_lack_the_script) {
    Fixture f(5);
    for (std::size_t i = 0; i < 5; ++i)
        f[i].on_connect().expect(set(token0)).reply("+OK\r\n");
    REQUIRE_EQ(f.lock.acquire(1000), Status::ok);
    for (std::size_t i = 0; i < 5; ++i) {
        f[i].expect(release0);
        if (i == 1 || i == 3) f[i].reply(noscript).expect(release0_text);
        f[i].reply(":1\r\n");
    }
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.done());
}

TEST(release_tells_expired_and_not_owner_apart) {
    {
        Fixture f;
        f.acquired();
        for (std::size_t i = 0; i < 3; ++i)
            f[i].expect(release0).reply(":0\r\n");
        CHECK_EQ(f.lock.release(), Status::expired);
        CHECK(f.lock.token().empty());
        CHECK(f.done());
    }
    Fixture f;
    f.acquired();
    f[0].expect(release0).reply(":0\r\n");
    f[1].expect(release0).reply(":-1\r\n");
    f[2].expect(release0).reply(":0\r\n");
    CHECK_EQ(f.lock.release(), Status::not_owner);
    CHECK(f.lock.token().empty());
    CHECK(f.done());
}

// ---- query ----

TEST(query_reports_the_majoritys_holder_and_its_shortest_pttl) {
    Fixture f;
    f[0].on_connect().expect(query_k).reply("*2\r\n$5\r\nother\r\n:500\r\n");
    f[1].on_connect().expect(query_k).reply("*2\r\n$-1\r\n:-2\r\n");
    f[2].on_connect().expect(query_k).reply("*2\r\n$5\r\nother\r\n:300\r\n");
    LockInfo info;
    CHECK_EQ(f.lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    CHECK_EQ(info.ttl_ms, 300);
    CHECK(f.done());
}

TEST(query_held_by_me_and_no_ttl_counts_as_the_longest) {
    Fixture f;
    f.acquired();
    f[0].expect(query_k).reply("*2\r\n$32\r\n000102030405060708090a0b0c0d0e0f\r\n:-1\r\n");
    f[1].expect(query_k).reply("*2\r\n$5\r\nother\r\n:100\r\n");
    f[2].expect(query_k).reply("*2\r\n$32\r\n000102030405060708090a0b0c0d0e0f\r\n:950\r\n");
    LockInfo info;
    CHECK_EQ(f.lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(info.ttl_ms, 950);
    // Both without a TTL: -1.
    f[0].expect(query_k).reply("*2\r\n$5\r\nother\r\n:-1\r\n");
    f[1].expect(query_k).reply("*2\r\n$5\r\nother\r\n:-1\r\n");
    f[2].expect(query_k).reply("*2\r\n$-1\r\n:-2\r\n");
    CHECK_EQ(f.lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    CHECK_EQ(info.ttl_ms, -1);
    CHECK(f.done());
}

TEST(query_without_a_majority_for_one_value_is_free) {
    Fixture f;
    f[0].on_connect().expect(query_k).reply("*2\r\n$1\r\na\r\n:500\r\n");
    f[1].on_connect().expect(query_k).reply("*2\r\n$1\r\nb\r\n:500\r\n");
    f[2].on_connect().expect(query_k).reply("*2\r\n$-1\r\n:-2\r\n");
    LockInfo info;
    info.state = LockState::held_by_me;
    CHECK_EQ(f.lock.query(info), Status::ok);
    CHECK(info.state == LockState::free);
    CHECK_EQ(info.ttl_ms, -2);
    CHECK(f.done());
}

TEST(query_needs_answers_from_a_majority) {
    Fixture f(3, with_timeout(100));
    f[0].on_connect().expect(query_k).reply("*2\r\n$5\r\nother\r\n:500\r\n");
    f[1].on_connect().expect(query_k).recv_closed();
    // A malformed answer counts as none.
    f[2].on_connect().expect(query_k).reply("*2\r\n:1\r\n:500\r\n");
    LockInfo info;
    info.state = LockState::held_by_me;
    CHECK_EQ(f.lock.query(info), Status::closed);
    CHECK(info.state == LockState::held_by_me);  // untouched
    CHECK(f.done());
}

TEST(query_sends_the_text_only_to_the_servers_that_lack_the_script) {
    Fixture f;
    f[0].on_connect().expect(query_k).reply(noscript).expect(
        wire::cmd({"EVAL", owner_text, "1", "k"}));
    f[0].reply("*2\r\n$5\r\nother\r\n:500\r\n");
    f[1].on_connect().expect(query_k).reply("*2\r\n$5\r\nother\r\n:400\r\n");
    f[2].on_connect().expect(query_k).reply("*2\r\n$-1\r\n:-2\r\n");
    LockInfo info;
    CHECK_EQ(f.lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    CHECK_EQ(info.ttl_ms, 400);
    CHECK(f.done());
}

// ---- adopt ----

TEST(adopted_token_extends_then_releases) {
    Fixture f;
    CHECK_EQ(f.lock.adopt(""), Status::invalid_argument);
    char over[resplock::max_token_len + 1];
    std::memset(over, 't', sizeof over);
    CHECK_EQ(f.lock.adopt({over, sizeof over}), Status::invalid_argument);
    REQUIRE_EQ(f.lock.adopt("tok"), Status::ok);
    CHECK(f.lock.token() == "tok");
    CHECK(!f.lock.held());  // validity unknown until an extend succeeds
    // Unknown validity does not stop the extend from going out.
    for (std::size_t i = 0; i < 3; ++i) {
        f[i].on_connect()
            .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", "tok", "500"}))
            .reply(":1\r\n")
            .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", "tok"}))
            .reply(":1\r\n");
    }
    CHECK_EQ(f.lock.extend(500), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 500U - 7U);
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.done());
}

TEST(adopt_forgets_the_validity_of_the_current_hold) {
    Fixture f;
    f.acquired();
    REQUIRE_EQ(f.lock.adopt(token1), Status::ok);
    CHECK(!f.lock.held());
    CHECK(f.lock.token() == token1);
    CHECK(f.done());
}

// ---- construction ----

TEST(invalid_constructions_refuse_every_call_and_send_nothing) {
    Fixture f;
    Connection* repeated[3] = {&f.c0, &f.c1, &f.c0};
    Connection* with_null[3] = {&f.c0, nullptr, &f.c2};
    // Two connections on one port context: one transport, two requests in flight.
    Connection same_ctx(f.ports[0], f.config, f.bufs[3], sizeof f.bufs[3]);
    Connection* shared[3] = {&f.c0, &f.c1, &same_ctx};
    Connection* six[6] = {&f.c0, &f.c1, &f.c2, &f.c3, &f.c4, &f.c0};
    char long_key[RESPLOCK_MAX_KEY_LEN + 1];
    std::memset(long_key, 'k', sizeof long_key);
    QuorumLock bad[] = {{f.conns, 0, "k"},
                        {nullptr, 3, "k"},
                        {six, RESPLOCK_MAX_SERVERS + 1, "k"},
                        {repeated, 3, "k"},
                        {with_null, 3, "k"},
                        {shared, 3, "k"},
                        {f.conns, 3, ""},
                        {f.conns, 3, std::string_view(long_key, sizeof long_key)}};
    for (QuorumLock& q : bad) {
        CHECK_EQ(q.quorum(), 0U);
        CHECK_EQ(q.acquire(1000), Status::invalid_argument);
        CHECK_EQ(q.try_acquire(1000, 10), Status::invalid_argument);
        CHECK_EQ(q.adopt("tok"), Status::invalid_argument);
        CHECK_EQ(q.extend(1000), Status::invalid_argument);
        CHECK_EQ(q.release(), Status::invalid_argument);
        LockInfo info;
        CHECK_EQ(q.query(info), Status::invalid_argument);
        CHECK(!q.held());
        CHECK_EQ(q.remaining_ms(), 0U);
        q.close();
    }
    CHECK_EQ(f.connects(), 0U);
    // The longest key and a single server are fine.
    QuorumLock longest(f.conns, 1, std::string_view(long_key, RESPLOCK_MAX_KEY_LEN));
    CHECK_EQ(longest.quorum(), 1U);
    CHECK(longest.key() == std::string_view(long_key, RESPLOCK_MAX_KEY_LEN));
    QuorumLock five(f.conns, 5, "k");
    CHECK_EQ(five.quorum(), 3U);
}

TEST(close_closes_every_connection) {
    Fixture f;
    f.acquired();
    f.lock.close();
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(!f.conns[i]->connected());
        CHECK_EQ(f[i].closes, 1U);
    }
    // The next call reconnects.
    for (std::size_t i = 0; i < 3; ++i)
        f[i].on_connect().expect(release0).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.done());
}

// ---- owner label ----

TEST(owner_label_is_the_same_on_every_server) {
    Fixture f;
    const std::string_view labelled = "door-17:000102030405060708090a0b0c0d0e0f";
    for (std::size_t i = 0; i < f.n; ++i)
        f[i].on_connect().expect(set(labelled)).reply("+OK\r\n");
    resplock::AcquireOptions o;
    o.owner = "door-17";
    CHECK_EQ(f.lock.try_acquire(1000, 0, o), Status::ok);
    CHECK(f.lock.token() == labelled);
    CHECK(f.done());
}

TEST(quorum_options_other_than_the_owner_label_send_nothing) {
    Fixture f;
    resplock::AcquireOptions o;
    o.owner = "bad label";
    CHECK_EQ(f.lock.acquire(1000, o), Status::invalid_argument);
    resplock::AcquireOptions fence;
    fence.fence = true;
    CHECK_EQ(f.lock.acquire(1000, fence), Status::invalid_argument);
    resplock::AcquireOptions wake;
    wake.wake = true;
    CHECK_EQ(f.lock.try_acquire(1000, 100, wake), Status::invalid_argument);
    CHECK_EQ(f.connects(), 0U);
}
