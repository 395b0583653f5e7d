// Cluster router over the mock port: parsing of MOVED / ASK and its limits (bad slot, missing or
// bad port, oversized host), MOVED remembered, ASK for one command (ASKING first, refused or
// answered oddly; the link kept there for a follow-up), an empty host (also for a configured
// name longer than a Node holds), the redirection limit, the fallback to the configured node
// (unreachable or timed-out remembered node), no re-send of a command whose reply was lost,
// CLUSTERDOWN / TRYAGAIN as try_again, and the redirect event.
#include <cstring>
#include <string_view>

#include "../event_log.hpp"
#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/ha/cluster.hpp"
#include "resplock/ports/mock.hpp"
#include "wire.hpp"

using resplock::Cluster;
using resplock::ConnectionConfig;
using resplock::EventKind;
using resplock::Observer;
using resplock::parse_redirect;
using resplock::Redirect;
using resplock::Status;
using support::EventLog;

namespace {

const std::string_view get[2] = {"GET", "k"};
const std::string_view get_wire = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
const std::string_view asking_wire = "*1\r\n$6\r\nASKING\r\n";

struct Fixture {
    EventLog log;
    Observer observer{&EventLog::record, &log};
    Cluster cluster;
    support::MockConnection<> m;
    resplock::resp::Reply reply;

    explicit Fixture(bool observe = false) : m(config(cluster, observe ? &observer : nullptr)) {}
    static ConnectionConfig config(Cluster& c, const Observer* o) {
        ConnectionConfig cfg;
        cfg.host = "seed";
        cfg.port = 7000;
        cfg.router = &c;
        cfg.observer = o;
        return cfg;
    }
    Status run() { return m.conn.command(get, 2, reply); }
    bool at(const char* host, unsigned port) {
        return CHECK_EQ(std::string_view(m.mock.last_host), std::string_view(host)) &&
               CHECK_EQ(static_cast<unsigned>(m.mock.last_port), port);
    }
};

bool parses(std::string_view text, bool ask, unsigned slot, std::string_view host, unsigned port) {
    Redirect r;
    return CHECK_EQ(parse_redirect(text, r), Status::ok) && CHECK_EQ(r.ask, ask) &&
           CHECK_EQ(static_cast<unsigned>(r.slot), slot) && CHECK_EQ(r.host, host) &&
           CHECK_EQ(static_cast<unsigned>(r.port), port);
}

Status parse(std::string_view text) {
    Redirect r;
    return parse_redirect(text, r);
}

}  // namespace

TEST(parse_reads_moved_and_ask) {
    parses("MOVED 3999 127.0.0.1:6381", false, 3999, "127.0.0.1", 6381);
    parses("ASK 0 node-2.example:1", true, 0, "node-2.example", 1);
    parses("MOVED 16383 h:65535", false, 16383, "h", 65535);
    parses("MOVED 3999 :6380", false, 3999, "", 6380);    // the node that answered
    parses("MOVED 12 ::1:6380", false, 12, "::1", 6380);  // IPv6: the port after the last ':'
    parses("MOVED 00012 h:06380", false, 12, "h", 6380);  // five digits at most, zeros allowed
}

TEST(parse_refuses_malformed_redirections) {
    for (const char* bad :
         {"MOVED 16384 h:1", "MOVED -1 h:1", "MOVED x h:1", "MOVED  h:1", "MOVED 123456 h:1",
          "MOVED 1 h", "MOVED 1 h:", "MOVED 1 h:0", "MOVED 1 h:65536", "MOVED 1 h:+1",
          "MOVED 1 h:1 extra", "MOVED 1", "MOVED 1 ", "ASK 1 h:x", "ASK 99999 h:1",
          "ASK"
          " 1 h:123456"}) {
        if (!CHECK_EQ(parse(bad), Status::protocol_error)) std::printf("      %s\n", bad);
    }
    char nul[] = "MOVED 1 a?b:1";
    nul[9] = '\0';
    CHECK_EQ(parse({nul, sizeof nul - 1}), Status::protocol_error);
}

TEST(parse_refuses_a_host_over_the_limit) {
    char text[64 + RESPLOCK_MAX_HOST_LEN];
    std::memcpy(text, "MOVED 7 ", 8);
    std::memset(text + 8, 'h', RESPLOCK_MAX_HOST_LEN + 1);
    std::memcpy(text + 8 + RESPLOCK_MAX_HOST_LEN + 1, ":1", 2);
    const std::size_t over = 8 + RESPLOCK_MAX_HOST_LEN + 1 + 2;
    CHECK_EQ(parse({text, over}), Status::too_large);
    // One byte less fits exactly.
    std::memmove(text + 8 + RESPLOCK_MAX_HOST_LEN, ":1", 2);
    Redirect r;
    CHECK_EQ(parse_redirect({text, over - 1}, r), Status::ok);
    CHECK_EQ(r.host.size(), std::size_t{RESPLOCK_MAX_HOST_LEN});
}

TEST(parse_leaves_other_errors_alone) {
    for (const char* other : {"ERR unknown command", "MOVED", "ASKING", "MOVEDX 1 h:1", "TRYAGAIN",
                              "CROSSSLOT Keys in request don't hash to the same slot", ""}) {
        CHECK_EQ(parse(other), Status::server_error);
    }
}

TEST(moved_is_followed_and_remembered) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 3999 10.0.0.2:7001\r\n")
        .on_connect()
        .expect(get_wire)
        .reply("$1\r\nv\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.reply.top().equals("v"));
    f.at("10.0.0.2", 7001);
    CHECK_EQ(std::string_view(f.cluster.node().host), std::string_view("10.0.0.2"));
    CHECK_EQ(static_cast<unsigned>(f.cluster.node().port), 7001U);
    CHECK_EQ(f.m.mock.connects, 2U);
    // The next command stays there, and a reconnect goes back there.
    f.m.mock.expect(get_wire).reply("$1\r\nw\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.m.conn.close();
    f.m.mock.on_connect().expect(get_wire).reply("$1\r\nx\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.at("10.0.0.2", 7001);
    CHECK(f.m.mock.done());
    // reset(): back to the configured node.
    f.cluster.reset();
    f.m.conn.close();
    f.m.mock.on_connect().expect(get_wire).reply("$1\r\ny\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.at("seed", 7000);
    CHECK(f.m.mock.done());
}

TEST(ask_sends_asking_then_the_command_once_there) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-ASK 3999 other:7002\r\n")
        .on_connect()
        .expect(asking_wire)
        .reply("+OK\r\n")
        .expect(get_wire)
        .reply("$1\r\nv\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.reply.top().equals("v"));
    f.at("other", 7002);
    CHECK(f.m.conn.connected());  // the link stays on the ASK node, for a follow-up there
    CHECK_EQ(std::string_view(f.cluster.asked().host), std::string_view("other"));
    CHECK_EQ(f.cluster.node().port, 0);  // nothing remembered
    // A follow-up (a WAIT) goes to the node that ran the command, without a redirection.
    f.m.mock.expect(get_wire).reply("$1\r\nv\r\n");
    CHECK_EQ(f.m.conn.follow_up(get, 2, f.reply, resplock::Deadline::after(f.m.mock.port(), 100)),
             Status::ok);
    CHECK_EQ(f.m.mock.connects, 2U);
    // The next command goes back to the configured node.
    f.m.mock.on_connect().expect(get_wire).reply("$1\r\nw\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.at("seed", 7000);
    CHECK(f.m.mock.done());
}

TEST(ask_goes_back_to_the_remembered_node) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 1 a:1\r\n")
        .on_connect()
        .expect(get_wire)
        .reply("-ASK 1 b:2\r\n")
        .on_connect()
        .expect(asking_wire)
        .reply("+OK\r\n")
        .expect(get_wire)
        .reply(":1\r\n")
        .on_connect()
        .expect(get_wire)
        .reply(":2\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.at("b", 2);
    CHECK_EQ(f.run(), Status::ok);
    f.at("a", 1);
    CHECK(f.m.mock.done());
}

TEST(asking_refused_or_odd_fails_the_command) {
    {
        Fixture f;
        f.m.mock.on_connect()
            .expect(get_wire)
            .reply("-ASK 3999 other:7002\r\n")
            .on_connect()
            .expect(asking_wire)
            .reply("-ERR unknown command 'ASKING'\r\n");
        CHECK_EQ(f.run(), Status::server_error);
        CHECK(f.m.mock.done());
        // The next command leaves the ASK node.
        f.m.mock.on_connect().expect(get_wire).reply(":1\r\n");
        CHECK_EQ(f.run(), Status::ok);
        f.at("seed", 7000);
        CHECK(f.m.mock.done());
    }
    {
        Fixture f;
        f.m.mock.on_connect()
            .expect(get_wire)
            .reply("-ASK 3999 other:7002\r\n")
            .on_connect()
            .expect(asking_wire)
            .reply(":1\r\n");
        CHECK_EQ(f.run(), Status::protocol_error);
        CHECK(!f.m.conn.connected());
        CHECK(f.m.mock.done());
    }
    {
        Fixture f;  // the ASK node cannot be reached
        f.m.mock.on_connect()
            .expect(get_wire)
            .reply("-ASK 3999 other:7002\r\n")
            .on_connect(RESPLOCK_PORT_REFUSED);
        CHECK_EQ(f.run(), Status::connect_failed);
        CHECK(f.m.mock.done());
    }
}

TEST(an_empty_host_is_the_node_that_answered) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 3999 :6380\r\n")
        .on_connect()
        .expect(get_wire)
        .reply("-ASK 3999 :6381\r\n")
        .on_connect()
        .expect(asking_wire)
        .reply("+OK\r\n")
        .expect(get_wire)
        .reply("-ASK 3999 :6382\r\n")
        .on_connect()
        .expect(asking_wire)
        .reply("+OK\r\n")
        .expect(get_wire)
        .reply(":1\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.at("seed", 6382);
    CHECK_EQ(std::string_view(Cluster::host_of(f.cluster.node(), f.m.conn)),
             std::string_view("seed"));
    CHECK_EQ(static_cast<unsigned>(f.cluster.node().port), 6380U);
    CHECK(f.m.mock.done());
}

TEST(an_empty_host_is_followed_when_the_configured_host_is_longer_than_a_node_holds) {
    // A configured name longer than RESPLOCK_MAX_HOST_LEN (e.g. a long service name): a
    // redirection to `:port` means that name, and is followed.
    static char long_host[RESPLOCK_MAX_HOST_LEN + 20];
    for (std::size_t i = 0; i + 1 < sizeof long_host; ++i)
        long_host[i] = 'h';
    Cluster cluster;
    ConnectionConfig cfg = Fixture::config(cluster, nullptr);
    cfg.host = long_host;
    support::MockConnection<> m(cfg);
    m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 3999 :6380\r\n")
        .on_connect()
        .expect(get_wire)
        .reply(":1\r\n");
    resplock::resp::Reply reply;
    CHECK_EQ(m.conn.command(get, 2, reply), Status::ok);
    CHECK(m.mock.last_host_arg == long_host);
    CHECK_EQ(static_cast<unsigned>(m.mock.last_port), 6380U);
    CHECK(m.mock.done());
}

TEST(a_redirection_loop_ends_with_too_many_redirects) {
    Fixture f;
    f.m.mock.on_connect().expect(get_wire).reply("-MOVED 5 a:1\r\n");
    for (int i = 0; i < RESPLOCK_MAX_REDIRECTS; ++i) {
        f.m.mock.on_connect().expect(get_wire).reply(i % 2 == 0 ? "-MOVED 5 b:2\r\n"
                                                                : "-MOVED 5 a:1\r\n");
    }
    CHECK_EQ(f.run(), Status::too_many_redirects);
    CHECK_EQ(f.m.mock.connects, 1U + RESPLOCK_MAX_REDIRECTS);
    CHECK(f.m.conn.error_text().substr(0, 6) == "MOVED ");
    CHECK(f.m.mock.done());
}

TEST(an_ask_loop_ends_with_too_many_redirects) {
    Fixture f;
    f.m.mock.on_connect().expect(get_wire).reply("-ASK 5 a:1\r\n");
    for (int i = 0; i < RESPLOCK_MAX_REDIRECTS; ++i) {
        f.m.mock.on_connect()
            .expect(asking_wire)
            .reply("+OK\r\n")
            .expect(get_wire)
            .reply("-ASK 5 a:1\r\n");
    }
    CHECK_EQ(f.run(), Status::too_many_redirects);
    CHECK(f.m.mock.done());
}

TEST(a_malformed_redirection_is_a_protocol_error) {
    for (const char* bad : {"-MOVED 16384 a:1\r\n", "-MOVED 1 a\r\n", "-ASK 1 a:0\r\n"}) {
        Fixture f;
        f.m.mock.on_connect().expect(get_wire).reply(bad);
        CHECK_EQ(f.run(), Status::protocol_error);
        CHECK(!f.m.conn.connected());
        CHECK_EQ(f.m.mock.connects, 1U);
        CHECK(f.m.mock.done());
    }
}

TEST(a_redirection_to_an_oversized_host_is_too_large) {
    static char text[RESPLOCK_MAX_HOST_LEN + 32];
    std::size_t n = 0;
    for (const char c : std::string_view("-MOVED 7 "))
        text[n++] = c;
    for (int i = 0; i <= RESPLOCK_MAX_HOST_LEN; ++i)
        text[n++] = 'h';
    for (const char c : std::string_view(":1\r\n"))
        text[n++] = c;
    Fixture f;
    f.m.mock.on_connect().expect(get_wire).reply({text, n});
    CHECK_EQ(f.run(), Status::too_large);
    CHECK(!f.m.conn.connected());
    CHECK_EQ(f.cluster.node().port, 0);
    CHECK(f.m.mock.done());
}

TEST(other_error_replies_are_returned_as_they_are) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-CROSSSLOT Keys in request don't hash to the same slot\r\n")
        .expect(get_wire)
        .reply("-TRYAGAIN Multiple keys request during rehashing of slot\r\n")
        .expect(get_wire)
        .reply("-CLUSTERDOWN The cluster is down\r\n");
    CHECK_EQ(f.run(), Status::server_error);
    CHECK_EQ(f.run(), Status::try_again);
    CHECK_EQ(f.run(), Status::try_again);
    CHECK(f.m.conn.connected());
    CHECK(f.m.mock.done());
}

TEST(a_lost_reply_is_never_sent_again) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 3999 a:1\r\n")
        .on_connect()
        .expect(get_wire)
        .recv_closed();
    CHECK_EQ(f.run(), Status::closed);
    CHECK(f.m.conn.request_sent());
    CHECK(f.m.mock.done());
}

TEST(an_unreachable_remembered_node_falls_back_to_the_configured_one) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 3999 gone:1\r\n")
        .on_connect()
        .expect(get_wire)
        .reply(":1\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.m.conn.close();
    f.m.mock.on_connect(RESPLOCK_PORT_REFUSED).on_connect().expect(get_wire).reply(":2\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.at("seed", 7000);
    CHECK_EQ(f.cluster.node().port, 0);
    CHECK(f.m.mock.done());
}

TEST(a_remembered_node_that_times_out_is_forgotten) {
    // A frozen master (SIGSTOP, powered off): its reply never comes. The command is not sent
    // again, but the next one asks the configured node, which knows the new master.
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 3999 frozen:1\r\n")
        .on_connect()
        .expect(get_wire)
        .reply(":1\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.m.mock.expect(get_wire).recv_timeout();
    CHECK_EQ(f.run(), Status::timeout);
    CHECK_EQ(f.cluster.node().port, 0);
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 3999 promoted:2\r\n")
        .on_connect()
        .expect(get_wire)
        .reply(":2\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.at("promoted", 2);
    // A remembered node whose connect times out is forgotten as well.
    f.m.conn.close();
    f.m.mock.on_connect(RESPLOCK_PORT_TIMEOUT);
    CHECK_EQ(f.run(), Status::timeout);
    CHECK_EQ(f.cluster.node().port, 0);
    f.m.mock.on_connect().expect(get_wire).reply(":3\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.at("seed", 7000);
    CHECK(f.m.mock.done());
}

TEST(the_deadline_bounds_every_redirection) {
    Fixture f;
    f.m.mock.on_connect()
        .expect(get_wire)
        .recv_delay(1500)
        .reply("-MOVED 3999 a:1\r\n")
        .on_connect()
        .expect(get_wire)
        .recv_timeout();
    CHECK_EQ(f.run(), Status::timeout);
    CHECK(f.m.mock.done());
}

TEST(each_redirection_followed_is_reported) {
    Fixture f(true);
    f.m.mock.on_connect()
        .expect(get_wire)
        .reply("-MOVED 3999 a:1\r\n")
        .on_connect()
        .expect(get_wire)
        .reply("-ASK 12 b:2\r\n")
        .on_connect()
        .expect(asking_wire)
        .reply("+OK\r\n")
        .expect(get_wire)
        .reply(":1\r\n");
    CHECK_EQ(f.run(), Status::ok);
    // connect, redirect, reconnect, redirect, reconnect
    if (!CHECK_EQ(f.log.count, 5U)) return;
    CHECK_EQ(f.log[1].kind, EventKind::redirect);
    CHECK_EQ(f.log[1].status, Status::ok);
    CHECK_EQ(f.log[1].number, 3999U);
    CHECK_EQ(f.log[1].ms, 1U);
    CHECK_EQ(f.log[1].key_view(), std::string_view("MOVED 3999 a:1"));
    CHECK_EQ(f.log[3].kind, EventKind::redirect);
    CHECK_EQ(f.log[3].number, 12U);
    CHECK_EQ(f.log[3].ms, 2U);
    CHECK_EQ(f.log[3].key_view(), std::string_view("ASK 12 b:2"));
    CHECK_EQ(f.log[4].kind, EventKind::reconnect);
    CHECK(f.m.mock.done());
}

TEST(the_limit_reports_no_event_for_the_redirection_not_followed) {
    Fixture f(true);
    f.m.mock.on_connect();
    for (int i = 0; i <= RESPLOCK_MAX_REDIRECTS; ++i) {
        f.m.mock.expect(get_wire).reply("-MOVED 5 a:1\r\n");
        if (i < RESPLOCK_MAX_REDIRECTS) f.m.mock.on_connect();
    }
    CHECK_EQ(f.run(), Status::too_many_redirects);
    std::size_t redirects = 0;
    for (std::size_t i = 0; i < f.log.count; ++i)
        redirects += f.log[i].kind == EventKind::redirect ? 1 : 0;
    CHECK_EQ(redirects, std::size_t{RESPLOCK_MAX_REDIRECTS});
    CHECK(f.m.mock.done());
}
