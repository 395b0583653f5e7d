// The systems under trial, started on 127.0.0.1 by the trial itself, and the server-side faults
// each can suffer (the client-side faults, a paused client and a clock jump, are the trial's own:
// see trial.cpp).
//   single    one redis-server (persistence off, or AOF with fsync on every write)
//   sentinel  a master, two replicas, three sentinels (quorum 2), as people deploy it
//   cluster   three masters with one replica each
//   quorum    five independent servers (a Redlock quorum)
// Clients reach a single server and the quorum's servers through proxies, one set per client
// group, so that a partition can cut group 1 off while group 0 goes on. Under Sentinel every
// server has two proxies in front of it: one for the sentinels, the other servers (replication)
// and client group 0, whose port the server announces (so the sentinels hand it out), and one
// for client group 1, which reaches the sentinels through proxies of its own that translate each
// announced address into group 1's proxy for that server: a split brain can then cut the master
// and group 1 off from the rest. Cluster clients learn the servers' own addresses, so they are
// reached directly.
#ifndef RESPLOCK_TESTS_TRIAL_TOPOLOGY_HPP
#define RESPLOCK_TESTS_TRIAL_TOPOLOGY_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trial {

enum class Fault {
    kill_master,        // kill -9 of the master (of KEY's slot; one of the quorum's servers);
                        // Sentinel and Cluster fail over, a single or quorum server is down
                        // for longer than a TTL; then it comes back
    restart_empty,      // kill -9 and an immediate restart (empty, unless it persists)
    pause_node,         // SIGSTOP of the master for longer than the failover takes
    sentinel_failover,  // SENTINEL FAILOVER
    migrate_slot,       // KEY's slot moved to another master (MIGRATING/IMPORTING, MIGRATE)
    script_flush,       // SCRIPT FLUSH on every server
    pause_client,       // a client process SIGSTOPped for longer than its TTL
    partition,          // client group 1 cut off by its proxies, then healed
    clock_jump,         // one client's clock jumps forward by twice the TTL
    freeze_sentinel,    // SIGSTOP of the sentinel the clients ask first, then SIGCONT
    split_brain,        // the master and client group 1 cut off from the sentinels, the replicas
                        // and group 0 (Sentinel fails over), then healed
    freeze_replica,     // SIGSTOP of a replica of the master (of KEY's slot), then SIGCONT
    two_faults,         // Sentinel: kill -9 of the master while the first sentinel is frozen;
                        // Cluster: kill -9 of KEY's master while its slot is being migrated
};
constexpr int fault_count = static_cast<int>(Fault::two_faults) + 1;

const char* to_string(Fault fault);
bool parse_fault(const std::string& name, Fault& fault);

class Topology {
  public:
    virtual ~Topology() = default;
    virtual bool ok() const = 0;
    // trial_client's TOPOLOGY ARGS... for client group 0 or 1.
    virtual std::vector<std::string> client_target(int group) const = 0;
    // resplock's --url arguments for client group 0 or 1.
    virtual std::vector<std::string> cli_target(int group) const = 0;
    // Injects a server or link fault (false: it could not); heal() undoes it and waits until the
    // topology serves again as it did before (false: it did not, within its time).
    virtual bool inject(Fault fault) = 0;
    virtual bool heal(Fault fault) = 0;
    // How long a server or link fault is held before heal().
    virtual int hold_ms(Fault fault) const = 0;
    // What went wrong last (for the report).
    const std::string& error() const { return error_; }

  protected:
    std::string error_;
};

// Whether a topology of `kind` can suffer `fault` (the client-side faults apply to every one).
bool applies(const std::string& kind, Fault fault);

// kind: "single", "sentinel", "cluster" or "quorum"; persistence: AOF, fsync always (single and
// quorum only). `key` is the lock's key (the cluster's faults aim at its slot).
std::unique_ptr<Topology> start(const std::string& kind, bool persistence, const std::string& key);

}  // namespace trial

#endif  // RESPLOCK_TESTS_TRIAL_TOPOLOGY_HPP
