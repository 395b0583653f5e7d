// A workload of the fault-injection trial: N library clients in one process, each a thread with
// its own connection(s) and lock object, all contending for one key and kept alive by one
// resplock::Renewer (driven by a resplock::RenewerThread). Each client reports to the resource
// (resource_client.hpp) what the library told it, and writes to the resource only while the
// library says it holds the lock; the trial checks that history.
//
// Usage:
//   trial_client --resource PATH --name NAME --clients N --key KEY --ttl MS --wait MS
//                --work MS_MIN MS_MAX [--timeout MS] [--fence] [--fair] [--wake] [--replicas N]
//                [--limit N] [--clock-jump-ms J] [--slow-clock K] [--seed S] TOPOLOGY ARGS...
// The lock kind: the plain lock (resplock::Lock, with --fence, --wake, --replicas), the fair lock
// (--fair: resplock::FairLock, none of those), or with --limit N a semaphore of limit N
// (resplock::Semaphore, fair with --fair; --fence and --replicas apply to its leases).
// TOPOLOGY (servers on 127.0.0.1 only):
//   single PORT              one server
//   sentinel NAME PORT...    the master NAME that these sentinels name (resplock::Sentinel)
//   cluster PORT             a Redis Cluster through this seed node (resplock::Cluster)
//   quorum PORT...           independent servers (resplock::QuorumLock; not with --fence)
//
// Requests (one line each; every reply must be "ok", except W's "refused"):
//   A <session> <fence> <begin_us> <end_us> <ttl_ms> <client>  acquired
//   E <session> <begin_us> <end_us> <ttl_ms>                    renewed
//   W <session> <fence>                                         one protected write
//   L <session> <why>                                           told the lock is lost: stops
//   R <session> <status>                                        release() returned status
//   B <client>                                                  busy: not acquired within --wait
//   U <client> <status>                                         the acquisition failed otherwise
// <session> is the lock's token; times are CLOCK_BOOTTIME in microseconds (never the port
// clock that --clock-jump-ms and --slow-clock skew); <status> and <why> are resplock::Status
// names (e.g. not_owner), and <why> is "lapsed" when remaining_ms() read 0 before the Renewer
// reported the loss ("watch_<status>" if the Renewer refused to watch it). A's begin_us is read
// before try_acquire: with a wait, the attempt that succeeded went out somewhere between begin_us
// and end_us, so the validity it gives ends between begin_us + ttl and end_us + ttl.
//
// Each client loops until SIGTERM (or SIGINT): acquire (try_acquire with --wait); then work for
// a time uniform in [MS_MIN, MS_MAX]: repeat { check the loss report and remaining_ms(), pause
// 0-10 ms (the window between an application's check and its act, which makes a stale write
// possible: what fencing is for), W, pause 5-20 ms }; then release and idle 0-30 ms. SIGTERM ends
// the work before its next write; the process releases what it holds and exits 0, within about
// --wait (an acquisition in progress is not cut short) plus twice --timeout.
// A client holds the renewal thread's mutex only to watch, check and unwatch its lock: once
// unwatched, the renewal thread no longer touches the lock or its connections, so acquisitions
// and releases run outside it, and one stuck on a dead server does not hold up the renewals of
// the others.
//
// --clock-jump-ms J: the port clock of the locks and of the renewal thread is the POSIX port's
// plus an offset, and each SIGUSR1 adds J ms to it (a forward jump seen by this process only,
// like a suspend the clock counts): validity must then shrink, never grow.
// --slow-clock K: DELIBERATELY BROKEN, see Clock::slow_factor below.
// --seed S: the clients' random choices (thread i: S and i); default from the pid and the time,
// printed on stderr.
//
// At most RESPLOCK_MAX_RENEWED clients (the Renewer's capacity). The resource socket is shared by
// every thread (ResourceClient serialises the exchanges).
// Exit: 0 after SIGTERM; 2 usage (one line on stderr); 3 the resource was lost or answered
// something unexpected; 1 the system refused a thread.
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "resource_client.hpp"
#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/status.hpp"
#include "resplock/ha/cluster.hpp"
#include "resplock/ha/sentinel.hpp"
#include "resplock/ports/posix.h"
#include "resplock/posix/renewer_thread.hpp"
#include "resplock/variants/fair_lock.hpp"
#include "resplock/variants/quorum_lock.hpp"
#include "resplock/variants/renewer.hpp"
#include "resplock/variants/semaphore.hpp"

namespace {

using resplock::Status;

constexpr int exit_failure = 1;  // the system refused a thread or a signal mask
constexpr int exit_usage = 2;
constexpr int exit_resource = 3;

// ---------------------------------------------------------------------------------------------
// The port port_clock.

// A port's now_ms receives only the POSIX port's context, so the skew is global state.
struct Clock {
    std::uint32_t (*posix_now)(void*) = nullptr;  // the POSIX port's own (CLOCK_BOOTTIME, ms)
    // Added to every reading; SIGUSR1 adds --clock-jump-ms. Lock-free, so that a signal handler
    // could update it as well as the thread that takes the signals does.
    std::atomic<std::uint32_t> offset_ms{0};
    // DELIBERATELY BROKEN, for the trial's self-test only (--slow-clock K): the port clock runs
    // K times slower than real time, so the library believes each lock stays valid K times
    // longer than it does, renews too late and keeps writing after the key expired on the
    // server. Another client then takes the key while this one still writes: the trial's
    // checker must report those overlapping sessions. 1: the true port_clock. Set before any thread
    // starts.
    std::uint32_t slow_factor = 1;
    std::uint32_t slow_origin_ms = 0;  // the POSIX clock when the slow clock started
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "the offset must be lock-free");
Clock port_clock;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): see Clock

std::uint32_t trial_now_ms(void* ctx) {
    std::uint32_t now = port_clock.posix_now(ctx);
    if (port_clock.slow_factor > 1)
        now =
            port_clock.slow_origin_ms + (now - port_clock.slow_origin_ms) / port_clock.slow_factor;
    return now + port_clock.offset_ms.load(std::memory_order_relaxed);
}

// The POSIX port over ctx, with the trial's port_clock.
resplock_port_t make_port(resplock_posix_t& ctx) {
    resplock_port_t port{};
    if (resplock_posix_port_init(&ctx, nullptr, &port) != RESPLOCK_STATUS_ok) std::abort();
    port_clock.posix_now = port.now_ms;  // the same function for every context
    port.now_ms = trial_now_ms;
    return port;
}

// ---------------------------------------------------------------------------------------------
// Options.

enum class Topology : std::uint8_t { single, sentinel, cluster, quorum };

struct Options {
    const char* resource = nullptr;
    const char* name = nullptr;
    std::uint32_t clients = 0;
    const char* key = nullptr;
    std::uint32_t ttl_ms = 0;
    std::uint32_t wait_ms = 0;
    bool has_wait = false;
    std::uint32_t work_min_ms = 0;
    std::uint32_t work_max_ms = 0;
    bool has_work = false;
    std::uint32_t timeout_ms = 500;
    bool fence = false;
    bool fair = false;
    bool wake = false;
    std::uint32_t replicas = 0;
    std::uint32_t limit = 0;  // 0: a lock; N: a semaphore of limit N
    std::uint32_t jump_ms = 0;
    std::uint32_t slow = 1;
    std::uint64_t seed = 0;
    bool has_seed = false;
    Topology topology = Topology::single;
    const char* master_name = nullptr;
    std::vector<std::uint16_t> ports;
};

[[noreturn]] void usage(const char* why, const char* what = "") {
    (void)std::fprintf(stderr, "trial_client: %s%s\n", why, what);
    std::exit(exit_usage);
}

std::uint32_t number(const char* option, const char* s, std::uint32_t lo, std::uint32_t hi) {
    std::uint64_t v = 0;
    if (!trial::parse_u64(s, v) || v < lo || v > hi) {
        (void)std::fprintf(stderr,
                           "trial_client: %s: expected a whole number in %u..%u, got '%s'\n",
                           option, lo, hi, s == nullptr ? "" : s);
        std::exit(exit_usage);
    }
    return static_cast<std::uint32_t>(v);
}

std::uint16_t port_number(const char* s) {
    return static_cast<std::uint16_t>(number("PORT", s, 1, 65535));
}

bool is_word(const char* s) {
    return s != nullptr && *s != '\0' && std::strpbrk(s, " \t\r\n") == nullptr;
}

void parse_topology(Options& o, int argc, char** argv, int i) {
    if (i >= argc) usage("missing TOPOLOGY (single, sentinel, cluster or quorum)");
    const std::string_view kind = argv[i++];
    if (kind == "sentinel") {
        if (i >= argc) usage("sentinel: missing the master name");
        o.topology = Topology::sentinel;
        o.master_name = argv[i++];
    } else if (kind == "single") {
        o.topology = Topology::single;
    } else if (kind == "cluster") {
        o.topology = Topology::cluster;
    } else if (kind == "quorum") {
        o.topology = Topology::quorum;
    } else {
        usage("unknown TOPOLOGY: ", argv[i - 1]);
    }
    for (; i < argc; ++i)
        o.ports.push_back(port_number(argv[i]));
    const std::size_t n = o.ports.size();
    if (n == 0) usage("TOPOLOGY: missing PORT");
    if ((o.topology == Topology::single || o.topology == Topology::cluster) && n != 1)
        usage("single and cluster take one PORT");
    if (o.topology == Topology::sentinel && n > RESPLOCK_MAX_SENTINELS)
        usage("sentinel: too many sentinels for RESPLOCK_MAX_SENTINELS");
    if (o.topology == Topology::quorum && n > RESPLOCK_MAX_SERVERS)
        usage("quorum: too many servers for RESPLOCK_MAX_SERVERS");
}

void check_combinations(const Options& o) {
    if (o.resource == nullptr) usage("missing --resource PATH");
    if (o.name == nullptr) usage("missing --name NAME");
    if (o.clients == 0) usage("missing --clients N");
    if (o.key == nullptr) usage("missing --key KEY");
    if (o.ttl_ms == 0) usage("missing --ttl MS");
    if (!o.has_wait) usage("missing --wait MS");
    if (!o.has_work) usage("missing --work MS_MIN MS_MAX");
    if (o.work_min_ms > o.work_max_ms) usage("--work: MS_MIN exceeds MS_MAX");
    if (o.topology == Topology::quorum) {
        if (o.fence) usage("quorum gives no fencing numbers: not with --fence");
        if (o.fair || o.wake || o.replicas != 0 || o.limit != 0)
            usage("quorum takes neither --fair, --wake, --replicas nor --limit");
    }
    if (o.limit != 0 && o.wake) usage("--limit does not take --wake (a release wakes a waiter)");
    if (o.limit == 0 && o.fair && (o.fence || o.wake || o.replicas != 0))
        usage("--fair takes neither --fence, --wake nor --replicas (except with --limit)");
}

Options parse(int argc, char** argv) {
    Options o;
    int i = 1;
    for (; i < argc && std::strncmp(argv[i], "--", 2) == 0; ++i) {
        const std::string_view opt = argv[i];
        // The option's value (the next argument), or a usage error.
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) usage("missing the value of ", argv[i]);
            return argv[++i];
        };
        if (opt == "--resource") {
            o.resource = value();
        } else if (opt == "--name") {
            o.name = value();
            if (!is_word(o.name)) usage("--name: expected a word without spaces");
        } else if (opt == "--clients") {
            o.clients = number("--clients", value(), 1, RESPLOCK_MAX_RENEWED);
        } else if (opt == "--key") {
            o.key = value();
            if (*o.key == '\0' || std::strlen(o.key) > RESPLOCK_MAX_KEY_LEN)
                usage("--key: expected 1..RESPLOCK_MAX_KEY_LEN bytes");
        } else if (opt == "--ttl") {
            o.ttl_ms = number("--ttl", value(), 20, resplock::max_ttl_ms);
        } else if (opt == "--wait") {
            o.wait_ms = number("--wait", value(), 0, resplock::max_ttl_ms);
            o.has_wait = true;
        } else if (opt == "--work") {
            o.work_min_ms = number("--work", value(), 0, 86400000);
            o.work_max_ms = number("--work", value(), 0, 86400000);
            o.has_work = true;
        } else if (opt == "--timeout") {
            o.timeout_ms = number("--timeout", value(), 1, resplock::max_span_ms);
        } else if (opt == "--fence") {
            o.fence = true;
        } else if (opt == "--fair") {
            o.fair = true;
        } else if (opt == "--wake") {
            o.wake = true;
        } else if (opt == "--replicas") {
            o.replicas = number("--replicas", value(), 1, resplock::Lock::max_replicas);
        } else if (opt == "--limit") {
            o.limit = number("--limit", value(), 1, resplock::Semaphore::max_limit);
        } else if (opt == "--clock-jump-ms") {
            o.jump_ms = number("--clock-jump-ms", value(), 1, 86400000);
        } else if (opt == "--slow-clock") {
            o.slow = number("--slow-clock", value(), 2, 1000);
        } else if (opt == "--seed") {
            if (!trial::parse_u64(value(), o.seed)) usage("--seed: expected a whole number");
            o.has_seed = true;
        } else {
            usage("unknown option ", argv[i]);
        }
    }
    parse_topology(o, argc, argv, i);
    check_combinations(o);
    return o;
}

// ---------------------------------------------------------------------------------------------
// Reports to the resource.

// The identifier of a status (e.g. "not_owner"): one word, unlike resplock::to_string's text.
const char* status_name(Status s) {
#define TRIAL_STATUS_NAME(name, text) #name,
    static const char* const names[] = {RESPLOCK_STATUS_LIST(TRIAL_STATUS_NAME)};
#undef TRIAL_STATUS_NAME
    const auto i = static_cast<std::size_t>(s);
    return i < sizeof names / sizeof names[0] ? names[i] : "unknown_status";
}

// One request line, its words joined by single spaces.
class Line {
  public:
    Line& operator<<(std::string_view word) {
        if (!text_.empty()) text_ += ' ';
        text_ += word;
        return *this;
    }
    Line& operator<<(const char* word) { return *this << std::string_view(word); }
    template <class T, class = std::enable_if_t<std::is_integral<T>::value>>
    Line& operator<<(T n) {
        return *this << std::string_view(std::to_string(n));
    }
    const std::string& text() const { return text_; }

  private:
    std::string text_;
};

[[noreturn]] void resource_lost(const char* why, const std::string& what) {
    (void)std::fprintf(stderr, "trial_client: resource %s: %s\n", why, what.c_str());
    _exit(exit_resource);  // other threads may be in the middle of library calls
}

// Sends `line`; anything but "ok" (or, when refusable, "refused") ends the process with 3.
// Returns false for "refused".
bool tell(trial::ResourceClient& resource, const Line& line, bool refusable = false) {
    std::string reply;
    if (!resource.request(line.text(), reply)) resource_lost("lost", line.text());
    if (reply == "ok") return true;
    if (refusable && reply == "refused") return false;
    resource_lost("answered", line.text() + " -> " + reply);
}

// ---------------------------------------------------------------------------------------------
// Connections and locks.

// One connection to a server (or through a router), over a port context of its own.
struct Link {
    resplock_posix_t ctx{};
    resplock_port_t port = make_port(ctx);
    resplock::Sentinel sentinel;
    resplock::Cluster cluster;
    resplock::ConnectionConfig config;
    std::vector<char> buf;
    std::unique_ptr<resplock::Connection> conn;

    Link(const Options& o, std::uint16_t server_port) : buf(buffer_size()) {
        config.host = "127.0.0.1";
        config.port = server_port;
        config.timeout_ms = o.timeout_ms;
        if (o.topology == Topology::sentinel) {
            (void)sentinel.set_master_name(o.master_name);
            for (const std::uint16_t p : o.ports)
                (void)sentinel.add("127.0.0.1", p);
            config.router = &sentinel;
        } else if (o.topology == Topology::cluster) {
            config.router = &cluster;
        }
        conn = std::make_unique<resplock::Connection>(port, config, buf.data(), buf.size());
    }
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;
    ~Link() = default;

    static std::size_t buffer_size() {
        // 4096: room for a Sentinel's ROLE replies too.
        return std::max({std::size_t{4096}, resplock::lock_buffer_min(),
                         resplock::lock_options_buffer_min(), resplock::fair_buffer_min(),
                         resplock::semaphore_buffer_min()});
    }
};

// The lock kinds behind one interface.
class Held {
  public:
    Held() = default;
    virtual ~Held() = default;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

    // try_acquire with the options; `fence` receives the fencing number (0 without --fence).
    virtual Status acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                           std::uint64_t& fence) noexcept = 0;
    virtual Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept = 0;
    virtual Status release() noexcept = 0;
    virtual std::uint32_t remaining_ms() const noexcept = 0;
    virtual std::string_view token() const noexcept = 0;
    virtual std::string_view key() const noexcept = 0;
};

class PlainHeld final : public Held {
  public:
    PlainHeld(resplock::Connection& conn, const Options& o) : lock_(conn, o.key) {
        options_.fence = o.fence;
        options_.wake = o.wake;
        if (o.replicas != 0 && lock_.set_replicas(o.replicas) != Status::ok) std::abort();
    }
    Status acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                   std::uint64_t& fence) noexcept override {
        fence = 0;
        if (!options_.fence && !options_.wake) return lock_.try_acquire(ttl_ms, wait_ms);
        return lock_.try_acquire(ttl_ms, wait_ms, options_, &fence);
    }
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept override {
        return lock_.extend(ttl_ms, wait_ms);
    }
    // With --wake the release also wakes one waiter.
    Status release() noexcept override {
        return options_.wake ? lock_.release(options_) : lock_.release();
    }
    std::uint32_t remaining_ms() const noexcept override { return lock_.remaining_ms(); }
    std::string_view token() const noexcept override { return lock_.token(); }
    std::string_view key() const noexcept override { return lock_.key(); }

  private:
    resplock::Lock lock_;
    resplock::AcquireOptions options_;
};

// The fair and the quorum lock: no options, the lock's own calls.
template <class L>
class SimpleHeld final : public Held {
  public:
    template <class... Args>
    explicit SimpleHeld(Args&&... args) : lock_(std::forward<Args>(args)...) {}
    Status acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                   std::uint64_t& fence) noexcept override {
        fence = 0;
        return lock_.try_acquire(ttl_ms, wait_ms);
    }
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept override {
        return lock_.extend(ttl_ms, wait_ms);
    }
    Status release() noexcept override { return lock_.release(); }
    std::uint32_t remaining_ms() const noexcept override { return lock_.remaining_ms(); }
    std::string_view token() const noexcept override { return lock_.token(); }
    std::string_view key() const noexcept override { return lock_.key(); }

  private:
    L lock_;
};

// The semaphore, plain or fair: a lease per holder, with its fencing number under --fence.
class SemaphoreHeld final : public Held {
  public:
    SemaphoreHeld(resplock::Connection& conn, const Options& o)
        : semaphore_(conn, o.key, o.limit, o.fair), fence_(o.fence) {
        if (o.replicas != 0 && semaphore_.set_replicas(o.replicas) != Status::ok) std::abort();
    }
    Status acquire(std::uint32_t ttl_ms, std::uint32_t wait_ms,
                   std::uint64_t& fence) noexcept override {
        fence = 0;
        return semaphore_.try_acquire(ttl_ms, wait_ms, fence_ ? &fence : nullptr);
    }
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept override {
        return semaphore_.extend(ttl_ms, wait_ms);
    }
    Status release() noexcept override { return semaphore_.release(); }
    std::uint32_t remaining_ms() const noexcept override { return semaphore_.remaining_ms(); }
    std::string_view token() const noexcept override { return semaphore_.token(); }
    std::string_view key() const noexcept override { return semaphore_.key(); }

  private:
    resplock::Semaphore semaphore_;
    bool fence_;
};

// ---------------------------------------------------------------------------------------------
// The clients.

struct Worker;

// What the Renewer watches: the client's lock, with an extend() that reports each renewal that
// succeeded (E) before the renewal thread lets go of the mutex, so that the resource knows of it
// before any write that relies on it.
struct Watched {
    Worker* worker;
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept;
    std::uint32_t remaining_ms() const noexcept;
    std::string_view token() const noexcept;
    std::string_view key() const noexcept;
};

// What every client thread shares; lives in main() until they are joined.
struct Shared {
    const Options& options;
    trial::ResourceClient& resource;
    resplock::Renewer& renewer;
    resplock::RenewerThread& renewals;
    std::uint32_t loss_margin_ms;
    std::atomic<bool> stop{false};
};

struct Worker {
    Worker(Shared& s, std::uint32_t i, std::seed_seq& seed)
        : shared(s), name(std::string(s.options.name) + "." + std::to_string(i)), rng(seed) {}

    Shared& shared;
    std::string name;  // NAME.i
    std::mt19937_64 rng;
    std::vector<std::unique_ptr<Link>> links;
    std::unique_ptr<Held> held;
    Watched watched{this};
    // The loss the Renewer reported (a Status), or -1; written on the renewal thread.
    std::atomic<int> lost{-1};
    std::thread thread;

    std::uint32_t uniform(std::uint32_t lo, std::uint32_t hi) {
        return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
    }
};

Status Watched::extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
    const std::int64_t begin = trial::boot_us();
    const Status s = worker->held->extend(ttl_ms, wait_ms);
    const std::int64_t end = trial::boot_us();
    if (s == Status::ok)
        tell(worker->shared.resource,
             Line() << "E" << worker->held->token() << begin << end << ttl_ms);
    return s;
}
std::uint32_t Watched::remaining_ms() const noexcept {
    return worker->held->remaining_ms();
}
std::string_view Watched::token() const noexcept {
    return worker->held->token();
}
std::string_view Watched::key() const noexcept {
    return worker->held->key();
}

// On the renewal thread, with its mutex held: only notes the loss for the client's next check.
void on_lost(void* user, void* /*lock*/, Status why) {
    static_cast<Worker*>(user)->lost.store(static_cast<int>(why));
}

void sleep_ms(std::uint32_t ms) {
    const timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    (void)nanosleep(&ts, nullptr);
}

// Works under a lock just acquired (reported with A already), then releases it.
void work(Worker& w, const std::string& session, std::uint64_t fence) {
    Shared& sh = w.shared;
    const Options& o = sh.options;
    Status watch = Status::ok;
    {
        const std::lock_guard<resplock::RenewerThread> guard(sh.renewals);
        w.lost.store(-1);
        watch = sh.renewer.watch(w.watched, o.ttl_ms, &on_lost, &w, sh.loss_margin_ms);
    }
    const std::int64_t work_end =
        trial::boot_us() +
        static_cast<std::int64_t>(w.uniform(o.work_min_ms, o.work_max_ms)) * 1000;
    if (watch != Status::ok) {
        // Not held any more (the validity ran out before it could be watched).
        tell(sh.resource, Line() << "L" << session << (std::string("watch_") + status_name(watch)));
    } else {
        for (;;) {
            if (sh.stop.load() || trial::boot_us() >= work_end) break;
            int why = -1;
            std::uint32_t left = 0;
            {
                const std::lock_guard<resplock::RenewerThread> guard(sh.renewals);
                why = w.lost.load();
                left = w.held->remaining_ms();
            }
            if (why >= 0 || left == 0) {
                tell(sh.resource,
                     Line() << "L" << session
                            << (why >= 0 ? status_name(static_cast<Status>(why)) : "lapsed"));
                break;
            }
            sleep_ms(w.uniform(0, 10));  // check, then act: keep this window
            if (sh.stop.load()) break;
            if (!tell(sh.resource, Line() << "W" << session << fence, true))
                break;  // refused: stop now
            sleep_ms(w.uniform(5, 20));
        }
    }
    {
        const std::lock_guard<resplock::RenewerThread> guard(sh.renewals);
        sh.renewer.unwatch(&w.watched);
    }
    // No longer watched: the renewal thread no longer touches this lock or its connections, so
    // the release runs outside the mutex and a release stuck on a dead server (up to --timeout)
    // does not hold up the other clients' renewals.
    const Status released = w.held->release();
    tell(sh.resource, Line() << "R" << session << status_name(released));
}

void run(Worker& w) {
    Shared& sh = w.shared;
    const Options& o = sh.options;
    while (!sh.stop.load()) {
        std::uint64_t fence = 0;
        const std::int64_t begin = trial::boot_us();
        const Status s = w.held->acquire(o.ttl_ms, o.wait_ms, fence);
        const std::int64_t end = trial::boot_us();
        if (s == Status::ok) {
            const std::string session(w.held->token());
            tell(sh.resource, Line()
                                  << "A" << session << fence << begin << end << o.ttl_ms << w.name);
            work(w, session, fence);
            sleep_ms(w.uniform(0, 30));
        } else if (s == Status::busy) {
            tell(sh.resource, Line() << "B" << w.name);
            sleep_ms(w.uniform(0, 30));
        } else {
            tell(sh.resource, Line() << "U" << w.name << status_name(s));
            // The server may have set the key (a lost reply): remove it if it carries our token.
            // The session was never announced, so nothing relied on it.
            if (!w.held->token().empty()) (void)w.held->release();
            sleep_ms(w.uniform(20, 50));  // do not hammer a dead server
        }
    }
}

std::unique_ptr<Worker> make_worker(Shared& shared, std::uint32_t i, std::uint64_t seed) {
    const Options& o = shared.options;
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), i};
    auto w = std::make_unique<Worker>(shared, i, seq);
    if (o.topology == Topology::quorum) {
        resplock::Connection* conns[RESPLOCK_MAX_SERVERS] = {};
        for (std::size_t k = 0; k < o.ports.size(); ++k) {
            w->links.push_back(std::make_unique<Link>(o, o.ports[k]));
            conns[k] = w->links.back()->conn.get();
        }
        w->held = std::make_unique<SimpleHeld<resplock::QuorumLock>>(conns, o.ports.size(), o.key);
    } else {
        // Through a Sentinel the router finds the node; config.port is not used.
        w->links.push_back(std::make_unique<Link>(o, o.ports[0]));
        resplock::Connection& conn = *w->links.back()->conn;
        if (o.limit != 0) {
            w->held = std::make_unique<SemaphoreHeld>(conn, o);
        } else if (o.fair) {
            w->held = std::make_unique<SimpleHeld<resplock::FairLock>>(conn, o.key);
        } else {
            w->held = std::make_unique<PlainHeld>(conn, o);
        }
    }
    return w;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);

    // Signals are taken by the main thread (sigwait); every thread started below inherits
    // the mask (the renewal thread blocks every signal anyway).
    sigset_t signals;
    (void)sigemptyset(&signals);
    (void)sigaddset(&signals, SIGTERM);
    (void)sigaddset(&signals, SIGINT);
    (void)sigaddset(&signals, SIGUSR1);
    if (pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) return exit_failure;

    resplock_posix_t clock_ctx{};
    const resplock_port_t clock_port = make_port(clock_ctx);
    if (o.slow > 1) {
        port_clock.slow_origin_ms = port_clock.posix_now(&clock_ctx);
        port_clock.slow_factor = o.slow;
    }

    trial::ResourceClient resource;
    if (!resource.connect(o.resource)) {
        (void)std::fprintf(stderr, "trial_client: cannot reach the resource at %s: %s\n",
                           o.resource, std::strerror(errno));
        return exit_resource;
    }

    const std::uint64_t seed = o.has_seed ? o.seed
                                          : (static_cast<std::uint64_t>(getpid()) << 32) ^
                                                static_cast<std::uint64_t>(trial::boot_us());
    (void)std::fprintf(stderr, "trial_client %s: seed %llu\n", o.name,
                       static_cast<unsigned long long>(seed));

    resplock::Renewer renewer;
    resplock::RenewerThread renewals(renewer, clock_port);
    // The time a client needs to stop once told: its check-then-act window (0-10 ms) and a
    // write's round trip, with room for scheduling; a quarter of small TTLs.
    const std::uint32_t margin = o.ttl_ms / 4 < 50 ? o.ttl_ms / 4 : 50;
    Shared shared{o, resource, renewer, renewals, margin};
    std::vector<std::unique_ptr<Worker>> workers;
    for (std::uint32_t i = 0; i < o.clients; ++i)
        workers.push_back(make_worker(shared, i, seed));

    if (renewals.start() != Status::ok) {
        (void)std::fprintf(stderr, "trial_client: cannot start the renewal thread\n");
        return exit_failure;
    }
    for (auto& w : workers) {
        Worker* const p = w.get();
        w->thread = std::thread([p] { run(*p); });
    }

    for (;;) {
        int sig = 0;
        if (sigwait(&signals, &sig) != 0) continue;
        if (sig == SIGUSR1) {
            if (o.jump_ms != 0) port_clock.offset_ms.fetch_add(o.jump_ms);
            continue;
        }
        break;  // SIGTERM or SIGINT
    }
    shared.stop.store(true);
    for (const auto& w : workers)
        w->thread.join();
    renewals.stop();
    return 0;
}
