// Redis Cluster against a real cluster on 127.0.0.1, three masters with a replica each:
// companion key names in their key's slot (compared with CLUSTER KEYSLOT), every lock operation
// on keys of every node through a connection to another node (MOVED), a migrating slot (ASK), a
// slot moved for good, the redirect event, and the tool's acquire / status / release / run /
// --fence through any node. Then what goes wrong in a cluster's routine life: replica
// acknowledgements of a write that an ASK sent to another node, a master that stops and is failed
// over (the router must not keep talking to it), and the temporary refusals -CLUSTERDOWN and
// -TRYAGAIN (retried within the wait, like the other temporary states).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../unit/event_log.hpp"
#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_cluster.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/ha/cluster.hpp"
#include "resplock/variants/fair_lock.hpp"
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

    explicit Client(std::size_t via, const resplock::Observer* observer = nullptr,
                    std::uint32_t timeout_ms = 2000)
        : config(make(via, router, observer, timeout_ms)),
          conn(port, config, buf.data(), buf.size()) {}
    static resplock::ConnectionConfig make(std::size_t via, resplock::Cluster& r,
                                           const resplock::Observer* observer,
                                           std::uint32_t timeout_ms) {
        resplock::ConnectionConfig c;
        c.host = "127.0.0.1";
        c.port = cluster().node(via).port();
        c.router = &r;
        c.observer = observer;
        c.timeout_ms = timeout_ms;
        return c;
    }
};

// Gives the cluster its shape back (every node running, nodes 0..2 masters, replicas linked)
// when a test that stopped, killed or failed over nodes ends, however it ends.
struct RestoreAfter {
    RestoreAfter() = default;
    RestoreAfter(const RestoreAfter&) = delete;
    RestoreAfter& operator=(const RestoreAfter&) = delete;
    ~RestoreAfter() { CHECK(cluster().restore()); }
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
    // Three masters, each serving some slots, each with one replica whose link is up.
    REQUIRE_EQ(cluster().size(), std::size_t{6});
    CHECK(cluster().healthy());
    for (std::size_t i = 0; i < RedisCluster::master_count; ++i) {
        CHECK(cluster().is_master(i));
        CHECK(cluster().key_on(i, "probe:").size() > 0);
        const std::size_t replica = cluster().replica_of(i);
        CHECK_EQ(replica, i + RedisCluster::master_count);
        if (replica < cluster().size()) CHECK(cluster().linked(replica));
    }
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
        CHECK(f2 > f1);
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

// Replica acknowledgements of a write that an ASK sent to the slot's new node (a routine slot
// migration): the WAIT belongs on the node that took the write, not on the one that sent the ASK.
// Here the new node's replica is stopped: nothing replicated the lock, so it is not acquired,
// and the key is not left held there.
TEST(replicas_after_ask_a_write_its_node_did_not_replicate_is_not_acknowledged) {
    REQUIRE(cluster().ok());
    RestoreAfter restore;
    const std::size_t from = 0, to = 1;
    const std::string key = cluster().key_on(from, "ask-wait-unmet:");
    const support::SlotMigration moving(cluster(), cluster().slot(key), from, to, {key});
    REQUIRE(moving.started());
    const std::size_t to_replica = cluster().replica_of(to);
    REQUIRE(to_replica < cluster().size());
    REQUIRE(cluster().pause(to_replica));
    const long long waits_from = cluster().calls(from, "wait");
    const long long waits_to = cluster().calls(to, "wait");
    Client a(from);
    Lock lock(a.conn, key);
    REQUIRE_EQ(lock.set_replicas(1), Status::ok);
    CHECK_EQ(lock.acquire(10000), Status::not_replicated);
    CHECK(!lock.held());
    CHECK_EQ(lock.replicas_acknowledged(), 0U);
    // Released where it was taken (read there with ASKING: the slot is not node 1's yet).
    CHECK_EQ(cluster().asking(to, {"EXISTS", key}), std::string("0"));
    // The WAIT went to the node that took the write.
    CHECK_EQ(cluster().calls(from, "wait") - waits_from, 0LL);
    CHECK(cluster().calls(to, "wait") - waits_to >= 1);
}

// The same with the new node's replica running and the old node's stopped: the write is
// replicated, and that is what the WAIT (on the new node) reports.
TEST(replicas_after_ask_a_write_its_node_replicated_is_acknowledged) {
    REQUIRE(cluster().ok());
    RestoreAfter restore;
    const std::size_t from = 0, to = 1;
    const std::string key = cluster().key_on(from, "ask-wait-met:");
    const support::SlotMigration moving(cluster(), cluster().slot(key), from, to, {key});
    REQUIRE(moving.started());
    const std::size_t from_replica = cluster().replica_of(from);
    REQUIRE(from_replica < cluster().size());
    REQUIRE(cluster().pause(from_replica));
    const long long waits_from = cluster().calls(from, "wait");
    const long long waits_to = cluster().calls(to, "wait");
    Client a(from);
    Lock lock(a.conn, key);
    REQUIRE_EQ(lock.set_replicas(1), Status::ok);
    CHECK_EQ(lock.acquire(10000), Status::ok);
    CHECK(lock.held());
    CHECK(lock.replicas_acknowledged() >= 1U);
    CHECK_EQ(cluster().asking(to, {"GET", key}), std::string(lock.token()));
    CHECK_EQ(cluster().calls(from, "wait") - waits_from, 0LL);
    CHECK(cluster().calls(to, "wait") - waits_to >= 1);
    (void)lock.set_replicas(0);  // the release needs no acknowledgement
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(cluster().asking(to, {"EXISTS", key}), std::string("0"));
}

// A master the router remembered (after a MOVED) stops answering, and the cluster fails it over
// to its replica. A stopped host still accepts connections (its kernel does), so every command
// sent there times out: after such a timeout the router must forget it and ask the configured
// node again, which redirects to the new master. Within a few attempts, both a new acquisition
// and the extend of a lock held before the failover succeed there.
TEST(a_remembered_master_that_stops_is_forgotten_after_a_timeout) {
    REQUIRE(cluster().ok());
    RestoreAfter restore;
    const std::size_t master = 2, via = 0;
    const std::size_t replica = cluster().replica_of(master);
    REQUIRE(replica < cluster().size());
    const std::string held_key = cluster().key_on(master, "stopped-held:");
    const std::string new_key = cluster().key_on(master, "stopped-new:");
    const std::string probe_key = cluster().key_on(master, "stopped-probe:");
    const unsigned master_port = cluster().node(master).port();

    // Two connections through node 0, each remembering the master (a MOVED each).
    Client held_client(via, nullptr, 1000), new_client(via, nullptr, 1000);
    Lock held(held_client.conn, held_key);
    REQUIRE_EQ(held.set_replicas(1), Status::ok);  // so that the replica has it
    REQUIRE_EQ(held.acquire(60000), Status::ok);
    Lock probe(new_client.conn, probe_key);
    REQUIRE_EQ(probe.acquire(5000), Status::ok);
    REQUIRE_EQ(probe.release(), Status::ok);
    REQUIRE_EQ(static_cast<unsigned>(held_client.router.node().port), master_port);
    REQUIRE_EQ(static_cast<unsigned>(new_client.router.node().port), master_port);

    REQUIRE(cluster().pause(master));
    const auto stopped = std::chrono::steady_clock::now();
    REQUIRE(cluster().promoted(replica));
    std::printf("    failover visible everywhere %.1f s after the stop\n",
                support::seconds_since(stopped));

    // A new acquisition of a key of the master's former slots (a fresh Lock each attempt: an
    // attempt that timed out keeps a token of unknown outcome).
    Status s = Status::timeout;
    int attempts = 0;
    std::vector<std::unique_ptr<Lock>> tries;
    while (s != Status::ok && attempts < 3) {
        ++attempts;
        tries.push_back(std::make_unique<Lock>(new_client.conn, new_key));
        s = tries.back()->acquire(10000);
        std::printf("    acquire attempt %d: %s\n", attempts, resplock::to_string(s));
    }
    CHECK_EQ(s, Status::ok);
    CHECK_EQ(static_cast<unsigned>(new_client.router.node().port),
             static_cast<unsigned>(cluster().node(replica).port()));
    if (s == Status::ok) {
        CHECK_EQ(cluster().node(replica).cli({"GET", new_key}), std::string(tries.back()->token()));
        CHECK_EQ(tries.back()->release(), Status::ok);
    }

    // The extend of the lock held before the failover (no acknowledgement asked now: the new
    // master has no replica while the old one is stopped).
    REQUIRE_EQ(held.set_replicas(0), Status::ok);
    s = Status::timeout;
    for (attempts = 1; attempts <= 3; ++attempts) {
        s = held.extend(60000);
        std::printf("    extend attempt %d: %s\n", attempts, resplock::to_string(s));
        if (s == Status::ok) break;
    }
    CHECK_EQ(s, Status::ok);
    CHECK_EQ(static_cast<unsigned>(held_client.router.node().port),
             static_cast<unsigned>(cluster().node(replica).port()));
    CHECK_EQ(cluster().node(replica).cli({"GET", held_key}), std::string(held.token()));
    CHECK_EQ(held.release(), Status::ok);
    CHECK_EQ(cluster().node(replica).cli({"EXISTS", held_key}), std::string("0"));
}

// -CLUSTERDOWN (here: KEY's slot is served by no node, so every node's cluster_state is fail) is
// a temporary state, like LOADING: not a server error, and retried within the wait, which gets
// the lock once the slot is served again.
TEST(clusterdown_is_a_temporary_state) {
    REQUIRE(cluster().ok());
    const std::size_t owner = 1;
    const std::string key = cluster().key_on(owner, "down:");
    const unsigned slot = cluster().slot(key);
    struct Serve {
        unsigned slot;
        std::size_t owner;
        ~Serve() { CHECK(cluster().serve(slot, owner)); }
    } serve{slot, owner};
    REQUIRE(cluster().unserve(slot));
    // What node 0 answers now.
    REQUIRE(support::wait_until(
        [&] {
            return cluster().node(0).cli({"SET", key, "x"}).rfind("CLUSTERDOWN", 0) == 0;
        },
        10));

    Client a(0);
    Lock lock(a.conn, key);
    const Status once = lock.acquire(10000);
    std::printf("    one attempt: %s (%.*s)\n", resplock::to_string(once),
                static_cast<int>(a.conn.error_text().size()), a.conn.error_text().data());
    CHECK(once != Status::server_error);
    CHECK(once != Status::ok);
    CHECK(!lock.held());
    std::thread server([&] {
        support::sleep_ms(1000);
        (void)cluster().serve(slot, owner);
    });
    const auto start = std::chrono::steady_clock::now();
    const Status waited = lock.try_acquire(10000, 10000);
    const double secs = support::seconds_since(start);
    server.join();
    std::printf("    waiting: %s after %.1f s\n", resplock::to_string(waited), secs);
    CHECK_EQ(waited, Status::ok);
    if (waited == Status::ok) {
        CHECK_EQ(cluster().node(owner).cli({"GET", key}), std::string(lock.token()));
        CHECK_EQ(lock.release(), Status::ok);
    }
}

// -TRYAGAIN: a script over KEY and its fence counter while their slot migrates and only the
// counter is still on the old node. Temporary too: once the migration is called off, the wait
// gets the lock.
TEST(tryagain_is_a_temporary_state) {
    REQUIRE(cluster().ok());
    const std::size_t from = 0, to = 2;
    const std::string key = cluster().key_on(from, "again:");
    const std::string fence_key = companion(key, ":fence");
    Client a(from);
    Lock lock(a.conn, key);
    AcquireOptions fenced;
    fenced.fence = true;
    std::uint64_t fence = 0;
    REQUIRE_EQ(lock.acquire(10000, fenced, &fence), Status::ok);  // the counter exists now
    REQUIRE_EQ(lock.release(), Status::ok);
    struct Cleanup {
        std::string fence_key;
        ~Cleanup() { (void)cluster().node(0).cli({"DEL", fence_key}); }
    } cleanup{fence_key};
    {
        support::SlotMigration moving(cluster(), cluster().slot(key), from, to, {key, fence_key});
        REQUIRE(moving.started());
        // What node 0 answers a script over both keys now.
        CHECK_EQ(cluster()
                     .node(from)
                     .cli({"EVAL", "return 1", "2", key, fence_key})
                     .rfind("TRYAGAIN", 0),
                 std::size_t{0});
        const Status once = lock.acquire(10000, fenced, &fence);
        std::printf("    one attempt: %s (%.*s)\n", resplock::to_string(once),
                    static_cast<int>(a.conn.error_text().size()), a.conn.error_text().data());
        CHECK(once != Status::server_error);
        CHECK(once != Status::ok);
        CHECK(!lock.held());
        std::thread stabilizer([&] {
            support::sleep_ms(1000);
            (void)cluster().stabilize(moving.slot(), from, to);
        });
        const std::uint64_t before = fence;
        const Status waited = lock.try_acquire(10000, 10000, fenced, &fence);
        stabilizer.join();
        std::printf("    waiting: %s\n", resplock::to_string(waited));
        CHECK_EQ(waited, Status::ok);
        if (waited == Status::ok) {
            CHECK(fence > before);
            CHECK_EQ(lock.release(), Status::ok);
        }
    }
}

// A master killed (its port refuses connections) before the cluster has noticed: the other nodes
// still redirect its keys to it, and the configured node is asked again after each refused
// connect. That state is as temporary as a refused connection to a single server: an acquisition
// with a wait retries for the whole wait instead of giving up at once. (The cluster is made slow
// to notice here, so that the state lasts the whole test.)
TEST(a_killed_master_is_retried_within_the_wait) {
    REQUIRE(cluster().ok());
    struct Back {
        ~Back() {
            CHECK(cluster().set_node_timeout(RedisCluster::node_timeout_ms));
            CHECK(cluster().restore());
        }
    } back;
    REQUIRE(cluster().set_node_timeout(60000));
    const std::size_t master = 2;
    const std::string key = cluster().key_on(master, "refused:");
    cluster().kill(master);
    Client a(0);
    Lock lock(a.conn, key);
    const Status once = lock.acquire(10000);
    std::printf("    one attempt: %s\n", resplock::to_string(once));
    CHECK(once != Status::ok);
    const auto start = std::chrono::steady_clock::now();
    const Status waited = lock.try_acquire(10000, 2000);
    const double secs = support::seconds_since(start);
    std::printf("    waiting 2 s: %s after %.2f s\n", resplock::to_string(waited), secs);
    CHECK(waited != Status::ok);
    CHECK(secs >= 1.9);  // retried for the whole wait
}
