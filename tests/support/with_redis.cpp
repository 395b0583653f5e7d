// Runs a program next to a throwaway redis-server: `with_redis PROGRAM [ARGS...]` starts a server
// on a free 127.0.0.1 port, exports REDIS_PORT and REDIS_URL, runs PROGRAM, stops the server and
// exits with PROGRAM's status. For tests and examples that are not C++ or not ours to change.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "redis_server.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: with_redis PROGRAM [ARGS...]\n");
        return 2;
    }
    support::RedisServer server;
    if (!server.running()) {
        std::fprintf(stderr, "with_redis: redis-server did not start\n");
        return 1;
    }
    setenv("REDIS_PORT", std::to_string(server.port()).c_str(), 1);
    setenv("REDIS_URL", server.url().c_str(), 1);
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
