// Runs a program next to a throwaway redis-server: `with_redis PROGRAM [ARGS...]` starts a server
// on a free 127.0.0.1 port, exports REDIS_PORT and REDIS_URL, runs PROGRAM, stops the server and
// exits with PROGRAM's status. For tests and examples that are not C++ or not ours to change.
// `with_redis --cluster PROGRAM [ARGS...]`: a three-master Redis Cluster instead (RedisCluster);
// REDIS_PORT and REDIS_URL name its first node, REDIS_CLUSTER_PORTS lists every node's port.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "redis_cluster.hpp"
#include "redis_server.hpp"

int main(int argc, char** argv) {
    const bool in_cluster = argc > 1 && std::string(argv[1]) == "--cluster";
    if (in_cluster) {
        --argc;
        ++argv;
    }
    if (argc < 2) {
        std::fprintf(stderr, "usage: with_redis [--cluster] PROGRAM [ARGS...]\n");
        return 2;
    }
    std::unique_ptr<support::RedisServer> server;
    std::unique_ptr<support::RedisCluster> cluster;
    std::uint16_t port = 0;
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
        port = cluster->node(0).port();
    } else {
        server = std::make_unique<support::RedisServer>();
        if (!server->running()) {
            std::fprintf(stderr, "with_redis: redis-server did not start\n");
            return 1;
        }
        port = server->port();
    }
    setenv("REDIS_PORT", std::to_string(port).c_str(), 1);
    setenv("REDIS_URL", ("redis://127.0.0.1:" + std::to_string(port)).c_str(), 1);
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
