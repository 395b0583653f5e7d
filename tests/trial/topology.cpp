// The trial's topologies and their faults: see topology.hpp.
#include "topology.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>

#include "fault_proxy.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_cluster.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"

namespace trial {

namespace {

using support::FaultProxy;
using support::RedisServer;

constexpr const char* fault_names[] = {
    "kill-master",  "restart-empty",  "pause-node", "sentinel-failover", "migrate-slot",
    "script-flush", "pause-client",   "partition",  "clock-jump",        "freeze-sentinel",
    "split-brain",  "freeze-replica", "two-faults"};
static_assert(sizeof fault_names / sizeof *fault_names == fault_count, "a name for each fault");

std::string url(std::uint16_t port) {
    return "redis://127.0.0.1:" + std::to_string(port);
}

// A proxy that stops forwarding both ways (the sockets stay open: a cut, not a refusal).
void cut(FaultProxy& proxy) {
    support::Fault stall;
    stall.stall = true;
    proxy.set(support::Way::to_server, stall);
    proxy.set(support::Way::to_client, stall);
}

// A port as a RESP bulk string, the way a sentinel's reply carries it.
std::string bulk(std::uint16_t port) {
    const std::string p = std::to_string(port);
    return "$" + std::to_string(p.size()) + "\r\n" + p + "\r\n";
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
            case Fault::partition:
                for (auto& p : proxies_[1])
                    cut(*p);
                return true;
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
    Sentinel() : t_("trial", [this](std::uint16_t port) { return front(port); }) {
        if (!t_.ok()) return;
        for (std::size_t i = 0; i < t_.sentinels(); ++i) {
            sentinel_proxies_.push_back(std::make_unique<FaultProxy>(t_.sentinel_port(i)));
            for (const auto& [port, ways] : fronts_)
                sentinel_proxies_.back()->rewrite(bulk(ways.shared->port()),
                                                  bulk(ways.group1->port()));
        }
        // Group 1's way to the sentinels names group 1's way to the master.
        const std::string named = support::run({"redis-cli", "-h", "127.0.0.1", "-p",
                                                std::to_string(sentinel_proxies_[0]->port()),
                                                "SENTINEL", "get-master-addr-by-name", t_.name()},
                                               {}, 10)
                                      .out;
        ok_ = named == "127.0.0.1\n" + std::to_string(way1(t_.master())) + "\n";
        if (!ok_) std::fprintf(stderr, "    group 1's sentinel proxy named %s\n", named.c_str());
    }
    bool ok() const override { return ok_; }
    std::vector<std::string> client_target(int group) const override {
        std::vector<std::string> v = {"sentinel", t_.name()};
        for (const std::uint16_t p : sentinel_ports(group))
            v.push_back(std::to_string(p));
        return v;
    }
    std::vector<std::string> cli_target(int group) const override {
        std::string u = "redis-sentinel://";
        for (const std::uint16_t p : sentinel_ports(group))
            u += (u.back() == '/' ? "127.0.0.1:" : ",127.0.0.1:") + std::to_string(p);
        return {"--url", u + "#" + t_.name()};
    }
    int hold_ms(Fault f) const override {
        switch (f) {
            case Fault::pause_node:  // longer than down-after plus the failover
            case Fault::split_brain:
                return 7000;
            case Fault::freeze_sentinel:
                // Long enough for the connections opened before it to be used up: each
                // confirmed write closes its connection, and the next one asks the sentinels.
                return 10000;
            case Fault::freeze_replica:
                return 3000;
            case Fault::partition:
                return 2500;
            default:
                return 0;
        }
    }
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
                // may bring a node back in another role.
                victim_->kill();
                if (!t_.restart(*victim_)) return fail("restart failed");
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
            case Fault::partition:
                // Group 1 alone, cut off from every server and sentinel.
                for (auto& [port, ways] : fronts_)
                    cut(*ways.group1);
                for (auto& p : sentinel_proxies_)
                    cut(*p);
                return true;
            case Fault::split_brain:
                // The master and group 1 on one side; the sentinels, the replicas and group 0 on
                // the other.
                for (auto& [port, ways] : fronts_)
                    cut(port == former_ ? *ways.shared : *ways.group1);
                for (auto& p : sentinel_proxies_)
                    cut(*p);
                return true;
            case Fault::freeze_sentinel:
                // The first sentinel of every client's list.
                return t_.pause_sentinel(0) || fail("SIGSTOP of the first sentinel failed");
            case Fault::freeze_replica:
                frozen_ = &t_.replica(0);
                return frozen_->pause() || fail("SIGSTOP of a replica failed");
            case Fault::two_faults:
                if (!t_.pause_sentinel(0)) return fail("SIGSTOP of the first sentinel failed");
                victim_->kill();
                return true;
            default:
                return fail("not a fault of this topology");
        }
    }
    bool heal(Fault f) override {
        bool ok = true;
        switch (f) {
            case Fault::kill_master:
                // The sentinels promote a replica; then the old master comes back (empty) and is
                // made a replica of the new one.
                if (!t_.wait_new_master(former_, 30)) return fail("no failover after kill -9");
                if (!t_.restart(*victim_)) return fail("restart failed");
                break;
            case Fault::pause_node:
                victim_->resume();
                break;
            case Fault::split_brain:
                // The majority side has failed over meanwhile; the old master is turned into a
                // replica once the sentinels reach it again.
                ok = t_.wait_new_master(former_, 30) || fail("no failover during the split brain");
                [[fallthrough]];
            case Fault::partition:
                for (auto& [port, ways] : fronts_) {
                    ways.shared->pass_through();
                    ways.group1->pass_through();
                }
                for (auto& p : sentinel_proxies_)
                    p->pass_through();
                break;
            case Fault::freeze_sentinel:
                if (!t_.resume_sentinel(0) || !out_of_tilt(0))
                    return fail("the first sentinel did not come back: " + error_);
                break;
            case Fault::freeze_replica:
                if (frozen_ == nullptr || !frozen_->resume()) return fail("SIGCONT failed");
                break;
            case Fault::two_faults:
                // The two others fail over; then the frozen one comes back, and the old master.
                ok = t_.wait_new_master(former_, 30) || fail("no failover after kill -9");
                if (!t_.restart(*victim_)) return fail("restart failed");
                if (!t_.resume_sentinel(0) || !out_of_tilt(0))
                    return fail("the first sentinel did not come back: " + error_);
                break;
            default:
                break;
        }
        return settle() && ok;
    }

  private:
    // The two ways to a server: the shared one (sentinels, replication, group 0), whose port it
    // announces, and group 1's.
    struct Ways {
        std::unique_ptr<FaultProxy> shared, group1;
    };
    std::uint16_t front(std::uint16_t port) {
        Ways& w = fronts_[port];
        w.shared = std::make_unique<FaultProxy>(port);
        w.group1 = std::make_unique<FaultProxy>(port);
        return w.group1->port() == 0 ? 0 : w.shared->port();
    }
    std::uint16_t way1(const RedisServer& node) const {
        const auto it = fronts_.find(node.port());
        return it == fronts_.end() ? 0 : it->second.group1->port();
    }
    // The sentinels as group 0 (directly) or group 1 (through its proxies) reaches them, in the
    // same order.
    std::vector<std::uint16_t> sentinel_ports(int group) const {
        std::vector<std::uint16_t> v;
        for (std::size_t i = 0; i < t_.sentinels(); ++i)
            v.push_back(group == 0 ? t_.sentinel_port(i) : sentinel_proxies_[i]->port());
        return v;
    }
    // Until sentinel i, back from a freeze, has left the TILT mode it enters when its timer
    // jumped (for 30 s: it watches but does not act, and its view may be stale). The fault lasts
    // until then, so that its effects do not spill over into the next one.
    bool out_of_tilt(std::size_t i) {
        return support::wait_until(
                   [&] {
                       return t_.sentinel_cli(i, {"INFO", "sentinel"}).find("sentinel_tilt:0") !=
                              std::string::npos;
                   },
                   40) ||
               fail("still in TILT mode after 40 s");
    }
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
    // Declared before t_, which asks front() for each server as it starts them.
    std::map<std::uint16_t, Ways> fronts_;  // a server's own port -> its proxies
    support::SentinelTopology t_;
    std::vector<std::unique_ptr<FaultProxy>> sentinel_proxies_;  // group 1's, in t_'s order
    bool ok_ = false;
    RedisServer* victim_ = nullptr;
    RedisServer* frozen_ = nullptr;
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
        return f == Fault::pause_node       ? 4000
               : f == Fault::migrate_slot   ? 2000
               : f == Fault::freeze_replica ? 3000
                                            : 0;
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
            case Fault::freeze_replica:
                frozen_ = c_.replica_of(owner_);
                if (frozen_ >= c_.size()) return fail("the key's master has no replica");
                return c_.pause(frozen_) || fail("SIGSTOP of the replica failed");
            case Fault::two_faults:
                // A resharding interrupted by a failover: the slot MIGRATING, its keys moved to
                // the importing node, and for half a second new keys created there (-ASK); then
                // the master is killed before the move is finished.
                target_ = (owner_ + 1) % RedisCluster::master_count;
                if (!open_move(owner_, target_)) return false;
                migrate_keys(owner_, target_);
                support::sleep_ms(500);
                migrate_keys(owner_, target_);
                c_.kill(owner_);
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
        if (f == Fault::two_faults) {
            // The importing node takes no other node's claim to the slot it imports: it keeps
            // the slot on the dead master, so it is down (cluster_state:fail, -CLUSTERDOWN for
            // every slot it serves) until the move is finished, which the heal does as an
            // operator would, from the promoted replica (with the keys it holds now), once the
            // importing node has heard of the promotion. Then the slot goes back to the promoted
            // replica, so that the old master, restarted, finds every slot it had there and
            // becomes its replica (a master that loses its last slot to a node replicates it).
            if (!support::wait_until([&] { return open_move(replica, target_); }, 30))
                return fail("no failover after kill -9: " + error_);
            if (!move(replica, target_) || !move(target_, replica)) return false;
        }
        if (f == Fault::pause_node) c_.resume(owner_);
        if (f == Fault::freeze_replica && !c_.resume(frozen_)) return fail("SIGCONT failed");
        if (f == Fault::migrate_slot && !move((owner_ + 1) % RedisCluster::master_count, owner_))
            return false;
        return c_.restore(60) || fail("the cluster did not come back to its shape");
    }

  private:
    using RedisCluster = support::RedisCluster;
    // CLUSTER SETSLOT IMPORTING on `to`, then MIGRATING on `from` (RedisCluster::migrate), with
    // the refusal in the report.
    bool open_move(std::size_t from, std::size_t to) {
        const std::string s = std::to_string(slot_);
        const std::string a = c_.node(to).cli({"CLUSTER", "SETSLOT", s, "IMPORTING", c_.id(from)});
        if (a != "OK")
            return fail("CLUSTER SETSLOT IMPORTING on node " + std::to_string(to) + ": " + a);
        const std::string b = c_.node(from).cli({"CLUSTER", "SETSLOT", s, "MIGRATING", c_.id(to)});
        if (b != "OK")
            return fail("CLUSTER SETSLOT MIGRATING on node " + std::to_string(from) + ": " + b);
        return true;
    }
    // MIGRATE of every key the slot holds on `from` to `to` (again while new ones appear),
    // replacing a key of the same name there (left by an interrupted move).
    void migrate_keys(std::size_t from, std::size_t to) {
        const std::string s = std::to_string(slot_);
        for (int round = 0; round < 50; ++round) {
            const std::string keys = c_.node(from).cli({"CLUSTER", "GETKEYSINSLOT", s, "100"});
            if (keys.empty()) break;
            std::vector<std::string> args = {
                "MIGRATE", "127.0.0.1", std::to_string(c_.node(to).port()), "", "0", "5000",
                "REPLACE", "KEYS"};
            for (std::size_t at = 0; at < keys.size();) {
                std::size_t end = keys.find('\n', at);
                if (end == std::string::npos) end = keys.size();
                args.push_back(keys.substr(at, end - at));
                at = end + 1;
            }
            c_.node(from).cli(args);  // NOKEY when the keys went meanwhile: the next round sees
        }
    }
    // Moves the key's slot from one master to another under load: IMPORTING/MIGRATING, MIGRATE
    // of every key the slot holds (again while new ones appear), then SETSLOT NODE everywhere.
    bool move(std::size_t from, std::size_t to) {
        if (!open_move(from, to)) return false;
        const std::string s = std::to_string(slot_);
        migrate_keys(from, to);
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
    std::size_t target_ = 0;  // two-faults: where the interrupted move was going
    std::size_t frozen_ = 0;  // freeze-replica: the replica stopped
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
            return kind == "single" || kind == "quorum" || kind == "sentinel";
        case Fault::freeze_sentinel:
        case Fault::split_brain:
            return kind == "sentinel";
        case Fault::freeze_replica:  // and only where locks wait for replicas (trial.cpp)
        case Fault::two_faults:
            return kind == "sentinel" || kind == "cluster";
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
