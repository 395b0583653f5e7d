// Test harness: starts redis-server / redis-cli as child processes bound to 127.0.0.1 only.
// Every child asks the kernel to SIGKILL it when the test process dies, so a crashed or killed
// test never leaves a server behind.
#include "redis_server.hpp"

#include "helpers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace support {
namespace {

using Clock = std::chrono::steady_clock;

const char kLoopback[] = "127.0.0.1";

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, kLoopback, &a.sin_addr);
    return a;
}

// A TCP socket bound to 127.0.0.1:0 (the kernel picks the port), or -1.
int bind_any_port(std::uint16_t* port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

// In a freshly forked child: die with the parent, even if the parent already died.
void die_with_parent(pid_t parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
}

void redirect(int fd, int target) {
    if (fd != target) dup2(fd, target);
}

int open_null() {
    return open("/dev/null", O_RDWR | O_CLOEXEC);
}

// Forks and execs argv[0] (searched in PATH) with stdin and stderr on /dev/null and stdout on
// `out_fd` (or /dev/null when -1). Returns the child's pid or -1.
pid_t spawn(const std::vector<std::string>& args, int out_fd) {
    // Everything the child needs is prepared before fork: it only makes system calls after it.
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    const int null_fd = open_null();
    if (null_fd < 0) return -1;
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        die_with_parent(parent);
        redirect(null_fd, STDIN_FILENO);
        redirect(out_fd >= 0 ? out_fd : null_fd, STDOUT_FILENO);
        redirect(null_fd, STDERR_FILENO);
        execvp(argv[0], argv.data());
        _exit(127);
    }
    close(null_fd);
    return pid;
}

// True once the child has exited (and reaps it).
bool exited(pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, WNOHANG) == pid;
}

void kill_and_reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

// Connects to 127.0.0.1:port, sends PING and reads the first reply line within `ms`.
// Returns true when the reply is +PONG or -NOAUTH (a server with a password is up too).
bool answers_ping(std::uint16_t port, int ms) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const sockaddr_in a = loopback(port);
    bool ok = false;
    if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) {
        static const char ping[] = "PING\r\n";
        if (send(fd, ping, sizeof ping - 1, MSG_NOSIGNAL) ==
            static_cast<ssize_t>(sizeof ping - 1)) {
            char buf[64];
            std::size_t got = 0;
            while (got < sizeof buf) {
                const ssize_t n = recv(fd, buf + got, sizeof buf - got, 0);
                if (n <= 0) break;
                got += static_cast<std::size_t>(n);
                if (std::memchr(buf, '\n', got) != nullptr) break;
            }
            const std::string reply(buf, got);
            ok = reply.rfind("+PONG", 0) == 0 || reply.rfind("-NOAUTH", 0) == 0;
        }
    }
    close(fd);
    return ok;
}

}  // namespace

std::uint16_t free_port() {
    std::uint16_t port = 0;
    const int fd = bind_any_port(&port);
    if (fd < 0) return 0;
    close(fd);
    return port;
}

RedisServer::RedisServer(std::initializer_list<const char*> extra) {
    for (const char* a : extra)
        args_.emplace_back(a);
    // A fresh port each attempt: another process may take a free port before redis binds it.
    for (int attempt = 0; attempt < 5 && !running(); ++attempt) {
        port_ = free_port();
        if (port_ != 0) start();
    }
}

RedisServer::RedisServer(const TlsFiles& tls, std::initializer_list<const char*> extra)
    : tls_(true) {
    args_ = {"--tls-cert-file",    tls.cert, "--tls-key-file",     tls.key,
             "--tls-ca-cert-file", tls.ca,   "--tls-auth-clients", tls.auth_clients ? "yes" : "no"};
    for (const char* a : extra)
        args_.emplace_back(a);
    tls_cli_ = {"--tls", "--cacert", tls.ca};
    if (!tls.client_cert.empty()) {
        tls_cli_.insert(tls_cli_.end(), {"--cert", tls.client_cert, "--key", tls.client_key});
    }
    for (int attempt = 0; attempt < 5 && !running(); ++attempt) {
        port_ = free_port();
        if (port_ != 0) start();
    }
}

RedisServer::~RedisServer() {
    kill();
}

std::string RedisServer::url() const {
    return (tls_ ? "rediss://127.0.0.1:" : "redis://127.0.0.1:") + std::to_string(port_);
}

bool RedisServer::answers() const {
    if (!tls_) return answers_ping(port_, 500);
    // The TLS handshake is redis-cli's job; "PONG" or a NOAUTH error both mean the server is up.
    const std::string reply = cli({"PING"});
    return reply == "PONG" || reply.rfind("NOAUTH", 0) == 0;
}

bool RedisServer::start() {
    if (running()) return true;
    // A TLS server listens on port_ for TLS only: its plain-text port is off.
    std::vector<std::string> argv = {"redis-server",
                                     "--port",
                                     tls_ ? "0" : std::to_string(port_),
                                     "--bind",
                                     kLoopback,
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--daemonize",
                                     "no",
                                     "--protected-mode",
                                     "yes",
                                     "--loglevel",
                                     "warning",
                                     "--logfile",
                                     ""};
    if (tls_) argv.insert(argv.end(), {"--tls-port", std::to_string(port_)});
    argv.insert(argv.end(), args_.begin(), args_.end());
    const pid_t pid = spawn(argv, -1);
    if (pid < 0) return false;

    const auto give_up = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < give_up) {
        if (exited(pid)) return false;  // bad arguments, or the port was taken meanwhile
        if (answers()) {
            pid_ = pid;
            return true;
        }
        sleep_ms(20);
    }
    kill_and_reap(pid);
    return false;
}

void RedisServer::kill() {
    if (pid_ > 0) {
        kill_and_reap(pid_);  // SIGKILL ends a stopped process too
        pid_ = -1;
    }
    paused_ = false;
}

bool RedisServer::pause() {
    if (pid_ <= 0 || ::kill(pid_, SIGSTOP) != 0) return false;
    paused_ = true;
    return true;
}

bool RedisServer::resume() {
    if (pid_ <= 0 || ::kill(pid_, SIGCONT) != 0) return false;
    paused_ = false;
    return true;
}

bool RedisServer::restart() {
    kill();
    if (port_ == 0) return false;
    // Same port: redis sets SO_REUSEADDR, so only a real competitor can make this fail.
    for (int attempt = 0; attempt < 3 && !running(); ++attempt) {
        if (!start()) sleep_ms(100);
    }
    return running();
}

std::string RedisServer::cli(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {
        "redis-cli", "-h", kLoopback, "-p", std::to_string(port_), "--no-auth-warning"};
    argv.insert(argv.end(), tls_cli_.begin(), tls_cli_.end());
    argv.insert(argv.end(), cli_auth_.begin(), cli_auth_.end());
    argv.insert(argv.end(), args.begin(), args.end());

    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
    const pid_t pid = spawn(argv, pipe_fds[1]);
    close(pipe_fds[1]);
    if (pid < 0) {
        close(pipe_fds[0]);
        return {};
    }

    // redis-cli answers in milliseconds; 10 s means it hangs, and the test should fail, not stall.
    std::string out;
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    bool timed_out = false;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{pipe_fds[0], POLLIN, 0};
        const int r = poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            timed_out = r == 0;
            break;
        }
        char buf[4096];
        const ssize_t n = read(pipe_fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    close(pipe_fds[0]);
    if (timed_out) {
        kill_and_reap(pid);
        return {};
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

SilentListener::SilentListener() {
    fd_ = bind_any_port(&port_);
    if (fd_ < 0) return;
    if (listen(fd_, 64) != 0) {
        close(fd_);
        fd_ = -1;
        port_ = 0;
        return;
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        die_with_parent(parent);
        // Accept and keep every connection open, never writing a byte. Once the table is full
        // the remaining ones wait in the backlog, which looks the same to a client.
        int held[256];
        std::size_t count = 0;
        while (count < sizeof held / sizeof held[0]) {
            const int c = accept(fd_, nullptr, nullptr);
            if (c >= 0) held[count++] = c;
        }
        for (;;)
            pause();
    }
    pid_ = pid;
}

SilentListener::~SilentListener() {
    if (pid_ > 0) kill_and_reap(pid_);
    if (fd_ >= 0) close(fd_);
}

}  // namespace support
