// `resplock run` when the server stops answering: a FaultProxy between the tool and a real
// redis-server stalls every renewal, so the lock's validity runs out. COMMAND must be stopped
// (SIGTERM, a grace period, SIGKILL) before the key can expire on the server, however stubborn it
// is, so that no one who takes the key after it expired ever overlaps with it.
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "fault_proxy.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/ports/posix.h"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::log_times;
using support::sleep_ms;

using resplock::Status;
using support::Fault;
using support::FaultProxy;
using support::Way;

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

// CLOCK_REALTIME in ns: the clock of date(1), which COMMAND uses for its log.
long long realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// A direct connection to the server (not through the proxy), fast enough to poll a key every
// millisecond or so.
struct Client {
    resplock_posix_t net;
    resplock::ConnectionConfig config;
    char buf[256];
    resplock::Connection conn;

    explicit Client(std::uint16_t port)
        : config(make(port)), conn(support::posix_port(net), config, buf, sizeof buf) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    static resplock::ConnectionConfig make(std::uint16_t port) {
        resplock::ConnectionConfig c;
        c.port = port;
        c.timeout_ms = 2000;
        return c;
    }
    // 1 if the key exists, 0 if not, -1 if the request failed.
    int exists(const std::string& key) {
        const std::string_view args[2] = {"EXISTS", key};
        resplock::resp::Reply reply;
        if (conn.command(args, 2, reply) != Status::ok) return -1;
        if (!reply.top().is(resplock::resp::Type::integer)) return -1;
        return reply.top().integer == 1 ? 1 : 0;
    }
};

}  // namespace

TEST_TAGGED(server_starts, "slow_launcher_ok") {
    REQUIRE(server().running());
}

// TTL 3000 ms: renewals every 1000 ms, a grace of min(2000, 3000/4) = 750 ms between SIGTERM and
// SIGKILL. COMMAND traps SIGTERM and goes on writing; only SIGKILL ends it.
TEST_TAGGED(run_stops_command_before_its_key_expires_when_the_server_stalls, "slow_launcher_ok") {
    FaultProxy proxy(server().port());
    REQUIRE(proxy.port() != 0);
    char tmpl[] = "/tmp/resplock-faults-XXXXXX";
    const char* dir = mkdtemp(tmpl);
    REQUIRE(dir != nullptr);
    const std::string log = std::string(dir) + "/log";
    const std::string key = "clifault:stall";
    const std::string command = "trap 'echo \"term $(date +%s%N)\" >> " + log +
                                "' TERM; while :; do echo \"w $(date +%s%N)\" >> " + log +
                                "; sleep 0.02; done";
    support::Process p;
    REQUIRE(p.start({RESPLOCK_CLI, "-u", "redis://127.0.0.1:" + std::to_string(proxy.port()),
                     "--ttl", "3000", "--timeout", "500", "run", key, "--", "sh", "-c", command}));
    Client direct(server().port());
    for (int i = 0; i < 500 && (direct.exists(key) != 1 || log_times(log, "w").size() < 3); ++i)
        sleep_ms(10);
    REQUIRE_EQ(direct.exists(key), 1);
    sleep_ms(1200);  // past the first renewal: the key's TTL was reset once through the proxy

    Fault stall;
    stall.stall = true;
    proxy.set(Way::to_server, stall);
    proxy.set(Way::to_client, stall);
    const long long stalled_at = realtime_ns();
    // The key disappears after the last poll that still found it: that poll's send time is a
    // moment at which the key certainly still existed.
    long long last_seen = 0;
    for (;;) {
        const long long sent = realtime_ns();
        const int e = direct.exists(key);
        if (e == 1) last_seen = sent;
        if (e == 0 || sent - stalled_at > 10000000000LL) break;
        sleep_ms(1);
    }
    const support::Result r = p.wait(10);
    proxy.pass_through();
    CHECK_EQ(r.code, 70);
    CHECK(r.err.find("lock lost") != std::string::npos);
    REQUIRE(last_seen > stalled_at);

    const std::vector<long long> writes = log_times(log, "w");
    const std::vector<long long> terms = log_times(log, "term");
    REQUIRE(!writes.empty());
    const long long last_write = *std::max_element(writes.begin(), writes.end());
    std::printf("      key last seen %.0f ms after the stall; last write %.1f ms before that\n",
                static_cast<double>(last_seen - stalled_at) / 1e6,
                static_cast<double>(last_seen - last_write) / 1e6);
    if (!CHECK(last_write < last_seen)) {
        std::printf("      COMMAND wrote %.1f ms after the key was last seen\n",
                    static_cast<double>(last_write - last_seen) / 1e6);
    }
    // It got SIGTERM first, and a grace period: it went on writing for a while, and no longer
    // than the grace (+ a generous margin for a loaded machine).
    REQUIRE_EQ(terms.size(), std::size_t{1});
    const double grace_ms = static_cast<double>(last_write - terms[0]) / 1e6;
    std::printf("      wrote for %.0f ms after SIGTERM (grace: 750 ms)\n", grace_ms);
    CHECK(grace_ms > 250);
    CHECK(grace_ms < 750 + 300);
    unlink(log.c_str());
    rmdir(dir);
}
