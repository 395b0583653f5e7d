// Lock::set_replicas over the mock port: the WAIT after a granted acquisition and extend, its
// timeout inside the call's deadline, every shape of its reply, and what follows when too few
// replicas acknowledged (the acquisition is released, the extend claims no new validity).
#include <cstdint>
#include <string>

#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "wire.hpp"

using resplock::Lock;
using resplock::Status;

namespace {

using wire::owner_sha;
using wire::token0;

const std::string_view set0 = wire::cmd({"SET", "k", token0, "NX", "PX", "1000"});
const std::string_view release0 = wire::cmd({"EVALSHA", owner_sha, "1", "k", token0});
const std::string_view extend0 = wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "1000"});

// 1024 bytes: the acquire script's EVAL form (with the options) must fit.
struct Fixture : support::MockConnection<1024> {
    Lock lock;

    explicit Fixture(std::uint32_t replicas, std::uint32_t timeout_ms = 2000)
        : MockConnection(support::with_timeout(timeout_ms)), lock(conn, "k") {
        CHECK_EQ(lock.set_replicas(replicas), Status::ok);
    }
};

}  // namespace

TEST(acquire_met_waits_half_the_timeout_and_holds) {
    Fixture f(1);
    f.mock.on_connect()
        .expect(set0)
        .reply("+OK\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK(f.lock.held());
    CHECK_EQ(f.lock.replicas_acknowledged(), 1U);
    CHECK(f.mock.done());
}

TEST(wait_timeout_is_half_of_what_is_left_of_the_deadline) {
    Fixture f(2);
    // The SET's reply takes 600 of the 2000 ms: WAIT gets half of the 1400 left.
    f.mock.on_connect()
        .expect(set0)
        .recv_delay(600)
        .reply("+OK\r\n")
        .expect(wire::cmd({"WAIT", "2", "700"}))
        .reply(":3\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.replicas_acknowledged(), 3U);  // more than asked for: all that answered
    CHECK(f.mock.done());
}

TEST(acquire_unmet_is_released_and_not_replicated) {
    Fixture f(2);
    f.mock.on_connect()
        .expect(set0)
        .reply("+OK\r\n")
        .expect(wire::cmd({"WAIT", "2", "1000"}))
        .reply(":1\r\n")
        .expect(release0)
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::not_replicated);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK_EQ(f.lock.replicas_acknowledged(), 1U);
    CHECK(f.mock.done());
}

TEST(acquire_unmet_keeps_the_token_when_the_release_fails) {
    Fixture f(1);
    f.mock.on_connect()
        .expect(set0)
        .reply("+OK\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n")
        .expect(release0)
        .recv_timeout();
    CHECK_EQ(f.lock.acquire(1000), Status::not_replicated);
    CHECK(!f.lock.held());
    CHECK(f.lock.token() == token0);  // a later release() may still remove the key
    CHECK_EQ(f.lock.replicas_acknowledged(), 0U);
    CHECK(f.mock.done());
}

TEST(wait_error_reply_is_returned_and_the_lock_released) {
    Fixture f(1);
    f.mock.on_connect()
        .expect(set0)
        .reply("+OK\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply("-NOPERM this user has no permissions to run the 'wait' command\r\n")
        .expect(release0)
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::no_permission);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(wait_reply_of_the_wrong_type_is_a_protocol_error) {
    const char* const replies[] = {"+OK\r\n", "$1\r\n1\r\n", ":-1\r\n", "*1\r\n:1\r\n"};
    for (const char* reply : replies) {
        Fixture f(1);
        f.mock.on_connect()
            .expect(set0)
            .reply("+OK\r\n")
            .expect(wire::cmd({"WAIT", "1", "1000"}))
            .reply(reply)
            .expect(release0)
            .reply(":1\r\n");
        CHECK_EQ(f.lock.acquire(1000), Status::protocol_error);
        CHECK(!f.lock.held());
        CHECK(f.lock.token().empty());
        CHECK_EQ(f.lock.replicas_acknowledged(), 0U);
        CHECK(f.mock.done());
    }
}

TEST(wait_reply_lost_is_not_replicated_and_released_on_a_new_connection) {
    Fixture f(1);
    f.mock.on_connect()
        .expect(set0)
        .reply("+OK\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .recv_timeout()
        .on_connect()
        .expect(release0)
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::not_replicated);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(no_time_left_sends_no_wait_and_releases) {
    Fixture f(1, 100);
    // 99 of the 100 ms went by: half of the 1 left is 0, and WAIT 0 would block for ever.
    f.mock.on_connect().expect(set0).recv_delay(99).reply("+OK\r\n").expect(release0).reply(
        ":1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::not_replicated);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(busy_sends_no_wait) {
    Fixture f(1);
    f.mock.on_connect().expect(set0).reply("$-1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::busy);
    CHECK(f.mock.done());
}

TEST(set_replicas_limits_and_zero_turns_it_off) {
    Fixture f(0);
    CHECK_EQ(f.lock.set_replicas(Lock::max_replicas + 1), Status::invalid_argument);
    f.mock.on_connect().expect(set0).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);  // no WAIT
    CHECK_EQ(f.lock.replicas_acknowledged(), 0U);
    CHECK_EQ(f.lock.set_replicas(Lock::max_replicas), Status::ok);
    CHECK(f.mock.done());
}

TEST(extend_met_restarts_validity) {
    Fixture f(0);
    f.mock.on_connect().expect(set0).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.set_replicas(1), Status::ok);
    f.mock.advance(500);
    // The extend waits no longer than the validity left (488 ms): WAIT gets half of it.
    f.mock.expect(extend0).reply(":1\r\n").expect(wire::cmd({"WAIT", "1", "244"})).reply(":1\r\n");
    CHECK_EQ(f.lock.extend(1000), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 1000U - 12U);
    CHECK(f.mock.done());
}

TEST(extend_unmet_keeps_the_old_validity_and_the_token) {
    Fixture f(0);
    f.mock.on_connect().expect(set0).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.set_replicas(2), Status::ok);
    f.mock.advance(500);
    f.mock.expect(extend0).reply(":1\r\n").expect(wire::cmd({"WAIT", "2", "244"})).reply(":1\r\n");
    CHECK_EQ(f.lock.extend(1000), Status::not_replicated);
    CHECK_EQ(f.lock.replicas_acknowledged(), 1U);
    CHECK(f.lock.token() == token0);  // still the holder: a renewal may be retried
    CHECK_EQ(f.lock.remaining_ms(), 1000U - 12U - 500U);
    CHECK(f.mock.done());
}

TEST(extend_unmet_to_a_shorter_ttl_keeps_the_shorter_validity) {
    Fixture f(0);
    f.mock.on_connect().expect(set0).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.set_replicas(1), Status::ok);
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "100"}))
        .reply(":1\r\n")
        .expect(wire::cmd({"WAIT", "1", "494"}))  // half the 988 ms of validity left
        .reply(":0\r\n");
    CHECK_EQ(f.lock.extend(100), Status::not_replicated);
    CHECK_EQ(f.lock.remaining_ms(), 100U - 3U);  // the master's key now ends sooner
    CHECK(f.mock.done());
}

TEST(extend_wait_reply_of_the_wrong_type_is_a_protocol_error) {
    Fixture f(0);
    f.mock.on_connect().expect(set0).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.set_replicas(1), Status::ok);
    f.mock.advance(500);
    f.mock.expect(extend0).reply(":1\r\n").expect(wire::cmd({"WAIT", "1", "244"})).reply("+OK\r\n");
    CHECK_EQ(f.lock.extend(1000), Status::protocol_error);
    CHECK_EQ(f.lock.remaining_ms(), 1000U - 12U - 500U);
    CHECK(f.mock.done());
}

TEST(acquisition_with_options_waits_too) {
    Fixture f(1);
    resplock::AcquireOptions options;
    options.fence = true;
    std::uint64_t fence = 0;
    f.mock.on_connect()
        .expect(wire::cmd({"EVALSHA", "61429715f14556dea4eeee434d0ac26b51123643", "2", "k",
                           "{k}:fence", token0, "1000"}))
        .reply("$1\r\n7\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n")
        .expect(release0)
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000, options, &fence), Status::not_replicated);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(owner_labelled_acquisition_waits_too) {
    Fixture f(1);
    resplock::AcquireOptions options;
    options.owner = "dev";
    const std::string label = std::string("dev:") + std::string(token0);
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", label, "NX", "PX", "1000"}))
        .reply("+OK\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000, options), Status::ok);
    CHECK(f.lock.held());
    CHECK(f.mock.done());
}

TEST(every_attempt_of_try_acquire_waits) {
    Fixture f(1);
    // A constant random source: every token is `zeros`, and the jitter is fixed.
    f.mock.random_next = 0;
    f.mock.random_step = 0;
    const std::string_view set_zeros = wire::cmd({"SET", "k", wire::zeros, "NX", "PX", "1000"});
    f.mock.on_connect()
        .expect(set_zeros)
        .reply("$-1\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k"}))
        .reply("*2\r\n$5\r\nother\r\n:10\r\n")
        .expect(set_zeros)
        .reply("+OK\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 500), Status::ok);
    CHECK(f.lock.held());
    CHECK(f.mock.done());
}
