// The Sentinel test deployment (see redis_sentinel.hpp).
#include "redis_sentinel.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "helpers.hpp"

namespace support {

namespace {

const char kLoopback[] = "127.0.0.1";

std::string cli_on(std::uint16_t port, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"redis-cli", "-h", kLoopback, "-p", std::to_string(port)};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out = run(argv, {}, 10).out;
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

using Record = std::map<std::string, std::string>;

// The records of a SENTINEL MASTER / REPLICAS / SENTINELS reply as redis-cli prints it to a pipe:
// one line per element, each record a run of field, value pairs starting with the field "name".
std::vector<Record> records(const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    std::vector<Record> all;
    for (std::size_t i = 0; i + 1 < lines.size(); i += 2) {
        if (lines[i] == "name" || all.empty()) all.emplace_back();
        all.back()[lines[i]] = lines[i + 1];
    }
    return all;
}

std::string field(const Record& r, const char* name) {
    const auto it = r.find(name);
    return it == r.end() ? std::string() : it->second;
}

}  // namespace

SentinelTopology::SentinelTopology(std::string name, Front front)
    : name_(std::move(name)), front_(std::move(front)) {
    char tmpl[] = "/tmp/resplock-sentinel-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (d == nullptr) return;
    dir_ = d;
    // Each server in a folder of its own: a replica writes the data it syncs to dump.rdb in
    // its folder, and a later server started there would load it. Every server may become a
    // master: none waits the default 5 s for more replicas before a full sync.
    const std::string master_dir = dir_ + "/node-0";
    if (mkdir(master_dir.c_str(), 0700) != 0) return;
    nodes_.push_back(std::make_unique<RedisServer>(std::initializer_list<const char*>{
        "--dir", master_dir.c_str(), "--repl-diskless-sync-delay", "0"}));
    if (!nodes_[0]->running() || !announce(*nodes_[0])) return;
    for (std::size_t i = 0; i < kReplicas; ++i) {
        if (!start_replica()) return;
    }
    for (std::size_t i = 0; i < kSentinels; ++i) {
        bool started = false;
        for (int attempt = 0; attempt < 5 && !started; ++attempt) {
            const std::uint16_t port = free_port();
            started = port != 0 && start_sentinel(port, i);
        }
        if (!started) return;
    }
    ok_ = wait_settled(30);
    if (!ok_) std::fprintf(stderr, "    the Sentinel deployment did not settle\n");
}

SentinelTopology::~SentinelTopology() {
    sentinels_.clear();  // kills them
    nodes_.clear();
    if (!dir_.empty()) {
        const std::string rm = "rm -rf '" + dir_ + "'";
        (void)std::system(rm.c_str());
    }
}

RedisServer& SentinelTopology::replica(std::size_t i) {
    return *nodes_[i < master_ ? i : i + 1];
}

bool SentinelTopology::start_replica() {
    const std::string dir = dir_ + "/node-" + std::to_string(nodes_.size());
    if (mkdir(dir.c_str(), 0700) != 0) return false;
    const std::string master_port = std::to_string(address_port(master()));
    // With a Front, the replica must announce it before its first handshake with the master
    // (which sends the port to announce): it starts as a master and is made a replica then. A
    // restart (with the same arguments) brings it back as a master, which the sentinels turn
    // into a replica again.
    auto replica = front_ ? std::make_unique<RedisServer>(std::initializer_list<const char*>{
                                "--dir", dir.c_str(), "--repl-diskless-sync-delay", "0"})
                          : std::make_unique<RedisServer>(std::initializer_list<const char*>{
                                "--dir", dir.c_str(), "--repl-diskless-sync-delay", "0",
                                "--replicaof", kLoopback, master_port.c_str()});
    if (!replica->running()) return false;
    if (front_ &&
        (!announce(*replica) || replica->cli({"REPLICAOF", kLoopback, master_port}) != "OK")) {
        return false;
    }
    const bool linked = wait_until(
        [&] {
            return replica->cli({"INFO", "replication"}).find("master_link_status:up") !=
                   std::string::npos;
        },
        10);
    if (!linked) return false;
    nodes_.push_back(std::move(replica));
    return true;
}

bool SentinelTopology::announce(RedisServer& node) {
    if (!front_) return true;
    auto it = fronts_.find(node.port());
    if (it == fronts_.end()) {
        const std::uint16_t port = front_(node.port());
        if (port == 0) return false;
        it = fronts_.emplace(node.port(), port).first;
    }
    return node.cli({"CONFIG", "SET", "replica-announce-ip", kLoopback, "replica-announce-port",
                     std::to_string(it->second)}) == "OK";
}

std::uint16_t SentinelTopology::address_port(const RedisServer& node) const {
    const auto it = fronts_.find(node.port());
    return it == fronts_.end() ? node.port() : it->second;
}

bool SentinelTopology::restart(RedisServer& node) {
    return node.restart() && announce(node);
}

bool SentinelTopology::asked(std::size_t i) const {
    return sentinels_[i] && !paused_[i];
}

bool SentinelTopology::pause_sentinel(std::size_t i) {
    if (i >= sentinels_.size() || !sentinels_[i] || ::kill(sentinels_[i]->pid(), SIGSTOP) != 0)
        return false;
    paused_[i] = true;
    return true;
}

bool SentinelTopology::resume_sentinel(std::size_t i) {
    if (i >= sentinels_.size() || !sentinels_[i] || ::kill(sentinels_[i]->pid(), SIGCONT) != 0)
        return false;
    paused_[i] = false;
    return true;
}

bool SentinelTopology::add_replicas(std::size_t count, double timeout_s) {
    for (std::size_t i = 0; i < count; ++i) {
        if (!start_replica()) return false;
    }
    return wait_settled(timeout_s);
}

bool SentinelTopology::start_sentinel(std::uint16_t port, std::size_t index) {
    const std::string conf = dir_ + "/sentinel-" + std::to_string(index) + ".conf";
    {
        std::ofstream f(conf);
        f << "port " << port << "\n"
          << "bind 127.0.0.1\n"
          << "daemonize no\n"
          << "dir " << dir_ << "\n"
          << "logfile " << dir_ << "/sentinel-" << index << ".log\n"
          << "sentinel monitor " << name_ << " 127.0.0.1 " << address_port(master()) << " "
          << kQuorum << "\n"
          << "sentinel down-after-milliseconds " << name_ << " 1000\n"
          << "sentinel failover-timeout " << name_ << " 5000\n"
          << "sentinel parallel-syncs " << name_ << " 1\n";
        if (!f) return false;
    }
    auto p = std::make_unique<Process>();
    if (!p->start({"redis-server", conf, "--sentinel"})) return false;
    const bool up = wait_until([&] { return cli_on(port, {"PING"}) == "PONG"; }, 5);
    if (!up) return false;
    sentinels_.push_back(std::move(p));
    paused_.push_back(false);
    ports_.push_back(port);
    return wait_until([&] { return resolved_port(index) == address_port(master()); }, 5);
}

std::string SentinelTopology::url(const std::string& extra) const {
    std::string u = "redis-sentinel://" + extra;
    for (std::size_t i = 0; i < ports_.size(); ++i) {
        if (i != 0 || !extra.empty()) u += ",";
        u += std::string(kLoopback) + ":" + std::to_string(ports_[i]);
    }
    return u + "#" + name_;
}

std::string SentinelTopology::sentinel_cli(std::size_t i,
                                           const std::vector<std::string>& args) const {
    return cli_on(ports_[i], args);
}

std::uint16_t SentinelTopology::resolved_port(std::size_t i) const {
    // redis-cli prints the two elements on two lines: host, then port.
    const std::string out = sentinel_cli(i, {"SENTINEL", "get-master-addr-by-name", name_});
    const std::size_t nl = out.find('\n');
    if (nl == std::string::npos) return 0;
    return static_cast<std::uint16_t>(std::atoi(out.c_str() + nl + 1));
}

bool SentinelTopology::settled() const {
    const std::uint16_t master_address = address_port(*nodes_[master_]);
    const std::string master_port = std::to_string(master_address);
    for (std::size_t i = 0; i < ports_.size(); ++i) {
        if (!asked(i)) continue;  // killed or stopped
        if (resolved_port(i) != master_address) return false;
        const std::vector<Record> m = records(sentinel_cli(i, {"SENTINEL", "MASTER", name_}));
        if (m.size() != 1 || field(m[0], "flags") != "master" ||
            std::atoi(field(m[0], "num-other-sentinels").c_str()) + 1 <
                static_cast<int>(ports_.size())) {
            return false;
        }
        const std::vector<Record> known = records(sentinel_cli(i, {"SENTINEL", "REPLICAS", name_}));
        for (std::size_t n = 0; n < nodes_.size(); ++n) {
            if (n == master_) continue;
            const std::string port = std::to_string(address_port(*nodes_[n]));
            bool up = false;
            for (const Record& r : known) {
                const auto field = [&](const char* f) {
                    const auto it = r.find(f);
                    return it == r.end() ? std::string() : it->second;
                };
                up = up ||
                     (field("port") == port && field("flags") == "slave" &&
                      field("master-link-status") == "ok" && field("master-port") == master_port);
            }
            if (!up) return false;
        }
    }
    return true;
}

bool SentinelTopology::wait_settled(double timeout_s) const {
    return wait_until([&] { return settled(); }, timeout_s);
}

bool SentinelTopology::start_failover(double timeout_s) {
    if (!wait_settled(timeout_s)) return false;
    // Through the first sentinel that is neither killed nor stopped.
    std::size_t via = 0;
    while (via + 1 < ports_.size() && !asked(via))
        ++via;
    // A sentinel that has only just judged a replica may still answer NOGOODSLAVE for a moment.
    std::string reply;
    const bool started = wait_until(
        [&] {
            reply = sentinel_cli(via, {"SENTINEL", "FAILOVER", name_});
            return reply.rfind("NOGOODSLAVE", 0) != 0;
        },
        timeout_s);
    if (!started || reply != "OK") {
        std::fprintf(stderr, "    SENTINEL FAILOVER: %s\n", reply.c_str());
        return false;
    }
    return true;
}

RedisServer* SentinelTopology::node_on(std::uint16_t port) {
    for (const auto& n : nodes_) {
        if (address_port(*n) == port) return n.get();
    }
    return nullptr;
}

bool SentinelTopology::wait_new_master(std::uint16_t former, double timeout_s) {
    const RedisServer* named = nullptr;
    const bool moved = wait_until(
        [&] {
            named = nullptr;
            for (std::size_t i = 0; i < ports_.size(); ++i) {
                if (!asked(i)) continue;
                const RedisServer* p = node_on(resolved_port(i));
                if (p == nullptr || p->port() == former || (named != nullptr && p != named))
                    return false;
                named = p;
            }
            return named != nullptr && named->cli({"ROLE"}).rfind("master", 0) == 0;
        },
        timeout_s);
    if (!moved) return false;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
        if (nodes_[n].get() == named) master_ = n;
    }
    return true;
}

bool SentinelTopology::failover(double timeout_s) {
    const std::uint16_t former = master().port();
    return start_failover(timeout_s) && wait_new_master(former, timeout_s);
}

void SentinelTopology::kill_sentinel(std::size_t i) {
    if (i < sentinels_.size()) sentinels_[i].reset();
}

}  // namespace support
