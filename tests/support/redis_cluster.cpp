// Test harness: a three-master Redis Cluster on 127.0.0.1 (see redis_cluster.hpp).
#include "redis_cluster.hpp"

#include "helpers.hpp"
#include "process.hpp"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace support {

RedisCluster::RedisCluster() {
    char tmpl[] = "/tmp/resplock-cluster-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return;
    dir_ = tmpl;
    for (int i = 0; i < 3; ++i) {
        const std::string conf = dir_ + "/nodes-" + std::to_string(i) + ".conf";
        // The cluster bus on a port of its own (not port + 10000, which may be taken or > 65535).
        std::unique_ptr<RedisServer> node;
        for (int attempt = 0; attempt < 5 && (!node || !node->running()); ++attempt) {
            const std::string bus = std::to_string(free_port());
            node = std::make_unique<RedisServer>(std::initializer_list<const char*>{
                "--cluster-enabled", "yes", "--cluster-config-file", conf.c_str(), "--cluster-port",
                bus.c_str()});
        }
        if (!node->running()) return;
        nodes_.push_back(std::move(node));
    }
    std::vector<std::string> create = {"redis-cli", "--cluster", "create"};
    for (const auto& n : nodes_)
        create.push_back("127.0.0.1:" + std::to_string(n->port()));
    create.push_back("--cluster-yes");
    const Result r = run(create, {}, 60);
    if (r.code != 0) return;
    ok_ = wait_until(
        [&] {
            for (const auto& n : nodes_) {
                if (n->cli({"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos)
                    return false;
            }
            return true;
        },
        30);
}

RedisCluster::~RedisCluster() {
    nodes_.clear();  // stops the servers before their files go
    if (!dir_.empty()) std::system(("rm -rf " + dir_).c_str());
}

bool RedisCluster::settled() {
    return wait_until(
        [&] {
            for (const auto& n : nodes_) {
                if (n->cli({"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos)
                    return false;
            }
            return true;
        },
        10);
}

unsigned RedisCluster::slot(const std::string& key) {
    return static_cast<unsigned>(std::stoul(nodes_[0]->cli({"CLUSTER", "KEYSLOT", key})));
}

std::string RedisCluster::id(std::size_t index) {
    return nodes_[index]->cli({"CLUSTER", "MYID"});
}

std::size_t RedisCluster::owner(unsigned slot) {
    // Each node's own line ("myself") says which slots it serves: "a-b" ranges or single slots
    // (entries in brackets are slots being migrated, not served).
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        std::istringstream lines(nodes_[i]->cli({"CLUSTER", "NODES"}));
        std::string line;
        while (std::getline(lines, line)) {
            if (line.find("myself") == std::string::npos) continue;
            std::istringstream words(line);
            std::string w;
            for (int field = 0; words >> w; ++field) {
                if (field < 8 || w[0] == '[') continue;
                const std::size_t dash = w.find('-');
                const unsigned lo = static_cast<unsigned>(std::stoul(w.substr(0, dash)));
                const unsigned hi = dash == std::string::npos
                                        ? lo
                                        : static_cast<unsigned>(std::stoul(w.substr(dash + 1)));
                if (slot >= lo && slot <= hi) return i;
            }
        }
    }
    return nodes_.size();
}

std::string RedisCluster::key_on(std::size_t index, const std::string& prefix) {
    for (int n = 0;; ++n) {
        const std::string key = prefix + std::to_string(n);
        if (owner(slot(key)) == index) return key;
    }
}

}  // namespace support
