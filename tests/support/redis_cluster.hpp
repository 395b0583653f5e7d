// Test harness: a Redis Cluster as people deploy it, on free 127.0.0.1 ports: three masters
// (nodes 0, 1, 2) with one replica each (node 3 replicates node 0, 4 node 1, 5 node 2), made
// with `redis-cli --cluster create --cluster-replicas 1`. Each node is a RedisServer, so each is
// stopped when the object goes away or the test process dies. The node timeout is short
// (node_timeout_ms), so that a test can stop or kill a master and see its replica take over within
// seconds; restore() brings back that shape afterwards.
#ifndef RESPLOCK_TESTS_REDIS_CLUSTER_HPP
#define RESPLOCK_TESTS_REDIS_CLUSTER_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"

namespace support {

class RedisCluster {
  public:
    static constexpr std::size_t master_count = 3;
    // cluster-node-timeout: a node silent for longer is failed by the others (then its replica
    // takes over, about a second later).
    static constexpr int node_timeout_ms = 1500;

    // Starts the six servers (cluster mode, the cluster bus on a second free port each), joins
    // them into one cluster and waits (up to 60 s) for healthy().
    RedisCluster();
    ~RedisCluster();
    RedisCluster(const RedisCluster&) = delete;
    RedisCluster& operator=(const RedisCluster&) = delete;

    bool ok() const { return ok_; }
    std::size_t size() const { return nodes_.size(); }
    RedisServer& node(std::size_t i) { return *nodes_[i]; }
    // Whether node i runs and is not stopped (the helpers below ask only such nodes).
    bool up(std::size_t i) const { return nodes_[i]->running() && !nodes_[i]->paused(); }

    // The slot of `key` (CLUSTER KEYSLOT, asked of a node that is up).
    unsigned slot(const std::string& key);
    // The index of the node serving `slot` now, as that node itself says (CLUSTER NODES), among
    // the nodes that are up; size() if none.
    std::size_t owner(unsigned slot);
    // A key "<prefix><n>" whose slot node `index` serves.
    std::string key_on(std::size_t index, const std::string& prefix);
    // The node id of node `index` (CLUSTER MYID, read once at start: it never changes).
    std::string id(std::size_t index) const { return ids_[index]; }
    // "127.0.0.1:PORT" of node `index`.
    std::string address(std::size_t index) const;
    // Waits (up to 10 s) until every node that is up answers cluster_state:ok.
    bool settled();

    // Whether node i says it is a master serving slots (its own line of CLUSTER NODES).
    bool is_master(std::size_t i);
    // The node that says it replicates node `master` (its own line of CLUSTER NODES), among the
    // nodes that are up; size() if none.
    std::size_t replica_of(std::size_t master);
    // Whether node `replica` has its link to its master up (INFO replication).
    bool linked(std::size_t replica);
    // The shape the constructor made, everywhere: nodes 0..2 masters serving slots, node i + 3
    // replicating node i with its link up, cluster_state:ok on every node, and every node seeing
    // every other in that role without a fail flag. Asked once (no wait).
    bool healthy();

    // SIGSTOP / SIGCONT node i (see RedisServer::pause).
    bool pause(std::size_t i) { return nodes_[i]->pause(); }
    bool resume(std::size_t i) { return nodes_[i]->resume(); }
    // SIGKILL node i (its data is gone); restart() starts it again with its nodes.conf, so it
    // rejoins the cluster as the node it was (a replica, if it was failed over meanwhile).
    void kill(std::size_t i) { nodes_[i]->kill(); }
    bool restart(std::size_t i) { return nodes_[i]->restart(); }
    // Waits until every node that is up sees node `replica` as a master serving slots without a
    // fail flag, and answers cluster_state:ok: a failover to it is visible everywhere.
    bool promoted(std::size_t replica, double timeout_s = 30);
    // CONFIG SET cluster-node-timeout on every node that is up (a long one keeps a stopped or
    // killed node from being failed over for as long as a test needs).
    bool set_node_timeout(int ms);
    // Undoes the faults: restarts killed nodes, resumes stopped ones, gives each of nodes 0..2
    // its master role back (CLUSTER FAILOVER on it) and waits for healthy().
    bool restore(double timeout_s = 60);

    // Starts moving `slot` from node `from` to node `to`: `to` IMPORTING from `from`, then `from`
    // MIGRATING to `to`. A key of the slot that `from` does not have is then answered with -ASK.
    bool migrate(unsigned slot, std::size_t from, std::size_t to);
    // Ends such a move without moving anything: CLUSTER SETSLOT slot STABLE on both.
    bool stabilize(unsigned slot, std::size_t from, std::size_t to);
    // Takes `slot` from every node's table (CLUSTER DELSLOTS on each, again until no node's view
    // has an owner for it, up to 20 s): served by none, the
    // cluster is down (cluster_state:fail everywhere: every keyed command is answered
    // -CLUSTERDOWN) until serve() gives it back.
    bool unserve(unsigned slot);
    // CLUSTER ADDSLOTS slot on node `owner`, then waits (up to 10 s) until every node that is up
    // sees it served there and answers cluster_state:ok.
    bool serve(unsigned slot, std::size_t owner);
    // ASKING and then `args` on one connection to node i (a key of a slot being imported is
    // reachable so); returns the reply to `args` as redis-cli prints it. The arguments must not
    // hold spaces or quotes.
    std::string asking(std::size_t i, const std::vector<std::string>& args) {
        return second_reply(i, "ASKING", args);
    }
    // READONLY and then `args` on one connection to replica i: a read of the replica's own copy
    // (a replica answers MOVED otherwise). The same limits as asking().
    std::string readonly(std::size_t i, const std::vector<std::string>& args) {
        return second_reply(i, "READONLY", args);
    }
    // How many times node i ran `command` (lower case, e.g. "wait"): INFO commandstats.
    long long calls(std::size_t i, const std::string& command);

  private:
    // `first`, then `args`, on one redis-cli connection to node i: the reply to `args`.
    std::string second_reply(std::size_t i, const std::string& first,
                             const std::vector<std::string>& args);
    // Node i's own line of CLUSTER NODES.
    std::string own(std::size_t i);
    // CLUSTER NODES of node i, one line each.
    std::vector<std::string> view(std::size_t i);
    bool wait_healthy(double timeout_s);

    std::string dir_;
    std::vector<std::unique_ptr<RedisServer>> nodes_;
    std::vector<std::string> ids_;
    std::string unhealthy_;  // what healthy() found wrong last
    bool ok_ = false;
};

// A slot moving from node `from` to node `to` (RedisCluster::migrate) for the length of a scope;
// then the keys named are deleted on `to` (with ASKING) and the move is called off (stabilize).
class SlotMigration {
  public:
    SlotMigration(RedisCluster& cluster, unsigned slot, std::size_t from, std::size_t to,
                  std::vector<std::string> keys);
    ~SlotMigration();
    SlotMigration(const SlotMigration&) = delete;
    SlotMigration& operator=(const SlotMigration&) = delete;

    bool started() const { return started_; }
    unsigned slot() const { return slot_; }

  private:
    RedisCluster& cluster_;
    unsigned slot_;
    std::size_t from_;
    std::size_t to_;
    std::vector<std::string> keys_;
    bool started_;
};

}  // namespace support

#endif  // RESPLOCK_TESTS_REDIS_CLUSTER_HPP
