// The benchmark's scale mode (bench/run.sh --scale, and a short run in --quick): many devices,
// one connection each, contend for a few keys of one server or of a Redis Cluster. Modes:
//   run fair|lock|sem|fairsem single|cluster PORTS DEVICES KEYS HOLD_MS SECONDS [LIMIT]
//       DEVICES threads (64 KiB stacks), each with its own POSIX-port connection and lock object
//       (FairLock; the plain Lock with try_acquire's default retry; the Semaphore with LIMIT
//       places, default 10, in its plain mode, or in its fair mode: fairsem). Device d uses key d %
//       KEYS ("scale:k:<n>"): it acquires (waiting up to the end of the run), holds HOLD_MS,
//       releases and tries again at once, for SECONDS. PORTS: one port (single) or the cluster's
//       masters, comma-separated; in a cluster each device starts at master d % masters with a
//       Cluster router and follows its key's redirection. Before the devices start, one client runs
//       uncontended acquire + release cycles of the same kind on a key of its own: the server CPU
//       per cycle it costs.
//   snapshot PORTS FILE
//       INFO (all sections) of each port into FILE.PORT (the Node driver calls it at the start
//       and at the end of its run).
//   records single|cluster PORTS DEVICES KEYS SECONDS LIMIT COMMANDS FILE
//       the same figures for holds that the Node driver recorded (bench/peers/scale.js): FILE
//       has `hold DEVICE ACQUIRED_NS RELEASE_NS` lines (device d used key d % KEYS) and
//       `figure NAME VALUE` lines passed through; FILE.before.PORT and FILE.after.PORT are its
//       snapshots. COMMANDS: the commands that the peer sends as requests (comma-separated).
//       With FILE.empty.PORT (the servers before the driver connected) it gives the connections
//       and server memory per device as well.
// Figures (`name value` lines on stdout), from the same code for every client:
//   acquisitions, acq_per_s; exclusion_overlaps (per key, acquisitions that returned while LIMIT
//   earlier holds of that key had not sent their release: bench/hold_figures.hpp, as the
//   hand-off part), max_holders; handoff_p50_ms / handoff_p99_ms (a release's send to the next
//   grant on its key, over every key); spread_worst_pct (per key, (most - fewest) / fewest of
//   its devices' acquisitions, the worst key) and spread_met_keys (keys where most - fewest <= 1
//   + 10 % of fewest, the hand-off part's rule); requests_per_acq (the calls of COMMANDS counted
//   by INFO commandstats over the run, summed over the servers, / acquisitions),
//   acquire_requests_per_acq (the same less the one release of each acquisition),
//   all_calls_per_acq (every commandstats call but INFO's: the commands that scripts call
//   included); server_cpu_us_per_acq (INFO used_cpu_sys + used_cpu_user deltas, summed over the
//   servers, / acquisitions) and the part of it outside the requests' own time
//   (server_us_outside_requests_per_acq); split.NAME.*: every command's calls, own time per call
//   and own time per acquisition (INFO commandstats; a script's time contains that of the
//   commands it calls, which have lines of their own); and for `run`: the uncontended cycle's
//   server CPU and its split by command (unc.NAME.*), the client's
//   CPU, context switches and RSS per device, the library objects' sizes, and the server's
//   memory and connections per device.
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "basics.hpp"
#include "hold_figures.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ha/cluster.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/fair_lock.hpp"
#include "resplock/variants/semaphore.hpp"
#include "send_stamp.hpp"

namespace {

using bench::fail;
using bench::Hold;
using bench::now_ns;
using bench::parse_long;
using bench::sleep_ns;
using resplock::Status;

constexpr const char* kHost = "127.0.0.1";
constexpr std::uint32_t kTtlMs = 10000;  // far beyond any hold: no lock ever expires
constexpr std::size_t kStackBytes = 64 * 1024;
constexpr long kBaselineCycles = 5000;

std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep)) {
        if (!part.empty()) out.push_back(part);
    }
    return out;
}

std::vector<std::uint16_t> parse_ports(const char* text) {
    std::vector<std::uint16_t> ports;
    for (const std::string& p : split(text, ',')) {
        const long v = parse_long(p.c_str(), "port");
        if (v < 1 || v > 65535) fail("bad port " + p);
        ports.push_back(static_cast<std::uint16_t>(v));
    }
    if (ports.empty()) fail("no port");
    return ports;
}

// ---- the servers' INFO ----

std::string info_of(std::uint16_t port) {
    const timeval tv{5, 0};
    redisContext* c = redisConnectWithTimeout(kHost, port, tv);
    if (c == nullptr || c->err != 0) fail("cannot connect to port " + std::to_string(port));
    auto* r = static_cast<redisReply*>(redisCommand(c, "INFO all"));
    if (r == nullptr || r->type != REDIS_REPLY_STRING) fail("INFO failed");
    std::string text(r->str, r->len);
    freeReplyObject(r);
    redisFree(c);
    return text;
}

void command_on_each(const std::vector<std::uint16_t>& ports, const char* command) {
    for (const std::uint16_t port : ports) {
        const timeval tv{5, 0};
        redisContext* c = redisConnectWithTimeout(kHost, port, tv);
        if (c == nullptr || c->err != 0) fail("cannot connect to port " + std::to_string(port));
        freeReplyObject(redisCommand(c, command));
        redisFree(c);
    }
}

// A numeric field ("name:value" line) of INFO text, 0 when absent.
double info_field(const std::string& info, const char* name) {
    const std::string tag = std::string("\n") + name + ":";
    const std::size_t at = info.find(tag);
    return at == std::string::npos ? 0.0 : std::atof(info.c_str() + at + tag.size());
}

// What the figures need from one snapshot of every server, summed over them.
struct Snapshot {
    std::vector<std::string> infos;

    static Snapshot take(const std::vector<std::uint16_t>& ports) {
        Snapshot s;
        for (const std::uint16_t p : ports)
            s.infos.push_back(info_of(p));
        return s;
    }
    double sum(double (*one)(const std::string&)) const {
        double total = 0;
        for (const std::string& i : infos)
            total += one(i);
        return total;
    }
    double cpu_s() const {
        return sum([](const std::string& i) {
            return info_field(i, "used_cpu_sys") + info_field(i, "used_cpu_user");
        });
    }
    double memory() const {
        return sum([](const std::string& i) { return info_field(i, "used_memory"); });
    }
    double clients() const {
        return sum([](const std::string& i) { return info_field(i, "connected_clients"); });
    }
    long calls(const std::vector<std::string>& commands) const {
        long total = 0;
        for (const std::string& i : infos) {
            for (const std::string& c : commands)
                total += bench::command_calls(i, c.c_str());
        }
        return total;
    }
    // The server's own time (INFO commandstats usec) of one command, summed over the servers.
    long usec(const std::string& command) const {
        long total = 0;
        for (const std::string& i : infos)
            total += bench::command_stat(i, command.c_str(), "usec");
        return total;
    }
    // Every command's calls and own time (usec) but INFO's (the snapshots' own), summed over the
    // servers. A script's usec includes the commands it calls, which count on their own lines too.
    std::map<std::string, std::pair<long, long>> stats() const {
        std::map<std::string, std::pair<long, long>> out;
        for (const std::string& i : infos) {
            std::size_t at = 0;
            while ((at = i.find("cmdstat_", at)) != std::string::npos) {
                const std::size_t colon = i.find(':', at);
                if (colon == std::string::npos) break;
                const std::string name = i.substr(at + 8, colon - at - 8);
                if (name != "info") {
                    out[name].first += bench::command_stat(i, name.c_str(), "calls");
                    out[name].second += bench::command_stat(i, name.c_str(), "usec");
                }
                at = colon;
            }
        }
        return out;
    }
    // Every command's calls but INFO's (the snapshots' own).
    long all_calls() const {
        long total = 0;
        for (const std::string& i : infos) {
            std::size_t at = 0;
            while ((at = i.find("cmdstat_", at)) != std::string::npos) {
                const std::size_t colon = i.find(':', at);
                const std::size_t calls = i.find("calls=", colon);
                if (colon == std::string::npos || calls == std::string::npos) break;
                const std::string name = i.substr(at + 8, colon - at - 8);
                if (name != "info") total += std::atol(i.c_str() + calls + 6);
                at = colon;
            }
        }
        return total;
    }
};

// ---- the figures, shared by `run` and `records` ----

using CommandStats = std::map<std::string, std::pair<long, long>>;  // name: calls, usec

CommandStats stats_between(const Snapshot& before, const Snapshot& after) {
    CommandStats d = after.stats();
    for (const auto& [name, b] : before.stats()) {
        d[name].first -= b.first;
        d[name].second -= b.second;
    }
    return d;
}

// Each command's calls, own time per call and own time per unit (an acquisition or a cycle):
// PREFIX.NAME.calls_per_UNIT, .us_per_call, .us_per_UNIT, for every command that ran.
void print_split(const char* prefix, const char* unit, const CommandStats& d, double n) {
    for (const auto& [name, cu] : d) {
        if (cu.first <= 0) continue;
        std::printf("%s.%s.calls_per_%s %.3f\n", prefix, name.c_str(), unit,
                    static_cast<double>(cu.first) / n);
        std::printf("%s.%s.us_per_call %.2f\n", prefix, name.c_str(),
                    static_cast<double>(cu.second) / static_cast<double>(cu.first));
        std::printf("%s.%s.us_per_%s %.2f\n", prefix, name.c_str(), unit,
                    static_cast<double>(cu.second) / n);
    }
}

// Holds of all devices; device d used key d % keys.
void print_figures(const std::vector<Hold>& holds, long devices, long keys, long seconds,
                   long limit, const Snapshot& before, const Snapshot& after,
                   const std::vector<std::string>& request_commands) {
    if (holds.empty()) fail("no acquisition");
    std::vector<std::vector<Hold>> by_key(static_cast<std::size_t>(keys));
    std::vector<long> per_device(static_cast<std::size_t>(devices), 0);
    for (const Hold& h : holds) {
        if (h.worker < 0 || h.worker >= devices) fail("a record names no device");
        by_key[static_cast<std::size_t>(h.worker % keys)].push_back(h);
        ++per_device[static_cast<std::size_t>(h.worker)];
    }
    long overlaps = 0;
    int most = 0;
    std::vector<double> delays_ms;
    double worst_spread = 0;
    long spread_met = 0, keys_used = 0;
    for (long k = 0; k < keys; ++k) {
        const bench::HoldFigures f =
            bench::hold_figures(by_key[static_cast<std::size_t>(k)], limit);
        overlaps += f.over_limit;
        most = std::max(most, f.most);
        delays_ms.insert(delays_ms.end(), f.delays_ms.begin(), f.delays_ms.end());
        long lo = -1, hi = -1;
        for (long d = k; d < devices; d += keys) {
            const long n = per_device[static_cast<std::size_t>(d)];
            lo = lo < 0 ? n : std::min(lo, n);
            hi = std::max(hi, n);
        }
        if (lo < 0) continue;
        ++keys_used;
        if (static_cast<double>(hi - lo) <= 1.0 + 0.1 * static_cast<double>(lo)) ++spread_met;
        const double spread =
            lo > 0 ? 100.0 * static_cast<double>(hi - lo) / static_cast<double>(lo) : 1e9;
        worst_spread = std::max(worst_spread, spread);
    }
    const auto n = static_cast<double>(holds.size());
    const long requests = after.calls(request_commands) - before.calls(request_commands);
    const long all = after.all_calls() - before.all_calls();
    const long fewest = *std::min_element(per_device.begin(), per_device.end());
    const long mostacq = *std::max_element(per_device.begin(), per_device.end());
    std::printf("devices %ld\nkeys %ld\nseconds %ld\nlimit %ld\n", devices, keys, seconds, limit);
    std::printf("acquisitions %zu\n", holds.size());
    std::printf("acq_per_s %.1f\n", n / static_cast<double>(seconds));
    std::printf("exclusion_overlaps %ld\n", overlaps);
    std::printf("max_holders %d\n", most);
    std::printf("handoffs %zu\n", delays_ms.size());
    std::printf("handoff_p50_ms %.3f\n",
                delays_ms.empty() ? 0.0 : bench::percentile(delays_ms, 0.5));
    std::printf("handoff_p99_ms %.3f\n",
                delays_ms.empty() ? 0.0 : bench::percentile(delays_ms, 0.99));
    std::printf("device_acq_fewest %ld\ndevice_acq_most %ld\n", fewest, mostacq);
    std::printf("spread_worst_pct %.1f\n", worst_spread);
    std::printf("spread_met_keys %ld\nkeys_used %ld\n", spread_met, keys_used);
    std::printf("requests_per_acq %.3f\n", static_cast<double>(requests) / n);
    std::printf("acquire_requests_per_acq %.3f\n", static_cast<double>(requests) / n - 1.0);
    std::printf("all_calls_per_acq %.3f\n", static_cast<double>(all) / n);
    const double cpu_s = after.cpu_s() - before.cpu_s();
    std::printf("server_cpu_s %.3f\n", cpu_s);
    std::printf("server_cpu_pct %.1f\n", 100.0 * cpu_s / static_cast<double>(seconds));
    std::printf("server_cpu_us_per_acq %.2f\n", 1e6 * cpu_s / n);
    // Where the server's time went: each request command's calls and own time per acquisition.
    long request_usec = 0;
    for (const std::string& c : request_commands) {
        const std::string one{c};
        request_usec += after.usec(c) - before.usec(c);
        std::printf("calls_per_acq.%s %.3f\n", c.c_str(),
                    static_cast<double>(after.calls({one}) - before.calls({one})) / n);
        std::printf("server_us_per_acq.%s %.2f\n", c.c_str(),
                    static_cast<double>(after.usec(c) - before.usec(c)) / n);
    }
    // The server's CPU outside the requests' own time: reading, parsing and answering requests,
    // blocking and waking clients, the event loop and the server's timers.
    std::printf("server_us_outside_requests_per_acq %.2f\n",
                1e6 * cpu_s / n - static_cast<double>(request_usec) / n);
    // Every command, the ones that scripts call included (a script's own time contains theirs).
    print_split("split", "acq", stats_between(before, after), n);
}

// ---- run: the devices, one thread each ----

enum class Kind { fair, lock, sem };

struct Device;

// What the devices share with the harness.
struct Run {
    Kind kind = Kind::fair;
    bool cluster = false;
    std::vector<std::uint16_t> ports;
    long keys = 0;
    std::uint32_t limit = 1;
    bool fair_sem = false;  // the semaphore's fair mode
    std::int64_t hold_ns = 0;
    std::vector<std::string> key_names;
    std::unique_ptr<std::atomic<int>[]> holders;  // live holders per key
    std::atomic<int> live_max{0};
    std::atomic<long> ready{0};
    std::atomic<bool> failed{false};
    std::mutex m;
    std::condition_variable cv;
    bool go = false;
    std::int64_t end_ns = 0;
    std::string error;

    void set_error(const std::string& what) {
        const std::lock_guard<std::mutex> g(m);
        if (error.empty()) error = what;
        failed = true;
    }
};

std::size_t buffer_size(Kind kind) {
    switch (kind) {
        case Kind::fair:
            return resplock::fair_buffer_min();
        case Kind::lock:
            return resplock::lock_buffer_min();
        case Kind::sem:
            return resplock::semaphore_buffer_min();
    }
    return 0;
}

// One device: its port state, router, connection, buffer and lock object (only the one of its
// kind is constructed).
struct Device {
    Run* run;
    int index;
    resplock_posix_t net{};
    resplock_port_t port{};
    resplock::Cluster router;
    resplock::ConnectionConfig cfg;
    std::unique_ptr<char[]> buf;
    std::size_t buf_size;
    std::unique_ptr<resplock::Connection> conn;
    std::unique_ptr<resplock::FairLock> fair;
    std::unique_ptr<resplock::Lock> lock;
    std::unique_ptr<resplock::Semaphore> sem;
    std::vector<Hold> holds;

    Device(Run& r, int i, const std::string& key, std::uint16_t seed_port)
        : run(&r), index(i), buf_size(buffer_size(r.kind)) {
        if (resplock_posix_port_init(&net, nullptr, &port) != RESPLOCK_STATUS_ok) std::abort();
        bench::stamp_sends(port);
        cfg.host = kHost;
        cfg.port = seed_port;
        cfg.timeout_ms = 5000;
        if (r.cluster) cfg.router = &router;
        buf = std::make_unique<char[]>(buf_size);
        conn = std::make_unique<resplock::Connection>(port, cfg, buf.get(), buf_size);
        switch (r.kind) {
            case Kind::fair:
                fair = std::make_unique<resplock::FairLock>(*conn, key);
                break;
            case Kind::lock:
                lock = std::make_unique<resplock::Lock>(*conn, key);
                break;
            case Kind::sem:
                sem = std::make_unique<resplock::Semaphore>(*conn, key, r.limit, r.fair_sem);
                break;
        }
    }

    Status try_acquire(std::uint32_t wait_ms) {
        if (fair) return fair->try_acquire(kTtlMs, wait_ms);
        if (lock) return lock->try_acquire(kTtlMs, wait_ms);
        return sem->try_acquire(kTtlMs, wait_ms);
    }
    Status release() {
        if (fair) return fair->release();
        if (lock) return lock->release();
        return sem->release();
    }
    // One round trip that reaches the key's node (a cluster's redirection followed): the device
    // then waits at the start with its one connection open where its key lives.
    Status warm_up() {
        if (sem) {
            resplock::SemaphoreInfo info;
            return sem->query(info);
        }
        resplock::LockInfo info;
        return fair ? fair->query(info) : lock->query(info);
    }
};

// The library objects a device needs, in bytes (what a firmware would hold per lock).
std::size_t library_bytes(Kind kind, bool cluster) {
    std::size_t lock = sizeof(resplock::FairLock);
    if (kind == Kind::lock) lock = sizeof(resplock::Lock);
    if (kind == Kind::sem) lock = sizeof(resplock::Semaphore);
    return sizeof(resplock_posix_t) + sizeof(resplock_port_t) + sizeof(resplock::ConnectionConfig) +
           sizeof(resplock::Connection) + lock + buffer_size(kind) +
           (cluster ? sizeof(resplock::Cluster) : 0);
}

void* device_main(void* arg) {
    auto* d = static_cast<Device*>(arg);
    Run& r = *d->run;
    const std::size_t key = static_cast<std::size_t>(d->index % r.keys);
    Status s = d->conn->connect(resplock::Deadline::after(d->port, 5000));
    if (s == Status::ok) s = d->warm_up();
    if (s != Status::ok) {
        r.set_error("device " + std::to_string(d->index) + ": connect: " + resplock::to_string(s));
        ++r.ready;
        return nullptr;
    }
    ++r.ready;
    std::int64_t end_ns = 0;
    {
        std::unique_lock<std::mutex> g(r.m);
        r.cv.wait(g, [&r] { return r.go; });
        end_ns = r.end_ns;
    }
    if (r.failed) return nullptr;
    d->holds.reserve(256);
    while (now_ns() < end_ns && !r.failed) {
        const auto wait_ms =
            static_cast<std::uint32_t>(std::max<std::int64_t>(0, (end_ns - now_ns()) / 1000000));
        s = d->try_acquire(wait_ms);
        if (s == Status::busy) break;  // the run ended while waiting
        if (s != Status::ok) {
            r.set_error("device " + std::to_string(d->index) +
                        ": acquire: " + resplock::to_string(s));
            break;
        }
        const std::int64_t acquired = now_ns();
        const int holding = r.holders[key].fetch_add(1) + 1;
        int most = r.live_max.load();
        while (holding > most && !r.live_max.compare_exchange_weak(most, holding)) {
        }
        sleep_ns(r.hold_ns);
        r.holders[key].fetch_sub(1);
        // The hand-off's clock starts when the release request is sent (send_stamp.hpp).
        bench::stamp_armed = true;
        s = d->release();
        if (s != Status::ok || bench::stamp_armed) {
            r.set_error("device " + std::to_string(d->index) +
                        ": release: " + resplock::to_string(s));
            break;
        }
        d->holds.push_back({acquired, bench::stamp_at_ns, d->index});
    }
    d->conn->close();
    return nullptr;
}

long rss_bytes() {
    std::ifstream statm("/proc/self/statm");
    long size = 0, resident = 0;
    statm >> size >> resident;
    return resident * sysconf(_SC_PAGESIZE);
}

// The whole machine's busy share of its CPU time between two readings of /proc/stat.
struct MachineCpu {
    long long busy = 0, total = 0;
    static MachineCpu read() {
        std::ifstream stat("/proc/stat");
        std::string cpu;
        long long v[8] = {};
        stat >> cpu;
        for (long long& x : v)
            stat >> x;
        MachineCpu m;
        for (long long x : v)
            m.total += x;
        m.busy = m.total - v[3] - v[4];  // less idle and iowait
        return m;
    }
};

double cpu_of(const rusage& u) {
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The uncontended acquire + release of the run's kind, by one client on a key no device uses:
// wall time and the servers' CPU per cycle.
struct Uncontended {
    double us_per_cycle = 0;
    double cpu_us_per_cycle = 0;
    CommandStats stats;  // every command's calls and own time over the cycles
};

Uncontended uncontended(const Run& r) {
    Run solo;
    solo.kind = r.kind;
    solo.cluster = r.cluster;
    solo.limit = r.limit;
    solo.fair_sem = r.fair_sem;
    Device one(solo, 0, "scale:solo", r.ports[0]);
    if (one.conn->connect(resplock::Deadline::after(one.port, 5000)) != Status::ok ||
        one.warm_up() != Status::ok) {
        fail("the uncontended client cannot connect");
    }
    const Snapshot b = Snapshot::take(r.ports);
    const std::int64_t t0 = now_ns();
    for (long i = 0; i < kBaselineCycles; ++i) {
        if (one.try_acquire(0) != Status::ok || one.release() != Status::ok) {
            fail("an uncontended cycle failed");
        }
    }
    const std::int64_t t1 = now_ns();
    const Snapshot a = Snapshot::take(r.ports);
    one.conn->close();
    Uncontended u;
    u.us_per_cycle = static_cast<double>(t1 - t0) / 1e3 / kBaselineCycles;
    u.cpu_us_per_cycle = 1e6 * (a.cpu_s() - b.cpu_s()) / kBaselineCycles;
    u.stats = stats_between(b, a);
    return u;
}

int run_mode(int argc, char** argv) {
    if (argc < 9 || argc > 10) {
        fail(
            "usage: run fair|lock|sem|fairsem single|cluster PORTS DEVICES KEYS HOLD_MS SECONDS "
            "[LIMIT]");
    }
    Run r;
    const std::string kind = argv[2], topology = argv[3];
    if (kind == "fair") {
        r.kind = Kind::fair;
    } else if (kind == "lock") {
        r.kind = Kind::lock;
    } else if (kind == "sem" || kind == "fairsem") {
        r.kind = Kind::sem;
        r.fair_sem = kind == "fairsem";
    } else {
        fail("unknown kind " + kind);
    }
    if (topology != "single" && topology != "cluster") fail("unknown topology " + topology);
    r.cluster = topology == "cluster";
    r.ports = parse_ports(argv[4]);
    const long devices = parse_long(argv[5], "device count");
    r.keys = parse_long(argv[6], "key count");
    r.hold_ns = parse_long(argv[7], "hold") * 1000000;
    const long seconds = parse_long(argv[8], "seconds");
    r.limit = r.kind == Kind::sem
                  ? static_cast<std::uint32_t>(argc == 10 ? parse_long(argv[9], "limit") : 10)
                  : 1;
    if (devices < 2 || r.keys < 1 || r.keys > devices || seconds < 1 || r.limit < 1) {
        fail("needs 2+ devices, 1..DEVICES keys, 1+ seconds, a limit of 1+");
    }
    for (long k = 0; k < r.keys; ++k)
        r.key_names.push_back("scale:k:" + std::to_string(k));
    r.holders = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(r.keys));
    command_on_each(r.ports, "FLUSHALL");

    // The uncontended cycle of the same kind, before the devices start and again after they
    // stopped (the machine's other load moves it): the mean of the two is the baseline.
    const Uncontended first = uncontended(r);
    const Snapshot empty = Snapshot::take(r.ports);
    const long rss0 = rss_bytes();
    std::vector<std::unique_ptr<Device>> devs;
    std::vector<pthread_t> threads(static_cast<std::size_t>(devices));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (pthread_attr_setstacksize(&attr, kStackBytes) != 0) fail("cannot set the stack size");
    for (long i = 0; i < devices; ++i) {
        const int idx = static_cast<int>(i);
        devs.push_back(
            std::make_unique<Device>(r, idx, r.key_names[static_cast<std::size_t>(i % r.keys)],
                                     r.ports[static_cast<std::size_t>(i) % r.ports.size()]));
        if (pthread_create(&threads[static_cast<std::size_t>(i)], &attr, device_main,
                           devs.back().get()) != 0) {
            fail("cannot start thread " + std::to_string(i) + " (" + std::strerror(errno) + ")");
        }
    }
    pthread_attr_destroy(&attr);
    const std::int64_t wait_until = now_ns() + 60 * std::int64_t{1000000000};
    while (r.ready.load() < devices && now_ns() < wait_until)
        sleep_ns(10000000);
    const long rss1 = rss_bytes();
    const Snapshot connected = Snapshot::take(r.ports);
    if (r.ready.load() < devices) r.set_error("devices still connecting after 60 s");

    rusage u0{}, u1{};
    getrusage(RUSAGE_SELF, &u0);
    const MachineCpu m0 = MachineCpu::read();
    const std::int64_t start = now_ns();
    {
        const std::lock_guard<std::mutex> g(r.m);
        r.go = true;
        r.end_ns = start + seconds * std::int64_t{1000000000};
    }
    r.cv.notify_all();
    for (pthread_t t : threads)
        pthread_join(t, nullptr);
    const std::int64_t elapsed = now_ns() - start;
    getrusage(RUSAGE_SELF, &u1);
    const MachineCpu m1 = MachineCpu::read();
    const Snapshot after = Snapshot::take(r.ports);
    if (r.failed) fail(r.error);
    const Uncontended second = uncontended(r);
    const double baseline_cpu_us = (first.cpu_us_per_cycle + second.cpu_us_per_cycle) / 2;
    std::printf("uncontended_cycles %ld\n", 2 * kBaselineCycles);
    std::printf("uncontended_us_per_cycle %.1f\n", (first.us_per_cycle + second.us_per_cycle) / 2);
    std::printf("uncontended_server_cpu_us_per_cycle_before %.2f\n", first.cpu_us_per_cycle);
    std::printf("uncontended_server_cpu_us_per_cycle_after %.2f\n", second.cpu_us_per_cycle);
    std::printf("uncontended_server_cpu_us_per_cycle %.2f\n", baseline_cpu_us);
    // The uncontended cycles' split by command, both baselines together, and the CPU outside the
    // requests' own time. The requests: the commands the client sends (the plain lock's SET, PTTL
    // and EVALSHA; the others' EVALSHA and BLPOP), not the SETs and PTTLs their scripts call.
    const std::vector<std::string> requests =
        r.kind == Kind::lock ? std::vector<std::string>{"set", "pttl", "evalsha", "eval"}
                             : std::vector<std::string>{"evalsha", "eval", "blpop"};
    CommandStats unc = first.stats;
    for (const auto& [name, cu] : second.stats) {
        unc[name].first += cu.first;
        unc[name].second += cu.second;
    }
    print_split("unc", "cycle", unc, 2.0 * kBaselineCycles);
    long unc_request_usec = 0;
    for (const std::string& c : requests) {
        const auto it = unc.find(c);
        if (it != unc.end()) unc_request_usec += it->second.second;
    }
    std::printf("uncontended_outside_requests_us_per_cycle %.2f\n",
                baseline_cpu_us - static_cast<double>(unc_request_usec) / (2.0 * kBaselineCycles));

    std::vector<Hold> holds;
    for (const auto& d : devs)
        holds.insert(holds.end(), d->holds.begin(), d->holds.end());
    print_figures(holds, devices, r.keys, seconds, static_cast<long>(r.limit), connected, after,
                  requests);
    const auto n = static_cast<double>(holds.size());
    const double cpu_us = 1e6 * (after.cpu_s() - connected.cpu_s()) / n;
    std::printf("live_max_holders %d\n", r.live_max.load());
    std::printf("server_cpu_vs_uncontended %.2f\n", cpu_us / baseline_cpu_us);
    std::printf("run_s %.2f\n", static_cast<double>(elapsed) / 1e9);
    const double client_cpu = cpu_of(u1) - cpu_of(u0);
    std::printf("client_cpu_pct %.1f\n", 100.0 * client_cpu / (static_cast<double>(elapsed) / 1e9));
    std::printf("client_cpu_us_per_acq %.2f\n", 1e6 * client_cpu / n);
    const long switches = (u1.ru_nvcsw - u0.ru_nvcsw) + (u1.ru_nivcsw - u0.ru_nivcsw);
    std::printf("client_switches_per_acq %.1f\n", static_cast<double>(switches) / n);
    std::printf(
        "client_involuntary_switches_per_s %.0f\n",
        static_cast<double>(u1.ru_nivcsw - u0.ru_nivcsw) / (static_cast<double>(elapsed) / 1e9));
    std::printf("machine_busy_pct %.1f\n",
                100.0 * static_cast<double>(m1.busy - m0.busy) /
                    static_cast<double>(std::max(1LL, m1.total - m0.total)));
    std::printf("machine_cpus %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("library_bytes_per_device %zu\n", library_bytes(r.kind, r.cluster));
    std::printf("buffer_bytes_per_device %zu\n", buffer_size(r.kind));
    std::printf("client_rss_bytes_per_device %.0f\n",
                static_cast<double>(rss1 - rss0) / static_cast<double>(devices));
    std::printf("server_connections_per_device %.2f\n",
                (connected.clients() - empty.clients()) / static_cast<double>(devices));
    std::printf("server_memory_bytes_per_device %.0f\n",
                (connected.memory() - empty.memory()) / static_cast<double>(devices));
    std::printf("servers %zu\n", r.ports.size());
    // How the devices' connections spread over the servers (a cluster: each on its key's master).
    for (std::size_t i = 0; i < r.ports.size(); ++i) {
        std::printf("server%zu_devices %.0f\n", i,
                    info_field(connected.infos[i], "connected_clients") -
                        info_field(empty.infos[i], "connected_clients"));
    }
    return 0;
}

// ---- snapshot / records: the Node peers ----

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    if (!out) fail("cannot write " + path);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) fail("cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

int snapshot_mode(int argc, char** argv) {
    if (argc != 4) fail("usage: snapshot PORTS FILE");
    for (const std::uint16_t p : parse_ports(argv[2]))
        write_file(std::string(argv[3]) + "." + std::to_string(p), info_of(p));
    return 0;
}

int records_mode(int argc, char** argv) {
    if (argc != 10) {
        fail("usage: records single|cluster PORTS DEVICES KEYS SECONDS LIMIT COMMANDS FILE");
    }
    const std::vector<std::uint16_t> ports = parse_ports(argv[3]);
    const long devices = parse_long(argv[4], "device count");
    const long keys = parse_long(argv[5], "key count");
    const long seconds = parse_long(argv[6], "seconds");
    const long limit = parse_long(argv[7], "limit");
    const std::vector<std::string> commands = split(argv[8], ',');
    const std::string file = argv[9];
    if (devices < 1 || keys < 1 || seconds < 1 || limit < 1) fail("bad records arguments");
    (void)argv[2];  // the topology: the figures are the same for both
    Snapshot before, after;
    for (const std::uint16_t p : ports) {
        before.infos.push_back(read_file(file + ".before." + std::to_string(p)));
        after.infos.push_back(read_file(file + ".after." + std::to_string(p)));
    }
    std::vector<Hold> holds;
    std::vector<std::string> passed;
    std::istringstream in(read_file(file));
    std::string line;
    while (std::getline(in, line)) {
        int device = 0;
        long long acquired = 0, released = 0;
        char name[64], text[64];
        if (std::sscanf(line.c_str(), "hold %d %lld %lld", &device, &acquired, &released) == 3) {
            if (released < acquired) fail("records: a hold ends before it begins");
            holds.push_back({acquired, released, device});
        } else if (std::sscanf(line.c_str(), "figure %63s %63s", name, text) == 2) {
            passed.push_back(std::string(name) + " " + text);
        } else if (!line.empty()) {
            fail("records: unexpected line: " + line);
        }
    }
    print_figures(holds, devices, keys, seconds, limit, before, after, commands);
    // FILE.empty.PORT, when given: the servers before the driver opened its connections, for
    // the connections and the server memory that each device costs.
    Snapshot empty;
    for (const std::uint16_t p : ports) {
        const std::string path = file + ".empty." + std::to_string(p);
        if (std::ifstream(path)) empty.infos.push_back(read_file(path));
    }
    if (empty.infos.size() == ports.size()) {
        const auto per = [devices](double v) { return v / static_cast<double>(devices); };
        std::printf("server_connections_per_device %.2f\n",
                    per(before.clients() - empty.clients()));
        std::printf("server_connections_per_device_at_end %.2f\n",
                    per(after.clients() - empty.clients()));
        std::printf("server_memory_bytes_per_device %.0f\n", per(before.memory() - empty.memory()));
        std::printf("servers %zu\n", ports.size());
        for (std::size_t i = 0; i < ports.size(); ++i) {
            std::printf("server%zu_connections %.0f\n", i,
                        info_field(before.infos[i], "connected_clients") -
                            info_field(empty.infos[i], "connected_clients"));
        }
    }
    for (const std::string& p : passed)
        std::printf("%s\n", p.c_str());
    return 0;
}

constexpr const char* kUsage =
    "usage: resplock_scale MODE ARGS...\n"
    "  run fair|lock|sem|fairsem single|cluster PORTS DEVICES KEYS HOLD_MS SECONDS [LIMIT]\n"
    "  snapshot PORTS FILE\n"
    "  records single|cluster PORTS DEVICES KEYS SECONDS LIMIT COMMANDS FILE";

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) fail(kUsage);
    const std::string mode = argv[1];
    if (mode == "run") return run_mode(argc, argv);
    if (mode == "snapshot") return snapshot_mode(argc, argv);
    if (mode == "records") return records_mode(argc, argv);
    fail("unknown mode " + mode + "\n" + kUsage);
}
