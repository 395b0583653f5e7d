// Observer over the mock port: the exact events a connection and its locks report (connect,
// reconnect after a closed connection, retries of a busy lock), CLIENT SETNAME after the
// handshake on every connect, a refused name that does not fail the connection, names refused up
// front, and the renewal and loss events of a Renewer.
#include "../event_log.hpp"
#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/renewer.hpp"
#include "wire.hpp"

using resplock::ConnectionConfig;
using resplock::EventKind;
using resplock::Lock;
using resplock::Observer;
using resplock::Renewer;
using resplock::Status;
using support::EventLog;

namespace {

const std::string_view ping[1] = {"PING"};
const std::string_view ping_wire = "*1\r\n$4\r\nPING\r\n";
const std::string_view setname = wire::cmd({"CLIENT", "SETNAME", "door-17"});

// A connection whose config points at an Observer that records into `log`.
struct Fixture {
    EventLog log;
    Observer observer{&EventLog::record, &log};
    support::MockConnection<> m;
    resplock::resp::Reply reply;

    explicit Fixture(const char* name = nullptr, ConnectionConfig config = {})
        : m(with_observer(config, observer, name)) {}
    static ConnectionConfig with_observer(ConnectionConfig c, Observer& o, const char* name) {
        if (name != nullptr) (void)o.set_client_name(name);
        c.observer = &o;
        return c;
    }
    Status run() { return m.conn.command(ping, 1, reply); }
};

bool is(const EventLog::Entry& e, EventKind kind, Status status) {
    return CHECK_EQ(e.kind, kind) && CHECK_EQ(e.status, status);
}

}  // namespace

TEST(first_connect_reports_connect_once) {
    Fixture f;
    f.m.mock.on_connect().expect(ping_wire).reply("+PONG\r\n").expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.run(), Status::ok);
    if (!CHECK_EQ(f.log.count, 1U)) return;
    is(f.log[0], EventKind::connect, Status::ok);
    CHECK(f.log[0].key_null);
    CHECK_EQ(f.log[0].number, 0U);
    CHECK(f.m.mock.done());
}

TEST(a_connection_closed_by_the_server_reports_reconnect) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(ping_wire)
        .reply("+PONG\r\n")
        .recv_closed()  // seen by the idle check before the next request
        .on_connect()
        .expect(ping_wire)
        .reply("+PONG\r\n")
        .expect(ping_wire)
        .recv_closed()  // lost during a request: that one fails
        .on_connect()
        .expect(ping_wire)
        .reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.run(), Status::closed);
    CHECK_EQ(f.run(), Status::ok);
    if (!CHECK_EQ(f.log.count, 3U)) return;
    is(f.log[0], EventKind::connect, Status::ok);
    is(f.log[1], EventKind::reconnect, Status::ok);
    is(f.log[2], EventKind::reconnect, Status::ok);
    CHECK(f.m.mock.done());
}

TEST(a_failed_connect_reports_nothing_and_the_first_success_is_connect) {
    Fixture f;
    f.m.mock.on_connect(RESPLOCK_PORT_REFUSED).on_connect().expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::connect_failed);
    CHECK_EQ(f.log.count, 0U);
    CHECK_EQ(f.run(), Status::ok);
    if (!CHECK_EQ(f.log.count, 1U)) return;
    is(f.log[0], EventKind::connect, Status::ok);
}

TEST(client_name_is_sent_after_auth_and_select_on_every_connect) {
    ConnectionConfig c;
    c.password = "pw";
    c.db = 2;
    Fixture f("door-17", c);
    f.m.mock.on_connect()
        .expect(wire::cmd({"AUTH", "pw"}))
        .reply("+OK\r\n")
        .expect(wire::cmd({"SELECT", "2"}))
        .reply("+OK\r\n")
        .expect(setname)
        .reply("+OK\r\n")
        .expect(ping_wire)
        .reply("+PONG\r\n")
        .recv_closed()
        .on_connect()
        .expect(wire::cmd({"AUTH", "pw"}))
        .reply("+OK\r\n")
        .expect(wire::cmd({"SELECT", "2"}))
        .reply("+OK\r\n")
        .expect(setname)
        .reply("+OK\r\n")
        .expect(ping_wire)
        .reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.m.mock.done());
    if (!CHECK_EQ(f.log.count, 2U)) return;
    is(f.log[0], EventKind::connect, Status::ok);
    is(f.log[1], EventKind::reconnect, Status::ok);
}

namespace {
// The connection's error text while the connect event is reported.
struct TextDuringEvent {
    const resplock::Connection* conn = nullptr;
    char text[128] = {};
    resplock::Status status = Status::ok;
    int calls = 0;
    static void record(void* user, const resplock_event_t* e) {
        auto& t = *static_cast<TextDuringEvent*>(user);
        ++t.calls;
        t.status = resplock::status_of(*e);
        const std::string_view s = t.conn->error_text();
        std::memcpy(t.text, s.data(), s.size() < sizeof t.text - 1 ? s.size() : sizeof t.text - 1);
    }
};
}  // namespace

TEST(a_refused_client_name_does_not_fail_the_connection) {
    TextDuringEvent seen;
    Observer observer(&TextDuringEvent::record, &seen);
    CHECK_EQ(observer.set_client_name("door-17"), Status::ok);
    ConnectionConfig c;
    c.observer = &observer;
    support::MockConnection<> m(c);
    seen.conn = &m.conn;
    m.mock.on_connect()
        .expect(setname)
        .reply("-NOPERM User locker has no permissions to run the 'client|setname' command\r\n")
        .expect(ping_wire)
        .reply("+PONG\r\n");
    resplock::resp::Reply reply;
    CHECK_EQ(m.conn.command(ping, 1, reply), Status::ok);
    CHECK(m.mock.done());
    CHECK_EQ(seen.calls, 1);
    CHECK_EQ(seen.status, Status::no_permission);
    CHECK_EQ(std::string_view(seen.text),
             std::string_view(
                 "NOPERM User locker has no permissions to run the 'client|setname' command"));
}

TEST(a_lost_client_name_reply_fails_the_connect) {
    Fixture f("door-17");
    f.m.mock.on_connect()
        .expect(setname)
        .recv_closed()
        .on_connect()
        .expect(setname)
        .reply("+OK\r\n")
        .expect(ping_wire)
        .reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::closed);
    CHECK(!f.m.conn.connected());
    CHECK_EQ(f.log.count, 0U);
    CHECK_EQ(f.run(), Status::ok);
    if (!CHECK_EQ(f.log.count, 1U)) return;
    is(f.log[0], EventKind::connect, Status::ok);  // the first connect that succeeded
    CHECK(f.m.mock.done());
}

TEST(client_names_with_spaces_newlines_or_over_the_limit_are_refused_up_front) {
    Observer o;
    CHECK_EQ(o.set_client_name("ok-name_1.2"), Status::ok);
    const char* bad[] = {"", "two words", "line\nbreak", "tab\tx", "caf\xc3\xa9"};
    for (const char* name : bad) {
        if (!CHECK_EQ(o.set_client_name(name), Status::invalid_argument)) check::print(name);
        CHECK_EQ(std::string_view(o.client_name()), std::string_view("ok-name_1.2"));
    }
    char longest[resplock::max_client_name_len + 2];
    std::memset(longest, 'x', sizeof longest);
    longest[resplock::max_client_name_len] = '\0';
    CHECK_EQ(o.set_client_name(longest), Status::ok);
    longest[resplock::max_client_name_len] = 'x';
    longest[resplock::max_client_name_len + 1] = '\0';
    CHECK_EQ(o.set_client_name(longest), Status::invalid_argument);
    CHECK_EQ(o.set_client_name(nullptr), Status::ok);
    CHECK(o.client_name() == nullptr);
}

TEST(an_observer_without_an_event_function_only_names_the_client) {
    Observer o;
    CHECK_EQ(o.set_client_name("door-17"), Status::ok);
    ConnectionConfig c;
    c.observer = &o;
    support::MockConnection<> m(c);
    m.mock.on_connect().expect(setname).reply("+OK\r\n").expect(ping_wire).reply("+PONG\r\n");
    resplock::resp::Reply reply;
    CHECK_EQ(m.conn.command(ping, 1, reply), Status::ok);
    CHECK(m.mock.done());
}

TEST(busy_then_acquired_reports_connect_then_each_retry) {
    Fixture f;
    f.m.mock.random_next = 0;  // tokens of zeros, pauses of backoff/2
    f.m.mock.random_step = 0;
    Lock lock(f.m.conn, "job");
    const std::string_view set = wire::cmd({"SET", "job", wire::zeros, "NX", "PX", "1000"});
    const std::string_view query = wire::cmd({"EVALSHA", wire::owner_sha, "1", "job"});
    f.m.mock.on_connect()
        .expect(set)
        .reply("$-1\r\n")
        .expect(query)
        .reply("*2\r\n$5\r\nother\r\n:-1\r\n")
        .expect(set)
        .reply("$-1\r\n")
        .expect(query)
        .reply("*2\r\n$5\r\nother\r\n:4\r\n")
        .expect(set)
        .reply("+OK\r\n");
    CHECK_EQ(lock.try_acquire(1000, 5000), Status::ok);
    CHECK(f.m.mock.done());
    if (!CHECK_EQ(f.log.count, 3U)) return;
    is(f.log[0], EventKind::connect, Status::ok);
    is(f.log[1], EventKind::retry, Status::busy);
    CHECK_EQ(f.log[1].number, 1U);
    CHECK_EQ(f.log[1].ms, 5U);  // backoff 10, halved by the jitter
    CHECK_EQ(f.log[1].key_view(), std::string_view("job"));
    is(f.log[2], EventKind::retry, Status::busy);
    CHECK_EQ(f.log[2].number, 2U);
    CHECK_EQ(f.log[2].ms, 4U);  // the holder's PTTL, shorter than the backoff
    CHECK_EQ(f.m.mock.slept_ms, 9U);
}

namespace {
struct RenewerFixture : Fixture {
    Lock lock{m.conn, "k"};
    Renewer renewer;
    int lost = 0;

    RenewerFixture() {
        renewer.set_observer(&observer);
        m.mock.on_connect()
            .expect(wire::cmd({"SET", "k", wire::token0, "NX", "PX", "900"}))
            .reply("+OK\r\n");
        CHECK_EQ(lock.acquire(900), Status::ok);
        CHECK_EQ(renewer.watch(lock, 900, &on_lost, this), Status::ok);
        CHECK_EQ(renewer.tick(m.mock.now_ms), 300U);
    }
    static void on_lost(void* user, void* /*lock*/, Status /*why*/) {
        auto& f = *static_cast<RenewerFixture*>(user);
        ++f.lost;
        // The loss event came first.
        CHECK_EQ(f.log[f.log.count - 1].kind, EventKind::loss);
    }
    void extend(std::string_view answer) {
        m.mock.expect(wire::cmd({"EVALSHA", wire::owner_sha, "1", "k", wire::token0, "900"}))
            .reply(answer);
    }
};
}  // namespace

TEST(renewer_reports_each_renewal_and_the_loss) {
    RenewerFixture f;
    f.m.mock.advance(300);
    f.extend(":1\r\n");  // renewed
    CHECK_EQ(f.renewer.tick(f.m.mock.now_ms), 300U);
    f.m.mock.advance(300);
    // A renewal whose reply is lost: retried after ttl/10, on a new connection.
    f.m.mock.expect(wire::cmd({"EVALSHA", wire::owner_sha, "1", "k", wire::token0, "900"}))
        .recv_error();
    CHECK_EQ(f.renewer.tick(f.m.mock.now_ms), 90U);
    f.m.mock.advance(90);
    f.m.mock.on_connect();
    f.extend(":-1\r\n");  // another token holds it: lost
    (void)f.renewer.tick(f.m.mock.now_ms);
    CHECK(f.m.mock.done());
    CHECK_EQ(f.lost, 1);
    if (!CHECK_EQ(f.log.count, 6U)) return;
    is(f.log[0], EventKind::connect, Status::ok);
    is(f.log[1], EventKind::renewal, Status::ok);
    CHECK_EQ(f.log[1].number, 900U);
    CHECK_EQ(f.log[1].ms, 889U);  // 900 - 900/100 - 2 of drift, renewed just now
    CHECK_EQ(f.log[1].key_view(), std::string_view("k"));
    is(f.log[2], EventKind::renewal, Status::unknown_outcome);
    is(f.log[3], EventKind::reconnect, Status::ok);
    is(f.log[4], EventKind::renewal, Status::not_owner);
    CHECK_EQ(f.log[4].ms, 0U);
    is(f.log[5], EventKind::loss, Status::not_owner);
    CHECK_EQ(f.log[5].number, 900U);
    CHECK_EQ(f.log[5].key_view(), std::string_view("k"));
}

TEST(renewer_reports_a_loss_by_validity_running_out) {
    RenewerFixture f;
    f.m.mock.advance(889);  // no renewal was ever due in a tick: validity ran out
    (void)f.renewer.tick(f.m.mock.now_ms);
    CHECK_EQ(f.lost, 1);
    if (!CHECK_EQ(f.log.count, 2U)) return;
    is(f.log[0], EventKind::connect, Status::ok);
    is(f.log[1], EventKind::loss, Status::expired);
    CHECK(f.m.mock.done());
}
