// The fault-injection trial: starts a topology on 127.0.0.1, runs a workload of lock clients
// that do protected writes at a resource (tests/trial/resource.hpp), injects faults one after
// another in an order drawn from a printed seed, and checks the history (checker.hpp).
//
// Workload, all on one key and one lock kind (the row's: the lock, the fair lock, or a semaphore
// of limit N, plain or fair): two trial_client processes (library clients with the Renewer:
// group 0 with three clients, group 1 with one client whose clock can jump) and two loops of
// `resplock run KEY -- trial_writer ...` (one per group), with TTL 1 s.
//
// Usage: trial [--short | --full | --self-test] [--seed N] [--only ROW] [--faults LIST]
//              [--history DIR] [--table FILE]
//   --short      every topology once, a few faults each (the test suite runs this)
//   --full       every row of the table with every fault that applies, plain and fenced
//   --self-test  the checker against a deliberately broken client and resource: each kind of
//                violation must be caught
//   --only ROW   that row's runs only (of --short or --full)
//   --faults LIST  --full: only these faults (names separated by commas), where they apply
// Exit: 0 no violation where the docs promise none, 1 violations, 2 the trial could not run.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "checker.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "resource.hpp"
#include "resource_client.hpp"
#include "topology.hpp"

namespace trial {
namespace {

constexpr const char* key = "trial:{job}";
constexpr std::uint32_t ttl_ms = 1000;
// After each heal the trial waits settle_ms; some client must acquire within that time.
constexpr int settle_ms = 4000;
constexpr std::int64_t bound_us = settle_ms * std::int64_t{1000};

// One row of the table: a topology with its options.
struct Row {
    std::string name;
    std::string topology;
    bool persistence = false;
    bool fair = false;
    bool wake = false;
    int replicas = 0;
    bool fencing = true;      // the lock kind can give fencing numbers
    std::uint32_t limit = 0;  // 0: a lock; N: a semaphore of limit N (fair with `fair`)
};

std::vector<Row> rows() {
    return {
        {"single", "single", false, false, false, 0, true},
        {"single, persistence", "single", true, false, false, 0, true},
        {"single, fair", "single", false, true, false, 0, false},
        {"single, wake", "single", false, false, true, 0, true},
        {"sentinel", "sentinel", false, false, false, 0, true},
        {"sentinel, --replicas 2", "sentinel", false, false, false, 2, true},
        {"cluster", "cluster", false, false, false, 0, true},
        {"cluster, --replicas 1", "cluster", false, false, false, 1, true},
        {"sentinel, fair", "sentinel", false, true, false, 0, false},
        {"sentinel, --limit 1", "sentinel", false, false, false, 0, true, 1},
        {"sentinel, --limit 3", "sentinel", false, false, false, 0, true, 3},
        {"sentinel, --limit 1 --fair", "sentinel", false, true, false, 0, true, 1},
        {"sentinel, --limit 3 --fair", "sentinel", false, true, false, 0, true, 3},
        {"cluster, fair", "cluster", false, true, false, 0, false},
        {"cluster, --limit 1", "cluster", false, false, false, 0, true, 1},
        {"cluster, --limit 3", "cluster", false, false, false, 0, true, 3},
        {"cluster, --limit 1 --fair", "cluster", false, true, false, 0, true, 1},
        {"cluster, --limit 3 --fair", "cluster", false, true, false, 0, true, 3},
        {"quorum of 5", "quorum", false, false, false, 0, false},
        {"quorum of 5, persistence", "quorum", true, false, false, 0, false},
    };
}

bool client_fault(Fault f) {
    return f == Fault::pause_client || f == Fault::clock_jump;
}

// Where the docs say a configuration cannot promise mutual exclusion without fencing
// (docs/guarantees.md): violations seen there in plain mode are expected; anywhere else they fail
// the trial. At a fenced resource, no cell may let one through.
bool documented_unsafe(const Row& row, Fault f) {
    switch (f) {
        case Fault::pause_client:
            return true;  // a process pause: only fencing helps
        case Fault::restart_empty:
            // The data is gone (replicas resync to the empty master); a quorum outlives one.
            return !row.persistence && row.topology != "quorum";
        case Fault::kill_master:
        case Fault::pause_node:
        case Fault::sentinel_failover:
        case Fault::split_brain:
            // The promoted replica may lack the lock unless it acknowledged it.
            return (row.topology == "sentinel" || row.topology == "cluster") && row.replicas == 0;
        case Fault::two_faults:
            // Sentinel: a failover, as above. Cluster: the keys an interrupted move had taken to
            // the importing node are not on the promoted replica, acknowledged or not.
            return row.topology == "cluster" || row.replicas == 0;
        default:
            return false;
    }
}

struct Paths {
    std::string client = TRIAL_CLIENT;
    std::string writer = TRIAL_WRITER;
    std::string cli = RESPLOCK_CLI;
};

// The workload's processes.
class Workload {
  public:
    Workload(const Paths& paths, const Topology& topo, const Row& row, Mode mode,
             const std::string& socket, unsigned seed, bool slow_clock)
        : paths_(paths), topo_(topo), row_(row), mode_(mode), socket_(socket), seed_(seed) {
        for (int g = 0; g < 2; ++g) {
            std::vector<std::string> args = {paths.client,
                                             "--resource",
                                             socket,
                                             "--name",
                                             "lib" + std::to_string(g),
                                             "--clients",
                                             g == 0 || slow_clock ? "3" : "1",
                                             "--key",
                                             key,
                                             "--ttl",
                                             std::to_string(ttl_ms),
                                             "--wait",
                                             "2000",
                                             "--timeout",
                                             "500",
                                             "--work",
                                             "100",
                                             "2500",
                                             "--seed",
                                             std::to_string(seed + static_cast<unsigned>(g))};
            options(args);
            if (g == 1) {
                args.push_back(slow_clock ? "--slow-clock" : "--clock-jump-ms");
                args.push_back(slow_clock ? "10" : std::to_string(2 * ttl_ms));
            }
            const std::vector<std::string> target = topo.client_target(g);
            args.insert(args.end(), target.begin(), target.end());
            lib_[g] = std::make_unique<support::Process>();
            lib_[g]->start(args);
        }
        for (int g = 0; g < 2; ++g)
            loops_[g] = std::thread([this, g] { cli_loop(g); });
    }
    ~Workload() { stop(); }
    Workload(const Workload&) = delete;
    Workload& operator=(const Workload&) = delete;

    // Whether both library client processes started.
    bool started() const { return lib_[0]->pid() > 0 && lib_[1]->pid() > 0; }

    // SIGSTOP (or SIGCONT) of group 0's library process and of its `resplock run` (not its
    // COMMAND: resplock must stop it by itself).
    void pause_clients(bool pause) {
        const int sig = pause ? SIGSTOP : SIGCONT;
        signal_pid(lib_[0]->pid(), sig);
        if (pause) paused_cli_ = cli_pid_[0].load();
        signal_pid(paused_cli_, sig);
    }
    void jump_clock() { signal_pid(lib_[1]->pid(), SIGUSR1); }

    // Ends the workload: SIGTERM to every client, then waits for them. Returns the library
    // clients' exit codes (0 each when they stopped cleanly).
    std::string stop() {
        if (stopped_) return "";
        stopped_ = true;
        stop_ = true;
        std::string report;
        for (int g = 0; g < 2; ++g) {
            const pid_t p = cli_pid_[g].load();
            signal_pid(p, SIGTERM);
        }
        for (auto& t : loops_)
            if (t.joinable()) t.join();
        for (int g = 0; g < 2; ++g) {
            signal_pid(lib_[g]->pid(), SIGCONT);
            signal_pid(lib_[g]->pid(), SIGTERM);
            // Process::wait counts from the start of the process.
            const support::Result r = lib_[g]->wait(support::seconds_since(started_) + 15);
            if (r.code != 0)
                report += "trial_client " + std::to_string(g) + " exited " +
                          std::to_string(r.code) + ": " + r.err.substr(0, 400) + "\n";
        }
        return report;
    }

  private:
    // kill(pid, sig) for one process only: a pid of 0 or -1 (a process that never started, or
    // was reaped) would signal the whole process group, or every process of the user.
    static void signal_pid(pid_t pid, int sig) {
        if (pid > 0) kill(pid, sig);
    }
    void options(std::vector<std::string>& args) const {
        if (row_.fencing && mode_ != Mode::plain) args.push_back("--fence");
        if (row_.limit > 0) {
            args.push_back("--limit");
            args.push_back(std::to_string(row_.limit));
        }
        if (row_.fair) args.push_back("--fair");
        if (row_.wake) args.push_back("--wake");
        if (row_.replicas > 0) {
            args.push_back("--replicas");
            args.push_back(std::to_string(row_.replicas));
        }
    }
    void cli_loop(int g) {
        std::mt19937 rng(seed_ * 7919u + static_cast<unsigned>(g));
        while (!stop_) {
            std::vector<std::string> args = {
                paths_.cli, "--ttl", std::to_string(ttl_ms), "--wait", "3000", "--timeout", "500"};
            const std::vector<std::string> target = topo_.cli_target(g);
            args.insert(args.end(), target.begin(), target.end());
            options(args);
            const int ms = std::uniform_int_distribution<int>(100, 2000)(rng);
            args.insert(args.end(), {"run", key, "--", paths_.writer, socket_, std::to_string(ms),
                                     "cli" + std::to_string(g)});
            support::Process p;
            if (!p.start(args)) break;
            cli_pid_[g] = p.pid();
            p.wait(60);
            cli_pid_[g] = -1;
            support::sleep_ms(std::uniform_int_distribution<int>(0, 30)(rng));
        }
    }

    Paths paths_;
    const Topology& topo_;
    Row row_;
    Mode mode_;
    std::string socket_;
    unsigned seed_;
    support::Clock::time_point started_ = support::Clock::now();
    std::unique_ptr<support::Process> lib_[2];
    std::thread loops_[2];
    std::atomic<pid_t> cli_pid_[2] = {{-1}, {-1}};
    pid_t paused_cli_ = -1;
    std::atomic<bool> stop_{false};
    bool stopped_ = false;
};

// One cell of the table: a row and a fault, over every run.
struct Cell {
    int phases = 0;
    int acquisitions = 0;
    int plain_phases = 0;
    int plain_violations = 0;
    int fenced_phases = 0;
    int fenced_stopped = 0;  // overlaps a fenced resource refused
    int fenced_reached = 0;
    std::int64_t longest_gap_us = 0;
};

struct Options {
    std::string plan = "short";
    unsigned seed = 0;
    std::string only;
    std::vector<Fault> faults;  // --faults (empty: every fault)
    std::string history_dir = ".";
    std::string table;
    Paths paths;
};

struct Totals {
    std::map<std::pair<std::string, std::string>, Cell> cells;
    int failures = 0;  // violations where none may be
    int errors = 0;    // the trial could not do what it meant to
    int runs = 0;
    std::int64_t started_us = boot_us();
};

// One run: starts the row's topology and the workload, injects `faults` in that order, checks.
// The self-test's deliberate faults: group 1's clients run on a clock ten times too slow (they
// believe their locks valid ten times too long, and renew them only after they expired), or the
// last fault is never healed. A sabotaged run is expected to show violations: they are reported
// without their history, and do not count.
enum class Sabotage { none, slow_clock, unhealed };

// One run: starts the row's topology and the workload, injects `faults` in that order (none: the
// workload alone for 15 s), checks.
Verdict run(const Options& o, const Row& row, Mode mode, std::vector<Fault> faults, unsigned seed,
            Totals& totals, Sabotage sabotage = Sabotage::none) {
    const bool unhealed = sabotage == Sabotage::unhealed;
    std::printf("--- %s, %s resource, seed %u: ", row.name.c_str(), to_string(mode), seed);
    for (Fault f : faults)
        std::printf("%s ", to_string(f));
    std::printf("\n");
    std::fflush(stdout);
    ++totals.runs;
    Verdict v;
    const std::unique_ptr<Topology> topo = start(row.topology, row.persistence, key);
    if (!topo || !topo->ok()) {
        std::printf("ERROR: could not start %s\n", row.topology.c_str());
        ++totals.errors;
        return v;
    }
    char dir[] = "/tmp/resplock-trial-sock-XXXXXX";
    if (mkdtemp(dir) == nullptr) {
        ++totals.errors;
        return v;
    }
    const std::string socket = std::string(dir) + "/resource";
    std::vector<Phase> phases;
    std::string workload_report;
    History history;
    {
        Resource resource(socket, mode, std::max<std::uint32_t>(row.limit, 1));
        Workload work(o.paths, *topo, row, mode, socket, seed, sabotage == Sabotage::slow_clock);
        if (!work.started()) {
            std::printf("ERROR: could not start the library clients\n");
            ++totals.errors;
            std::system(("rm -rf " + std::string(dir)).c_str());
            return v;
        }
        support::sleep_ms(1500);  // the clients start and contend
        const std::int64_t origin = resource.note('Q', "start");
        Phase first;
        first.fault = "none";
        first.start_us = first.heal_us = origin;
        first.bound_us = bound_us;
        if (faults.empty()) {
            support::sleep_ms(15000);
            phases.push_back(first);
        }
        for (Fault f : faults) {
            Phase p;
            p.fault = to_string(f);
            p.bound_us = bound_us;
            // One frozen sentinel of three: the others must keep the service up meanwhile.
            p.live_throughout = f == Fault::freeze_sentinel;
            p.start_us = resource.note('F', p.fault);
            bool ok = true;
            int hold = 0;
            if (f == Fault::pause_client) {
                work.pause_clients(true);
                hold = static_cast<int>(ttl_ms) * 5 / 2;
            } else if (f == Fault::clock_jump) {
                work.jump_clock();
            } else {
                ok = topo->inject(f);
                hold = topo->hold_ms(f);
            }
            support::sleep_ms(hold);
            if (ok && !unhealed) {
                if (f == Fault::pause_client) {
                    work.pause_clients(false);
                } else if (!client_fault(f)) {
                    ok = topo->heal(f);
                }
            }
            p.heal_us = resource.note('H', p.fault);
            if (!ok) {
                std::printf("ERROR: %s: %s\n", p.fault.c_str(), topo->error().c_str());
                ++totals.errors;
            }
            support::sleep_ms(settle_ms);
            if (!phases.empty()) phases.back().end_us = p.start_us;
            phases.push_back(p);
        }
        phases.back().end_us = resource.note('Q', "end");
        workload_report = work.stop();
        history = resource.history();
    }
    if (unhealed && !faults.empty() && !client_fault(faults.back())) topo->heal(faults.back());
    std::system(("rm -rf " + std::string(dir)).c_str());
    if (!workload_report.empty()) {
        std::printf("ERROR: %s", workload_report.c_str());
        ++totals.errors;
    }
    v = check(history, mode, phases, std::max<std::uint32_t>(row.limit, 1));

    const bool quiet = sabotage != Sabotage::none;
    bool failed = false;
    for (std::size_t i = 0; i < v.phases.size(); ++i) {
        const PhaseResult& r = v.phases[i];
        Fault f{};
        const bool known = parse_fault(r.fault, f);
        Cell& c = totals.cells[{row.name, r.fault}];
        ++c.phases;
        c.acquisitions += r.acquisitions;
        c.longest_gap_us = std::max(c.longest_gap_us, r.longest_gap_us);
        const int plain = r.overlaps + r.late + r.order + (r.live ? 0 : 1);
        const int reached = r.accepted_overlaps + r.order + (r.live ? 0 : 1);
        bool bad = false;
        if (mode == Mode::plain) {
            ++c.plain_phases;
            c.plain_violations += plain;
            bad = !r.live || (plain > 0 && !(known && documented_unsafe(row, f)));
        } else {
            ++c.fenced_phases;
            c.fenced_stopped += r.overlaps - r.accepted_overlaps;
            c.fenced_reached += reached;
            bad = reached > 0;
        }
        std::printf(
            "  %-17s acquisitions %4d  writes %5d  overlaps %d (accepted %d)  late %d  "
            "order %d  recovery %s  longest gap %.0f ms%s\n",
            r.fault.c_str(), r.acquisitions, r.writes, r.overlaps, r.accepted_overlaps, r.late,
            r.order,
            r.recovery_us < 0 ? "none" : (std::to_string(r.recovery_us / 1000) + " ms").c_str(),
            static_cast<double>(r.longest_gap_us) / 1e3,
            !bad    ? ""
            : quiet ? "  <-- violation (sabotaged run)"
                    : "  <-- VIOLATION");
        for (const Finding& fd : r.findings) {
            std::printf("    %s\n", fd.what.c_str());
            if (bad && !quiet) std::printf("%s", fd.context.c_str());
        }
        if (bad) failed = true;
    }
    if (quiet) return v;
    if (failed) ++totals.failures;
    if (failed || !workload_report.empty()) {
        char name[256];
        std::snprintf(name, sizeof name, "%s/trial-%u-%s-%s.history", o.history_dir.c_str(), seed,
                      row.topology.c_str(), to_string(mode));
        std::ofstream(name) << format(history, phases.empty() ? 0 : phases.front().start_us);
        std::printf("  history written to %s\n", name);
    }
    std::fflush(stdout);
    return v;
}

const Row& row_named(const std::string& name) {
    static const std::vector<Row> all = rows();
    for (const Row& r : all)
        if (r.name == name) return r;
    return all.front();
}

// The faults that apply to a row (the client-side ones everywhere), in an order drawn from rng.
std::vector<Fault> faults_of(const Row& row, std::mt19937& rng) {
    std::vector<Fault> v;
    for (int i = 0; i < fault_count; ++i) {
        const Fault f = static_cast<Fault>(i);
        // A frozen replica matters where locks wait for replicas to acknowledge.
        if (f == Fault::freeze_replica && row.replicas == 0) continue;
        if (applies(row.topology, f)) v.push_back(f);
    }
    std::shuffle(v.begin(), v.end(), rng);
    return v;
}

// The self-test: the checker must catch each kind of violation it claims to.
int self_test(const Options& o) {
    Totals t;
    const Row& single = row_named("single");
    int missed = 0;
    auto expect = [&](bool caught, const char* what) {
        std::printf("self-test: %s: %s\n", what, caught ? "caught" : "MISSED");
        if (!caught) ++missed;
    };
    auto sum = [](const Verdict& v, int PhaseResult::*count) {
        int n = 0;
        for (const PhaseResult& r : v.phases)
            n += r.*count;
        return n;
    };
    // Clients whose clock runs ten times slow. A violation needs another client to take the lock
    // in the window a slow holder misjudges, which contention makes near certain but not sure:
    // a run that shows none is repeated, at most twice more.
    unsigned seed = o.seed;
    Verdict v;
    for (int attempt = 0; attempt < 3; ++attempt) {
        v = run(o, single, Mode::plain, {}, seed++, t, Sabotage::slow_clock);
        if (sum(v, &PhaseResult::overlaps) > 0 && sum(v, &PhaseResult::late) > 0) break;
    }
    expect(sum(v, &PhaseResult::overlaps) > 0, "overlapping holders (clients with a slow clock)");
    expect(sum(v, &PhaseResult::late) > 0,
           "writes after the lock ended (clients with a slow clock)");
    // The same clients on a semaphore of limit 3: more than three holders at once.
    Row semaphore = single;
    semaphore.name = "single, --limit 3 (self-test)";
    semaphore.limit = 3;
    for (int attempt = 0; attempt < 3; ++attempt) {
        v = run(o, semaphore, Mode::plain, {}, seed++, t, Sabotage::slow_clock);
        if (sum(v, &PhaseResult::overlaps) > 0) break;
    }
    expect(sum(v, &PhaseResult::overlaps) > 0,
           "more holders than a semaphore's limit (clients with a slow clock)");
    // A resource that says it checks fencing numbers but accepts a lower one.
    for (int attempt = 0; attempt < 3; ++attempt) {
        v = run(o, single, Mode::broken, {}, seed++, t, Sabotage::slow_clock);
        if (sum(v, &PhaseResult::order) > 0) break;
    }
    expect(sum(v, &PhaseResult::order) > 0,
           "an older fencing number accepted after a newer one (a broken resource)");
    // A fault that is never healed: the server stays stopped.
    v = run(o, single, Mode::plain, {Fault::pause_node}, seed++, t, Sabotage::unhealed);
    expect(!v.phases.empty() && !v.phases.back().live, "no acquisition after a fault (unhealed)");
    std::printf("self-test: %d of 5 deliberate violations caught\n", 5 - missed);
    return missed == 0 && t.errors == 0 ? 0 : 1;
}

std::string table(const Totals& t, const std::string& command) {
    char date[32];
    const time_t now = time(nullptr);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    const long secs = static_cast<long>((boot_us() - t.started_us) / 1000000);
    std::string out = "Generated " + std::string(date) + " by `" + command + "` (" +
                      std::to_string(t.runs) + " runs, " + std::to_string(secs / 60) + " min " +
                      std::to_string(secs % 60) + " s).\n\n";
    std::vector<std::string> faults;
    for (int i = 0; i < fault_count; ++i)
        faults.push_back(to_string(static_cast<Fault>(i)));
    out += "| configuration |";
    for (const std::string& f : faults)
        out += " " + f + " |";
    out += "\n|---|";
    for (std::size_t i = 0; i < faults.size(); ++i)
        out += "---|";
    out += "\n";
    for (const Row& row : rows()) {
        bool any = false;
        std::string line = "| " + row.name + " |";
        for (const std::string& f : faults) {
            auto it = t.cells.find({row.name, f});
            if (it == t.cells.end()) {
                line += " – |";
                continue;
            }
            any = true;
            const Cell& c = it->second;
            char cell[160];
            std::snprintf(cell, sizeof cell, " %d / %d / %s / %s / %.1f s |", c.phases,
                          c.acquisitions,
                          c.plain_phases ? std::to_string(c.plain_violations).c_str() : "–",
                          c.fenced_phases ? (std::to_string(c.fenced_reached) + " (" +
                                             std::to_string(c.fenced_stopped) + ")")
                                                .c_str()
                                          : "–",
                          static_cast<double>(c.longest_gap_us) / 1e6);
            line += cell;
        }
        if (any) out += line + "\n";
    }
    return out;
}

// Puts `text` between the lines "<!-- trial table -->" and "<!-- end of trial table -->" of the
// file at `path` (docs/guarantees.md), or makes the file the table if it has no such lines.
bool write_table(const std::string& path, const std::string& text) {
    const std::string begin = "<!-- trial table -->\n", end = "<!-- end of trial table -->";
    std::string doc = support::read_file(path);
    const std::size_t b = doc.find(begin), e = doc.find(end);
    if (b != std::string::npos && e != std::string::npos && b < e)
        doc = doc.substr(0, b + begin.size()) + "\n" + text + "\n" + doc.substr(e);
    else
        doc = text;
    std::ofstream out(path);
    out << doc;
    return static_cast<bool>(out);
}

int usage(const char* why) {
    std::fprintf(stderr,
                 "trial: %s\nusage: trial [--short | --full | --self-test] [--seed N] "
                 "[--only ROW] [--faults LIST] [--history DIR] [--table FILE]\n",
                 why);
    return 2;
}

// The faults named in `list` ("a,b,..."); false if a name is not a fault's.
bool parse_faults(const std::string& list, std::vector<Fault>& out) {
    for (std::size_t at = 0; at <= list.size();) {
        std::size_t end = list.find(',', at);
        if (end == std::string::npos) end = list.size();
        Fault f{};
        if (!parse_fault(list.substr(at, end - at), f)) return false;
        out.push_back(f);
        at = end + 1;
    }
    return true;
}

}  // namespace
}  // namespace trial

int main(int argc, char** argv) {
    using namespace trial;
    Options o;
    o.seed = static_cast<unsigned>(boot_us() % 1000000);
    // The command that repeats this run, for the table (scripts/trial.sh adds --full).
    std::string command = "scripts/trial.sh";
    std::string command_faults;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--short" || a == "--full" || a == "--self-test") {
            o.plan = a.substr(2);
        } else if (a == "--seed" && has_value) {
            o.seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        } else if (a == "--only" && has_value) {
            o.only = argv[++i];
            bool known = false;
            for (const Row& r : rows())
                known = known || r.name == o.only;
            if (!known) return usage(("no row named '" + o.only + "'").c_str());
        } else if (a == "--faults" && has_value) {
            std::string list = argv[++i];
            if (!parse_faults(list, o.faults)) return usage(("unknown fault in " + list).c_str());
            command_faults = " --faults " + list;
        } else if (a == "--history" && has_value) {
            o.history_dir = argv[++i];
        } else if (a == "--table" && has_value) {
            o.table = argv[++i];
        } else {
            return usage(("unknown argument " + a).c_str());
        }
    }
    if (o.plan != "full") command += " --" + o.plan;
    command += " --seed " + std::to_string(o.seed);
    if (!o.only.empty()) command += " --only '" + o.only + "'";
    command += command_faults;
    signal(SIGPIPE, SIG_IGN);
    std::printf("trial: %s, seed %u (repeat with --seed %u)\n", o.plan.c_str(), o.seed, o.seed);
    if (o.plan == "self-test") return self_test(o);

    Totals t;
    std::mt19937 rng(o.seed);
    unsigned seed = o.seed;
    if (o.plan == "short") {
        // Every topology once; the faults that matter most for each. The rows of the other lock
        // kinds under Sentinel and Cluster, and the faults that only those topologies have
        // (freeze-sentinel, split-brain, freeze-replica, two-faults), are in the full run only.
        auto short_run = [&](const char* name, Mode mode, std::vector<Fault> faults) {
            const unsigned s = seed++;  // the same seeds with or without --only
            if (o.only.empty() || o.only == name) run(o, row_named(name), mode, faults, s, t);
        };
        short_run("single", Mode::plain,
                  {Fault::pause_client, Fault::kill_master, Fault::partition, Fault::clock_jump});
        short_run("sentinel, --replicas 2", Mode::fenced,
                  {Fault::sentinel_failover, Fault::kill_master});
        short_run("cluster", Mode::fenced, {Fault::kill_master, Fault::migrate_slot});
        short_run("quorum of 5", Mode::plain, {Fault::pause_node, Fault::partition});
    } else {
        for (const Row& row : rows()) {
            if (!o.only.empty() && row.name != o.only) continue;
            std::vector<Fault> faults = faults_of(row, rng);
            if (row.persistence) faults = {Fault::kill_master, Fault::restart_empty};
            if (!o.faults.empty()) {
                faults.erase(std::remove_if(faults.begin(), faults.end(),
                                            [&](Fault f) {
                                                return std::find(o.faults.begin(), o.faults.end(),
                                                                 f) == o.faults.end();
                                            }),
                             faults.end());
                if (faults.empty()) continue;
            }
            run(o, row, Mode::plain, faults, seed++, t);
            if (row.fencing) {
                std::shuffle(faults.begin(), faults.end(), rng);
                run(o, row, Mode::fenced, faults, seed++, t);
            }
        }
    }
    if (t.runs == 0) {
        // --only or --faults left nothing of this plan: nothing was checked.
        std::fprintf(stderr, "trial: no run of the %s plan matches --only and --faults\n",
                     o.plan.c_str());
        return 2;
    }
    const std::string text = table(t, command);
    std::printf("\n%s\n", text.c_str());
    if (!o.table.empty() && !write_table(o.table, text)) {
        std::fprintf(stderr, "trial: cannot write %s\n", o.table.c_str());
        return 2;
    }
    std::printf("trial: %d runs, %d with violations where none may be, %d errors (seed %u)\n",
                t.runs, t.failures, t.errors, o.seed);
    return t.errors > 0 ? 2 : t.failures > 0 ? 1 : 0;
}
