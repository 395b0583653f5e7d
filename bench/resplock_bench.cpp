// The benchmark program that bench/run.sh drives. Modes:
//   script-sha | script-text
//       the library's owner script (the release / extend / query script every lock sends with
//       EVALSHA): its SHA1, or its text, on one line. run.sh loads this text and checks that the
//       server's digest is this SHA1.
//   cycle ours|hiredis|raw PORT CYCLES
//       acquire + release on one connection, CYCLES times after a warm-up; prints the rate and,
//       when malloc_count is preloaded, the heap calls made inside the measured loop. hiredis
//       and raw release with EVALSHA of the library's owner script, as ours does.
//   handoff backoff|poll|wake|fair|sem|fairsem PORT PROCS HOLD_MS SECONDS [rejoin|greedy [LIMIT]]
//       starts PROCS worker processes contending for one key and reports acquisitions per
//       second, the hand-off delay (from the moment a holder's release request is sent, the
//       start of its send(), to the moment the next holder's acquiring call returns holding the
//       lock; with LIMIT places, each release is paired with the first grant after it that no
//       earlier release was paired with), the server's request count per acquisition, the fewest
//       and the most acquisitions of one worker, and the checks of the limit (LIMIT holders for
//       the semaphore, 1 for the locks): acquisitions that returned while LIMIT earlier holders
//       had not yet sent their release (must be 0), and the most holders at once, counted live
//       and from the recorded hold intervals (neither may exceed LIMIT).
//       backoff: try_acquire; poll: acquire, then sleep 100 ms; wake: try_acquire and release
//       with AcquireOptions::wake (waiters block in BLPOP, a release wakes one); fair: FairLock
//       (waiters queue, a release hands the lock to the first one); sem: Semaphore with LIMIT
//       places (default 1), plain mode (waiters block on its wake list, a release wakes one);
//       fairsem: the same in the fair mode (waiters queue, a release hands its place to the
//       first one).
//       rejoin (the default): a worker that released tries again only once another has acquired
//       after its release, so that every acquisition is a hand-off; greedy: it tries again at
//       once, as a device that always wants the lock does (what the spread per worker is
//       measured with).
//   worker backoff|poll|wake|fair|sem|fairsem PORT PROCS HOLD_MS START_NS END_NS SHARED_FD
//          GREEDY LIMIT
//       (started by handoff)
//   idle_rtt PORT COUNT GAP_US
//       PING round trips of a client that sleeps GAP_US before each one, as a waiter does before
//       it is woken: the round trip a hand-off pays, wake-ups of both processes included.
//   ping_rtt PORT COUNT GAP_US
//       the same PINGs alone, with their spread: median, p99, fewest and most microseconds (the
//       link mode's round trip through the delay proxy).
//   records PORT PROCS SECONDS SCRIPTED FILE
//       the hand-off figures (the same lines as handoff, computed by the same code) of holds that
//       another program recorded (the Node peers' driver, bench/peers/driver.js).
//   now
//       CLOCK_MONOTONIC in ns (run.sh checks that Node's clock is the same one).
// Output: `name value` lines on stdout; errors on stderr with a non-zero exit.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <new>
#include <string>
#include <vector>

#include "resplock/core/companion.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/fair_lock.hpp"
#include "resplock/variants/semaphore.hpp"

// Internal (src/core, on this program's include path): the owner script, so that the bench
// loads and calls exactly the script the library sends.
#include "basics.hpp"
#include "core/lua_scripts.hpp"
#include "hold_figures.hpp"
#include "send_stamp.hpp"

namespace {

using bench::command_calls;
using bench::command_stat;
using bench::fail;
using bench::Hold;
using bench::hold_figures;
using bench::HoldFigures;
using bench::now_ns;
using bench::parse_long;
using bench::percentile;
using bench::sleep_ns;
using resplock::Status;
using resplock::detail::owner_script;

constexpr const char* kHost = "127.0.0.1";
// 20 bytes, the length of redis-benchmark's `bench:k:__rand_int__` once expanded.
constexpr const char* kCycleKey = "bench:k:100000000001";
constexpr std::uint32_t kCycleTtlMs = 30000;
constexpr int kWarmupCycles = 200;
constexpr const char* kHandoffKey = "bench:handoff";
constexpr const char* kIdleFairKey = "bench:idle-fair";
constexpr std::uint32_t kHandoffTtlMs = 10000;  // far beyond any hold: no lock ever expires
constexpr std::uint32_t kPollSleepMs = 100;     // redis-py Lock's default `sleep`

void sleep_until_ns(std::int64_t at) {
    const std::int64_t left = at - now_ns();
    sleep_ns(left);
}

// Heap counter of malloc_count.so, present only when it is preloaded.
struct HeapCounter {
    void (*arm)() = nullptr;
    void (*disarm)(long*, long*) = nullptr;

    HeapCounter() {
        arm = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "bench_heap_arm"));
        disarm = reinterpret_cast<void (*)(long*, long*)>(dlsym(RTLD_DEFAULT, "bench_heap_disarm"));
        if (arm == nullptr || disarm == nullptr) arm = nullptr;
    }
};

// ---- uncontended cycle ----

// One lock over the POSIX port; with stamp, its sends are timed (send_stamp.hpp: the hand-off's
// clock starts when the holder's release request is sent; the hand-off workers only). Its buffer
// holds lock_options_buffer_min() bytes: the wake strategy's EVAL of the options' acquire script
// (462 bytes of script) does not fit the 512 bytes that suffice for the plain lock.
resplock_port_t posix_port(resplock_posix_t& net, bool stamp = false) {
    resplock_port_t port{};
    if (resplock_posix_port_init(&net, nullptr, &port) != RESPLOCK_STATUS_ok) std::abort();
    if (stamp) {
        bench::stamp_sends(port);
    }
    return port;
}

struct OurClient {
    resplock_posix_t net{};
    resplock_port_t port;
    resplock::ConnectionConfig cfg;
    char buf[1024];
    resplock::Connection conn;
    resplock::Lock lock;

    OurClient(std::uint16_t server_port, const char* key, bool stamp = false)
        : port(posix_port(net, stamp)),
          cfg(config(server_port)),
          conn(port, cfg, buf, sizeof buf),
          lock(conn, key) {}

    static resplock::ConnectionConfig config(std::uint16_t server_port) {
        resplock::ConnectionConfig c;
        c.host = kHost;
        c.port = server_port;
        c.timeout_ms = 2000;
        return c;
    }
};

// The baseline as most C users write it: redisCommand with a format string, a random token.
struct HiredisClient {
    redisContext* c = nullptr;
    std::string sha;

    explicit HiredisClient(std::uint16_t server_port) : sha(owner_script.sha1) {
        const timeval tv{2, 0};
        c = redisConnectWithTimeout(kHost, server_port, tv);
        if (c == nullptr || c->err != 0) fail("hiredis: cannot connect");
        if (redisSetTimeout(c, tv) != REDIS_OK) fail("hiredis: cannot set the timeout");
    }
    ~HiredisClient() { redisFree(c); }
    HiredisClient(const HiredisClient&) = delete;
    HiredisClient& operator=(const HiredisClient&) = delete;

    bool cycle() {
        unsigned char raw[16];
        if (getrandom(raw, sizeof raw, 0) != static_cast<ssize_t>(sizeof raw)) return false;
        char token[33];
        static const char hex[] = "0123456789abcdef";
        for (std::size_t i = 0; i < sizeof raw; ++i) {
            token[2 * i] = hex[raw[i] >> 4];
            token[2 * i + 1] = hex[raw[i] & 0xf];
        }
        token[32] = '\0';
        auto* r = static_cast<redisReply*>(
            redisCommand(c, "SET %s %s NX PX %u", kCycleKey, token, kCycleTtlMs));
        const bool set_ok =
            r != nullptr && r->type == REDIS_REPLY_STATUS && std::strcmp(r->str, "OK") == 0;
        freeReplyObject(r);
        if (!set_ok) return false;
        r = static_cast<redisReply*>(
            redisCommand(c, "EVALSHA %s 1 %s %s", sha.c_str(), kCycleKey, token));
        const bool released = r != nullptr && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
        freeReplyObject(r);
        return released;
    }
};

// The floor for any client: the two requests pre-encoded once, one blocking send and one recv
// each, replies checked byte for byte. No token generation, no parsing, no deadlines.
struct RawClient {
    int fd = -1;
    std::string set_request, release_request;

    explicit RawClient(std::uint16_t server_port) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(server_port);
        inet_pton(AF_INET, kHost, &a.sin_addr);
        const int one = 1;
        if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
            connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            fail("raw: cannot connect");
        }
        const std::string token = "0123456789abcdef0123456789abcdef";
        set_request = encode({"SET", kCycleKey, token, "NX", "PX", std::to_string(kCycleTtlMs)});
        release_request =
            encode({"EVALSHA", std::string(owner_script.sha1), "1", kCycleKey, token});
    }
    ~RawClient() { close(fd); }
    RawClient(const RawClient&) = delete;
    RawClient& operator=(const RawClient&) = delete;

    static std::string encode(const std::vector<std::string>& args) {
        std::string out = "*" + std::to_string(args.size()) + "\r\n";
        for (const std::string& a : args)
            out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
        return out;
    }

    bool round_trip(const std::string& request, const char* expected) {
        if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(request.size())) {
            return false;
        }
        char reply[16];
        const std::size_t want = std::strlen(expected);
        std::size_t got = 0;
        while (got < want) {
            const ssize_t n = recv(fd, reply + got, sizeof reply - got, 0);
            if (n <= 0) return false;
            got += static_cast<std::size_t>(n);
        }
        return got == want && std::memcmp(reply, expected, want) == 0;
    }

    bool cycle() {
        return round_trip(set_request, "+OK\r\n") && round_trip(release_request, ":1\r\n");
    }
};

template <typename Cycle>
int run_cycles(long cycles, Cycle&& cycle) {
    for (int i = 0; i < kWarmupCycles; ++i) {
        if (!cycle()) fail("warm-up cycle failed");
    }
    const HeapCounter heap;
    if (heap.arm != nullptr) heap.arm();
    const std::int64_t start = now_ns();
    for (long i = 0; i < cycles; ++i) {
        if (!cycle()) {
            long a = 0, f = 0;
            if (heap.arm != nullptr) heap.disarm(&a, &f);
            fail("cycle " + std::to_string(i) + " failed");
        }
    }
    const std::int64_t elapsed = now_ns() - start;
    long allocs = 0, frees = 0;
    if (heap.arm != nullptr) heap.disarm(&allocs, &frees);
    std::printf("cycles %ld\n", cycles);
    std::printf("ns_per_cycle %.1f\n", static_cast<double>(elapsed) / static_cast<double>(cycles));
    std::printf("cycles_per_s %.1f\n", 1e9 * static_cast<double>(cycles) / elapsed);
    if (heap.arm != nullptr) {
        std::printf("heap_allocs %ld\nheap_frees %ld\n", allocs, frees);
    }
    return 0;
}

int cycle_mode(int argc, char** argv) {
    if (argc != 5) fail("usage: cycle ours|hiredis|raw PORT CYCLES");
    const std::string client = argv[2];
    const auto port = static_cast<std::uint16_t>(parse_long(argv[3], "port"));
    const long cycles = parse_long(argv[4], "cycle count");
    if (cycles == 0) fail("cycle count must be positive");
    if (client == "ours") {
        OurClient ours(port, kCycleKey);
        return run_cycles(cycles, [&ours] {
            return ours.lock.acquire(kCycleTtlMs) == Status::ok &&
                   ours.lock.release() == Status::ok;
        });
    }
    if (client == "hiredis") {
        HiredisClient h(port);
        return run_cycles(cycles, [&h] { return h.cycle(); });
    }
    if (client == "raw") {
        RawClient raw(port);
        return run_cycles(cycles, [&raw] { return raw.cycle(); });
    }
    fail("unknown client " + client);
}

// ---- contended hand-off ----

// Shared by the workers of one hand-off run (a memfd mapped by each).
struct Shared {
    std::atomic<std::uint64_t> acquisitions;
    // Workers between a successful acquire and the start of their release, and the most seen at
    // once. A worker leaves before it sends its release and the next one enters after its
    // acquire returned, which the server ordered after that release: more than 1 is two holders
    // (for the semaphore, more than its limit is one holder too many).
    std::atomic<int> holders;
    std::atomic<int> max_holders;
};

// redis-py's Lock.acquire(blocking=True): one SET attempt, then a fixed sleep while busy.
// A blocking acquire's wait in a case that ends at end_ns: it reaches kDrainMs past the end. A
// wait that ended with the case would spend its last stretch in the lock's end-of-wait handling
// (a fair waiter sleeps through its last blpop_late_ms rather than block past its deadline), and
// the case's last hand-offs, all landing there, would measure that rather than the hand-off.
constexpr std::int64_t kDrainMs = 3000;
std::uint32_t wait_past(std::int64_t end_ns) {
    return static_cast<std::uint32_t>(
        std::max<std::int64_t>(0, (end_ns - now_ns()) / 1000000 + kDrainMs));
}

Status poll_acquire(resplock::Lock& lock, std::int64_t end_ns) {
    for (;;) {
        const Status s = lock.acquire(kHandoffTtlMs);
        if (s != Status::busy) return s;
        if (now_ns() + std::int64_t{kPollSleepMs} * 1000000 >= end_ns) return s;
        sleep_ns(std::int64_t{kPollSleepMs} * 1000000);
    }
}

// The fair lock over its own connection: its script needs more than the 512-byte buffer.
struct FairClient {
    resplock_posix_t net{};
    resplock_port_t port;
    resplock::ConnectionConfig cfg;
    char buf[2048];
    resplock::Connection conn;
    resplock::FairLock lock;

    FairClient(std::uint16_t server_port, const char* key, bool stamp)
        : port(posix_port(net, stamp)),
          cfg(OurClient::config(server_port)),
          conn(port, cfg, buf, sizeof buf),
          lock(conn, key) {}
};

// The semaphore over its own connection: its script needs semaphore_buffer_min() bytes (about
// 3 KB), more than the fair lock's 2048.
struct SemClient {
    resplock_posix_t net{};
    resplock_port_t port;
    resplock::ConnectionConfig cfg;
    char buf[4096];
    resplock::Connection conn;
    resplock::Semaphore sem;

    SemClient(std::uint16_t server_port, const char* key, std::uint32_t limit, bool fair,
              bool stamp)
        : port(posix_port(net, stamp)),
          cfg(OurClient::config(server_port)),
          conn(port, cfg, buf, sizeof buf),
          sem(conn, key, limit, fair) {
        if (sizeof buf < resplock::semaphore_buffer_min()) {
            fail("the semaphore's buffer is smaller than semaphore_buffer_min()");
        }
    }
};

bool semaphore_strategy(const std::string& strategy) {
    return strategy == "sem" || strategy == "fairsem";
}

int worker_mode(int argc, char** argv) {
    if (argc != 11) {
        fail(
            "usage: worker backoff|poll|wake|fair|sem|fairsem PORT PROCS HOLD_MS START_NS END_NS"
            " FD GREEDY LIMIT");
    }
    const bool poll = std::strcmp(argv[2], "poll") == 0;
    const bool fair = std::strcmp(argv[2], "fair") == 0;
    const bool sem = semaphore_strategy(argv[2]);
    const bool greedy = std::strcmp(argv[9], "1") == 0;
    const auto limit = static_cast<std::uint32_t>(parse_long(argv[10], "limit"));
    resplock::AcquireOptions options;
    options.wake = std::strcmp(argv[2], "wake") == 0;
    const auto port = static_cast<std::uint16_t>(parse_long(argv[3], "port"));
    const long procs = parse_long(argv[4], "process count");
    const std::int64_t hold_ns = parse_long(argv[5], "hold") * 1000000;
    const std::int64_t start_ns = parse_long(argv[6], "start");
    const std::int64_t end_ns = parse_long(argv[7], "end");
    const int fd = static_cast<int>(parse_long(argv[8], "fd"));
    void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) fail("worker: mmap failed");
    auto* shared = static_cast<Shared*>(mem);

    OurClient me(port, kHandoffKey, !fair && !sem);
    FairClient fair_me(port, kHandoffKey, fair);
    SemClient sem_me(port, kHandoffKey, limit, std::strcmp(argv[2], "fairsem") == 0, sem);
    resplock::Connection& conn = fair ? fair_me.conn : sem ? sem_me.conn : me.conn;
    if (conn.connect(resplock::Deadline::after(me.port, 2000)) != Status::ok) {
        fail("worker: cannot connect");
    }
    std::vector<Hold> holds;
    holds.reserve(4096);
    sleep_until_ns(start_ns);
    while (now_ns() < end_ns) {
        Status s;
        if (poll) {
            s = poll_acquire(me.lock, end_ns);
        } else if (fair) {
            const auto wait_ms = wait_past(end_ns);
            s = fair_me.lock.try_acquire(kHandoffTtlMs, wait_ms);
        } else if (sem) {
            const auto wait_ms = wait_past(end_ns);
            s = sem_me.sem.try_acquire(kHandoffTtlMs, wait_ms);
        } else {
            const auto wait_ms = wait_past(end_ns);
            s = me.lock.try_acquire(kHandoffTtlMs, wait_ms, options);
        }
        if (s == Status::busy) break;  // the run ended while waiting
        if (s != Status::ok) fail(std::string("worker: acquire: ") + resplock::to_string(s));
        const std::int64_t acquired = now_ns();
        if (acquired >= end_ns) {
            // A grant after the case's end (its wait reached past it): released at once and not
            // counted, so the case's last hand-offs are measured like any other.
            const Status r = fair  ? fair_me.lock.release()
                             : sem ? sem_me.sem.release()
                                   : me.lock.release(options);
            if (r != Status::ok) fail("worker: release failed");
            break;
        }
        const int holding = shared->holders.fetch_add(1) + 1;
        int most = shared->max_holders.load();
        while (holding > most && !shared->max_holders.compare_exchange_weak(most, holding)) {
        }
        shared->acquisitions.fetch_add(1);
        sleep_ns(hold_ns);
        // The acquisitions so far, read before this release is sent (with a lock, the count at
        // this acquisition: nobody else acquires while it is held).
        const std::uint64_t before_release = shared->acquisitions.load();
        shared->holders.fetch_sub(1);
        bench::stamp_armed = true;
        const Status r = fair  ? fair_me.lock.release()
                         : sem ? sem_me.sem.release()
                               : me.lock.release(options);
        if (r != Status::ok) fail("worker: release failed");
        if (bench::stamp_armed) fail("worker: the release sent no request");
        holds.push_back({acquired, bench::stamp_at_ns, 0});
        // Rejoin only once another process has acquired after this release: otherwise the
        // releaser, already connected and awake, re-takes its place at once and the waiters never
        // get a hand-off.
        while (!greedy && procs > 1 && shared->acquisitions.load() == before_release &&
               now_ns() < end_ns) {
            sleep_ns(100000);
        }
    }
    for (const Hold& h : holds) {
        std::printf("%" PRId64 " %" PRId64 "\n", h.acquired_ns, h.release_ns);
    }
    return 0;
}

// The companion keys of kHandoffKey that a run may leave (the fair lock's and the semaphore's),
// as one DEL with the key itself.
std::string handoff_cleanup() {
    char base[64];
    static_assert(std::char_traits<char>::length(kHandoffKey) + resplock::companion_prefix_extra <=
                  sizeof base);
    const std::size_t len = resplock::companion_prefix(kHandoffKey, base);
    const std::string b(base, len);
    std::string del = std::string("DEL ") + kHandoffKey + " " + kHandoffKey + ":wake";
    for (const char* suffix : {":q", ":w", ":fence", ":wake"})
        del += " " + b + suffix;
    return del;
}

// INFO commandstats of the server, and the admin connection closed.
std::string commandstats(redisContext* admin) {
    auto* r = static_cast<redisReply*>(redisCommand(admin, "INFO commandstats"));
    if (r == nullptr || r->type != REDIS_REPLY_STRING) fail("handoff: INFO failed");
    const std::string info(r->str, r->len);
    freeReplyObject(r);
    redisFree(admin);
    return info;
}

// The hand-off figures of one run from its recorded holds (any worker's, any program's: the
// `records` mode reads them from a file) and the server's command counts since the run began.
// scripted: every acquisition attempt is a script, so the SET and PTTL counts are the script's
// own calls, not requests. live_max: the most holders a live count saw (-1: none was kept; the
// recorded intervals' figure stands in).
int print_handoff_figures(std::vector<Hold> holds, long procs, long seconds, long limit,
                          const std::string& info, bool scripted, int live_max) {
    if (holds.size() < 3) fail("handoff: fewer than 3 acquisitions");
    std::sort(holds.begin(), holds.end(),
              [](const Hold& a, const Hold& b) { return a.acquired_ns < b.acquired_ns; });
    long same_process = 0;
    for (std::size_t i = 1; i < holds.size(); ++i) {
        if (holds[i].worker == holds[i - 1].worker) ++same_process;
    }
    // Every time comes from one system-wide monotonic clock: an acquire that returned before
    // `limit` earlier holders sent their release means one holder too many.
    const HoldFigures figures = hold_figures(holds, limit);
    const std::vector<double>& delays_ms = figures.delays_ms;
    if (delays_ms.empty()) fail("handoff: no release was followed by a grant");
    const auto n = static_cast<double>(holds.size());
    // Requests the workers sent. commandstats also counts the commands a script calls, so with
    // scripted attempts (wake, the fair lock, the semaphore, redlock) the SET and PTTL counts are
    // not requests. SUBSCRIBE and UNSUBSCRIBE are requests (a pub/sub waiter's); PUBLISH, sent
    // only from release scripts, is not.
    const long sets = scripted ? 0 : command_calls(info, "set");
    const long pttls = scripted ? 0 : command_calls(info, "pttl");
    const long scripts = command_calls(info, "evalsha") + command_calls(info, "eval");
    const long blpops = command_calls(info, "blpop");
    const long subs = command_calls(info, "subscribe") + command_calls(info, "unsubscribe");
    const long requests = sets + pttls + scripts + blpops + subs;
    std::printf("acquisitions %zu\n", holds.size());
    std::printf("limit %ld\n", limit);
    std::printf("exclusion_overlaps %ld\n", figures.over_limit);
    std::printf("max_holders %d\n", live_max < 0 ? figures.most : live_max);
    std::printf("max_holders_recorded %d\n", figures.most);
    std::printf("acq_per_s %.1f\n", n / static_cast<double>(seconds));
    std::printf("handoffs %zu\n", delays_ms.size());
    std::printf("same_process_reacquires %ld\n", same_process);
    std::printf("handoff_median_ms %.3f\n", percentile(delays_ms, 0.5));
    std::printf("handoff_p99_ms %.3f\n", percentile(delays_ms, 0.99));
    std::printf("requests_per_acq %.2f\n", static_cast<double>(requests) / n);
    std::printf("set_per_acq %.2f\n", static_cast<double>(sets) / n);
    std::printf("pttl_per_acq %.2f\n", static_cast<double>(pttls) / n);
    std::printf("script_per_acq %.2f\n", static_cast<double>(scripts) / n);
    std::printf("blpop_per_acq %.2f\n", static_cast<double>(blpops) / n);
    // The server's own time per script call (attempts, hand-offs and releases alike).
    const long script_usec =
        command_stat(info, "evalsha", "usec") + command_stat(info, "eval", "usec");
    std::printf(
        "server_us_per_script %.2f\n",
        scripts > 0 ? static_cast<double>(script_usec) / static_cast<double>(scripts) : 0.0);
    // Each acquisition is released once: the requests of the acquisition itself are the rest.
    std::printf("acquire_requests_per_acq %.2f\n", static_cast<double>(requests) / n - 1.0);
    std::vector<long> per_worker(static_cast<std::size_t>(procs), 0);
    for (const Hold& h : holds) {
        if (h.worker < 0 || h.worker >= procs) fail("handoff: a record names no worker");
        ++per_worker[static_cast<std::size_t>(h.worker)];
    }
    std::printf("worker_acq_min %ld\n", *std::min_element(per_worker.begin(), per_worker.end()));
    std::printf("worker_acq_max %ld\n", *std::max_element(per_worker.begin(), per_worker.end()));
    return 0;
}

int handoff_mode(int argc, char** argv) {
    if (argc < 7 || argc > 9) {
        fail(
            "usage: handoff backoff|poll|wake|fair|sem|fairsem PORT PROCS HOLD_MS SECONDS"
            " [rejoin|greedy [LIMIT]]");
    }
    const std::string strategy = argv[2];
    const bool sem = semaphore_strategy(strategy);
    if (strategy != "backoff" && strategy != "poll" && strategy != "wake" && strategy != "fair" &&
        !sem) {
        fail("unknown strategy " + strategy);
    }
    const std::string join = argc >= 8 ? argv[7] : "rejoin";
    if (join != "rejoin" && join != "greedy") fail("unknown rejoin mode " + join);
    const char* greedy_text = join == "greedy" ? "1" : "0";
    const auto port = static_cast<std::uint16_t>(parse_long(argv[3], "port"));
    const long procs = parse_long(argv[4], "process count");
    const long seconds = parse_long(argv[6], "seconds");
    const long limit = argc == 9 ? parse_long(argv[8], "limit") : 1;
    if (procs < 2 || seconds < 1) fail("handoff needs 2+ processes and 1+ seconds");
    if (limit < 1 || limit > resplock::Semaphore::max_limit || (!sem && limit != 1)) {
        fail("the limit is 1 for a lock, 1..65535 for the semaphore");
    }
    const std::string limit_text = std::to_string(limit);

    const timeval tv{2, 0};
    redisContext* admin = redisConnectWithTimeout(kHost, port, tv);
    if (admin == nullptr || admin->err != 0) fail("handoff: cannot connect");
    freeReplyObject(redisCommand(admin, handoff_cleanup().c_str()));
    freeReplyObject(redisCommand(admin, "CONFIG RESETSTAT"));

    const int fd = memfd_create("resplock_bench", 0);  // inherited by the workers
    if (fd < 0 || ftruncate(fd, sizeof(Shared)) != 0) fail("handoff: memfd failed");
    void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) fail("handoff: mmap failed");
    auto* shared = new (mem) Shared{};

    // Time for every worker to start and connect: 300 ms, or 15 ms a worker when there are more
    // than 20 (a semaphore's 32).
    const std::int64_t start = now_ns() + std::max<std::int64_t>(300000000, procs * 15000000);
    const std::int64_t end = start + seconds * 1000000000;
    const std::string start_text = std::to_string(start), end_text = std::to_string(end);
    const std::string fd_text = std::to_string(fd);
    std::vector<pid_t> pids;
    std::vector<FILE*> outputs;
    for (long i = 0; i < procs; ++i) {
        int p[2];
        if (pipe(p) != 0) fail("handoff: pipe failed");
        const pid_t pid = fork();
        if (pid < 0) fail("handoff: fork failed");
        if (pid == 0) {
            // Die with the harness, even if it is already gone.
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() == 1) _exit(1);
            dup2(p[1], STDOUT_FILENO);
            close(p[0]);
            close(p[1]);
            const char* args[] = {"resplock_bench",
                                  "worker",
                                  argv[2],
                                  argv[3],
                                  argv[4],
                                  argv[5],
                                  start_text.c_str(),
                                  end_text.c_str(),
                                  fd_text.c_str(),
                                  greedy_text,
                                  limit_text.c_str(),
                                  nullptr};
            execv("/proc/self/exe", const_cast<char* const*>(args));
            _exit(127);
        }
        close(p[1]);
        pids.push_back(pid);
        outputs.push_back(fdopen(p[0], "r"));
    }
    std::vector<Hold> holds;
    for (long i = 0; i < procs; ++i) {
        long long acquired = 0, released = 0;
        while (std::fscanf(outputs[i], "%lld %lld", &acquired, &released) == 2) {
            holds.push_back({acquired, released, static_cast<int>(i)});
        }
        std::fclose(outputs[i]);
    }
    bool workers_ok = true;
    for (const pid_t pid : pids) {
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            workers_ok = false;
        }
    }
    if (!workers_ok) fail("handoff: a worker failed");

    const bool scripted = strategy == "wake" || strategy == "fair" || sem;
    if (holds.size() != shared->acquisitions.load()) fail("handoff: lost records");
    return print_handoff_figures(holds, procs, seconds, limit, commandstats(admin), scripted,
                                 shared->max_holders.load());
}

// The hand-off figures of a run that another program made (the Node peers' driver), from its
// record file: `hold WORKER ACQUIRED_NS RELEASE_NS` lines (CLOCK_MONOTONIC, the same clock as
// ours), `live_max N` (the most holders its live count saw), and `figure NAME VALUE` lines
// passed through as `NAME VALUE`. The server's command counts are read from PORT; the caller
// reset them (CONFIG RESETSTAT) before the run began.
int records_mode(int argc, char** argv) {
    if (argc != 7) fail("usage: records PORT PROCS SECONDS SCRIPTED FILE");
    const auto port = static_cast<std::uint16_t>(parse_long(argv[2], "port"));
    const long procs = parse_long(argv[3], "process count");
    const long seconds = parse_long(argv[4], "seconds");
    const bool scripted = parse_long(argv[5], "scripted") != 0;
    if (procs < 1 || seconds < 1) fail("records needs 1+ workers and 1+ seconds");
    FILE* f = std::fopen(argv[6], "r");
    if (f == nullptr) fail(std::string("records: cannot read ") + argv[6]);
    std::vector<Hold> holds;
    std::vector<std::string> passed;
    int live_max = -1;
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
        int worker = 0, value = 0;
        long long acquired = 0, released = 0;
        char name[64], text[64];
        if (std::sscanf(line, "hold %d %lld %lld", &worker, &acquired, &released) == 3) {
            if (released < acquired) fail("records: a hold ends before it begins");
            holds.push_back({acquired, released, worker});
        } else if (std::sscanf(line, "live_max %d", &value) == 1) {
            live_max = value;
        } else if (std::sscanf(line, "figure %63s %63s", name, text) == 2) {
            passed.push_back(std::string(name) + " " + text);
        } else if (line[0] != '\n') {
            fail(std::string("records: unexpected line: ") + line);
        }
    }
    std::fclose(f);
    const timeval tv{2, 0};
    redisContext* admin = redisConnectWithTimeout(kHost, port, tv);
    if (admin == nullptr || admin->err != 0) fail("records: cannot connect");
    const int rc = print_handoff_figures(std::move(holds), procs, seconds, 1, commandstats(admin),
                                         scripted, live_max);
    for (const std::string& p : passed)
        std::printf("%s\n", p.c_str());
    return rc;
}

// PING round trips of a client that sleeps GAP_US before each one, COUNT of them: the median,
// the 99th percentile, the fewest and the most microseconds (through the delay proxy: the link's
// round trip).
int ping_rtt_mode(int argc, char** argv) {
    if (argc != 5) fail("usage: ping_rtt PORT COUNT GAP_US");
    const auto port = static_cast<std::uint16_t>(parse_long(argv[2], "port"));
    const long count = parse_long(argv[3], "count");
    const long gap_us = parse_long(argv[4], "gap");
    if (count == 0) fail("ping_rtt: count must be positive");
    RawClient client(port);
    const std::string ping = RawClient::encode({"PING"});
    std::vector<double> us;
    for (long i = 0; i < count; ++i) {
        sleep_ns(std::int64_t{gap_us} * 1000);
        const std::int64_t start = now_ns();
        if (!client.round_trip(ping, "+PONG\r\n")) fail("ping_rtt: PING failed");
        us.push_back(static_cast<double>(now_ns() - start) / 1000.0);
    }
    std::printf("pings %ld\n", count);
    std::printf("median_us %.1f\n", percentile(us, 0.5));
    std::printf("p99_us %.1f\n", percentile(us, 0.99));
    std::printf("min_us %.1f\n", *std::min_element(us.begin(), us.end()));
    std::printf("max_us %.1f\n", *std::max_element(us.begin(), us.end()));
    return 0;
}

// The monotonic clock's now, in ns: run.sh checks that Node's process.hrtime.bigint() reads the
// same clock (a reading of it lies between two of ours).
int now_mode() {
    std::printf("%" PRId64 "\n", now_ns());
    return 0;
}

constexpr const char* kUsage =
    "usage: resplock_bench MODE ARGS...\n"
    "  script-sha | script-text                              the library's owner script\n"
    "  cycle ours|hiredis|raw PORT CYCLES                    uncontended acquire + release\n"
    "  handoff backoff|poll|wake|fair|sem|fairsem PORT PROCS HOLD_MS SECONDS\n"
    "          [rejoin|greedy [LIMIT]]                       contended hand-off\n"
    "  idle_rtt PORT COUNT GAP_US                            PING, fair release after a sleep\n"
    "  ping_rtt PORT COUNT GAP_US                            PING after a sleep: median, p99\n"
    "  records PORT PROCS SECONDS SCRIPTED FILE              hand-off figures of a record file\n"
    "  now                                                   CLOCK_MONOTONIC, ns\n"
    "  (worker ...: started by handoff)";

// The round trip a hand-off pays, for a client that was asleep (a PING after GAP_US), and next
// to it, interleaved, the fair lock's release on the same idle server with nobody queued: from
// the start of the send of its request to the return of release(), the same stamp as the
// hand-off's. A hand-off carries that script round trip (the lock changes hands inside it).
int idle_rtt_mode(int argc, char** argv) {
    if (argc != 5) fail("usage: idle_rtt PORT COUNT GAP_US");
    const auto port = static_cast<std::uint16_t>(parse_long(argv[2], "port"));
    const long count = parse_long(argv[3], "count");
    const long gap_us = parse_long(argv[4], "gap");
    if (count == 0) fail("idle_rtt: count must be positive");
    RawClient client(port);
    FairClient fair(port, kIdleFairKey, true);
    if (fair.conn.connect(resplock::Deadline::after(fair.port, 2000)) != Status::ok) {
        fail("idle_rtt: cannot connect");
    }
    const std::string ping = RawClient::encode({"PING"});
    std::vector<double> us, release_us;
    for (long i = 0; i < count; ++i) {
        sleep_ns(std::int64_t{gap_us} * 1000);
        const std::int64_t start = now_ns();
        if (!client.round_trip(ping, "+PONG\r\n")) fail("idle_rtt: PING failed");
        us.push_back(static_cast<double>(now_ns() - start) / 1000.0);
        if (fair.lock.try_acquire(kHandoffTtlMs, 0) != Status::ok) fail("idle_rtt: fair acquire");
        sleep_ns(std::int64_t{gap_us} * 1000);
        bench::stamp_armed = true;
        if (fair.lock.release() != Status::ok) fail("idle_rtt: fair release failed");
        if (bench::stamp_armed) fail("idle_rtt: the release sent no request");
        release_us.push_back(static_cast<double>(now_ns() - bench::stamp_at_ns) / 1000.0);
    }
    std::sort(us.begin(), us.end());
    std::sort(release_us.begin(), release_us.end());
    std::printf("pings %ld\n", count);
    std::printf("median_us %.1f\n", us[us.size() / 2]);
    std::printf("fair_release_median_us %.1f\n", release_us[release_us.size() / 2]);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) fail(kUsage);
    const std::string mode = argv[1];
    if (mode == "script-sha" || mode == "script-text") {
        if (argc != 2) fail(kUsage);
        const std::string_view out = mode == "script-sha" ? owner_script.sha1 : owner_script.text;
        std::printf("%.*s\n", static_cast<int>(out.size()), out.data());
        return 0;
    }
    if (mode == "cycle") return cycle_mode(argc, argv);
    if (mode == "handoff") return handoff_mode(argc, argv);
    if (mode == "idle_rtt") return idle_rtt_mode(argc, argv);
    if (mode == "ping_rtt") return ping_rtt_mode(argc, argv);
    if (mode == "records") return records_mode(argc, argv);
    if (mode == "now" && argc == 2) return now_mode();
    if (mode == "worker") return worker_mode(argc, argv);
    fail("unknown mode " + mode + "\n" + kUsage);
}
