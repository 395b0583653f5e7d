// Test harness: a Redis Sentinel deployment on 127.0.0.1 the way people deploy one: a master, two
// replicas and three sentinels monitoring them under one master name with quorum 2, all real
// processes started by the test and stopped when the object goes away or the test process dies
// (PR_SET_PDEATHSIG).
#ifndef RESPLOCK_TESTS_REDIS_SENTINEL_HPP
#define RESPLOCK_TESTS_REDIS_SENTINEL_HPP

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "process.hpp"
#include "redis_server.hpp"

namespace support {

class SentinelTopology {
  public:
    static constexpr std::size_t kReplicas = 2;
    static constexpr std::size_t kSentinels = 3;
    static constexpr int kQuorum = 2;

    // How the servers reach one another and the sentinels reach them: by default at their own
    // ports. A Front is asked once for each server (given its port) for the port to use instead,
    // e.g. a proxy's that a test can cut; the server announces it (replica-announce-ip/port), so
    // the sentinels use it, and hand it out to clients.
    using Front = std::function<std::uint16_t(std::uint16_t port)>;

    // Starts a master, kReplicas replicas of it (each waited for until its link is up, up to
    // 10 s) and kSentinels sentinels monitoring the master as `name` (quorum kQuorum, down-after
    // 1 s, failover-timeout 5 s), then waits (up to 30 s) until settled(). ok() tells whether all
    // of it worked.
    explicit SentinelTopology(std::string name = "mymaster", Front front = {});
    ~SentinelTopology();
    SentinelTopology(const SentinelTopology&) = delete;
    SentinelTopology& operator=(const SentinelTopology&) = delete;

    bool ok() const { return ok_; }
    const std::string& name() const { return name_; }
    // The master as the sentinels named it when last asked by this object: the first server at
    // start, the promoted one after failover().
    RedisServer& master() { return *nodes_[master_]; }
    // The i-th of the other servers (in the order they were started), i < replicas().
    RedisServer& replica(std::size_t i);
    std::size_t replicas() const { return nodes_.size() - 1; }
    // The port the other servers and the sentinels use for `node`: its own, or its Front's.
    std::uint16_t address_port(const RedisServer& node) const;
    // RedisServer::restart() of `node`, which then announces its Front again.
    bool restart(RedisServer& node);
    std::size_t sentinels() const { return ports_.size(); }
    std::uint16_t sentinel_port(std::size_t i) const { return ports_[i]; }
    // "redis-sentinel://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3#NAME" (`extra` sentinel addresses
    // first, e.g. a dead one).
    std::string url(const std::string& extra = "") const;

    // redis-cli against sentinel i (stdout, trailing newline removed).
    std::string sentinel_cli(std::size_t i, const std::vector<std::string>& args) const;
    // The port the sentinel i gives for the master (0 if none).
    std::uint16_t resolved_port(std::size_t i = 0) const;
    // Whether every sentinel (neither killed nor stopped) names master(), sees it as a master,
    // knows the other sentinels and lists every other server as a replica whose link to the
    // master is up.
    bool settled() const;
    // Waits (up to timeout_s) until settled().
    bool wait_settled(double timeout_s = 30) const;

    // Starts `count` more replicas of master() (each link up within 10 s) and waits (up to
    // timeout_s: the sentinels find new replicas in the master's INFO, which they read every 10 s)
    // until settled() again.
    bool add_replicas(std::size_t count, double timeout_s = 30);

    // SENTINEL FAILOVER through the first sentinel neither killed nor stopped, once settled()
    // (again while it answers NOGOODSLAVE); true once it answered OK. Does not wait for the
    // failover to happen.
    bool start_failover(double timeout_s = 30);
    // Waits (up to timeout_s) until every sentinel (neither killed nor stopped) names one same
    // server other than the one on port `former` (a server's own port) and that server says ROLE
    // master; it becomes master(). False on timeout.
    bool wait_new_master(std::uint16_t former, double timeout_s = 30);
    // start_failover(), then wait_new_master() of the current master.
    bool failover(double timeout_s = 30);
    // Kills sentinel i.
    void kill_sentinel(std::size_t i);
    // SIGSTOP / SIGCONT of sentinel i: stopped, it accepts connections (the kernel does) but
    // answers nothing, like a host that froze. The helpers above skip it meanwhile, as a killed
    // one; sentinel_cli(i) must not be used. True if the signal was sent.
    bool pause_sentinel(std::size_t i);
    bool resume_sentinel(std::size_t i);

  private:
    bool start_replica();
    // Sets the announced address of a server that has a Front (a no-op without one).
    bool announce(RedisServer& node);
    // Whether sentinel i is neither killed nor stopped.
    bool asked(std::size_t i) const;
    bool start_sentinel(std::uint16_t port, std::size_t index);
    // The server whose address_port() is `port`, or null.
    RedisServer* node_on(std::uint16_t port);

    std::string name_;
    std::string dir_;
    std::vector<std::unique_ptr<RedisServer>> nodes_;  // [0]: the master at start
    std::size_t master_ = 0;                           // index in nodes_ of master()
    std::vector<std::uint16_t> ports_;
    std::vector<std::unique_ptr<Process>> sentinels_;
    std::vector<bool> paused_;  // per sentinel
    Front front_;
    std::map<std::uint16_t, std::uint16_t> fronts_;  // a server's port -> its Front's
    bool ok_ = false;
};

}  // namespace support

#endif  // RESPLOCK_TESTS_REDIS_SENTINEL_HPP
