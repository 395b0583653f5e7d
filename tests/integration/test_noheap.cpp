// Proves that the library and the POSIX port never touch the heap: this binary replaces malloc,
// calloc, realloc, free, the aligned allocators and every global operator new/delete with
// versions that count calls while `armed` is set, then runs real work against a real server
// with the counter armed. Only library calls run armed: the test framework's printing and the
// harness (std::string, fork) run disarmed.
//
// A Redis Cluster's redirections (MOVED, ASK) are covered through the Cluster router.
// Host names are not covered: getaddrinfo allocates its result list inside the C library (see
// resplock/ports/posix.h), so every connection here uses the numeric address 127.0.0.1.
#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <new>
#include <string>
#include <string_view>

#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "redis_cluster.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/ha/cluster.hpp"
#include "resplock/ha/sentinel.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/renewer.hpp"
#include "resplock/variants/semaphore.hpp"

// ---- counting allocator ----

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* ptr);
}

namespace {

// Plain globals: the test is single-threaded, and each access sits behind an opaque call.
volatile bool armed = false;
volatile long heap_calls = 0;

void note() {
    if (armed) heap_calls = heap_calls + 1;
}

void* counted_malloc(std::size_t size) {
    note();
    return __libc_malloc(size);
}

void* counted_aligned(std::size_t alignment, std::size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

void counted_free(void* ptr) {
    if (ptr != nullptr) note();
    __libc_free(ptr);
}

void arm() {
    heap_calls = 0;
    armed = true;
}

long disarm() {
    armed = false;
    return heap_calls;
}

}  // namespace

extern "C" {
void* malloc(std::size_t size) noexcept {
    return counted_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
    note();
    return __libc_calloc(count, size);
}
void* realloc(void* ptr, std::size_t size) noexcept {
    note();
    return __libc_realloc(ptr, size);
}
void free(void* ptr) noexcept {
    counted_free(ptr);
}
void* memalign(std::size_t alignment, std::size_t size) noexcept {
    return counted_aligned(alignment, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
    return counted_aligned(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
    void* p = counted_aligned(alignment, size);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
}
}

void* operator new(std::size_t size) {
    void* p = counted_malloc(size != 0 ? size : 1);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
void* operator new[](std::size_t size) {
    return operator new(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    return counted_malloc(size != 0 ? size : 1);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
    return counted_malloc(size != 0 ? size : 1);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
    void* p = counted_aligned(static_cast<std::size_t>(alignment), size != 0 ? size : 1);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
    return operator new(size, alignment);
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
    return counted_aligned(static_cast<std::size_t>(alignment), size != 0 ? size : 1);
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
    return counted_aligned(static_cast<std::size_t>(alignment), size != 0 ? size : 1);
}
void operator delete(void* p) noexcept {
    counted_free(p);
}
void operator delete[](void* p) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    counted_free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    counted_free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    counted_free(p);
}

// ---- tests ----

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Deadline;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
namespace resp = resplock::resp;

namespace {

// Keeps results alive so the optimiser cannot drop an allocation whose result is unused.
void* volatile sink = nullptr;

ConnectionConfig config_for(std::uint16_t port, std::uint32_t timeout_ms = 2000) {
    ConnectionConfig c;
    c.host = "127.0.0.1";
    c.port = port;
    c.timeout_ms = timeout_ms;
    return c;
}

constexpr std::size_t kBuffer = 1024;

// A Connection over its own POSIX port; constructed in place (armed) by each test.
struct Client {
    explicit Client(const ConnectionConfig& config)
        : port(support::posix_port(ctx)), conn(port, config, buf, kBuffer) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    Status run(std::initializer_list<std::string_view> args) {
        return conn.command(args.begin(), args.size(), reply);
    }

    resplock_posix_t ctx{};
    resplock_port_t port;
    char buf[kBuffer];
    Connection conn;
    resp::Reply reply;
};

}  // namespace

TEST(counter_detects_allocations) {
    std::printf(
        "    note: host-name resolution (getaddrinfo) is excluded: the C library allocates its "
        "result list; every connection here uses the numeric address 127.0.0.1\n");

    arm();
    sink = std::malloc(1);
    long n = disarm();
    CHECK_EQ(n, 1);
    std::free(sink);

    arm();
    sink = std::calloc(2, 8);
    sink = std::realloc(sink, 64);
    n = disarm();
    CHECK_EQ(n, 2);
    arm();
    std::free(sink);
    n = disarm();
    CHECK_EQ(n, 1);

    arm();
    int* one = new int(7);
    sink = one;
    int* many = new int[4];
    sink = many;
    delete one;
    delete[] many;
    n = disarm();
    CHECK_EQ(n, 4);

    // The C library's own internal allocations are seen too (its calls go through malloc).
    const char text[] = "counted";
    arm();
    char* copy = strdup(text);
    sink = copy;
    n = disarm();
    CHECK_EQ(n, 1);
    std::free(copy);

    // Which is why name resolution is left out: getaddrinfo allocates its result list.
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST;
    addrinfo* list = nullptr;
    arm();
    const int gai = getaddrinfo("127.0.0.1", "6379", &hints, &list);
    if (gai == 0) freeaddrinfo(list);
    n = disarm();
    CHECK_EQ(gai, 0);
    CHECK(n > 0);
}

TEST(resp_codec_no_heap) {
    char out[256];
    std::size_t written = 0;
    const std::string_view args[] = {"SET", "key", std::string_view("v\r\n\0", 4), "PX", "100"};
    static const char wire[] = "*4\r\n$3\r\nabc\r\n:-42\r\n*2\r\n+OK\r\n$-1\r\n-ERR nope\r\n";
    resp::Value values[8];

    arm();
    const Status enc = resp::encode_command(args, 5, out, sizeof out, &written);
    resp::Parser parser(values, 8);
    Status partial = Status::ok;
    // Fed one byte at a time, as a slow link would deliver it.
    for (std::size_t len = 1; len < sizeof wire - 1; ++len) {
        const Status s = parser.parse(wire, len);
        if (s != Status::incomplete) partial = s;
    }
    const Status full = parser.parse(wire, sizeof wire - 1);
    const std::size_t consumed = parser.consumed();
    const resp::Reply reply = parser.reply();
    const std::size_t reply_count = reply.count;
    const bool abc = reply_count == 7 && reply.values[1].equals("abc");
    const std::int64_t integer = reply_count == 7 ? reply.values[2].integer : 0;
    const bool nil = reply_count == 7 && reply.values[5].is(resp::Type::nil_bulk);
    const bool error = reply_count == 7 && reply.values[6].is(resp::Type::error) &&
                       reply.values[6].equals("ERR nope");
    resp::Parser fresh(values, 8);
    const Status bad = fresh.parse("*99999999999\r\n", 14);
    char digits[10];
    const std::size_t ndigits = resp::format_decimal(4294967295U, digits);
    const long n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(enc, Status::ok);
    static const char expected[] =
        "*5\r\n$3\r\nSET\r\n$3\r\nkey\r\n$4\r\nv\r\n\0\r\n$2\r\nPX\r\n$3\r\n100\r\n";
    CHECK_EQ(std::string_view(out, written), std::string_view(expected, sizeof expected - 1));
    CHECK_EQ(partial, Status::ok);  // no early verdict while bytes were missing
    CHECK_EQ(full, Status::ok);
    CHECK_EQ(consumed, sizeof wire - 1);
    CHECK_EQ(reply_count, 7U);
    CHECK(abc);
    CHECK_EQ(integer, -42);
    CHECK(nil);
    CHECK(error);
    CHECK(bad == Status::too_large || bad == Status::protocol_error);
    CHECK_EQ(std::string_view(digits, ndigits), std::string_view("4294967295"));
}

TEST(connection_with_auth_and_reconnect_no_heap) {
    support::RedisServer server{"--requirepass", "s3cret"};
    REQUIRE(server.running());
    auto config = config_for(server.port());
    config.password = "s3cret";
    config.db = 2;

    arm();
    Client c(config);
    const Status connected = c.conn.connect(Deadline::after(c.port, 2000));
    const Status ping = c.run({"PING"});
    const Status set = c.run({"SET", "k", "value"});
    const Status get = c.run({"GET", "k"});
    const bool got_value = get == Status::ok && c.reply.top().equals("value");
    const Status error_reply = c.run({"INCR", "k"});
    long n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(connected, Status::ok);
    CHECK_EQ(ping, Status::ok);
    CHECK_EQ(set, Status::ok);
    CHECK_EQ(get, Status::ok);
    CHECK(got_value);
    CHECK_EQ(error_reply, Status::server_error);

    server.kill();
    REQUIRE(server.restart());

    arm();
    const Status lost = c.run({"PING"});  // a reconnect, without heap
    const Status again = c.run({"SET", "k", "fresh"});
    const Status read_back = c.run({"GET", "k"});
    const bool fresh = read_back == Status::ok && c.reply.top().equals("fresh");
    n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(lost, Status::ok);  // the closed idle connection is noticed before sending
    CHECK_EQ(again, Status::ok);
    CHECK_EQ(read_back, Status::ok);
    CHECK(fresh);
    CHECK_EQ(std::string_view(server.cli({"-a", "s3cret", "-n", "2", "GET", "k"})),
             std::string_view("fresh"));

    // Refused credentials and a refused connection take the failure paths, still without heap.
    auto wrong = config;
    wrong.password = "wrong";
    const std::uint16_t closed_port = support::free_port();
    arm();
    Client refused(wrong);
    const Status auth = refused.run({"PING"});
    Client nobody(config_for(closed_port));
    const Status unreachable = nobody.run({"PING"});
    n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(auth, Status::auth_failed);
    CHECK_EQ(unreachable, Status::connect_failed);
}

TEST(timeout_no_heap) {
    support::SilentListener silent;
    REQUIRE(silent.port() != 0);

    arm();
    Client c(config_for(silent.port(), 200));
    const Status s = c.run({"PING"});
    const bool sent = c.conn.request_sent();
    const long n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(s, Status::timeout);
    CHECK(sent);
}

TEST(lock_no_heap) {
    support::RedisServer server;
    REQUIRE(server.running());
    REQUIRE(resplock::lock_buffer_min() <= kBuffer);

    char old_token[resplock::max_token_len];
    std::size_t old_len = 0;

    arm();
    Client a(config_for(server.port()));
    Client b(config_for(server.port()));
    Lock mine(a.conn, "resource");
    Lock theirs(b.conn, "resource");
    const Status acquired = mine.acquire(5000);
    LockInfo info;
    const Status queried = mine.query(info);
    const Status extended = mine.extend(8000);
    const bool held = mine.held();
    const Status busy = theirs.try_acquire(5000, 60);  // waits with backoff, then gives up
    LockInfo other_view;
    const Status other_queried = theirs.query(other_view);
    old_len = mine.token().size();
    std::memcpy(old_token, mine.token().data(), old_len);
    const Status released = mine.release();
    const Status taken = theirs.try_acquire(5000, 500);
    const Status adopted = mine.adopt({old_token, old_len});
    const Status stale = mine.release();  // the key now carries their token
    long n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(acquired, Status::ok);
    CHECK_EQ(queried, Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK(info.ttl_ms > 0 && info.ttl_ms <= 5000);
    CHECK_EQ(extended, Status::ok);
    CHECK(held);
    CHECK_EQ(busy, Status::busy);
    CHECK_EQ(other_queried, Status::ok);
    CHECK(other_view.state == LockState::held_by_other);
    CHECK_EQ(released, Status::ok);
    CHECK_EQ(taken, Status::ok);
    CHECK_EQ(adopted, Status::ok);
    CHECK_EQ(stale, Status::not_owner);
    CHECK_EQ(std::string_view(server.cli({"GET", "resource"})), theirs.token());

    // An empty script cache makes release fall back from EVALSHA to EVAL.
    REQUIRE_EQ(std::string_view(server.cli({"SCRIPT", "FLUSH"})), std::string_view("OK"));
    arm();
    const Status released_again = theirs.release();
    const Status readopted = mine.adopt({old_token, old_len});
    const Status gone = mine.release();
    n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(released_again, Status::ok);
    CHECK_EQ(readopted, Status::ok);
    CHECK_EQ(gone, Status::expired);
    CHECK_EQ(std::string_view(server.cli({"EXISTS", "resource"})), std::string_view("0"));
}

// The semaphore: grants with fencing numbers, a fair waiter that joins the queue, blocks on its
// own list and leaves it, a plain waiter blocking on the wake list, extend, query, holders and
// release, a grant whose WAIT goes unmet, and the EVAL fallback. Its buffer is larger than the
// other tests' (semaphore_buffer_min()).
TEST(semaphore_no_heap) {
    support::RedisServer server;
    REQUIRE(server.running());
    constexpr std::size_t big = 4096;
    REQUIRE(resplock::semaphore_buffer_min() <= big);
    struct Big {
        explicit Big(const ConnectionConfig& config)
            : port(support::posix_port(ctx)), conn(port, config, buf, big) {}
        resplock_posix_t ctx;
        resplock_port_t port;
        char buf[big];
        Connection conn;
    };

    arm();
    Big a(config_for(server.port()));
    Big b(config_for(server.port()));
    resplock::Semaphore holder(a.conn, "slots", 1, true);
    resplock::Semaphore fair(b.conn, "slots", 1, true);
    resplock::Semaphore plain(b.conn, "slots", 1);
    std::uint64_t first = 0;
    std::uint64_t second = 0;
    const Status acquired = holder.acquire(5000, &first);
    const Status queued = fair.try_acquire(5000, 300, &second);  // joins, blocks, leaves
    const Status waited = plain.try_acquire(5000, 100);          // blocks on the wake list
    const Status extended = holder.extend(8000);
    resplock::SemaphoreInfo info;
    const Status queried = holder.query(info);
    int listed = 0;
    const Status holders = holder.holders(
        [](void* ctx, const resplock::SemaphoreHolder&) noexcept { ++*static_cast<int*>(ctx); },
        &listed);
    // A WAIT for a replica this server lacks: the grant is given back (not_replicated).
    resplock::Semaphore lone(a.conn, "slots:lone", 1);
    const Status asked = lone.set_replicas(1);
    const Status unreplicated = lone.acquire(5000);
    const Status released = holder.release();
    const Status taken = fair.try_acquire(5000, 500, &second);
    long n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(acquired, Status::ok);
    CHECK_EQ(queued, Status::busy);
    CHECK_EQ(waited, Status::busy);
    CHECK_EQ(extended, Status::ok);
    CHECK_EQ(queried, Status::ok);
    CHECK_EQ(info.count, 1U);
    CHECK(info.mine);
    CHECK_EQ(holders, Status::ok);
    CHECK_EQ(listed, 1);
    CHECK_EQ(asked, Status::ok);
    CHECK_EQ(unreplicated, Status::not_replicated);
    CHECK(lone.token().empty());
    CHECK_EQ(released, Status::ok);
    CHECK_EQ(taken, Status::ok);
    CHECK(second > first);

    REQUIRE_EQ(std::string_view(server.cli({"SCRIPT", "FLUSH"})), std::string_view("OK"));
    arm();
    const Status released_again = fair.release();
    n = disarm();
    CHECK_EQ(n, 0);
    CHECK_EQ(released_again, Status::ok);
    CHECK_EQ(std::string_view(server.cli({"EXISTS", "slots"})), std::string_view("0"));
}

// Replica acknowledgement: the WAIT after acquire and extend, met and unmet (then the release).
TEST(replica_wait_no_heap) {
    // Own directories for the snapshot of the first sync, not the working directory.
    char master_dir[] = "/tmp/resplock-noheap-XXXXXX";
    char replica_dir[] = "/tmp/resplock-noheap-XXXXXX";
    REQUIRE(mkdtemp(master_dir) != nullptr && mkdtemp(replica_dir) != nullptr);
    struct Remove {  // destroyed after the servers below
        const char* a;
        const char* b;
        ~Remove() {
            std::error_code ignored;
            std::filesystem::remove_all(a, ignored);
            std::filesystem::remove_all(b, ignored);
        }
    } remove{master_dir, replica_dir};
    support::RedisServer master{"--dir", master_dir};
    REQUIRE(master.running());
    const std::string master_port = std::to_string(master.port());
    support::RedisServer replica{"--replicaof", "127.0.0.1", master_port.c_str(), "--dir",
                                 replica_dir};
    REQUIRE(support::wait_until(
        [&] {
            return replica.cli({"INFO", "replication"}).find("master_link_status:up") !=
                   std::string::npos;
        },
        20));

    arm();
    Client a(config_for(master.port()));
    Lock lock(a.conn, "replicated");
    const Status one = lock.set_replicas(1);
    const Status met = lock.acquire(5000);
    const Status extended = lock.extend(5000);
    const Status two = lock.set_replicas(2);
    const Status extend_unmet = lock.extend(5000);
    const Status released = lock.release();
    const Status unmet = lock.acquire(5000);
    const long n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(one, Status::ok);
    CHECK_EQ(met, Status::ok);
    CHECK_EQ(extended, Status::ok);
    CHECK_EQ(two, Status::ok);
    CHECK_EQ(extend_unmet, Status::not_replicated);
    CHECK_EQ(released, Status::ok);
    CHECK_EQ(unmet, Status::not_replicated);
    CHECK_EQ(lock.replicas_acknowledged(), 1U);
    CHECK_EQ(std::string_view(master.cli({"EXISTS", "replicated"})), std::string_view("0"));
}

namespace {
// Counts events; allocates nothing itself.
void count_event(void* user, const resplock_event_t* /*event*/) {
    ++*static_cast<int*>(user);
}
}  // namespace

TEST(observer_client_name_owner_label_and_renewer_events_no_heap) {
    support::RedisServer server;
    REQUIRE(server.running());
    int events = 0;

    arm();
    resplock::Observer observer(&count_event, &events);
    const Status named = observer.set_client_name("noheap-1");
    ConnectionConfig config = config_for(server.port());
    config.observer = &observer;
    Client a(config);
    Client b(config);
    Lock mine(a.conn, "labelled");
    Lock theirs(b.conn, "labelled");
    resplock::AcquireOptions options;
    options.owner = "noheap-1";
    const Status acquired = mine.try_acquire(5000, 0, options);
    const Status busy = theirs.try_acquire(5000, 40, options);  // retries, each an event
    resplock::Renewer renewer;
    renewer.set_observer(&observer);
    const Status watched = renewer.watch(mine, 5000);
    a.conn.close();  // the renewal reconnects
    const std::uint32_t now = a.port.now_ms(a.port.ctx);
    (void)renewer.tick(now + 2000);  // due: renewed, a renewal event
    const Status released = mine.release();
    const long n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(named, Status::ok);
    CHECK_EQ(acquired, Status::ok);
    CHECK_EQ(busy, Status::busy);
    CHECK_EQ(watched, Status::ok);
    CHECK_EQ(released, Status::ok);
    CHECK(events >= 5);  // connect a, connect b, retries, reconnect a, renewal
}

TEST(sentinel_resolution_no_heap) {
    support::SentinelTopology topology;
    REQUIRE(topology.ok());
    const std::uint16_t dead = support::free_port();
    const std::uint16_t sentinel_port = topology.sentinel_port(0);

    arm();
    // A dead sentinel first, then the live ones (a write counts when a majority of the sentinels
    // given name the node that took it); the master confirmed with ROLE, then a lock.
    resplock::Sentinel sentinel("mymaster");
    bool added = sentinel.add("127.0.0.1", dead);
    for (std::size_t i = 0; i < topology.sentinels(); ++i)
        added = sentinel.add("127.0.0.1", topology.sentinel_port(i)) && added;
    ConnectionConfig config = config_for(0);
    config.router = &sentinel;
    Client a(config);
    Lock lock(a.conn, "sentinel:noheap");
    const Status acquired = lock.acquire(5000);
    const Status released = lock.release();
    // A name the sentinel does not know.
    resplock::Sentinel unknown("no-such-master");
    const bool added_unknown = unknown.add("127.0.0.1", sentinel_port);
    ConnectionConfig other = config_for(0);
    other.router = &unknown;
    Client b(other);
    const Status pinged = b.run({"PING"});
    const long n = disarm();

    CHECK_EQ(n, 0);
    CHECK(added && added_unknown);
    CHECK_EQ(acquired, Status::ok);
    CHECK_EQ(released, Status::ok);
    CHECK_EQ(sentinel.tried(), std::size_t{2});
    CHECK_EQ(sentinel.master().port, topology.master().port());
    CHECK_EQ(pinged, Status::no_host);
    CHECK(unknown.name_unknown());
}

TEST(cluster_redirections_no_heap) {
    // Set up disarmed: the cluster, a key served by node 1, and a slot of node 0 migrating to
    // node 2 (a key of it that node 0 does not have is answered with ASK).
    support::RedisCluster cluster;
    REQUIRE(cluster.ok());
    const std::string moved_key = cluster.key_on(1, "noheap:");
    const std::string ask_key = cluster.key_on(0, "noheap-ask:");
    const std::string slot = std::to_string(cluster.slot(ask_key));
    REQUIRE_EQ(cluster.node(2).cli({"CLUSTER", "SETSLOT", slot, "IMPORTING", cluster.id(0)}),
               std::string("OK"));
    REQUIRE_EQ(cluster.node(0).cli({"CLUSTER", "SETSLOT", slot, "MIGRATING", cluster.id(2)}),
               std::string("OK"));
    int events = 0;
    resplock::Observer observer(&count_event, &events);
    ConnectionConfig config = config_for(cluster.node(0).port());
    config.observer = &observer;
    resplock::AcquireOptions fenced;
    fenced.fence = true;
    std::uint64_t fence = 0;

    arm();
    resplock::Cluster router_a;
    resplock::Cluster router_b;
    ConnectionConfig config_a = config;
    config_a.router = &router_a;
    ConnectionConfig config_b = config;
    config_b.router = &router_b;
    Client a(config_a);
    Client b(config_b);
    Lock moved(a.conn, moved_key);
    Lock asked(b.conn, ask_key);
    const Status acquired = moved.acquire(5000, fenced, &fence);  // MOVED, then remembered
    const Status extended = moved.extend(8000);
    const Status released = moved.release();
    const Status ask_acquired = asked.acquire(5000);  // ASK: ASKING then SET on node 2
    const Status ask_released = asked.release();
    const long n = disarm();

    CHECK_EQ(n, 0);
    CHECK_EQ(acquired, Status::ok);
    CHECK(fence >= 1);
    CHECK_EQ(extended, Status::ok);
    CHECK_EQ(released, Status::ok);
    CHECK_EQ(ask_acquired, Status::ok);
    CHECK_EQ(ask_released, Status::ok);
    CHECK_EQ(static_cast<unsigned>(router_a.node().port),
             static_cast<unsigned>(cluster.node(1).port()));
    CHECK_EQ(router_b.node().port, 0);
    CHECK(events >= 4);  // connects, reconnects and at least one redirect each
}
