// The trial's topologies and their faults: see topology.hpp.
#include "topology.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <functional>

#include "fault_proxy.hpp"
#include "helpers.hpp"
#include "redis_cluster.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"

namespace trial {

namespace {

using support::FaultProxy;
using support::RedisServer;

constexpr const char* fault_names[] = {"kill-master",       "restart-empty", "pause-node",
                                       "sentinel-failover", "migrate-slot",  "script-flush",
                                       "pause-client",      "partition",     "clock-jump"};

std::string url(std::uint16_t port) {
    return "redis://127.0.0.1:" + std::to_string(port);
}

// A private folder for append-only files, removed with the object.
class Folder {
  public:
    Folder() {
        char tmpl[] = "/tmp/resplock-trial-XXXXXX";
        if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
    }
    ~Folder() {
        if (!path_.empty()) std::system(("rm -rf " + path_).c_str());
    }
    Folder(const Folder&) = delete;
    Folder& operator=(const Folder&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// Servers with a proxy per client group in front of each: single (one) and quorum (five).
class Proxied : public Topology {
  public:
    Proxied(std::size_t servers, bool persistence) {
        for (std::size_t i = 0; i < servers; ++i) {
            if (persistence) {
                const std::string dir = folder_.path() + "/" + std::to_string(i);
                mkdir(dir.c_str(), 0700);
                dirs_.push_back(dir);
                servers_.push_back(std::make_unique<RedisServer>(
                    std::initializer_list<const char*>{"--appendonly", "yes", "--appendfsync",
                                                       "always", "--dir", dirs_.back().c_str()}));
            } else {
                servers_.push_back(std::make_unique<RedisServer>());
            }
            for (auto& group : proxies_)
                group.push_back(std::make_unique<FaultProxy>(servers_.back()->port()));
        }
    }
    bool ok() const override {
        for (const auto& s : servers_)
            if (!s->running()) return false;
        for (const auto& group : proxies_)
            for (const auto& p : group)
                if (p->port() == 0) return false;
        return true;
    }
    std::vector<std::string> client_target(int group) const override {
        std::vector<std::string> t = {servers_.size() == 1 ? "single" : "quorum"};
        for (const auto& p : proxies_[group])
            t.push_back(std::to_string(p->port()));
        return t;
    }
    std::vector<std::string> cli_target(int group) const override {
        std::string urls;
        for (const auto& p : proxies_[group])
            urls += (urls.empty() ? "" : ",") + url(p->port());
        return {"--url", urls};
    }
    int hold_ms(Fault f) const override {
        // Killed servers stay down a little longer than a TTL (what the quorum lock asks of a
        // restart without persistence); paused and partitioned ones 2.5 TTLs.
        return f == Fault::kill_master                           ? 1200
               : f == Fault::pause_node || f == Fault::partition ? 2500
                                                                 : 0;
    }
    bool inject(Fault f) override {
        RedisServer& victim = *servers_[next_ % servers_.size()];
        switch (f) {
            case Fault::kill_master:
                victim.kill();
                return true;
            case Fault::restart_empty:
                victim.kill();
                return victim.restart() || fail("restart failed");
            case Fault::pause_node:
                return victim.pause();
            case Fault::script_flush:
                for (auto& s : servers_)
                    if (s->cli({"SCRIPT", "FLUSH"}) != "OK") return fail("SCRIPT FLUSH failed");
                return true;
            case Fault::partition: {
                support::Fault stall;
                stall.stall = true;
                for (auto& p : proxies_[1]) {
                    p->set(support::Way::to_server, stall);
                    p->set(support::Way::to_client, stall);
                }
                return true;
            }
            default:
                return fail("not a fault of this topology");
        }
    }
    bool heal(Fault f) override {
        RedisServer& victim = *servers_[next_++ % servers_.size()];
        switch (f) {
            case Fault::kill_master:
                return victim.restart() || fail("restart failed");
            case Fault::pause_node:
                return victim.resume() || fail("SIGCONT failed");
            case Fault::partition:
                for (auto& p : proxies_[1])
                    p->pass_through();
                return true;
            default:
                return true;
        }
    }

  private:
    bool fail(const std::string& why) {
        error_ = why;
        return false;
    }
    Folder folder_;
    std::vector<std::string> dirs_;
    std::vector<std::unique_ptr<RedisServer>> servers_;
    std::vector<std::unique_ptr<FaultProxy>> proxies_[2];
    std::size_t next_ = 0;  // the quorum's faults go round its servers
};

class Sentinel : public Topology {
  public:
    Sentinel() : t_("trial") {}
    bool ok() const override { return t_.ok(); }
    std::vector<std::string> client_target(int) const override {
        std::vector<std::string> v = {"sentinel", t_.name()};
        for (std::size_t i = 0; i < t_.sentinels(); ++i)
            v.push_back(std::to_string(t_.sentinel_port(i)));
        return v;
    }
    std::vector<std::string> cli_target(int) const override { return {"--url", t_.url()}; }
    int hold_ms(Fault f) const override { return f == Fault::pause_node ? 7000 : 0; }
    bool inject(Fault f) override {
        victim_ = &t_.master();
        former_ = victim_->port();
        switch (f) {
            case Fault::kill_master:
                victim_->kill();
                return true;
            case Fault::restart_empty:
                // Back as the master it was, empty: Sentinel rewrites a promoted node's
                // configuration file, but the fixture starts its servers with arguments, which
                // would bring an originally replica node back as a replica.
                victim_->kill();
                if (!victim_->restart()) return fail("restart failed");
                return victim_->cli({"REPLICAOF", "NO", "ONE"}) == "OK" ||
                       fail("REPLICAOF NO ONE failed");
            case Fault::pause_node:
                return victim_->pause();
            case Fault::sentinel_failover:
                return t_.failover() || fail("SENTINEL FAILOVER failed");
            case Fault::script_flush:
                for (std::size_t i = 0; i <= t_.replicas(); ++i) {
                    RedisServer& s = i == 0 ? t_.master() : t_.replica(i - 1);
                    if (s.cli({"SCRIPT", "FLUSH"}) != "OK") return fail("SCRIPT FLUSH failed");
                }
                return true;
            default:
                return fail("not a fault of this topology");
        }
    }
    bool heal(Fault f) override {
        if (f == Fault::kill_master) {
            // The sentinels promote a replica; then the old master comes back (empty) and is
            // made a replica of the new one.
            if (!t_.wait_new_master(former_, 30)) return fail("no failover after kill -9");
            if (!victim_->restart()) return fail("restart failed");
        }
        if (f == Fault::pause_node) victim_->resume();
        return settle();
    }

  private:
    // Until every sentinel names one master that has every other server as its replica; the
    // master may have changed (a failover).
    bool settle() {
        const auto start = support::Clock::now();
        while (support::seconds_since(start) < 40) {
            if (t_.settled()) return true;
            t_.wait_new_master(t_.master().port(), 1);
        }
        return fail("sentinels did not settle");
    }
    bool fail(const std::string& why) {
        error_ = why;
        return false;
    }
    support::SentinelTopology t_;
    RedisServer* victim_ = nullptr;
    std::uint16_t former_ = 0;
};

class Cluster : public Topology {
  public:
    explicit Cluster(const std::string& key) : key_(key) {
        if (c_.ok()) slot_ = c_.slot(key_);
    }
    bool ok() const override { return c_.ok(); }
    std::vector<std::string> client_target(int) const override {
        return {"cluster", std::to_string(c_.node(0).port())};
    }
    std::vector<std::string> cli_target(int) const override {
        return {"--url", url(c_.node(0).port())};
    }
    int hold_ms(Fault f) const override {
        return f == Fault::pause_node ? 4000 : f == Fault::migrate_slot ? 2000 : 0;
    }
    bool inject(Fault f) override {
        owner_ = c_.owner(slot_);
        if (owner_ >= c_.size()) return fail("no node serves the key's slot");
        switch (f) {
            case Fault::kill_master:
                c_.kill(owner_);
                return true;
            case Fault::restart_empty:
                c_.kill(owner_);
                return c_.restart(owner_) || fail("restart failed");
            case Fault::pause_node:
                return c_.pause(owner_);
            case Fault::migrate_slot:
                return move(owner_, (owner_ + 1) % RedisCluster::master_count);
            case Fault::script_flush:
                for (std::size_t i = 0; i < c_.size(); ++i)
                    if (c_.node(i).cli({"SCRIPT", "FLUSH"}) != "OK")
                        return fail("SCRIPT FLUSH failed");
                return true;
            default:
                return fail("not a fault of this topology");
        }
    }
    bool heal(Fault f) override {
        const std::size_t replica = owner_ < RedisCluster::master_count
                                        ? owner_ + RedisCluster::master_count
                                        : owner_ - RedisCluster::master_count;
        if (f == Fault::kill_master && !c_.promoted(replica))
            return fail("no failover after kill -9");
        if (f == Fault::pause_node) c_.resume(owner_);
        if (f == Fault::migrate_slot && !move((owner_ + 1) % RedisCluster::master_count, owner_))
            return false;
        return c_.restore(60) || fail("the cluster did not come back to its shape");
    }

  private:
    using RedisCluster = support::RedisCluster;
    // Moves the key's slot from one master to another under load: IMPORTING/MIGRATING, MIGRATE
    // of every key the slot holds (again while new ones appear), then SETSLOT NODE everywhere.
    bool move(std::size_t from, std::size_t to) {
        if (!c_.migrate(slot_, from, to)) return fail("CLUSTER SETSLOT IMPORTING/MIGRATING failed");
        const std::string s = std::to_string(slot_);
        for (int round = 0; round < 50; ++round) {
            const std::string keys = c_.node(from).cli({"CLUSTER", "GETKEYSINSLOT", s, "100"});
            if (keys.empty()) break;
            std::vector<std::string> args = {
                "MIGRATE", "127.0.0.1", std::to_string(c_.node(to).port()), "", "0",
                "5000",    "KEYS"};
            for (std::size_t at = 0; at < keys.size();) {
                std::size_t end = keys.find('\n', at);
                if (end == std::string::npos) end = keys.size();
                args.push_back(keys.substr(at, end - at));
                at = end + 1;
            }
            c_.node(from).cli(args);  // NOKEY when the keys went meanwhile: the next round sees
        }
        for (std::size_t i = 0; i < c_.size(); ++i) {
            if (!c_.up(i)) continue;
            const std::string r = c_.node(i).cli({"CLUSTER", "SETSLOT", s, "NODE", c_.id(to)});
            if (r != "OK" && c_.is_master(i)) return fail("CLUSTER SETSLOT NODE: " + r);
        }
        return c_.settled() || fail("the cluster did not settle after the move");
    }
    bool fail(const std::string& why) {
        error_ = why;
        return false;
    }
    mutable RedisCluster c_;
    std::string key_;
    unsigned slot_ = 0;
    std::size_t owner_ = 0;
};

}  // namespace

bool applies(const std::string& kind, Fault f) {
    switch (f) {
        case Fault::pause_client:
        case Fault::clock_jump:
        case Fault::kill_master:
        case Fault::pause_node:
        case Fault::script_flush:
            return true;
        case Fault::partition:
            return kind == "single" || kind == "quorum";
        case Fault::restart_empty:
            return true;
        case Fault::sentinel_failover:
            return kind == "sentinel";
        case Fault::migrate_slot:
            return kind == "cluster";
    }
    return false;
}

const char* to_string(Fault fault) {
    return fault_names[static_cast<int>(fault)];
}

bool parse_fault(const std::string& name, Fault& fault) {
    for (std::size_t i = 0; i < sizeof fault_names / sizeof *fault_names; ++i) {
        if (name == fault_names[i]) {
            fault = static_cast<Fault>(i);
            return true;
        }
    }
    return false;
}

std::unique_ptr<Topology> start(const std::string& kind, bool persistence, const std::string& key) {
    if (kind == "single") return std::make_unique<Proxied>(1, persistence);
    if (kind == "quorum") return std::make_unique<Proxied>(5, persistence);
    if (kind == "sentinel") return std::make_unique<Sentinel>();
    if (kind == "cluster") return std::make_unique<Cluster>(key);
    return nullptr;
}

}  // namespace trial
