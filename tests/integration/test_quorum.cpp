// The quorum lock against five real redis-server processes over the POSIX port: the key and token
// on every server, servers killed and restarted empty, other holders, extend and release on all,
// a TTL the acquisition uses up, the scripts' digests and the NOSCRIPT fallback per server.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "check.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/quorum_lock.hpp"

namespace {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::QuorumLock;
using resplock::Status;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kServers = 5;

// The owner script the quorum shares with the plain lock (src/core/lua/owner.lua): its digest and
// text. Without a token it queries, with one it releases, with a token and a TTL it extends.
constexpr const char* kOwnerSha = "23d13ce2ffcb74f3babaff7e5afc9c05b7a72781";
constexpr const char* kOwnerText =
    "local k,a,r=KEYS[1],ARGV,redis.call local v=r('get',k)if not a[1]then "
    "return{v,r('pttl',k)}end if v~=a[1]then return v and-1 or 0 end return a[2]and "
    "r('pexpire',k,a[2])or r('del',k)";

support::RedisServer& server(std::size_t i) {
    static support::RedisServer all[kServers];
    return all[i];
}

std::string get(std::size_t i, const std::string& key) {
    return server(i).cli({"GET", key});
}

long long pttl(std::size_t i, const std::string& key) {
    return std::atoll(server(i).cli({"PTTL", key}).c_str());
}

std::int64_t ms_since(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// Restarts the servers a test killed, even when it fails half-way.
struct Revive {
    ~Revive() {
        for (std::size_t i = 0; i < kServers; ++i) {
            if (!server(i).running()) server(i).restart();
        }
    }
};

// One connection per server (servers first..first+n), each over its own POSIX context and buffer.
struct Client {
    struct One {
        resplock_posix_t ctx{};
        resplock_port_t port = support::posix_port(ctx);
        ConnectionConfig config;
        std::unique_ptr<char[]> buf;
        std::unique_ptr<Connection> conn;
    };
    One one[kServers];
    Connection* conns[kServers] = {};

    explicit Client(std::size_t n = kServers, std::size_t buffer = 512, std::size_t first = 0) {
        for (std::size_t i = 0; i < n; ++i) {
            One& o = one[i];
            o.config.host = "127.0.0.1";
            o.config.port = server(first + i).port();
            o.config.timeout_ms = 2000;
            o.buf.reset(new char[buffer]);
            o.conn.reset(new Connection(o.port, o.config, o.buf.get(), buffer));
            conns[i] = o.conn.get();
        }
    }
};

// Every server's value of `key` is `value` ("" for none).
bool on_all(const std::string& key, std::string_view value, std::size_t from = 0,
            std::size_t to = kServers) {
    bool all = true;
    for (std::size_t i = from; i < to; ++i) {
        const std::string v = get(i, key);
        if (v != value) {
            std::printf("      server %zu holds \"%s\"\n", i, v.c_str());
            all = false;
        }
    }
    return all;
}

TEST(servers_start) {
    for (std::size_t i = 0; i < kServers; ++i) {
        REQUIRE(server(i).running());
    }
}

TEST(scripts_digests_match_server) {
    CHECK_EQ(server(0).cli({"SCRIPT", "LOAD", kOwnerText}), std::string(kOwnerSha));
    // The library's own text: after one EVAL on a flushed server, the hard-coded digest names
    // it, and no further EVAL is needed for any operation.
    Client c;
    QuorumLock lock(c.conns, kServers, "q:digest");
    for (std::size_t i = 0; i < kServers; ++i) {
        CHECK_EQ(server(i).cli({"SCRIPT", "FLUSH"}), std::string("OK"));
        CHECK_EQ(server(i).cli({"CONFIG", "RESETSTAT"}), std::string("OK"));
    }
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    for (int round = 0; round < 3; ++round) {
        CHECK_EQ(lock.extend(10000), Status::ok);
    }
    CHECK_EQ(lock.release(), Status::ok);
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    resplock::LockInfo info;
    CHECK_EQ(lock.query(info), Status::ok);
    CHECK_EQ(lock.query(info), Status::ok);
    for (std::size_t i = 0; i < kServers; ++i) {
        CHECK_EQ(server(i).cli({"SCRIPT", "EXISTS", kOwnerSha}), std::string("1"));
        const std::string stats = server(i).cli({"INFO", "commandstats"});
        if (!CHECK(stats.find("cmdstat_eval:calls=1,") != std::string::npos &&
                   stats.find("cmdstat_evalsha:calls=7,") != std::string::npos)) {
            std::printf("      server %zu: %s\n", i, stats.c_str());
        }
    }
}

TEST(acquire_sets_the_token_on_every_server_and_release_removes_it) {
    Client c;
    QuorumLock lock(c.conns, kServers, "q:basic");
    CHECK_EQ(lock.quorum(), 3U);
    CHECK(lock.token().empty());
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(lock.granted(), 5U);
    CHECK(lock.held());
    CHECK_EQ(lock.token().size(), resplock::token_len);
    CHECK(lock.remaining_ms() > 9000 && lock.remaining_ms() <= 9898);
    CHECK(on_all("q:basic", lock.token()));
    for (std::size_t i = 0; i < kServers; ++i) {
        const long long left = pttl(i, "q:basic");
        CHECK(left > 9000 && left <= 10000);
    }
    CHECK_EQ(lock.acquire(10000), Status::invalid_argument);  // already held
    CHECK_EQ(lock.release(), Status::ok);
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    CHECK(on_all("q:basic", ""));
    CHECK_EQ(lock.release(), Status::invalid_argument);  // no token left
    CHECK_EQ(lock.extend(10000), Status::invalid_argument);
}

TEST(second_client_is_busy_while_the_first_holds) {
    Client a;
    Client b;
    QuorumLock first(a.conns, kServers, "q:busy");
    QuorumLock second(b.conns, kServers, "q:busy");
    REQUIRE_EQ(first.acquire(10000), Status::ok);
    const std::string token(first.token());
    CHECK_EQ(second.acquire(10000), Status::busy);
    CHECK_EQ(second.granted(), 0U);
    CHECK(!second.held());
    CHECK(second.token().empty());
    const Clock::time_point start = Clock::now();
    CHECK_EQ(second.try_acquire(10000, 300), Status::busy);
    const std::int64_t took = ms_since(start);
    CHECK(took >= 290 && took < 300 + 500);
    CHECK(on_all("q:busy", token));
    CHECK_EQ(first.release(), Status::ok);
    CHECK_EQ(second.acquire(10000), Status::ok);
    CHECK(on_all("q:busy", second.token()));
    CHECK_EQ(second.release(), Status::ok);
}

TEST(try_acquire_gets_the_lock_when_the_holder_expires) {
    Client a;
    Client b;
    QuorumLock first(a.conns, kServers, "q:wait");
    QuorumLock second(b.conns, kServers, "q:wait");
    REQUIRE_EQ(first.acquire(400), Status::ok);
    const Clock::time_point start = Clock::now();
    CHECK_EQ(second.try_acquire(10000, 5000), Status::ok);
    const std::int64_t took = ms_since(start);
    CHECK(took >= 300 && took < 400 + 1500);
    // The first holder's keys expire a little apart: a server may still refuse.
    CHECK(second.granted() >= 3);
    std::size_t holding = 0;
    for (std::size_t i = 0; i < kServers; ++i) {
        holding += get(i, "q:wait") == second.token() ? 1U : 0U;
    }
    CHECK_EQ(holding, second.granted());
    CHECK_EQ(second.release(), Status::ok);
    CHECK(on_all("q:wait", ""));
}

TEST(extend_renews_on_every_server) {
    Client c;
    QuorumLock lock(c.conns, kServers, "q:extend");
    REQUIRE_EQ(lock.acquire(2000), Status::ok);
    CHECK(lock.remaining_ms() <= 1978);
    CHECK_EQ(lock.extend(30000), Status::ok);
    CHECK_EQ(lock.granted(), 5U);
    CHECK(lock.remaining_ms() > 28000);
    for (std::size_t i = 0; i < kServers; ++i) {
        CHECK(pttl(i, "q:extend") > 28000);
    }
    // Two servers lose the key: still a majority.
    server(0).cli({"DEL", "q:extend"});
    server(1).cli({"SET", "q:extend", "someone-else"});
    CHECK_EQ(lock.extend(30000), Status::ok);
    CHECK_EQ(lock.granted(), 3U);
    // A third one: the majority is gone, another token holds one of them.
    server(2).cli({"DEL", "q:extend"});
    CHECK_EQ(lock.extend(30000), Status::not_owner);
    CHECK_EQ(lock.granted(), 2U);
    CHECK(!lock.held());
    CHECK_EQ(lock.extend(30000), Status::not_owner);  // the same answer again
    CHECK(!lock.held());
    // The token is kept so release() removes what is left, and only that.
    CHECK_EQ(std::string(lock.token()), get(3, "q:extend"));
    CHECK_EQ(lock.release(), Status::ok);
    CHECK(on_all("q:extend", "", 2, kServers));
    CHECK_EQ(get(1, "q:extend"), std::string("someone-else"));
    server(1).cli({"DEL", "q:extend"});
}

TEST(query_reports_the_majority_holder) {
    Client a;
    Client b;
    QuorumLock first(a.conns, kServers, "q:query");
    QuorumLock second(b.conns, kServers, "q:query");
    resplock::LockInfo info;
    REQUIRE_EQ(first.query(info), Status::ok);
    CHECK(info.state == resplock::LockState::free);
    CHECK_EQ(info.ttl_ms, -2);
    REQUIRE_EQ(first.acquire(10000), Status::ok);
    REQUIRE_EQ(first.query(info), Status::ok);
    CHECK(info.state == resplock::LockState::held_by_me);
    CHECK(info.ttl_ms > 9000 && info.ttl_ms <= 10000);
    REQUIRE_EQ(second.query(info), Status::ok);
    CHECK(info.state == resplock::LockState::held_by_other);
    // The shortest PTTL among the majority; a minority does not make it held.
    server(4).cli({"PEXPIRE", "q:query", "5000"});
    REQUIRE_EQ(second.query(info), Status::ok);
    CHECK(info.ttl_ms > 4000 && info.ttl_ms <= 5000);
    for (std::size_t i = 0; i < 3; ++i) {
        server(i).cli({"DEL", "q:query"});
    }
    REQUIRE_EQ(first.query(info), Status::ok);
    CHECK(info.state == resplock::LockState::free);
    CHECK_EQ(first.release(), Status::ok);
}

TEST(adopted_token_extends_and_releases) {
    Client a;
    Client b;
    QuorumLock first(a.conns, kServers, "q:adopt");
    QuorumLock second(b.conns, kServers, "q:adopt");
    REQUIRE_EQ(first.acquire(2000), Status::ok);
    CHECK_EQ(second.adopt(""), Status::invalid_argument);
    CHECK_EQ(second.adopt(std::string(resplock::max_token_len + 1, 'a')), Status::invalid_argument);
    REQUIRE_EQ(second.adopt(first.token()), Status::ok);
    CHECK(!second.held());  // validity unknown until an extend
    CHECK_EQ(second.extend(20000), Status::ok);
    CHECK(second.remaining_ms() > 18000);
    CHECK(pttl(2, "q:adopt") > 18000);
    second.close();
    CHECK_EQ(second.release(), Status::ok);  // reconnects
    CHECK(on_all("q:adopt", ""));
    CHECK_EQ(first.release(), Status::expired);
}

TEST(extend_after_validity_ran_out_sends_nothing) {
    Client c;
    QuorumLock lock(c.conns, kServers, "q:late");
    REQUIRE_EQ(lock.acquire(300), Status::ok);
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    CHECK_EQ(server(0).cli({"CONFIG", "RESETSTAT"}), std::string("OK"));
    CHECK_EQ(lock.extend(10000), Status::expired);
    CHECK(!lock.held());
    CHECK(server(0).cli({"INFO", "commandstats"}).find("cmdstat_eval") == std::string::npos);
    CHECK(on_all("q:late", ""));
}

TEST(two_servers_down_still_a_majority) {
    Revive revive;
    Client c;
    QuorumLock lock(c.conns, kServers, "q:down2");
    REQUIRE_EQ(lock.acquire(10000), Status::ok);  // connections open before the kill
    CHECK_EQ(lock.release(), Status::ok);
    server(1).kill();
    server(3).kill();
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(lock.granted(), 3U);
    CHECK(lock.held());
    CHECK_EQ(get(0, "q:down2"), std::string(lock.token()));
    CHECK_EQ(get(2, "q:down2"), std::string(lock.token()));
    CHECK_EQ(get(4, "q:down2"), std::string(lock.token()));
    CHECK_EQ(lock.extend(10000), Status::ok);
    CHECK_EQ(lock.granted(), 3U);
    CHECK_EQ(lock.release(), Status::ok);  // three answered: done; the others are down
    CHECK(lock.token().empty());
    CHECK_EQ(get(0, "q:down2"), std::string());
    CHECK_EQ(get(2, "q:down2"), std::string());
    CHECK_EQ(get(4, "q:down2"), std::string());
}

TEST(three_servers_down_no_majority_and_nothing_left_behind) {
    // With a majority unreachable, acquire returns the failure those servers share
    // (connect_failed: nothing listens on their ports) and removes its keys from the live two.
    Revive revive;
    Client c;
    QuorumLock lock(c.conns, kServers, "q:down3");
    server(0).kill();
    server(2).kill();
    server(4).kill();
    CHECK_EQ(lock.acquire(10000), Status::connect_failed);
    CHECK_EQ(lock.granted(), 2U);
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    CHECK_EQ(lock.remaining_ms(), 0U);
    CHECK_EQ(get(1, "q:down3"), std::string());
    CHECK_EQ(get(3, "q:down3"), std::string());
    // Waiting does not help while they stay down: the last attempt's status.
    const Clock::time_point start = Clock::now();
    CHECK_EQ(lock.try_acquire(10000, 200), Status::connect_failed);
    CHECK(ms_since(start) < 200 + 500);
    CHECK_EQ(get(1, "q:down3"), std::string());
    CHECK_EQ(get(3, "q:down3"), std::string());
}

TEST(servers_restarted_empty_do_not_let_a_second_holder_in) {
    Revive revive;
    Client a;
    Client b;
    QuorumLock first(a.conns, kServers, "q:restart");
    QuorumLock second(b.conns, kServers, "q:restart");
    REQUIRE_EQ(first.acquire(20000), Status::ok);
    REQUIRE_EQ(first.granted(), 5U);
    const std::string token(first.token());
    REQUIRE(server(0).restart());
    REQUIRE(server(3).restart());
    CHECK(on_all("q:restart", "", 0, 1));
    CHECK_EQ(second.acquire(20000), Status::busy);
    CHECK_EQ(second.granted(), 2U);
    CHECK(!second.held());
    CHECK(second.token().empty());
    // The second client's keys on the restarted servers were taken back.
    CHECK_EQ(get(0, "q:restart"), std::string());
    CHECK_EQ(get(3, "q:restart"), std::string());
    CHECK(on_all("q:restart", token, 1, 3));
    CHECK_EQ(get(4, "q:restart"), token);
    // The first still holds a majority: it renews on three and releases.
    CHECK_EQ(first.extend(20000), Status::ok);
    CHECK_EQ(first.granted(), 3U);
    CHECK_EQ(first.release(), Status::ok);
    CHECK(on_all("q:restart", ""));
}

TEST(ttl_used_up_by_the_acquisition_is_not_held_and_cleaned_up) {
    // A 2 ms TTL leaves nothing once the drift allowance (ttl/100 + 2 ms) is taken: however fast
    // the servers answer, validity is not positive. The keys are taken back on every server.
    Client c;
    QuorumLock lock(c.conns, kServers, "q:short");
    for (std::size_t i = 0; i < kServers; ++i) {
        CHECK_EQ(server(i).cli({"CONFIG", "RESETSTAT"}), std::string("OK"));
    }
    CHECK_EQ(lock.acquire(2), Status::timeout);
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    CHECK_EQ(lock.remaining_ms(), 0U);
    for (std::size_t i = 0; i < kServers; ++i) {
        // The owner-checked delete reached every server (it may still be in flight).
        const Clock::time_point start = Clock::now();
        std::string stats;
        do {
            stats = server(i).cli({"INFO", "commandstats"});
        } while (stats.find("cmdstat_evalsha:calls=1,") == std::string::npos &&
                 ms_since(start) < 2000);
        if (!CHECK(stats.find("cmdstat_evalsha:calls=1,") != std::string::npos)) {
            std::printf("      server %zu: %s\n", i, stats.c_str());
        }
    }
}

TEST(script_flush_on_some_servers_release_uses_eval_there_only) {
    Client c;
    QuorumLock lock(c.conns, kServers, "q:flush");
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(lock.extend(10000), Status::ok);
    for (std::size_t i = 0; i < kServers; ++i) {
        // The owner script is cached everywhere; then three servers forget it.
        server(i).cli({"SCRIPT", "LOAD", kOwnerText});
        if (i < 3) CHECK_EQ(server(i).cli({"SCRIPT", "FLUSH"}), std::string("OK"));
        CHECK_EQ(server(i).cli({"CONFIG", "RESETSTAT"}), std::string("OK"));
    }
    CHECK_EQ(lock.extend(10000), Status::ok);
    CHECK_EQ(lock.granted(), 5U);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK(on_all("q:flush", ""));
    for (std::size_t i = 0; i < kServers; ++i) {
        const std::string stats = server(i).cli({"INFO", "commandstats"});
        // One EVAL where the cache was flushed: the extend's; the release finds the script then.
        const bool eval = stats.find("cmdstat_eval:calls=1,") != std::string::npos;
        if (!CHECK(i < 3 ? eval : stats.find("cmdstat_eval:") == std::string::npos)) {
            std::printf("      server %zu: %s\n", i, stats.c_str());
        }
        CHECK(stats.find("cmdstat_evalsha:calls=2,") != std::string::npos);
    }
}

TEST(smallest_buffer_and_longest_key) {
    Client c(kServers, resplock::lock_buffer_min());
    const std::string key(RESPLOCK_MAX_KEY_LEN, 'k');
    QuorumLock lock(c.conns, kServers, key);
    for (std::size_t i = 0; i < kServers; ++i) {
        server(i).cli({"SCRIPT", "FLUSH"});  // the EVAL texts are the longest requests
    }
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(lock.extend(10000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK(on_all(key, ""));
}

TEST(quorum_of_fewer_servers) {
    for (std::size_t n = 1; n <= kServers; ++n) {
        Client c(n);
        QuorumLock lock(c.conns, n, "q:sizes");
        CHECK_EQ(lock.quorum(), n / 2 + 1);
        REQUIRE_EQ(lock.acquire(10000), Status::ok);
        CHECK_EQ(lock.granted(), n);
        CHECK(on_all("q:sizes", lock.token(), 0, n));
        CHECK(on_all("q:sizes", "", n, kServers));
        CHECK_EQ(lock.release(), Status::ok);
    }
    // Two of four are not a majority: busy when the other two hold it for someone else.
    Client c(4);
    QuorumLock lock(c.conns, 4, "q:four");
    server(0).cli({"SET", "q:four", "other"});
    server(1).cli({"SET", "q:four", "other"});
    CHECK_EQ(lock.acquire(10000), Status::busy);
    CHECK_EQ(lock.granted(), 2U);
    CHECK(on_all("q:four", "", 2, 4));
    CHECK(on_all("q:four", "other", 0, 2));
    server(0).cli({"DEL", "q:four"});
    server(1).cli({"DEL", "q:four"});
}

TEST(invalid_arguments) {
    Client c;
    Connection* repeated[2] = {c.conns[0], c.conns[0]};
    Connection* with_null[2] = {c.conns[0], nullptr};
    // Two connections over one port context: one transport for two servers.
    resplock_posix_t shared_ctx{};
    const resplock_port_t shared = support::posix_port(shared_ctx);
    char buf_x[512];
    char buf_y[512];
    Connection x(shared, c.one[0].config, buf_x, sizeof buf_x);
    Connection y(shared, c.one[1].config, buf_y, sizeof buf_y);
    Connection* one_context[2] = {&x, &y};
    const std::string too_long(RESPLOCK_MAX_KEY_LEN + 1, 'k');
    QuorumLock bad[] = {
        {c.conns, 0, "q:bad"},   {c.conns, RESPLOCK_MAX_SERVERS + 1, "q:bad"},
        {nullptr, 3, "q:bad"},   {repeated, 2, "q:bad"},
        {with_null, 2, "q:bad"}, {one_context, 2, "q:bad"},
        {c.conns, kServers, ""}, {c.conns, kServers, too_long},
    };
    for (QuorumLock& lock : bad) {
        CHECK_EQ(lock.quorum(), 0U);
        CHECK_EQ(lock.acquire(1000), Status::invalid_argument);
        CHECK_EQ(lock.try_acquire(1000, 10), Status::invalid_argument);
        CHECK_EQ(lock.extend(1000), Status::invalid_argument);
        CHECK_EQ(lock.release(), Status::invalid_argument);
        CHECK_EQ(lock.remaining_ms(), 0U);
        CHECK(!lock.held());
    }
    QuorumLock lock(c.conns, kServers, "q:bad");
    CHECK_EQ(lock.acquire(0), Status::invalid_argument);
    CHECK_EQ(lock.acquire(resplock::max_ttl_ms + 1), Status::invalid_argument);
    CHECK_EQ(lock.try_acquire(1000, resplock::max_ttl_ms + 1), Status::invalid_argument);
    CHECK(on_all("q:bad", ""));
}

TEST(connection_send_then_receive) {
    // Two requests in flight on two connections, read afterwards in either order.
    Client c(2);
    const std::string_view set[3] = {"SET", "q:pipe", "v"};
    const std::string_view get_args[2] = {"GET", "q:pipe"};
    Connection& a = *c.conns[0];
    Connection& b = *c.conns[1];
    const resplock::Deadline deadline = resplock::Deadline::after(a.port(), 2000);
    REQUIRE_EQ(a.send(set, 3, deadline), Status::ok);
    REQUIRE_EQ(b.send(set, 3, deadline), Status::ok);
    CHECK(a.request_sent());
    resplock::resp::Reply reply;
    REQUIRE_EQ(b.receive(reply, deadline), Status::ok);
    CHECK(reply.top().equals("OK"));
    REQUIRE_EQ(a.receive(reply, deadline), Status::ok);
    CHECK(reply.top().equals("OK"));
    REQUIRE_EQ(a.send(get_args, 2, deadline), Status::ok);
    REQUIRE_EQ(a.receive(reply, deadline), Status::ok);
    CHECK(reply.top().equals("v"));
    const std::string_view bad[1] = {"NOSUCHCOMMAND"};
    REQUIRE_EQ(b.send(bad, 1, deadline), Status::ok);
    CHECK_EQ(b.receive(reply, deadline), Status::server_error);
    CHECK(b.error_text().substr(0, 4) == "ERR ");
    CHECK_EQ(a.send(nullptr, 0, deadline), Status::invalid_argument);
    CHECK(!a.request_sent());
    server(0).cli({"DEL", "q:pipe"});
    server(1).cli({"DEL", "q:pipe"});
}

}  // namespace
