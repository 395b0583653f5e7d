// The renewal driver with two locks on two real redis-servers, each behind a FaultProxy, when one
// server stalls: the lock on the stalled server is reported lost no later than its loss margin,
// and the lock on the healthy server is renewed all along (it used to be lost with the other,
// its renewal held up behind the stalled one).
#include <time.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "check.hpp"
#include "fault_proxy.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/renewer.hpp"

namespace {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::Renewer;
using resplock::Status;
using support::Fault;
using support::FaultProxy;
using support::Way;

struct Rig {
    support::RedisServer servers[2];
    std::unique_ptr<FaultProxy> proxies[2];
    Rig() {
        for (int i = 0; i < 2; ++i)
            proxies[i].reset(new FaultProxy(servers[i].port()));
    }
};

Rig& rig() {
    static Rig r;
    return r;
}

struct Client {
    resplock_posix_t ctx = {};
    resplock_port_t port = support::posix_port(ctx);
    ConnectionConfig config;
    char buf[512];
    std::unique_ptr<Connection> conn;
    explicit Client(int server) {
        config.port = rig().proxies[server]->port();
        config.timeout_ms = 2000;
        conn.reset(new Connection(port, config, buf, sizeof buf));
    }
};

struct Lost {
    int calls = 0;
    Status why = Status::ok;
    std::uint32_t left_ms = 0;  // the lock's validity left when it was reported
    static void record(void* user, void* lock, Status why) {
        auto& l = *static_cast<Lost*>(user);
        ++l.calls;
        l.why = why;
        l.left_ms = static_cast<Lock*>(lock)->remaining_ms();
    }
};

void stall(int server, bool on) {
    Fault f;
    f.stall = on;
    rig().proxies[server]->set(Way::to_server, f);
    rig().proxies[server]->set(Way::to_client, f);
}

// The caller's loop on the real clock for `ms`: tick, then sleep what tick() returned.
void drive(Renewer& renewer, const resplock_port_t& port, std::uint32_t ms) {
    const std::uint32_t start = port.now_ms(port.ctx);
    while (port.now_ms(port.ctx) - start < ms) {
        const std::uint32_t now = port.now_ms(port.ctx);
        std::uint32_t next = renewer.tick(now);
        const std::uint32_t spent = port.now_ms(port.ctx) - now;
        next = next > spent ? next - spent : 0U;
        if (next > 50) next = 50;
        std::this_thread::sleep_for(std::chrono::milliseconds(next));
    }
}

}  // namespace

TEST(servers_and_proxies_start) {
    for (int i = 0; i < 2; ++i) {
        REQUIRE(rig().servers[i].running());
        REQUIRE(rig().proxies[i]->port() != 0);
    }
}

TEST(a_stalled_server_costs_no_lock_on_the_other_server) {
    Client a(0), b(1);
    Lock la(*a.conn, "renew:a"), lb(*b.conn, "renew:b");
    REQUIRE_EQ(la.acquire(1000), Status::ok);
    REQUIRE_EQ(lb.acquire(1000), Status::ok);
    Renewer renewer;
    Lost lost_a, lost_b;
    REQUIRE_EQ(renewer.watch(la, 1000, &Lost::record, &lost_a), Status::ok);
    REQUIRE_EQ(renewer.watch(lb, 1000, &Lost::record, &lost_b), Status::ok);
    stall(0, true);
    drive(renewer, a.port, 3000);
    stall(0, false);
    CHECK_EQ(lost_a.calls, 1);
    CHECK_EQ(lost_a.why, Status::expired);
    CHECK_EQ(lost_b.calls, 0);
    CHECK(renewer.watches(&lb));
    CHECK(lb.held());
    const std::string token(lb.token());
    CHECK_EQ(rig().servers[1].cli({"GET", "renew:b"}), token);
    CHECK(std::stoll(rig().servers[1].cli({"PTTL", "renew:b"})) > 0);
    CHECK_EQ(lb.release(), Status::ok);
}

TEST(a_stalled_server_reports_its_lock_lost_at_the_margin_while_the_other_is_kept) {
    Client a(0), b(1);
    Lock la(*a.conn, "renew:a2"), lb(*b.conn, "renew:b2");
    REQUIRE_EQ(la.acquire(1000), Status::ok);
    REQUIRE_EQ(lb.acquire(1000), Status::ok);
    Renewer renewer;
    Lost lost_a, lost_b;
    REQUIRE_EQ(renewer.watch(la, 1000, &Lost::record, &lost_a, 300), Status::ok);
    REQUIRE_EQ(renewer.watch(lb, 1000, &Lost::record, &lost_b, 300), Status::ok);
    stall(0, true);
    drive(renewer, a.port, 2000);
    stall(0, false);
    CHECK_EQ(lost_a.calls, 1);
    // Reported with about the margin left (the tick ran a few ms after the renewal gave up).
    CHECK(lost_a.left_ms <= 300U);
    CHECK(lost_a.left_ms >= 250U);
    std::printf("    lock on the stalled server reported lost with %u ms of validity left\n",
                lost_a.left_ms);
    CHECK_EQ(lost_b.calls, 0);
    CHECK(lb.held());
    CHECK_EQ(lb.release(), Status::ok);
}
