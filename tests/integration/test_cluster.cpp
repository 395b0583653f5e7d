// Redis Cluster against a real three-master cluster on 127.0.0.1: companion key names in their
// key's slot (compared with CLUSTER KEYSLOT), every lock operation on keys of every node through
// a connection to another node (MOVED), a migrating slot (ASK), a slot moved for good, the
// redirect event, and the tool's acquire / status / release / run / --fence through any node.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../unit/event_log.hpp"
#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_cluster.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/ha/cluster.hpp"
#include "resplock/variants/companion.hpp"
#include "resplock/variants/fair_lock.hpp"
#include "resplock/variants/lock_options.hpp"
#include "resplock/variants/reentrant_lock.hpp"
#include "resplock/variants/renewer.hpp"

namespace {

using resplock::AcquireOptions;
using resplock::EventKind;
using resplock::FairLock;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::ReentrantLock;
using resplock::Status;
using support::RedisCluster;

RedisCluster& cluster() {
    static RedisCluster c;
    return c;
}

// A connection through node `via` with a Cluster router (and an optional observer).
struct Client {
    resplock_posix_t ctx;
    resplock_port_t port = support::posix_port(ctx);
    resplock::Cluster router;
    resplock::ConnectionConfig config;
    std::vector<char> buf = std::vector<char>(2048);
    resplock::Connection conn;

    explicit Client(std::size_t via, const resplock::Observer* observer = nullptr)
        : config(make(via, router, observer)), conn(port, config, buf.data(), buf.size()) {}
    static resplock::ConnectionConfig make(std::size_t via, resplock::Cluster& r,
                                           const resplock::Observer* observer) {
        resplock::ConnectionConfig c;
        c.host = "127.0.0.1";
        c.port = cluster().node(via).port();
        c.router = &r;
        c.observer = observer;
        return c;
    }
};

std::string node_url(std::size_t i) {
    return cluster().node(i).url();
}

support::Result cli(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {RESPLOCK_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    return support::run(argv, {}, 30);
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

std::string companion(const std::string& key, const char* suffix) {
    char out[RESPLOCK_MAX_KEY_LEN + resplock::companion_prefix_extra];
    const std::size_t n = resplock::companion_prefix(key, out);
    return std::string(out, n) + suffix;
}

}  // namespace

TEST(cluster_starts) {
    REQUIRE(cluster().ok());
    // Three masters, each serving some slots.
    for (std::size_t i = 0; i < cluster().size(); ++i)
        CHECK(cluster().key_on(i, "probe:").size() > 0);
}

TEST(companion_names_hash_like_their_keys) {
    REQUIRE(cluster().ok());
    std::vector<std::string> keys = {
        "a{b}c{d}", "{}x",    "a}b",    "{a",  "job", "locks:{job}",   "{}",       "}",
        "{{x}}",    "x{}{y}", "{a}{b}", "a{b", "}{",  "\x01\xff{\x7f", "\xc3\xa9}"};
    for (int i = 0; i < 200; ++i) {
        std::string k = "k" + std::to_string(i);
        if (i % 3 == 0) k += "}";
        if (i % 5 == 0) k = "{" + k;
        if (i % 7 == 0) k += std::string(1, static_cast<char>(0x80 + i % 100));
        keys.push_back(k);
    }
    // CLUSTER KEYSLOT over a plain connection: binary-safe (a computed tag may hold any byte).
    support::PosixClient plain(cluster().node(0).port(), 1024);
    auto keyslot = [&](const std::string& k) -> long long {
        const std::string_view args[3] = {"CLUSTER", "KEYSLOT", k};
        resplock::resp::Reply reply;
        if (plain.conn.command(args, 3, reply) != Status::ok) return -1;
        return reply.top().integer;
    };
    int checked = 0;
    for (const std::string& key : keys) {
        const long long slot = keyslot(key);
        CHECK_EQ(static_cast<long long>(resplock::key_slot(key)), slot);
        for (const char* suffix : {":fence", ":once", ":wake", ":q", ":w", ":f:0123abcd"}) {
            const std::string name = companion(key, suffix);
            if (!CHECK_EQ(keyslot(name), slot)) std::printf("      key %s\n", key.c_str());
            ++checked;
        }
    }
    CHECK_EQ(checked, static_cast<int>(keys.size()) * 6);
}

TEST(plain_lock_on_every_node_through_another) {
    REQUIRE(cluster().ok());
    for (std::size_t owner = 0; owner < 3; ++owner) {
        const std::string key = cluster().key_on(owner, "plain:");
        const std::size_t via = (owner + 1) % 3;
        Client a(via), b((owner + 2) % 3);
        Lock la(a.conn, key), lb(b.conn, key);
        REQUIRE_EQ(la.acquire(10000), Status::ok);
        CHECK_EQ(cluster().node(owner).cli({"GET", key}), std::string(la.token()));
        CHECK_EQ(lb.acquire(10000), Status::busy);
        LockInfo info;
        CHECK_EQ(lb.query(info), Status::ok);
        CHECK(info.state != LockState::free && info.ttl_ms > 0);
        CHECK_EQ(la.extend(20000), Status::ok);
        CHECK(std::stoll(cluster().node(owner).cli({"PTTL", key})) > 10000);
        // try_acquire waits, and gets the lock once la releases it.
        std::atomic<int> got{-1};
        std::thread waiter([&] { got = static_cast<int>(lb.try_acquire(5000, 8000)); });
        support::sleep_ms(300);
        CHECK_EQ(la.release(), Status::ok);
        waiter.join();
        CHECK_EQ(got.load(), static_cast<int>(Status::ok));
        CHECK_EQ(lb.release(), Status::ok);
        CHECK_EQ(cluster().node(owner).cli({"EXISTS", key}), std::string("0"));
        // The router remembers the owner: connected there now.
        CHECK_EQ(static_cast<unsigned>(a.router.node().port),
                 static_cast<unsigned>(cluster().node(owner).port()));
    }
}

TEST(options_on_every_node_through_another) {
    REQUIRE(cluster().ok());
    for (std::size_t owner = 0; owner < 3; ++owner) {
        const std::string key = cluster().key_on(owner, "opts:");
        Client a((owner + 1) % 3), b((owner + 2) % 3);
        Lock la(a.conn, key), lb(b.conn, key);
        AcquireOptions o;
        o.fence = true;
        o.once_per_ms = 0;
        std::uint64_t f1 = 0, f2 = 0;
        REQUIRE_EQ(la.acquire(5000, o, &f1), Status::ok);
        CHECK_EQ(la.release(), Status::ok);
        REQUIRE_EQ(lb.acquire(5000, o, &f2), Status::ok);
        CHECK_EQ(f2, f1 + 1);
        CHECK_EQ(cluster().node(owner).cli({"GET", companion(key, ":fence")}), std::to_string(f2));
        CHECK_EQ(lb.release(), Status::ok);
        // Once per interval: the marker lives in the key's slot.
        AcquireOptions once;
        once.once_per_ms = 60000;
        REQUIRE_EQ(la.acquire(5000, once, nullptr), Status::ok);
        CHECK_EQ(la.release(), Status::ok);
        CHECK_EQ(lb.acquire(5000, once, nullptr), Status::busy);
        CHECK(std::stoll(cluster().node(owner).cli({"PTTL", companion(key, ":once")})) > 0);
        cluster().node(owner).cli({"DEL", companion(key, ":once"), companion(key, ":fence")});
        // Wake on release: the waiter blocks on KEY's wake list and is handed the lock.
        AcquireOptions wake;
        wake.wake = true;
        REQUIRE_EQ(la.acquire(20000, wake, nullptr), Status::ok);
        std::atomic<int> got{-1};
        std::thread waiter(
            [&] { got = static_cast<int>(lb.try_acquire(5000, 8000, wake, nullptr)); });
        support::sleep_ms(300);
        CHECK_EQ(la.release(wake), Status::ok);
        waiter.join();
        CHECK_EQ(got.load(), static_cast<int>(Status::ok));
        CHECK_EQ(lb.release(wake), Status::ok);
    }
}

TEST(reentrant_and_fair_on_every_node_through_another) {
    REQUIRE(cluster().ok());
    for (std::size_t owner = 0; owner < 3; ++owner) {
        {
            const std::string key = cluster().key_on(owner, "re:");
            Client a((owner + 1) % 3), b((owner + 2) % 3);
            ReentrantLock ra(a.conn, key), rb(b.conn, key);
            REQUIRE_EQ(ra.acquire(5000), Status::ok);
            CHECK_EQ(ra.acquire(5000), Status::ok);  // again: count 2
            CHECK_EQ(rb.acquire(5000), Status::busy);
            CHECK_EQ(ra.extend(8000), Status::ok);
            CHECK_EQ(ra.release(), Status::ok);
            CHECK_EQ(ra.release(), Status::ok);
            CHECK_EQ(rb.acquire(5000), Status::ok);
            CHECK_EQ(rb.release(), Status::ok);
        }
        for (const char* prefix : {"fair:", "fair}"}) {  // with a '}' too: a computed tag
            const std::string key = cluster().key_on(owner, prefix);
            Client a((owner + 1) % 3), b((owner + 2) % 3);
            FairLock fa(a.conn, key), fb(b.conn, key);
            REQUIRE_EQ(fa.acquire(10000), Status::ok);
            std::atomic<int> got{-1};
            std::thread waiter([&] { got = static_cast<int>(fb.try_acquire(5000, 8000)); });
            support::sleep_ms(300);
            CHECK_EQ(fa.release(), Status::ok);
            waiter.join();
            CHECK_EQ(got.load(), static_cast<int>(Status::ok));
            CHECK_EQ(cluster().node(owner).cli({"GET", key}), std::string(fb.token()));
            CHECK_EQ(fb.release(), Status::ok);
        }
    }
}

TEST(renewer_keeps_a_lock_on_another_node) {
    REQUIRE(cluster().ok());
    const std::string key = cluster().key_on(2, "renew:");
    Client a(0);
    Lock lock(a.conn, key);
    REQUIRE_EQ(lock.acquire(600), Status::ok);
    resplock::Renewer renewer;
    REQUIRE_EQ(renewer.watch(lock, 600), Status::ok);
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(2000);
    while (std::chrono::steady_clock::now() < end) {
        const std::uint32_t wait = renewer.tick(a.port.now_ms(a.port.ctx));
        support::sleep_ms(wait < 50 ? wait : 50);
    }
    CHECK(lock.held());
    CHECK_EQ(cluster().node(2).cli({"GET", key}), std::string(lock.token()));
    renewer.unwatch(&lock);
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(redirections_are_reported) {
    REQUIRE(cluster().ok());
    support::EventLog log;
    resplock::Observer observer(&support::EventLog::record, &log);
    const std::string key = cluster().key_on(1, "event:");
    Client a(0, &observer);
    Lock lock(a.conn, key);
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    std::size_t redirects = 0;
    for (std::size_t i = 0; i < log.count && i < log.capacity; ++i) {
        if (log[i].kind != EventKind::redirect) continue;
        ++redirects;
        CHECK_EQ(log[i].number, cluster().slot(key));
        const std::string text(log[i].key, log[i].key_len);
        CHECK_EQ(text.rfind("MOVED ", 0), std::size_t{0});
        CHECK(text.find(":" + std::to_string(cluster().node(1).port())) != std::string::npos);
    }
    CHECK_EQ(redirects, std::size_t{1});  // then remembered: no more
}

TEST(a_migrating_slot_gives_ask_and_then_moved) {
    REQUIRE(cluster().ok());
    const std::string key = cluster().key_on(0, "migrate:");
    const std::string slot = std::to_string(cluster().slot(key));
    const std::string from = cluster().id(0), to = cluster().id(1);
    REQUIRE_EQ(cluster().node(1).cli({"CLUSTER", "SETSLOT", slot, "IMPORTING", from}),
               std::string("OK"));
    REQUIRE_EQ(cluster().node(0).cli({"CLUSTER", "SETSLOT", slot, "MIGRATING", to}),
               std::string("OK"));
    support::EventLog log;
    resplock::Observer observer(&support::EventLog::record, &log);
    {
        Client a(0, &observer);
        Lock lock(a.conn, key);
        // The key is not on node 0: it answers ASK, and the lock is taken on node 1.
        REQUIRE_EQ(lock.acquire(10000), Status::ok);
        {  // node 1 holds it (ASKING: readable there before the slot is its own)
            support::PosixClient there(cluster().node(1).port(), 1024);
            resplock::resp::Reply reply;
            const std::string_view asking[1] = {"ASKING"};
            const std::string_view get[2] = {"GET", key};
            CHECK_EQ(there.conn.command(asking, 1, reply), Status::ok);
            CHECK_EQ(there.conn.command(get, 2, reply), Status::ok);
            CHECK(reply.top().equals(lock.token()));
        }
        CHECK_EQ(static_cast<unsigned>(a.router.node().port), 0U);  // nothing remembered
        bool asked = false;
        for (std::size_t i = 0; i < log.count && i < log.capacity; ++i) {
            asked = asked || (log[i].kind == EventKind::redirect &&
                              log[i].key_view().substr(0, 4) == "ASK ");
        }
        CHECK(asked);
        CHECK_EQ(lock.extend(10000), Status::ok);
        CHECK_EQ(lock.release(), Status::ok);
        // Finish the move: every node now says node 1 serves the slot; node 0 answers MOVED.
        for (std::size_t i = 0; i < 3; ++i)
            cluster().node(i).cli({"CLUSTER", "SETSLOT", slot, "NODE", to});
        REQUIRE(cluster().settled());
        REQUIRE_EQ(lock.acquire(10000), Status::ok);
        CHECK_EQ(static_cast<unsigned>(a.router.node().port),
                 static_cast<unsigned>(cluster().node(1).port()));
        CHECK_EQ(lock.release(), Status::ok);
    }
    // Give the slot back to node 0 for the other tests.
    for (std::size_t i = 0; i < 3; ++i)
        cluster().node(i).cli({"CLUSTER", "SETSLOT", slot, "NODE", from});
    CHECK(cluster().settled());
}

TEST(the_tool_works_through_any_node) {
    REQUIRE(cluster().ok());
    for (std::size_t owner = 0; owner < 3; ++owner) {
        const std::string key = cluster().key_on(owner, "tool:");
        const std::string url = node_url((owner + 1) % 3);
        const support::Result acq = cli({"-u", url, "--ttl", "20000", "acquire", key});
        REQUIRE_EQ(acq.code, 0);
        const std::string token = trim(acq.out);
        CHECK_EQ(cluster().node(owner).cli({"GET", key}), token);
        const support::Result st = cli({"-u", url, "status", key});
        CHECK_EQ(st.code, 0);
        CHECK_EQ(st.out.rfind("held ", 0), std::size_t{0});
        CHECK_EQ(cli({"-u", url, "release", key, token}).code, 0);
        CHECK_EQ(cli({"-u", url, "status", key}).code, 1);
        // run: the command runs while the lock is held on its node.
        const support::Result run = cli({"-u", url, "run", key, "--", "sh", "-c", "echo ran"});
        CHECK_EQ(run.code, 0);
        CHECK_EQ(trim(run.out), std::string("ran"));
        CHECK_EQ(cluster().node(owner).cli({"EXISTS", key}), std::string("0"));
        // --fence: the counter lives next to KEY, in its slot.
        const support::Result fenced = cli({"-u", url, "--fence", "acquire", key});
        REQUIRE_EQ(fenced.code, 0);
        const std::string line = trim(fenced.out);
        const std::size_t space = line.find(' ');
        REQUIRE(space != std::string::npos);
        CHECK_EQ(cluster().node(owner).cli({"GET", companion(key, ":fence")}),
                 line.substr(space + 1));
        CHECK_EQ(cli({"-u", url, "release", key, line.substr(0, space)}).code, 0);
        // --fair, with a key that has a '}' and no tag.
        const std::string fair_key = cluster().key_on(owner, "tool}");
        CHECK_EQ(cli({"-u", url, "--fair", "run", fair_key, "--", "true"}).code, 0);
    }
}
