// A master short of replicas against a real redis-server: with min-replicas-to-write 1 and no
// replica attached, it refuses every write, a script's first one included, with -NOREPLICAS
// (status no_replicas). Every lock kind (plain, with fence and with wake, fair, semaphore plain
// and fair, reentrant, quorum) takes nothing when refused, retries the refusal within its wait and
// gets the lock once writes are accepted again; every kind's release is retried the same way.
// The refusal is lifted when the first retry is reported (an Observer), never after a fixed sleep.
#include <cstdio>
#include <string>

#include "check.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/variants/fair_lock.hpp"
#include "resplock/variants/quorum_lock.hpp"
#include "resplock/variants/reentrant_lock.hpp"
#include "resplock/variants/semaphore.hpp"

using resplock::AcquireOptions;
using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Status;

namespace {

// The master, with no replica ever attached.
support::RedisServer& master() {
    static support::RedisServer s{"--min-replicas-to-write", "1"};
    return s;
}

void refuse_writes(bool refuse) {
    CHECK(master().cli({"CONFIG", "SET", "min-replicas-to-write", refuse ? "1" : "0"}) == "OK");
}

// Counts the retries its connection reports; at the first one, lifts the refusal.
struct Lifter {
    int retries = 0;
    Status first = Status::ok;  // the status the first retry was for
    resplock::Observer observer{&Lifter::on_event, this};

    static void on_event(void* user, const resplock_event_t* e) {
        auto& l = *static_cast<Lifter*>(user);
        if (resplock::kind_of(*e) != resplock::EventKind::retry) return;
        if (l.retries++ == 0) {
            l.first = resplock::status_of(*e);
            refuse_writes(false);
        }
    }
};

struct Client {
    resplock_posix_t ctx;
    resplock_port_t port = support::posix_port(ctx);
    Lifter lifter;
    ConnectionConfig config;
    char buf[4096];
    Connection conn;

    Client() : config(make(&lifter.observer)), conn(port, config, buf, sizeof buf) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    static ConnectionConfig make(const resplock::Observer* observer) {
        ConnectionConfig c;
        c.port = master().port();
        c.timeout_ms = 2000;
        c.observer = observer;
        return c;
    }
};

AcquireOptions fence_option() {
    AcquireOptions o;
    o.fence = true;
    return o;
}
AcquireOptions wake_option() {
    AcquireOptions o;
    o.wake = true;
    return o;
}

bool exists(const std::string& key) {
    return master().cli({"EXISTS", key}) == "1";
}

// A refused first attempt takes nothing and keeps no token; an attempt within a wait is retried,
// the refusal is lifted at the first retry, and the lock is taken. `L` is any lock kind; `take`
// makes one attempt (wait 0) or waits (wait_ms).
template <class L, class Take>
void refused_then_retried(const char* what, L& lock, Client& c, const std::string& key, Take take) {
    std::printf("    %s\n", what);
    refuse_writes(true);
    CHECK_EQ(take(lock, 0U), Status::no_replicas);
    CHECK(lock.token().empty());  // refused before it wrote: nothing to give back
    CHECK(!lock.held());
    CHECK(!exists(key));
    CHECK_EQ(c.lifter.retries, 0);
    CHECK_EQ(take(lock, 5000U), Status::ok);
    CHECK(lock.held());
    CHECK(c.lifter.retries >= 1);
    CHECK_EQ(c.lifter.first, Status::no_replicas);
    CHECK(exists(key));
}

// The lock is held; writes are refused; its release is retried, the refusal lifted at the first
// retry, and the key is gone.
template <class L>
void release_retried(L& lock, Client& c, const std::string& key) {
    REQUIRE(lock.held());
    c.lifter.retries = 0;
    refuse_writes(true);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(c.lifter.retries, 1);
    CHECK_EQ(c.lifter.first, Status::no_replicas);
    CHECK(lock.token().empty());
    CHECK(!exists(key));
}

}  // namespace

TEST(plain_lock) {
    Client c;
    resplock::Lock lock(c.conn, "norep:plain");
    refused_then_retried(
        "plain", lock, c, "norep:plain",
        [](resplock::Lock& l, std::uint32_t wait) { return l.try_acquire(10000, wait); });
    release_retried(lock, c, "norep:plain");
}

TEST(lock_with_fence) {
    Client c;
    resplock::Lock lock(c.conn, "norep:fence");
    std::uint64_t fence = 0;
    refused_then_retried("fence", lock, c, "norep:fence",
                         [&fence](resplock::Lock& l, std::uint32_t wait) {
                             return l.try_acquire(10000, wait, fence_option(), &fence);
                         });
    CHECK(fence > 0U);
    release_retried(lock, c, "norep:fence");
}

TEST(lock_with_wake) {
    Client c;
    resplock::Lock lock(c.conn, "norep:wake");
    refused_then_retried("wake", lock, c, "norep:wake", [](resplock::Lock& l, std::uint32_t wait) {
        return l.try_acquire(10000, wait, wake_option());
    });
    // Released as it was taken: with wake (the options' release script).
    REQUIRE(lock.held());
    c.lifter.retries = 0;
    refuse_writes(true);
    CHECK_EQ(lock.release(wake_option()), Status::ok);
    CHECK_EQ(c.lifter.retries, 1);
    CHECK_EQ(c.lifter.first, Status::no_replicas);
    CHECK(!exists("norep:wake"));
}

TEST(fair_lock) {
    Client c;
    resplock::FairLock lock(c.conn, "norep:fair");
    refused_then_retried(
        "fair", lock, c, "norep:fair",
        [](resplock::FairLock& l, std::uint32_t wait) { return l.try_acquire(10000, wait); });
    release_retried(lock, c, "norep:fair");
}

TEST(semaphore_plain_and_fair) {
    for (const bool fair : {false, true}) {
        Client c;
        const std::string key = fair ? "norep:semfair" : "norep:sem";
        resplock::Semaphore sem(c.conn, key, 2, fair);
        refused_then_retried(
            fair ? "semaphore, fair" : "semaphore", sem, c, key,
            [](resplock::Semaphore& s, std::uint32_t wait) { return s.try_acquire(10000, wait); });
        release_retried(sem, c, key);
    }
}

TEST(reentrant_lock) {
    Client c;
    resplock::ReentrantLock lock(c.conn, "norep:reentrant", "owner-1");
    std::printf("    reentrant\n");
    refuse_writes(true);
    CHECK_EQ(lock.acquire(10000), Status::no_replicas);
    CHECK(!lock.held());
    CHECK_EQ(lock.count(), 0U);
    CHECK(!exists("norep:reentrant"));
    CHECK_EQ(lock.try_acquire(10000, 5000), Status::ok);
    CHECK(lock.held());
    CHECK_EQ(c.lifter.first, Status::no_replicas);
    CHECK(exists("norep:reentrant"));
    release_retried(lock, c, "norep:reentrant");
}

TEST(quorum_of_one) {
    Client c;
    Connection* conns[] = {&c.conn};
    resplock::QuorumLock lock(conns, 1, "norep:quorum");
    refused_then_retried(
        "quorum", lock, c, "norep:quorum",
        [](resplock::QuorumLock& l, std::uint32_t wait) { return l.try_acquire(10000, wait); });
    release_retried(lock, c, "norep:quorum");
}

// A refusal that lasts: the wait is spent retrying it, and the last refusal is returned.
TEST(a_lasting_refusal_ends_the_wait_with_no_replicas) {
    resplock_posix_t ctx;
    const resplock_port_t port = support::posix_port(ctx);
    ConnectionConfig config;
    config.port = master().port();
    char buf[512];
    Connection conn(port, config, buf, sizeof buf);
    resplock::Lock lock(conn, "norep:lasting");
    refuse_writes(true);
    const std::uint32_t start = port.now_ms(port.ctx);
    CHECK_EQ(lock.try_acquire(10000, 300), Status::no_replicas);
    CHECK(port.now_ms(port.ctx) - start >= 300U);
    CHECK(!exists("norep:lasting"));
    refuse_writes(false);
}
