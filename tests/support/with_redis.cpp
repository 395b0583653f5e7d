// Runs a program next to a throwaway redis-server: `with_redis PROGRAM [ARGS...]` starts a server
// on a free 127.0.0.1 port, exports REDIS_PORT and REDIS_URL, runs PROGRAM, stops the server and
// exits with PROGRAM's status. For tests and examples that are not C++ or not ours to change.
// `with_redis --cluster PROGRAM [ARGS...]`: a Redis Cluster of three masters with a replica each
// instead (RedisCluster); REDIS_PORT and REDIS_URL name its first node (a master),
// REDIS_CLUSTER_PORTS lists every node's port (masters first).
// `with_redis --sentinel PROGRAM [ARGS...]`: a master, two replicas and three sentinels instead
// (SentinelTopology); exports REDIS_PORT (the master's), REDIS_SENTINEL_PORT (the first
// sentinel's), REDIS_SENTINEL_PORTS (every sentinel's), REDIS_SENTINEL_MASTER (the master name)
// and REDIS_URL (a redis-sentinel:// URL naming every sentinel).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "redis_cluster.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"

int main(int argc, char** argv) {
    const std::string topology_flag = argc > 1 ? argv[1] : "";
    const bool in_cluster = topology_flag == "--cluster";
    const bool sentinel = topology_flag == "--sentinel";
    if (in_cluster || sentinel) {
        --argc;
        ++argv;
    }
    if (argc < 2) {
        std::fprintf(stderr, "usage: with_redis [--cluster | --sentinel] PROGRAM [ARGS...]\n");
        return 2;
    }
    std::unique_ptr<support::RedisServer> server;
    std::unique_ptr<support::RedisCluster> cluster;
    std::unique_ptr<support::SentinelTopology> topology;
    if (in_cluster) {
        cluster = std::make_unique<support::RedisCluster>();
        if (!cluster->ok()) {
            std::fprintf(stderr, "with_redis: the Redis Cluster did not start\n");
            return 1;
        }
        std::string ports;
        for (std::size_t i = 0; i < cluster->size(); ++i)
            ports += (i == 0 ? "" : " ") + std::to_string(cluster->node(i).port());
        setenv("REDIS_CLUSTER_PORTS", ports.c_str(), 1);
        setenv("REDIS_PORT", std::to_string(cluster->node(0).port()).c_str(), 1);
        setenv("REDIS_URL", cluster->node(0).url().c_str(), 1);
    } else if (sentinel) {
        topology = std::make_unique<support::SentinelTopology>();
        if (!topology->ok()) {
            std::fprintf(stderr, "with_redis: the Sentinel deployment did not start\n");
            return 1;
        }
        setenv("REDIS_PORT", std::to_string(topology->master().port()).c_str(), 1);
        std::string ports;
        for (std::size_t i = 0; i < topology->sentinels(); ++i)
            ports += (i == 0 ? "" : " ") + std::to_string(topology->sentinel_port(i));
        setenv("REDIS_SENTINEL_PORT", std::to_string(topology->sentinel_port(0)).c_str(), 1);
        setenv("REDIS_SENTINEL_PORTS", ports.c_str(), 1);
        setenv("REDIS_SENTINEL_MASTER", topology->name().c_str(), 1);
        setenv("REDIS_URL", topology->url().c_str(), 1);
    } else {
        server = std::make_unique<support::RedisServer>();
        if (!server->running()) {
            std::fprintf(stderr, "with_redis: redis-server did not start\n");
            return 1;
        }
        setenv("REDIS_PORT", std::to_string(server->port()).c_str(), 1);
        setenv("REDIS_URL", server->url().c_str(), 1);
    }
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child == 0) {
        execvp(argv[1], argv + 1);
        std::fprintf(stderr, "with_redis: cannot run %s\n", argv[1]);
        _exit(127);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) return 1;
    if (WIFSIGNALED(status)) {
        std::fprintf(stderr, "with_redis: %s killed by signal %d\n", argv[1], WTERMSIG(status));
        return 1;
    }
    return WEXITSTATUS(status);
}
