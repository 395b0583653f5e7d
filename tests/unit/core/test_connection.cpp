// Connection over the mock port: round trips, handshake paths, error replies, and the rule that
// a connection is closed and re-established after any fault instead of being reused out of step.
#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/ports/mock.hpp"
#include "wire.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Status;
using resplock::mock::MockPort;
using support::with_timeout;
namespace resp = resplock::resp;

namespace {

const std::string_view ping[1] = {"PING"};
const std::string_view ping_wire = "*1\r\n$4\r\nPING\r\n";

struct Fixture : support::MockConnection<> {
    resp::Reply reply;

    using MockConnection::MockConnection;
    Status run() { return conn.command(ping, 1, reply); }
};

}  // namespace

TEST(ping_round_trip) {
    Fixture f;
    f.mock.on_connect().expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.reply.top().is(resp::Type::simple_string));
    CHECK(f.reply.top().equals("PONG"));
    CHECK(f.conn.connected());
    CHECK(f.mock.done());
}

TEST(reply_arriving_one_byte_at_a_time) {
    Fixture f;
    f.mock.on_connect().expect(ping_wire).reply("$5\r\nhe\r\no\r\n", 1);
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.reply.top().equals(std::string_view("he\r\no", 5)));
    CHECK(f.mock.done());
}

TEST(second_command_reuses_the_connection) {
    Fixture f;
    f.mock.on_connect().expect(ping_wire).reply("+PONG\r\n").expect(ping_wire).reply(":7\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.reply.top().integer, 7);
    CHECK_EQ(f.mock.connects, 1U);
    CHECK(f.mock.done());
}

TEST(auth_with_password_then_select) {
    ConnectionConfig c;
    c.password = "s3cret";
    c.db = 3;
    Fixture f(c);
    f.mock.on_connect()
        .expect(wire::cmd({"AUTH", "s3cret"}))
        .reply("+OK\r\n")
        .expect(wire::cmd({"SELECT", "3"}))
        .reply("+OK\r\n")
        .expect(ping_wire)
        .reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.mock.done());
}

TEST(auth_with_acl_user) {
    ConnectionConfig c;
    c.username = "app";
    c.password = "pw";
    Fixture f(c);
    f.mock.on_connect()
        .expect(wire::cmd({"AUTH", "app", "pw"}))
        .reply("+OK\r\n")
        .expect(ping_wire)
        .reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.mock.done());
}

TEST(wrong_password_is_auth_failed_and_closes) {
    ConnectionConfig c;
    c.password = "bad";
    Fixture f(c);
    f.mock.on_connect()
        .expect(wire::cmd({"AUTH", "bad"}))
        .reply("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    CHECK_EQ(f.run(), Status::auth_failed);
    CHECK(!f.conn.request_sent());
    CHECK(!f.conn.connected());
    CHECK_EQ(f.mock.closes, 1U);
    CHECK(f.mock.done());
}

TEST(legacy_invalid_password_is_auth_failed) {
    ConnectionConfig c;
    c.password = "bad";
    Fixture f(c);
    f.mock.on_connect().expect(wire::cmd({"AUTH", "bad"})).reply("-ERR invalid password\r\n");
    CHECK_EQ(f.run(), Status::auth_failed);
    CHECK(f.mock.done());
}

TEST(select_refused_is_server_error) {
    ConnectionConfig c;
    c.db = 99;
    Fixture f(c);
    f.mock.on_connect()
        .expect(wire::cmd({"SELECT", "99"}))
        .reply("-ERR DB index is out of range\r\n");
    CHECK_EQ(f.run(), Status::server_error);
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(error_reply_keeps_the_connection) {
    Fixture f;
    f.mock.on_connect()
        .expect(ping_wire)
        .reply("-NOAUTH Authentication required.\r\n")
        .expect(ping_wire)
        .reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::auth_required);
    CHECK(f.reply.top().is(resp::Type::error));
    CHECK(f.reply.top().equals("NOAUTH Authentication required."));
    CHECK(f.conn.error_text() == "NOAUTH Authentication required.");
    CHECK(f.conn.connected());
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.conn.error_text().empty());
    CHECK(f.mock.done());
}

TEST(error_prefixes_map_to_statuses) {
    CHECK_EQ(resplock::classify_error("NOAUTH Authentication required."), Status::auth_required);
    CHECK_EQ(resplock::classify_error("WRONGPASS invalid"), Status::auth_failed);
    CHECK_EQ(resplock::classify_error("NOPERM this user has no permissions"),
             Status::no_permission);
    CHECK_EQ(resplock::classify_error("NOSCRIPT No matching script."), Status::no_script);
    CHECK_EQ(resplock::classify_error("READONLY You can't write"), Status::read_only);
    CHECK_EQ(resplock::classify_error("LOADING Redis is loading"), Status::loading);
    CHECK_EQ(resplock::classify_error("BUSY Redis is busy running a script"), Status::server_busy);
    CHECK_EQ(resplock::classify_error("OOM command not allowed"), Status::out_of_memory);
    CHECK_EQ(resplock::classify_error("WRONGTYPE Operation against a key"), Status::wrong_type);
    CHECK_EQ(resplock::classify_error("NOREPLICAS Not enough good replicas to write."),
             Status::no_replicas);
    // As a script passes it on, with the script's place after it.
    CHECK_EQ(
        resplock::classify_error("NOREPLICAS Not enough good replicas to write. script: "
                                 "58a4486d0aceafc645a5dacb2b575167e2ec561a, on @user_script:1."),
        Status::no_replicas);
    CHECK_EQ(resplock::classify_error("CLUSTERDOWN The cluster is down"), Status::try_again);
    CHECK_EQ(resplock::classify_error("TRYAGAIN Multiple keys request during rehashing of slot"),
             Status::try_again);
    CHECK_EQ(resplock::classify_error("NOREPLICASX"), Status::server_error);
    CHECK_EQ(resplock::classify_error("BUSYKEY Target key name already exists."),
             Status::server_error);
    CHECK_EQ(resplock::classify_error("ERR unknown command"), Status::server_error);
    CHECK_EQ(resplock::classify_error("NOAUTHX"), Status::server_error);
    CHECK_EQ(resplock::classify_error(""), Status::server_error);
}

TEST(timeout_mid_reply_closes_and_next_call_reconnects) {
    Fixture f(with_timeout(100));
    f.mock.on_connect().expect(ping_wire).reply("+PO").recv_timeout();
    f.mock.on_connect().expect(ping_wire).reply("+PONG\r\n");
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.run(), Status::timeout);
    CHECK(f.mock.now_ms - start <= 100U);
    CHECK(f.conn.request_sent());
    CHECK(!f.conn.connected());
    CHECK_EQ(f.mock.closes, 1U);
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.reply.top().equals("PONG"));
    CHECK_EQ(f.mock.connects, 2U);
    CHECK(f.mock.done());
}

TEST(slow_reply_within_the_deadline_succeeds) {
    Fixture f(with_timeout(100));
    f.mock.on_connect().expect(ping_wire).recv_delay(60).reply("+PO").recv_delay(30).reply(
        "NG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.mock.done());
}

TEST(deadline_counts_the_whole_reply_not_each_recv) {
    Fixture f(with_timeout(100));
    // 60 + 60 ms of partial data: each recv is within its wait, the total is not.
    f.mock.on_connect().expect(ping_wire).recv_delay(60).reply("+PO").recv_delay(60);
    CHECK_EQ(f.run(), Status::timeout);
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(close_mid_reply_is_closed) {
    Fixture f;
    f.mock.on_connect().expect(ping_wire).reply("$10\r\nabc").recv_closed();
    CHECK_EQ(f.run(), Status::closed);
    CHECK(f.conn.request_sent());
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(transport_error_is_io_error) {
    Fixture f;
    f.mock.on_connect().expect(ping_wire).recv_error();
    CHECK_EQ(f.run(), Status::io_error);
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(malformed_reply_is_protocol_error_and_closes) {
    Fixture f;
    f.mock.on_connect().expect(ping_wire).reply("$-5\r\n");
    f.mock.on_connect().expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::protocol_error);
    CHECK(!f.conn.connected());
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.mock.done());
}

TEST(bytes_after_the_reply_are_protocol_error) {
    Fixture f;
    f.mock.on_connect().expect(ping_wire).reply("+OK\r\n+OK\r\n");
    CHECK_EQ(f.run(), Status::protocol_error);
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(reply_larger_than_the_buffer_is_too_large) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    char buf[32];
    Connection conn(port, {}, buf, sizeof buf);
    resp::Reply reply;
    mock.on_connect().expect(ping_wire).reply(
        "$40\r\n0123456789012345678901234567890123456789\r\n");
    CHECK_EQ(conn.command(ping, 1, reply), Status::too_large);
    CHECK(!conn.connected());
    CHECK_EQ(mock.steps_left(), 1U);  // the rest of the reply was never read
    CHECK(mock.mismatch() == nullptr);
}

TEST(request_larger_than_the_buffer_is_not_sent) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    char buf[16];
    Connection conn(port, {}, buf, sizeof buf);
    resp::Reply reply;
    mock.on_connect();
    const std::string_view args[2] = {"GET", "a-key-that-does-not-fit"};
    CHECK_EQ(conn.command(args, 2, reply), Status::too_large);
    CHECK(!conn.request_sent());
    CHECK(conn.connected());
    CHECK(mock.done());
}

TEST(connect_failures_map_to_statuses) {
    Fixture f(with_timeout(250));
    f.mock.on_connect(RESPLOCK_PORT_NO_HOST)
        .on_connect(RESPLOCK_PORT_REFUSED)
        .on_connect(RESPLOCK_PORT_TIMEOUT)
        .on_connect(RESPLOCK_PORT_ERROR);
    CHECK_EQ(f.run(), Status::no_host);
    CHECK_EQ(f.run(), Status::connect_failed);
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.run(), Status::timeout);
    CHECK_EQ(f.mock.now_ms - start, 250U);
    CHECK(!f.conn.request_sent());
    CHECK_EQ(f.run(), Status::io_error);
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(handshake_timeout_reports_the_command_as_not_sent) {
    ConnectionConfig c;
    c.password = "pw";
    c.timeout_ms = 50;
    Fixture f(c);
    f.mock.on_connect().expect(wire::cmd({"AUTH", "pw"})).recv_timeout();
    CHECK_EQ(f.run(), Status::timeout);
    CHECK(!f.conn.request_sent());
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(send_failures) {
    Fixture f(with_timeout(40));
    f.mock.on_connect().send_fail(RESPLOCK_PORT_CLOSED);
    f.mock.on_connect().send_fail(0);
    CHECK_EQ(f.run(), Status::closed);
    CHECK(!f.conn.request_sent());
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.run(), Status::timeout);
    CHECK(f.mock.now_ms - start <= 40U);
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(no_arguments_is_invalid) {
    Fixture f;
    CHECK_EQ(f.conn.command(ping, 0, f.reply), Status::invalid_argument);
    CHECK_EQ(f.mock.connects, 0U);
}

TEST(deadline_wraps_with_the_clock) {
    Fixture f(with_timeout(100));
    f.mock.now_ms = 0xFFFFFFF0U;  // the deadline lies past the 32-bit wrap
    f.mock.on_connect().expect(ping_wire).recv_delay(50).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.mock.done());
}
