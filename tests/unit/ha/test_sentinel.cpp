// The Sentinel router over the mock port: resolution through the sentinels in order (nil, error
// and malformed replies: the next sentinel), the final statuses (unreachable, unknown name, never
// a master), ROLE confirmation (also of a master with many replicas, whose reply outgrows the
// buffer) and re-resolution, -READONLY re-sends and their limit, the confirmation of a granted
// write by the sentinels (a majority names the node, none another), the parsers on replies of
// every shape, and the limits of add() and the master name.
#include <cstdio>
#include <string>

#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/ha/sentinel.hpp"
#include "resplock/ports/mock.hpp"
#include "wire.hpp"

using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::Node;
using resplock::Sentinel;
using resplock::Status;
using resplock::resp::Parser;
using resplock::resp::Reply;
using resplock::resp::Value;

namespace {

using namespace std::string_view_literals;

const std::string_view ping[1] = {"PING"};
const std::string_view ping_wire = "*1\r\n$4\r\nPING\r\n";
const std::string_view ask = wire::cmd({"SENTINEL", "get-master-addr-by-name", "mymaster"});
const std::string_view role = wire::cmd({"ROLE"});
const std::string_view addr_6380 = "*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n";
const std::string_view addr_6381 = "*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6381\r\n";
const std::string_view is_master = "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n";
const std::string_view is_slave =
    "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6381\r\n$9\r\nconnected\r\n:0\r\n";

// A master's ROLE reply with `replicas` replicas (4 + 4 per replica values).
std::string role_of_master(int replicas) {
    std::string r = "*3\r\n$6\r\nmaster\r\n:99\r\n*" + std::to_string(replicas) + "\r\n";
    for (int i = 0; i < replicas; ++i) {
        const std::string port = std::to_string(6390 + i);
        r += "*3\r\n$9\r\n127.0.0.1\r\n$4\r\n" + port + "\r\n$2\r\n99\r\n";
    }
    return r;
}

const std::string_view set0 = wire::cmd({"SET", "k", wire::token0, "NX", "PX", "1000"});
const std::string_view release0 = wire::cmd({"EVALSHA", wire::owner_sha, "1", "k", wire::token0});
const std::string_view extend0 =
    wire::cmd({"EVALSHA", wire::owner_sha, "1", "k", wire::token0, "1000"});

// A connection routed by a Sentinel for "mymaster" over `sentinels` sentinels on 26379, 26380...
struct Fixture {
    Sentinel sentinel{"mymaster"};
    support::MockConnection<> m;
    Reply reply;

    explicit Fixture(int sentinels = 1, std::uint32_t timeout_ms = 2000)
        : m(config(sentinel, timeout_ms)) {
        for (int i = 0; i < sentinels; ++i)
            (void)sentinel.add("127.0.0.1", static_cast<std::uint16_t>(26379 + i));
    }
    static ConnectionConfig config(Sentinel& s, std::uint32_t timeout_ms) {
        ConnectionConfig c = support::with_timeout(timeout_ms);
        c.router = &s;
        return c;
    }
    Status run() { return m.conn.command(ping, 1, reply); }
    // One sentinel's answer, then the master's ROLE.
    resplock::mock::MockPort& resolves(std::string_view addr, std::string_view role_reply) {
        return m.mock.on_connect().expect(ask).reply(addr).on_connect().expect(role).reply(
            role_reply);
    }
};

// Parses `bytes` as one reply (storage is static: the reply stays valid until the next call).
Reply parsed(std::string_view bytes) {
    static Value values[RESPLOCK_MAX_REPLY_VALUES];
    static std::string copy;
    copy.assign(bytes);
    Parser parser(values, RESPLOCK_MAX_REPLY_VALUES);
    if (!CHECK_EQ(parser.parse(copy.data(), copy.size()), Status::ok)) return {};
    return parser.reply();
}

// The sentinel replies that name no usable master (after nil, which means an unknown name), with
// what parse_master_addr() makes of them.
struct BadReply {
    std::string_view bytes;
    Status status;
};
const BadReply bad_replies[] = {
    {"-ERR unknown command\r\n"sv, Status::server_error},
    {"-NOAUTH Authentication required.\r\n"sv, Status::auth_required},
    {"+OK\r\n"sv, Status::protocol_error},
    {":6380\r\n"sv, Status::protocol_error},
    {"$9\r\n127.0.0.1\r\n"sv, Status::protocol_error},
    {"*0\r\n"sv, Status::protocol_error},
    {"*1\r\n$9\r\n127.0.0.1\r\n"sv, Status::protocol_error},
    {"*3\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n$1\r\nx\r\n"sv, Status::protocol_error},
    {"*2\r\n$9\r\n127.0.0.1\r\n:6380\r\n"sv, Status::protocol_error},
    {"*2\r\n+127.0.0.1\r\n$4\r\n6380\r\n"sv, Status::protocol_error},
    {"*2\r\n*1\r\n$1\r\na\r\n$4\r\n6380\r\n"sv, Status::protocol_error},
    {"*2\r\n$9\r\n127.0.0.1\r\n$4\r\nabcd\r\n"sv, Status::protocol_error},
    {"*2\r\n$9\r\n127.0.0.1\r\n$2\r\n-1\r\n"sv, Status::protocol_error},
    {"*2\r\n$9\r\n127.0.0.1\r\n$1\r\n0\r\n"sv, Status::protocol_error},
    {"*2\r\n$9\r\n127.0.0.1\r\n$5\r\n65536\r\n"sv, Status::protocol_error},
    {"*2\r\n$9\r\n127.0.0.1\r\n$6\r\n106380\r\n"sv, Status::protocol_error},
    {"*2\r\n$9\r\n127.0.0.1\r\n$0\r\n\r\n"sv, Status::protocol_error},
    {"*2\r\n$0\r\n\r\n$4\r\n6380\r\n"sv, Status::protocol_error},
    {"*2\r\n$3\r\na\0b\r\n$4\r\n6380\r\n"sv, Status::protocol_error},
    {"*2\r\n$-1\r\n$4\r\n6380\r\n"sv, Status::protocol_error},
};

// A host of RESPLOCK_MAX_HOST_LEN + 1 bytes in a [host, port] reply.
std::string oversized_host_reply() {
    const std::string host(RESPLOCK_MAX_HOST_LEN + 1, 'h');
    return "*2\r\n$" + std::to_string(host.size()) + "\r\n" + host + "\r\n$4\r\n6380\r\n";
}

}  // namespace

TEST(resolves_confirms_and_runs_the_command_on_the_master) {
    Fixture f;
    f.resolves(addr_6380, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.sentinel.master().port, 6380U);
    CHECK_EQ(std::string(f.sentinel.master().host), std::string("127.0.0.1"));
    CHECK_EQ(f.sentinel.tried(), 1U);
    CHECK(!f.sentinel.name_unknown());
    CHECK_EQ(f.m.mock.connects, 2U);
    CHECK(f.m.mock.done());
}

TEST(a_master_with_many_replicas_is_confirmed) {
    // ROLE lists every replica: 12 values with 2 replicas, over 2 KB with 60, more than the
    // connection keeps or its 512-byte buffer holds. Only the role is needed.
    for (const int replicas : {2, 5, 60}) {
        Fixture f;
        const std::string role_reply = role_of_master(replicas);
        f.resolves(addr_6380, role_reply).expect(ping_wire).reply("+PONG\r\n");
        if (!CHECK_EQ(f.run(), Status::ok)) std::printf("      %d replicas\n", replicas);
        CHECK_EQ(f.sentinel.master().port, 6380U);
        CHECK(f.m.mock.done());
    }
}

TEST(a_granted_write_counts_when_a_majority_of_the_sentinels_name_its_node) {
    Fixture f(3);
    Lock lock(f.m.conn, "k");
    f.resolves(addr_6380, is_master).expect(set0).reply("+OK\r\n");
    for (int i = 0; i < 3; ++i)
        f.m.mock.on_connect().expect(ask).reply(addr_6380);
    CHECK_EQ(lock.acquire(1000), Status::ok);
    CHECK(lock.held());
    CHECK_EQ(f.m.mock.connects, 5U);  // every sentinel was asked
    CHECK(!f.m.conn.connected());     // the next command finds the master afresh
    CHECK(f.m.mock.done());
    // One sentinel unreachable: two of three still name the node.
    f.resolves(addr_6380, is_master).expect(extend0).reply(":1\r\n");
    f.m.mock.on_connect(RESPLOCK_PORT_REFUSED)
        .on_connect()
        .expect(ask)
        .reply(addr_6380)
        .on_connect()
        .expect(ask)
        .reply(addr_6380);
    CHECK_EQ(lock.extend(1000), Status::ok);
    CHECK(f.m.mock.done());
}

TEST(an_acquisition_on_a_replaced_master_does_not_count_and_is_given_back) {
    // A planned failover: the old master still answers as one, but a sentinel names the promoted
    // replica. The acquisition is not held, and its release goes to the new master.
    Fixture f(3);
    Lock lock(f.m.conn, "k");
    f.resolves(addr_6380, is_master).expect(set0).reply("+OK\r\n");
    f.m.mock.on_connect().expect(ask).reply(addr_6380).on_connect().expect(ask).reply(addr_6381);
    f.resolves(addr_6381, is_master).expect(release0).reply(":0\r\n");
    CHECK_EQ(lock.acquire(1000), Status::not_replicated);
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    CHECK_EQ(f.sentinel.master().port, 6381U);
    CHECK(f.m.mock.done());
}

TEST(a_renewal_on_a_replaced_master_keeps_only_the_old_validity) {
    Fixture f(1);
    Lock lock(f.m.conn, "k");
    f.resolves(addr_6380, is_master).expect(set0).reply("+OK\r\n");
    f.m.mock.on_connect().expect(ask).reply(addr_6380);
    CHECK_EQ(lock.acquire(1000), Status::ok);
    f.m.mock.advance(400);
    const std::uint32_t before = lock.remaining_ms();
    f.resolves(addr_6380, is_master).expect(extend0).reply(":1\r\n");
    f.m.mock.on_connect().expect(ask).reply(addr_6381);
    CHECK_EQ(lock.extend(1000), Status::not_replicated);
    CHECK(lock.remaining_ms() <= before);  // no new validity
    CHECK(!lock.token().empty());          // still ours where the key was replicated
    CHECK(!f.m.conn.connected());
    CHECK(f.m.mock.done());
}

TEST(a_write_no_majority_of_sentinels_confirms_does_not_count) {
    Fixture f(3);
    Lock lock(f.m.conn, "k");
    f.resolves(addr_6380, is_master).expect(set0).reply("+OK\r\n");
    f.m.mock.on_connect(RESPLOCK_PORT_REFUSED)
        .on_connect()
        .expect(ask)
        .reply(addr_6380)
        .on_connect(RESPLOCK_PORT_REFUSED);
    f.resolves(addr_6380, is_master).expect(release0).reply(":1\r\n");
    CHECK_EQ(lock.acquire(1000), Status::not_replicated);
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    CHECK(f.m.mock.done());
}

// Three sentinels, each over a Link of its own (a mock each), the master over the connection's.
struct Linked {
    resplock::mock::MockPort mocks[3];
    resplock_port_t ports[3] = {mocks[0].port(), mocks[1].port(), mocks[2].port()};
    Sentinel::Link links[3] = {Sentinel::Link(ports[0]), Sentinel::Link(ports[1]),
                               Sentinel::Link(ports[2])};
    Sentinel sentinel{"mymaster"};
    support::MockConnection<> m;
    Reply reply;

    Linked() : m(Fixture::config(sentinel, 2000)) {
        for (int i = 0; i < 3; ++i) {
            CHECK(sentinel.add("127.0.0.1", static_cast<std::uint16_t>(26379 + i), &links[i]));
        }
    }
    Status run() { return m.conn.command(ping, 1, reply); }
    bool done() const {
        const resplock::mock::MockPort* all[4] = {&m.mock, &mocks[0], &mocks[1], &mocks[2]};
        bool ok = true;
        for (int i = 0; i < 4; ++i) {
            if (all[i]->done()) continue;
            ok = false;
            std::printf("      %s: %s, %zu steps left\n", i == 0 ? "master" : "a sentinel's link",
                        all[i]->mismatch() != nullptr ? all[i]->mismatch() : "no mismatch",
                        all[i]->steps_left());
        }
        return ok;
    }
};

// Over links, every sentinel is asked at once: a first sentinel that accepts the connection and
// never answers (a hung host) costs nothing, neither to resolve (the first good answer) nor to
// confirm a write (a majority, and the silent one given confirm_grace_ms), and the master's
// connection stays open through the confirmation.
TEST(over_links_a_silent_sentinel_costs_nothing_while_a_majority_answers) {
    Linked f;
    Lock lock(f.m.conn, "k");
    f.mocks[0].on_connect().expect(ask);  // never answers
    f.mocks[1].on_connect().expect(ask).reply(addr_6380);
    f.mocks[2].on_connect().expect(ask);  // answers too late to be read: not needed
    f.m.mock.on_connect().expect(role).reply(is_master).expect(set0).reply("+OK\r\n");
    const std::uint32_t start = f.m.mock.now_ms;
    f.mocks[0].on_connect().expect(ask);      // its link started afresh: asked again, silent again
    f.mocks[1].expect(ask).reply(addr_6380);  // kept open since its answer
    f.mocks[2].on_connect().expect(ask).reply(addr_6380);
    CHECK_EQ(lock.acquire(1000), Status::ok);
    CHECK(lock.held());
    CHECK_EQ(f.m.mock.now_ms - start, Sentinel::confirm_grace_ms);
    CHECK_EQ(f.sentinel.tried(), 3U);
    CHECK_EQ(f.sentinel.confirmations(), 2U);
    CHECK(f.m.conn.connected());  // no reconnection for the next command
    CHECK_EQ(f.m.mock.connects, 1U);
    CHECK_EQ(f.mocks[1].connects, 1U);
    CHECK(f.done());
}

TEST(over_links_a_sentinel_that_names_another_node_ends_the_confirmation) {
    Linked f;
    Lock lock(f.m.conn, "k");
    f.mocks[0].on_connect().expect(ask).reply(addr_6380);
    f.mocks[1].on_connect().expect(ask).reply(addr_6380);
    f.mocks[2].on_connect().expect(ask).reply(addr_6380);
    f.m.mock.on_connect().expect(role).reply(is_master).expect(set0).reply("+OK\r\n");
    // The confirmation: the first sentinel already names the promoted replica.
    f.mocks[0].expect(ask).reply(addr_6381);
    f.mocks[1].expect(ask).reply(addr_6380);
    f.mocks[2].expect(ask).reply(addr_6380);
    // The acquisition is given back on the new master; this resolution prefers it.
    f.m.mock.on_connect().expect(role).reply(is_master).expect(release0).reply(":0\r\n");
    f.mocks[0].expect(ask).reply(addr_6380);  // a sentinel that has not caught up yet
    f.mocks[1].expect(ask).reply(addr_6381);
    f.mocks[2].expect(ask).reply(addr_6381);
    CHECK_EQ(lock.acquire(1000), Status::not_replicated);
    CHECK(!lock.held());
    CHECK(f.sentinel.master_moved() || f.sentinel.master().port == 6381U);
    CHECK_EQ(f.sentinel.master().port, 6381U);
    CHECK_EQ(std::string(f.m.mock.last_host), std::string("127.0.0.1"));
    CHECK_EQ(f.m.mock.last_port, 6381U);
    CHECK(f.done());
}

TEST(over_links_no_majority_is_not_replicated_at_the_deadline) {
    Linked f;
    Lock lock(f.m.conn, "k");
    f.mocks[0].on_connect().expect(ask).reply(addr_6380);
    f.mocks[1].on_connect().expect(ask);
    f.mocks[2].on_connect(RESPLOCK_PORT_REFUSED);
    f.m.mock.on_connect().expect(role).reply(is_master).expect(set0).reply("+OK\r\n");
    f.mocks[0].expect(ask).reply(addr_6380);
    f.mocks[1].on_connect().expect(ask);
    f.mocks[2].on_connect(RESPLOCK_PORT_REFUSED);
    // Given back on the node that took it (no sentinel named another), then the link goes.
    f.m.mock.expect(release0).reply(":1\r\n");
    CHECK_EQ(lock.acquire(1000), Status::not_replicated);
    CHECK(!lock.held());
    CHECK_EQ(f.sentinel.confirmations(), 1U);
    CHECK(!f.sentinel.master_moved());
    CHECK(!f.m.conn.connected());
    CHECK(f.done());
}

// A waiter's busy attempts write nothing to confirm: a command more than recheck_ms after the last
// check asks the sentinels first, and moves to the master they name before it goes out.
TEST(a_command_after_recheck_ms_follows_a_failover_before_it_goes_out) {
    Linked f;
    f.mocks[0].on_connect().expect(ask).reply(addr_6380);
    f.mocks[1].on_connect().expect(ask);
    f.mocks[2].on_connect().expect(ask);
    f.m.mock.on_connect().expect(role).reply(is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    // Within recheck_ms: no question to the sentinels.
    f.m.mock.advance(Sentinel::recheck_ms - 1);
    f.m.mock.expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK(f.done());
    // Past it: the sentinels name another node, and the command goes there.
    f.m.mock.advance(1);
    f.mocks[0].expect(ask).reply(addr_6381);  // settles the check: the others are not read
    f.mocks[1].on_connect().expect(ask);
    f.mocks[2].on_connect().expect(ask);
    // The resolution that follows (a node other than the one left is preferred).
    f.mocks[0].expect(ask).reply(addr_6381);
    f.mocks[1].on_connect().expect(ask).reply(addr_6381);
    f.mocks[2].on_connect().expect(ask).reply(addr_6381);
    f.m.mock.on_connect().expect(role).reply(is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.sentinel.master().port, 6381U);
    CHECK_EQ(f.m.mock.last_port, 6381U);
    CHECK(f.done());
    // Still the master at the next check: the link stays.
    f.m.mock.advance(Sentinel::recheck_ms);
    f.mocks[0].expect(ask).reply(addr_6381);
    f.mocks[1].expect(ask).reply(addr_6381);
    f.mocks[2].expect(ask).reply(addr_6381);
    f.m.mock.expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.m.mock.connects, 2U);
    CHECK(f.done());
}

// Without links the check goes over the connection, whose link to the master then goes too.
TEST(without_links_the_recheck_asks_over_the_connection) {
    Fixture f(1);
    f.resolves(addr_6380, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    f.m.mock.advance(Sentinel::recheck_ms);
    f.m.mock.on_connect().expect(ask).reply(addr_6381);
    f.resolves(addr_6381, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.sentinel.master().port, 6381U);
    CHECK(f.m.mock.done());
}

TEST(an_open_connection_is_reused_without_resolving) {
    Fixture f;
    f.resolves(addr_6380, is_master).expect(ping_wire).reply("+PONG\r\n");
    f.m.mock.expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.m.mock.connects, 2U);
    CHECK(f.m.mock.done());
}

TEST(a_lost_connection_resolves_again) {
    Fixture f;
    f.resolves(addr_6380, is_master).expect(ping_wire).recv_closed();
    f.resolves(addr_6381, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::closed);
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.sentinel.master().port, 6381U);
    CHECK(f.m.mock.done());
}

TEST(nil_asks_the_next_sentinel) {
    Fixture f(2);
    f.m.mock.on_connect().expect(ask).reply("*-1\r\n");
    f.resolves(addr_6380, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.sentinel.tried(), 2U);
    CHECK(f.sentinel.name_unknown());
    CHECK(f.m.mock.done());
}

TEST(a_name_unknown_to_every_sentinel_is_no_host) {
    Fixture f(3);
    f.m.mock.on_connect().expect(ask).reply("*-1\r\n");
    f.m.mock.on_connect(RESPLOCK_PORT_REFUSED);
    f.m.mock.on_connect().expect(ask).reply("$-1\r\n");
    CHECK_EQ(f.run(), Status::no_host);
    CHECK_EQ(f.sentinel.tried(), 3U);
    CHECK(f.sentinel.name_unknown());
    CHECK(!f.m.conn.request_sent());
    CHECK(f.m.mock.done());
}

TEST(no_reachable_sentinel_is_connect_failed) {
    Fixture f(3);
    f.m.mock.on_connect(RESPLOCK_PORT_REFUSED)
        .on_connect(RESPLOCK_PORT_NO_HOST)
        .on_connect(RESPLOCK_PORT_REFUSED);
    CHECK_EQ(f.run(), Status::connect_failed);
    CHECK_EQ(f.sentinel.tried(), 3U);
    CHECK(!f.sentinel.name_unknown());
    CHECK_EQ(f.m.mock.sleeps, 0U);
    CHECK(f.m.mock.done());
}

// A sentinel that accepts the connection and never answers (a hung host) costs its equal share
// of the time left, not the whole of it: the next one is asked.
TEST(a_silent_sentinel_costs_its_share_of_the_time) {
    Fixture f(2, 500);
    f.m.mock.on_connect().expect(ask).recv_timeout();
    f.resolves(addr_6380, is_master).expect(ping_wire).reply("+PONG\r\n");
    const std::uint32_t start = f.m.mock.now_ms;
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.m.mock.now_ms - start, 250U);
    CHECK_EQ(f.sentinel.tried(), 2U);
    CHECK(f.m.mock.done());

    Fixture g(2, 500);
    g.m.mock.on_connect().expect(ask).recv_timeout().on_connect().expect(ask).recv_timeout();
    CHECK_EQ(g.run(), Status::timeout);
    CHECK_EQ(g.sentinel.tried(), 2U);
    CHECK(g.m.mock.done());
}

TEST(a_sentinel_that_closes_at_once_is_skipped) {
    // The first sentinel closes the link instead of answering: the next one is asked.
    Fixture f(2);
    f.m.mock.on_connect().expect(ask).recv_closed();
    f.resolves(addr_6380, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.sentinel.tried(), 2U);
    CHECK(f.m.mock.done());
}

TEST(every_bad_sentinel_reply_asks_the_next_one) {
    for (const BadReply& bad : bad_replies) {
        Fixture f(2);
        f.m.mock.on_connect().expect(ask).reply(bad.bytes);
        f.resolves(addr_6380, is_master).expect(ping_wire).reply("+PONG\r\n");
        if (!CHECK_EQ(f.run(), Status::ok))
            std::fprintf(stderr, "  reply: %.*s\n", static_cast<int>(bad.bytes.size()),
                         bad.bytes.data());
        CHECK_EQ(f.sentinel.tried(), 2U);
        CHECK(f.m.mock.done());
    }
}

TEST(bad_replies_from_every_sentinel_give_the_last_ones_status) {
    Fixture f(2);
    f.m.mock.on_connect().expect(ask).reply("*1\r\n$1\r\nx\r\n");
    f.m.mock.on_connect().expect(ask).reply("-NOAUTH Authentication required.\r\n");
    CHECK_EQ(f.run(), Status::auth_required);
    CHECK(!f.sentinel.name_unknown());
    CHECK(f.m.mock.done());
}

TEST(parse_master_addr_on_every_shape) {
    Node node;
    CHECK_EQ(Sentinel::parse_master_addr(parsed(addr_6380), node), Status::ok);
    CHECK_EQ(node.port, 6380U);
    CHECK_EQ(std::string(node.host), std::string("127.0.0.1"));
    CHECK_EQ(Sentinel::parse_master_addr(parsed("*2\r\n$9\r\nlocalhost\r\n$5\r\n65535\r\n"), node),
             Status::ok);
    CHECK_EQ(node.port, 65535U);
    CHECK_EQ(Sentinel::parse_master_addr(parsed("*-1\r\n"), node), Status::no_host);
    CHECK_EQ(Sentinel::parse_master_addr(parsed("$-1\r\n"), node), Status::no_host);
    for (const BadReply& bad : bad_replies) {
        Node untouched;
        (void)untouched.set("keep", 1);
        if (!CHECK_EQ(Sentinel::parse_master_addr(parsed(bad.bytes), untouched), bad.status))
            std::fprintf(stderr, "  reply: %.*s\n", static_cast<int>(bad.bytes.size()),
                         bad.bytes.data());
        CHECK_EQ(untouched.port, 1U);
    }
    const std::string host(RESPLOCK_MAX_HOST_LEN, 'h');
    const std::string longest =
        "*2\r\n$" + std::to_string(host.size()) + "\r\n" + host + "\r\n$4\r\n6380\r\n";
    CHECK_EQ(Sentinel::parse_master_addr(parsed(longest), node), Status::ok);
    CHECK_EQ(std::string(node.host), host);
    CHECK_EQ(Sentinel::parse_master_addr(parsed(oversized_host_reply()), node),
             Status::protocol_error);
    CHECK_EQ(Sentinel::parse_master_addr(Reply{}, node), Status::protocol_error);
}

TEST(parse_role_on_every_shape) {
    CHECK_EQ(Sentinel::parse_role(parsed(is_master)), Status::ok);
    CHECK_EQ(Sentinel::parse_role(parsed("*1\r\n+master\r\n")), Status::ok);
    CHECK_EQ(Sentinel::parse_role(parsed(is_slave)), Status::read_only);
    CHECK_EQ(Sentinel::parse_role(parsed("*2\r\n$8\r\nsentinel\r\n*0\r\n")), Status::read_only);
    CHECK_EQ(Sentinel::parse_role(parsed("*1\r\n$7\r\nmasters\r\n")), Status::read_only);
    CHECK_EQ(Sentinel::parse_role(parsed("+master\r\n")), Status::protocol_error);
    CHECK_EQ(Sentinel::parse_role(parsed("$6\r\nmaster\r\n")), Status::protocol_error);
    CHECK_EQ(Sentinel::parse_role(parsed("*0\r\n")), Status::protocol_error);
    CHECK_EQ(Sentinel::parse_role(parsed("*-1\r\n")), Status::protocol_error);
    CHECK_EQ(Sentinel::parse_role(parsed("*1\r\n:1\r\n")), Status::protocol_error);
    CHECK_EQ(Sentinel::parse_role(parsed("*1\r\n*1\r\n$6\r\nmaster\r\n")), Status::protocol_error);
    CHECK_EQ(Sentinel::parse_role(Reply{}), Status::protocol_error);
}

TEST(a_replica_is_resolved_again_after_a_pause) {
    Fixture f;
    f.resolves(addr_6380, is_slave);
    f.resolves(addr_6381, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.m.mock.sleeps, 1U);
    CHECK_EQ(f.m.mock.slept_ms, Sentinel::retry_pause_ms);
    CHECK_EQ(f.sentinel.master().port, 6381U);
    CHECK(f.m.mock.done());
}

TEST(an_unreachable_master_is_resolved_again) {
    Fixture f;
    f.m.mock.on_connect().expect(ask).reply(addr_6380).on_connect(RESPLOCK_PORT_REFUSED);
    f.resolves(addr_6381, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.m.mock.sleeps, 1U);
    CHECK(f.m.mock.done());
}

TEST(a_master_host_that_never_resolves_is_connect_failed_not_no_host) {
    Fixture f(1, 150);  // a pause of 100, then the 50 left
    for (int i = 0; i < 2; ++i)
        f.m.mock.on_connect().expect(ask).reply(addr_6380).on_connect(RESPLOCK_PORT_NO_HOST);
    CHECK_EQ(f.run(), Status::connect_failed);
    CHECK(!f.sentinel.name_unknown());
    CHECK(f.sentinel.resolved());
    CHECK(f.m.mock.done());
}

TEST(never_a_master_before_the_deadline_is_read_only) {
    Fixture f(1, 250);  // pauses of 100, 100, then the 50 left
    for (int i = 0; i < 3; ++i)
        f.resolves(addr_6380, is_slave);
    CHECK_EQ(f.run(), Status::read_only);
    CHECK_EQ(f.m.mock.sleeps, 3U);
    CHECK_EQ(f.m.mock.slept_ms, 250U);
    CHECK(!f.m.conn.request_sent());
    CHECK(!f.m.mock.is_open);
    CHECK(f.m.mock.done());
}

TEST(an_error_reply_to_role_fails_at_once) {
    Fixture f;
    f.resolves(addr_6380, "-NOPERM this user has no permissions to run the 'role' command\r\n");
    CHECK_EQ(f.run(), Status::no_permission);
    CHECK_EQ(f.m.mock.sleeps, 0U);
    CHECK(!f.m.mock.is_open);
    CHECK(f.m.mock.done());
}

TEST(a_loading_master_is_asked_again) {
    Fixture f;
    f.resolves(addr_6380, "-LOADING Redis is loading the dataset in memory\r\n");
    f.resolves(addr_6380, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.m.mock.sleeps, 1U);
    CHECK(f.m.mock.done());
}

TEST(a_role_reply_that_is_no_array_is_a_protocol_error) {
    Fixture f;
    f.resolves(addr_6380, "+OK\r\n");
    CHECK_EQ(f.run(), Status::protocol_error);
    CHECK(!f.m.mock.is_open);
    CHECK(f.m.mock.done());
}

TEST(readonly_resolves_again_and_resends) {
    Fixture f;
    f.resolves(addr_6380, is_master)
        .expect(ping_wire)
        .reply("-READONLY You can't write against a read only replica.\r\n");
    f.resolves(addr_6381, is_master).expect(ping_wire).reply("+PONG\r\n");
    CHECK_EQ(f.run(), Status::ok);
    CHECK_EQ(f.sentinel.master().port, 6381U);
    CHECK(f.m.mock.done());
}

TEST(readonly_is_followed_at_most_max_redirects_times) {
    Fixture f;
    for (int i = 0; i <= RESPLOCK_MAX_REDIRECTS; ++i) {
        f.resolves(addr_6380, is_master)
            .expect(ping_wire)
            .reply("-READONLY You can't write against a read only replica.\r\n");
    }
    CHECK_EQ(f.run(), Status::read_only);
    CHECK_EQ(f.m.mock.connects, 2U * (RESPLOCK_MAX_REDIRECTS + 1U));
    CHECK(f.m.conn.error_text().find("READONLY") == 0);
    CHECK(f.m.mock.done());
}

TEST(auth_and_select_go_to_the_master_only) {
    ConnectionConfig c;
    Sentinel sentinel("mymaster");
    (void)sentinel.add("127.0.0.1", 26379);
    c.router = &sentinel;
    c.password = "secret";
    c.db = 2;
    support::MockConnection<> m(c);
    m.mock.on_connect().expect(ask).reply(addr_6380);
    m.mock.on_connect()
        .expect(wire::cmd({"AUTH", "secret"}))
        .reply("+OK\r\n")
        .expect(wire::cmd({"SELECT", "2"}))
        .reply("+OK\r\n")
        .expect(role)
        .reply(is_master)
        .expect(ping_wire)
        .reply("+PONG\r\n");
    Reply reply;
    CHECK_EQ(m.conn.command(ping, 1, reply), Status::ok);
    CHECK(m.mock.done());
}

TEST(a_master_that_refuses_the_password_fails_at_once) {
    ConnectionConfig c;
    Sentinel sentinel("mymaster");
    (void)sentinel.add("127.0.0.1", 26379);
    c.router = &sentinel;
    c.password = "wrong";
    support::MockConnection<> m(c);
    m.mock.on_connect().expect(ask).reply(addr_6380);
    m.mock.on_connect().expect(wire::cmd({"AUTH", "wrong"})).reply("-WRONGPASS invalid\r\n");
    Reply reply;
    CHECK_EQ(m.conn.command(ping, 1, reply), Status::auth_failed);
    CHECK_EQ(m.mock.sleeps, 0U);
    CHECK(m.mock.done());
}

TEST(without_a_name_or_sentinels_nothing_is_tried) {
    {
        Sentinel sentinel;
        (void)sentinel.add("127.0.0.1", 26379);
        ConnectionConfig c;
        c.router = &sentinel;
        support::MockConnection<> m(c);
        Reply reply;
        CHECK_EQ(m.conn.command(ping, 1, reply), Status::invalid_argument);
        CHECK_EQ(m.mock.connects, 0U);
    }
    {
        Sentinel sentinel("mymaster");
        ConnectionConfig c;
        c.router = &sentinel;
        support::MockConnection<> m(c);
        Reply reply;
        CHECK_EQ(m.conn.command(ping, 1, reply), Status::invalid_argument);
        CHECK_EQ(m.mock.connects, 0U);
    }
}

TEST(add_and_name_limits) {
    Sentinel s("mymaster");
    CHECK(!s.add("", 26379));
    CHECK(!s.add("127.0.0.1", 0));
    CHECK(!s.add(std::string(RESPLOCK_MAX_HOST_LEN + 1, 'h'), 26379));
    CHECK(s.add(std::string(RESPLOCK_MAX_HOST_LEN, 'h'), 26379));
    for (int i = 1; i < RESPLOCK_MAX_SENTINELS; ++i)
        CHECK(s.add("127.0.0.1", static_cast<std::uint16_t>(26379 + i)));
    CHECK(!s.add("127.0.0.1", 1));
    CHECK_EQ(s.count(), static_cast<std::size_t>(RESPLOCK_MAX_SENTINELS));
    CHECK_EQ(s.sentinel(1).port, 26380U);
    CHECK(!s.set_master_name(""));
    CHECK(!s.set_master_name(std::string(RESPLOCK_MAX_HOST_LEN + 1, 'n')));
    CHECK(!s.set_master_name(std::string_view("a\0b", 3)));
    CHECK_EQ(std::string(s.master_name()), std::string("mymaster"));
    CHECK(s.set_master_name(std::string(RESPLOCK_MAX_HOST_LEN, 'n')));
    CHECK_EQ(s.master_name().size(), static_cast<std::size_t>(RESPLOCK_MAX_HOST_LEN));
}
