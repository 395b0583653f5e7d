// Test harness: a Redis Sentinel deployment on 127.0.0.1: a master, one replica and one or more
// sentinels monitoring them under one master name, all real processes started by the test and
// stopped when the object goes away or the test process dies (PR_SET_PDEATHSIG).
#ifndef RESPLOCK_TESTS_REDIS_SENTINEL_HPP
#define RESPLOCK_TESTS_REDIS_SENTINEL_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "process.hpp"
#include "redis_server.hpp"

namespace support {

class SentinelTopology {
  public:
    // Starts a master, a replica of it (waiting until its link is up, up to 10 s) and `sentinels`
    // sentinels monitoring the master as `name` (quorum 1, down-after 1 s, failover-timeout 5 s),
    // each waited for until it answers PING and knows the master. ok() tells whether all of it
    // worked.
    explicit SentinelTopology(int sentinels = 1, std::string name = "mymaster");
    ~SentinelTopology();
    SentinelTopology(const SentinelTopology&) = delete;
    SentinelTopology& operator=(const SentinelTopology&) = delete;

    bool ok() const { return ok_; }
    const std::string& name() const { return name_; }
    RedisServer& master() { return *master_; }
    RedisServer& replica() { return *replica_; }
    std::uint16_t sentinel_port(std::size_t i) const { return ports_[i]; }
    // "redis-sentinel://127.0.0.1:P1,127.0.0.1:P2#NAME" (`extra` sentinel addresses first, e.g.
    // a dead one).
    std::string url(const std::string& extra = "") const;

    // redis-cli against sentinel i (stdout, trailing newline removed).
    std::string sentinel_cli(std::size_t i, const std::vector<std::string>& args) const;
    // The port the sentinel i gives for the master (0 if none).
    std::uint16_t resolved_port(std::size_t i = 0) const;
    // Waits (up to timeout_s) until sentinel 0 lists the replica as one of the master's.
    bool replica_known(double timeout_s = 15) const;
    // SENTINEL FAILOVER through sentinel 0 (after replica_known(), again while it answers
    // NOGOODSLAVE), then waits (up to timeout_s)
    // until every sentinel names the former replica and it says ROLE master.
    bool failover(double timeout_s = 30);
    // Kills sentinel i.
    void kill_sentinel(std::size_t i);

  private:
    bool start_sentinel(std::uint16_t port, std::size_t index);

    std::string name_;
    std::string dir_;
    std::unique_ptr<RedisServer> master_;
    std::unique_ptr<RedisServer> replica_;
    std::vector<std::uint16_t> ports_;
    std::vector<std::unique_ptr<Process>> sentinels_;
    bool ok_ = false;
};

}  // namespace support

#endif  // RESPLOCK_TESTS_REDIS_SENTINEL_HPP
