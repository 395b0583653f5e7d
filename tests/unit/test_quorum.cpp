// QuorumLock over three mock ports: the exact requests each server gets, and validity kept on
// the first connection's clock.
#include "check.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/quorum_lock.hpp"
#include "wire.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::QuorumLock;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

constexpr std::string_view token0 = "000102030405060708090a0b0c0d0e0f";
constexpr std::string_view token1 = "101112131415161718191a1b1c1d1e1f";
constexpr std::size_t servers = 3;

struct Fixture {
    MockPort mocks[servers];
    resplock_port_t ports[servers] = {mocks[0].port(), mocks[1].port(), mocks[2].port()};
    char bufs[servers][512];
    ConnectionConfig config;
    Connection c0{ports[0], config, bufs[0], sizeof bufs[0]};
    Connection c1{ports[1], config, bufs[1], sizeof bufs[1]};
    Connection c2{ports[2], config, bufs[2], sizeof bufs[2]};
    Connection* conns[servers] = {&c0, &c1, &c2};
    QuorumLock lock{conns, servers, "k"};

    // Every server answers `reply` to SET k <token> NX PX <ttl>.
    void expect_set(std::string_view token, std::string_view ttl, std::string_view reply,
                    bool connect) {
        for (MockPort& m : mocks) {
            if (connect) m.on_connect();
            m.expect(wire::cmd({"SET", "k", token, "NX", "PX", ttl})).reply(reply);
        }
    }
    void advance(std::uint32_t ms) {
        for (MockPort& m : mocks)
            m.advance(ms);
    }
    bool done() const {
        bool all = true;
        for (const MockPort& m : mocks)
            all = all && m.done();
        return all;
    }
};

}  // namespace

TEST(acquire_sets_the_key_on_every_server) {
    Fixture f;
    f.expect_set(token0, "1000", "+OK\r\n", true);
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.granted(), servers);
    CHECK_EQ(f.lock.remaining_ms(), 988U);
    CHECK(f.done());
}

// 2^31 ms (24.8 days) after the hold lapsed, a signed clock difference would read it as valid
// again, and acquire() would refuse to run (invalid_argument).
TEST(a_lapsed_hold_stays_lapsed_when_the_clock_moves_on_by_2_31_ms) {
    Fixture f;
    f.expect_set(token0, "1000", "+OK\r\n", true);
    REQUIRE_EQ(f.lock.acquire(1000), Status::ok);
    f.advance(0x80000000U + 2000U);
    CHECK(!f.lock.held());
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    f.expect_set(token1, "1000", "+OK\r\n", false);
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK(f.lock.held());
    CHECK(f.done());
}
