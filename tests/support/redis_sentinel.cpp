// The Sentinel test deployment (see redis_sentinel.hpp).
#include "redis_sentinel.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
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

}  // namespace

SentinelTopology::SentinelTopology(int sentinels, std::string name) : name_(std::move(name)) {
    char tmpl[] = "/tmp/resplock-sentinel-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (d == nullptr) return;
    dir_ = d;
    // Each server in a folder of its own: a replica writes the data it syncs to dump.rdb in
    // its folder, and a later server started there would load it.
    const std::string master_dir = dir_ + "/master";
    const std::string replica_dir = dir_ + "/replica";
    if (mkdir(master_dir.c_str(), 0700) != 0 || mkdir(replica_dir.c_str(), 0700) != 0) return;
    master_ = std::make_unique<RedisServer>(
        std::initializer_list<const char*>{"--dir", master_dir.c_str()});
    if (!master_->running()) return;
    const std::string master_port = std::to_string(master_->port());
    replica_ = std::make_unique<RedisServer>(std::initializer_list<const char*>{
        "--dir", replica_dir.c_str(), "--replicaof", kLoopback, master_port.c_str()});
    if (!replica_->running()) return;
    const bool linked = wait_until(
        [&] {
            return replica_->cli({"INFO", "replication"}).find("master_link_status:up") !=
                   std::string::npos;
        },
        10);
    if (!linked) return;
    for (int i = 0; i < sentinels; ++i) {
        bool started = false;
        for (int attempt = 0; attempt < 5 && !started; ++attempt) {
            const std::uint16_t port = free_port();
            started = port != 0 && start_sentinel(port, static_cast<std::size_t>(i));
        }
        if (!started) return;
    }
    ok_ = true;
}

SentinelTopology::~SentinelTopology() {
    sentinels_.clear();  // kills them
    if (!dir_.empty()) {
        const std::string rm = "rm -rf '" + dir_ + "'";
        (void)std::system(rm.c_str());
    }
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
          << "sentinel monitor " << name_ << " 127.0.0.1 " << master_->port() << " 1\n"
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
    ports_.push_back(port);
    return wait_until([&] { return resolved_port(index) == master_->port(); }, 5);
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

bool SentinelTopology::replica_known(double timeout_s) const {
    const std::string port = std::to_string(replica_->port());
    return wait_until(
        [&] {
            const std::string out = sentinel_cli(0, {"SENTINEL", "replicas", name_});
            return out.find(port) != std::string::npos;
        },
        timeout_s);
}

bool SentinelTopology::failover(double timeout_s) {
    if (!replica_known()) return false;
    // A sentinel that has only just found the replica has not yet judged it: NOGOODSLAVE until
    // it has (its INFO is in).
    std::string reply;
    const bool started = wait_until(
        [&] {
            reply = sentinel_cli(0, {"SENTINEL", "FAILOVER", name_});
            return reply.rfind("NOGOODSLAVE", 0) != 0;
        },
        timeout_s);
    if (!started || reply != "OK") {
        std::fprintf(stderr, "    SENTINEL FAILOVER: %s\n", reply.c_str());
        return false;
    }
    const std::uint16_t target = replica_->port();
    return wait_until(
        [&] {
            for (std::size_t i = 0; i < ports_.size(); ++i) {
                if (resolved_port(i) != target) return false;
            }
            return replica_->cli({"ROLE"}).rfind("master", 0) == 0;
        },
        timeout_s);
}

void SentinelTopology::kill_sentinel(std::size_t i) {
    if (i < sentinels_.size()) sentinels_[i].reset();
}

}  // namespace support
