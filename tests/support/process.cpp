#include "process.hpp"

#include "helpers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace support {

Process::~Process() {
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
    if (err_fd_ >= 0) close(err_fd_);
}

bool Process::start(const std::vector<std::string>& args, const Env& env) {
    int out[2];
    int err[2];
    if (pipe2(out, O_CLOEXEC) != 0) return false;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(out[0]);
        close(out[1]);
        return false;
    }
    std::vector<char*> argv;
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    start_ = std::chrono::steady_clock::now();
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(125);
        const int null_fd = open("/dev/null", O_RDONLY);
        dup2(null_fd, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        unsetenv("REDIS_URL");
        for (const auto& kv : env)
            setenv(kv.first.c_str(), kv.second.c_str(), 1);
        execvp(argv[0], argv.data());
        _exit(125);
    }
    close(out[1]);
    close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    return true;
}

Result Process::wait(double timeout_s) {
    Result r;
    int status = 0;
    for (;;) {
        drain(r, 20);
        if (waitpid(pid_, &status, WNOHANG) == pid_) break;
        if (seconds_since(start_) > timeout_s) {
            kill(pid_, SIGKILL);
            waitpid(pid_, &status, 0);
            pid_ = -1;
            r.secs = seconds_since(start_);
            drain(r, 0);
            return r;  // code -1
        }
    }
    r.secs = seconds_since(start_);
    pid_ = -1;
    drain(r, 0);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

// Reads whatever is ready, waiting at most timeout_ms for the first bytes.
void Process::drain(Result& r, int timeout_ms) {
    for (;;) {
        pollfd p[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
        if (poll(p, 2, timeout_ms) <= 0) return;
        bool got = false;
        for (int i = 0; i < 2; ++i) {
            if (p[i].fd < 0 || (p[i].revents & (POLLIN | POLLHUP)) == 0) continue;
            char buf[4096];
            const ssize_t k = read(p[i].fd, buf, sizeof buf);
            if (k > 0) {
                (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(k));
                got = true;
            } else {
                int& fd = i == 0 ? out_fd_ : err_fd_;
                close(fd);
                fd = -1;
            }
        }
        if (!got) return;
        timeout_ms = 0;
    }
}

Result run(const std::vector<std::string>& args, const Env& env, double timeout_s) {
    Process p;
    if (!p.start(args, env)) return {};
    return p.wait(timeout_s);
}

}  // namespace support
