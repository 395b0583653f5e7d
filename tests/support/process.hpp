// Test harness: runs a program as a child process with stdout and stderr captured, the way shell
// scripts run our tools, and never lets a hung child stall a test.
#ifndef RESPLOCK_TESTS_PROCESS_HPP
#define RESPLOCK_TESTS_PROCESS_HPP

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace support {

using Env = std::vector<std::pair<std::string, std::string>>;

struct Result {
    int code = -1;  // exit status, 128+N for signal N, -1 if it could not start or was killed
    std::string out;
    std::string err;
    double secs = 0;
};

// One child process. It dies with the test (PR_SET_PDEATHSIG) and is killed if still running when
// the object goes away.
class Process {
  public:
    Process() = default;
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    ~Process();

    // Starts args (args[0] searched in PATH) with stdin on /dev/null, REDIS_URL unset, then `env`
    // set.
    bool start(const std::vector<std::string>& args, const Env& env = {});
    pid_t pid() const { return pid_; }

    // Collects output until the process exits (not until EOF: a grandchild may keep the pipes
    // open), killing it after timeout_s.
    Result wait(double timeout_s = 30);

  private:
    void drain(Result& r, int timeout_ms);

    pid_t pid_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    std::chrono::steady_clock::time_point start_;
};

// Starts args and waits for it.
Result run(const std::vector<std::string>& args, const Env& env = {}, double timeout_s = 30);

}  // namespace support

#endif  // RESPLOCK_TESTS_PROCESS_HPP
