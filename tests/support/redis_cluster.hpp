// Test harness: a Redis Cluster of three masters on free 127.0.0.1 ports (each a RedisServer, so
// each is stopped when the object goes away or the test process dies), made with
// `redis-cli --cluster create`.
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
    // Starts the three servers (cluster mode, the cluster bus on a second free port each), joins
    // them into one cluster and waits (up to 30 s) for cluster_state:ok on every node.
    RedisCluster();
    ~RedisCluster();
    RedisCluster(const RedisCluster&) = delete;
    RedisCluster& operator=(const RedisCluster&) = delete;

    bool ok() const { return ok_; }
    std::size_t size() const { return nodes_.size(); }
    RedisServer& node(std::size_t i) { return *nodes_[i]; }

    // The slot of `key` (CLUSTER KEYSLOT, asked of node 0).
    unsigned slot(const std::string& key);
    // The index of the node serving `slot` now (CLUSTER NODES), or size() if none.
    std::size_t owner(unsigned slot);
    // A key "<prefix><n>" whose slot node `index` serves.
    std::string key_on(std::size_t index, const std::string& prefix);
    // The node id of node `index` (CLUSTER MYID).
    std::string id(std::size_t index);
    // Waits (up to 10 s) until every node answers cluster_state:ok.
    bool settled();

  private:
    std::string dir_;
    std::vector<std::unique_ptr<RedisServer>> nodes_;
    bool ok_ = false;
};

}  // namespace support

#endif  // RESPLOCK_TESTS_REDIS_CLUSTER_HPP
