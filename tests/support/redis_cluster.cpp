// Test harness: a Redis Cluster of three masters and three replicas on 127.0.0.1 (see
// redis_cluster.hpp).
#include "redis_cluster.hpp"

#include "helpers.hpp"
#include "process.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace support {

namespace {

// One line of CLUSTER NODES: "<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link>
// <slot> ...", slots as "a-b" ranges or single slots ("[...]" entries are slots being migrated,
// not served).
struct NodeLine {
    std::string id;
    std::string flags;   // comma-separated: myself, master, slave, fail?, fail, ...
    std::string master;  // the id a replica replicates, "-" for a master
    std::vector<std::pair<unsigned, unsigned>> slots;

    bool flag(const std::string& word) const {
        return ("," + flags + ",").find("," + word + ",") != std::string::npos;
    }
    bool serves(unsigned slot) const {
        for (const auto& r : slots) {
            if (slot >= r.first && slot <= r.second) return true;
        }
        return false;
    }
};

NodeLine parse_line(const std::string& line) {
    NodeLine n;
    std::istringstream words(line);
    std::string w;
    for (int field = 0; words >> w; ++field) {
        if (field == 0) n.id = w;
        if (field == 2) n.flags = w;
        if (field == 3) n.master = w;
        if (field < 8 || w[0] == '[') continue;
        const std::size_t dash = w.find('-');
        const unsigned lo = static_cast<unsigned>(std::strtoul(w.c_str(), nullptr, 10));
        const unsigned hi =
            dash == std::string::npos
                ? lo
                : static_cast<unsigned>(std::strtoul(w.c_str() + dash + 1, nullptr, 10));
        n.slots.emplace_back(lo, hi);
    }
    return n;
}

// The line of `lines` with `id`, or an empty one.
NodeLine find_line(const std::vector<std::string>& lines, const std::string& id) {
    for (const std::string& l : lines) {
        NodeLine n = parse_line(l);
        if (n.id == id) return n;
    }
    return {};
}

NodeLine own_line(const std::vector<std::string>& lines) {
    for (const std::string& l : lines) {
        NodeLine n = parse_line(l);
        if (n.flag("myself")) return n;
    }
    return {};
}

}  // namespace

RedisCluster::RedisCluster() {
    char tmpl[] = "/tmp/resplock-cluster-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return;
    dir_ = tmpl;
    const std::string timeout = std::to_string(node_timeout_ms);
    for (std::size_t i = 0; i < 2 * master_count; ++i) {
        // Each node's files (nodes.conf, and the snapshot a replica receives) in a folder of its
        // own.
        const std::string dir = dir_ + "/" + std::to_string(i);
        if (mkdir(dir.c_str(), 0700) != 0) return;
        const std::string conf = dir + "/nodes.conf";
        // The cluster bus on a port of its own (not port + 10000, which may be taken or > 65535).
        // A replica's first sync starts at once (not after the default 5 s diskless-sync delay).
        std::unique_ptr<RedisServer> node;
        for (int attempt = 0; attempt < 5 && (!node || !node->running()); ++attempt) {
            const std::string bus = std::to_string(free_port());
            node = std::make_unique<RedisServer>(std::initializer_list<const char*>{
                "--cluster-enabled", "yes", "--cluster-config-file", conf.c_str(), "--cluster-port",
                bus.c_str(), "--cluster-node-timeout", timeout.c_str(), "--dir", dir.c_str(),
                "--repl-diskless-sync-delay", "0"});
        }
        if (!node->running()) return;
        nodes_.push_back(std::move(node));
        ids_.push_back(nodes_.back()->cli({"CLUSTER", "MYID"}));
    }
    // redis-cli makes the first three nodes given masters; which of them each of the others
    // replicates it may shuffle, so node i + 3 is then told to replicate node i.
    std::vector<std::string> create = {"redis-cli", "--cluster", "create"};
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        create.push_back(address(i));
    create.insert(create.end(), {"--cluster-replicas", "1", "--cluster-yes"});
    const Result r = run(create, {}, 60);
    if (r.code != 0) return;
    for (std::size_t m = 0; m < master_count; ++m) {
        if (!is_master(m)) return;
        const std::size_t replica = m + master_count;
        if (own_line(view(replica)).master != id(m)) {
            if (!wait_until([&] { return find_line(view(replica), id(m)).flag("master"); }, 10) ||
                nodes_[replica]->cli({"CLUSTER", "REPLICATE", id(m)}) != "OK") {
                return;
            }
        }
    }
    ok_ = wait_healthy(60);
}

RedisCluster::~RedisCluster() {
    nodes_.clear();  // stops the servers before their files go
    if (!dir_.empty()) std::system(("rm -rf " + dir_).c_str());
}

std::string RedisCluster::address(std::size_t index) const {
    return "127.0.0.1:" + std::to_string(nodes_[index]->port());
}

std::vector<std::string> RedisCluster::view(std::size_t i) {
    std::vector<std::string> lines;
    std::istringstream text(nodes_[i]->cli({"CLUSTER", "NODES"}));
    std::string line;
    while (std::getline(text, line)) {
        if (!line.empty()) lines.push_back(line);
    }
    return lines;
}

bool RedisCluster::settled() {
    return wait_until(
        [&] {
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                if (up(i) && nodes_[i]->cli({"CLUSTER", "INFO"}).find("cluster_state:ok") ==
                                 std::string::npos) {
                    return false;
                }
            }
            return true;
        },
        10);
}

unsigned RedisCluster::slot(const std::string& key) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (up(i)) {
            return static_cast<unsigned>(
                std::strtoul(nodes_[i]->cli({"CLUSTER", "KEYSLOT", key}).c_str(), nullptr, 10));
        }
    }
    return 16384;
}

std::size_t RedisCluster::owner(unsigned slot) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (up(i) && own_line(view(i)).serves(slot)) return i;
    }
    return nodes_.size();
}

std::string RedisCluster::key_on(std::size_t index, const std::string& prefix) {
    const NodeLine own = own_line(view(index));
    for (int n = 0; n < 100000; ++n) {
        const std::string key = prefix + std::to_string(n);
        if (own.serves(slot(key))) return key;
    }
    return {};
}

std::string RedisCluster::own(std::size_t i) {
    for (const std::string& line : view(i)) {
        if (parse_line(line).flag("myself")) return line;
    }
    return {};
}

bool RedisCluster::is_master(std::size_t i) {
    const NodeLine own = own_line(view(i));
    return own.flag("master") && !own.slots.empty();
}

std::size_t RedisCluster::replica_of(std::size_t master) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (i == master || !up(i)) continue;
        const NodeLine own = own_line(view(i));
        if (own.flag("slave") && own.master == id(master)) return i;
    }
    return nodes_.size();
}

bool RedisCluster::linked(std::size_t replica) {
    return nodes_[replica]->cli({"INFO", "replication"}).find("master_link_status:up") !=
           std::string::npos;
}

bool RedisCluster::healthy() {
    auto unhealthy = [&](const std::string& why) {
        unhealthy_ = why;
        return false;
    };
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const std::string node = "node " + std::to_string(i);
        if (!up(i)) return unhealthy(node + " is not running");
        if (nodes_[i]->cli({"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos) {
            return unhealthy(node + ": cluster_state is not ok");
        }
        const std::vector<std::string> lines = view(i);
        for (std::size_t j = 0; j < nodes_.size(); ++j) {
            const NodeLine n = find_line(lines, id(j));
            const std::string seen = node + " sees node " + std::to_string(j) + " as " + n.flags;
            if (n.flag("fail") || n.flag("fail?")) return unhealthy(seen);
            if (j < master_count && (!n.flag("master") || n.slots.empty())) {
                return unhealthy(seen + " serving " + std::to_string(n.slots.size()) + " ranges");
            }
            if (j >= master_count && (!n.flag("slave") || n.master != id(j - master_count))) {
                return unhealthy(seen + " of " + n.master);
            }
        }
        if (i >= master_count && !linked(i)) return unhealthy(node + ": link to master down");
    }
    unhealthy_.clear();
    return true;
}

bool RedisCluster::wait_healthy(double timeout_s) {
    return wait_until([&] { return healthy(); }, timeout_s);
}

bool RedisCluster::promoted(std::size_t replica, double timeout_s) {
    return wait_until(
        [&] {
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                if (!up(i)) continue;
                const NodeLine n = find_line(view(i), id(replica));
                if (!n.flag("master") || n.flag("fail") || n.flag("fail?") || n.slots.empty()) {
                    return false;
                }
                if (nodes_[i]->cli({"CLUSTER", "INFO"}).find("cluster_state:ok") ==
                    std::string::npos) {
                    return false;
                }
            }
            return true;
        },
        timeout_s);
}

bool RedisCluster::set_node_timeout(int ms) {
    bool all = true;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (!up(i)) continue;
        all =
            nodes_[i]->cli({"CONFIG", "SET", "cluster-node-timeout", std::to_string(ms)}) == "OK" &&
            all;
    }
    return all;
}

bool RedisCluster::restore(double timeout_s) {
    const auto start = Clock::now();
    auto left = [&] { return timeout_s - seconds_since(start); };
    auto failed = [&](const char* what, std::size_t i) {
        std::printf("    restore: %s (node %zu) after %.1f s; nodes as each sees itself:\n", what,
                    i, seconds_since(start));
        for (std::size_t j = 0; j < nodes_.size(); ++j) {
            if (up(j)) std::printf("      %zu: %s\n", j, own(j).c_str());
        }
        return false;
    };
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (!nodes_[i]->running() && !nodes_[i]->restart()) return failed("no restart", i);
        if (nodes_[i]->paused() && !nodes_[i]->resume()) return failed("no SIGCONT", i);
    }
    for (std::size_t m = 0; m < master_count; ++m) {
        // A former master comes back as a replica of the node that took over (once it has heard
        // of the failover); with its link up it can take its role back.
        for (int attempt = 0; attempt < 3 && !is_master(m); ++attempt) {
            if (!wait_until(
                    [&] {
                        if (is_master(m)) return true;
                        return own_line(view(m)).flag("slave") && linked(m);
                    },
                    left())) {
                return failed("not back as a linked replica", m);
            }
            if (is_master(m)) break;
            (void)nodes_[m]->cli({"CLUSTER", "FAILOVER"});
            (void)wait_until([&] { return is_master(m); }, 10);
        }
        if (!is_master(m)) return failed("not master again", m);
    }
    return wait_healthy(left() > 5 ? left() : 5) ||
           failed(("not healthy: " + unhealthy_).c_str(), 0);
}

bool RedisCluster::migrate(unsigned slot, std::size_t from, std::size_t to) {
    const std::string s = std::to_string(slot);
    return nodes_[to]->cli({"CLUSTER", "SETSLOT", s, "IMPORTING", id(from)}) == "OK" &&
           nodes_[from]->cli({"CLUSTER", "SETSLOT", s, "MIGRATING", id(to)}) == "OK";
}

bool RedisCluster::stabilize(unsigned slot, std::size_t from, std::size_t to) {
    const std::string s = std::to_string(slot);
    const bool a = nodes_[from]->cli({"CLUSTER", "SETSLOT", s, "STABLE"}) == "OK";
    const bool b = nodes_[to]->cli({"CLUSTER", "SETSLOT", s, "STABLE"}) == "OK";
    return a && b;
}

bool RedisCluster::unserve(unsigned slot) {
    // On every node: one that kept the slot in its table would go on redirecting to the node it
    // knew, and views that disagree could outlive the test. Until no node's view has an owner for
    // it: a node whose table no longer holds the slot takes it back from the gossip of a node
    // that has not deleted it yet (a replica's ping carries its master's slots), so one round
    // can leave a node redirecting to an owner that no longer claims the slot.
    auto owned_anywhere = [&] {
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            if (!up(i)) continue;
            for (const std::string& line : view(i)) {
                if (parse_line(line).serves(slot)) return true;
            }
        }
        return false;
    };
    return wait_until(
        [&] {
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                if (up(i)) (void)nodes_[i]->cli({"CLUSTER", "DELSLOTS", std::to_string(slot)});
            }
            sleep_ms(200);  // a gossip round in flight may still bring it back
            return !owned_anywhere();
        },
        20);
}

bool RedisCluster::serve(unsigned slot, std::size_t owner) {
    (void)nodes_[owner]->cli({"CLUSTER", "ADDSLOTS", std::to_string(slot)});
    return wait_until(
        [&] {
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                if (!up(i)) continue;
                if (!find_line(view(i), id(owner)).serves(slot) ||
                    nodes_[i]->cli({"CLUSTER", "INFO"}).find("cluster_state:ok") ==
                        std::string::npos) {
                    return false;
                }
            }
            return true;
        },
        10);
}

std::string RedisCluster::second_reply(std::size_t i, const std::string& first,
                                       const std::vector<std::string>& args) {
    std::string command;
    for (const std::string& a : args)
        command += (command.empty() ? "" : " ") + a;
    const Result r = run({"sh", "-c",
                          "printf '%s\\n' " + first + " '" + command +
                              "' | redis-cli -h 127.0.0.1 -p " + std::to_string(nodes_[i]->port())},
                         {}, 10);
    // "OK\n<reply>\n": the reply to `first`, then the one to the command.
    std::string out = r.out;
    if (!out.empty() && out.back() == '\n') out.pop_back();
    const std::size_t nl = out.find('\n');
    return nl == std::string::npos ? std::string() : out.substr(nl + 1);
}

long long RedisCluster::calls(std::size_t i, const std::string& command) {
    const std::string stats = nodes_[i]->cli({"INFO", "commandstats"});
    const std::string label = "cmdstat_" + command + ":calls=";
    const std::size_t at = stats.find(label);
    return at == std::string::npos ? 0 : std::atoll(stats.c_str() + at + label.size());
}

SlotMigration::SlotMigration(RedisCluster& cluster, unsigned slot, std::size_t from, std::size_t to,
                             std::vector<std::string> keys)
    : cluster_(cluster),
      slot_(slot),
      from_(from),
      to_(to),
      keys_(std::move(keys)),
      started_(cluster.migrate(slot, from, to)) {}

SlotMigration::~SlotMigration() {
    for (const std::string& key : keys_)
        (void)cluster_.asking(to_, {"DEL", key});
    if (!cluster_.stabilize(slot_, from_, to_)) {
        std::printf("    slot %u could not be made stable again on nodes %zu and %zu\n", slot_,
                    from_, to_);
    }
}

}  // namespace support
