// The host side of the board proof: starts a real redis-server on 127.0.0.1, runs the board
// firmware under qemu-system-arm (the board given: mps2-an386 or mps2-an505, LAN9118 on QEMU's
// user network, where the host is 10.0.2.2) and plays the other party of each step with the
// resplock CLI and redis-cli, reading the firmware's "STEP" lines from its semihosting console as
// they come:
//   up        the image was built for the board it runs on
//   init      the port's set-up rules (missing config, poll hook, random source)
//   no-host   a name lwIP cannot resolve is no_host (the server itself is reached by name)
//   wrong-name (TLS) the certificate is verified: under a name it does not carry it is refused
//   busy      the host holds board:lock, the firmware's acquire is busy; the host releases it
//   acquired  the firmware's try_acquire with a wait got it, with a token of its own
//   extended  the host sees the new PTTL and the firmware's token, then lets it go on by
//             releasing board:gate (the firmware waits for that lock)
//   released  the key is gone
//   fence     the firmware's fencing number follows the host's 9000000000000000041 by one
//   big       a 3000-byte reply came whole through the port's (64-byte) receive ring
//   renewed   the renewal driver's tick() in the super-loop kept a 1.5 s lock for 4 s
//   silent    a peer that accepts and never answers (the host's SilentListener): the call ends
//             with its timeout, not a hang
//   kill-me   the host kills the server
//   after-kill the firmware saw the lock lost and a connection error, never "held"
//   pcbs      no pcb in lwIP's lists still points at a port context (none leaked)
//   usage: test_board BUILD_DIR BOARD plain|tls     BOARD: QEMU's machine, e.g. mps2-an505
// Exits 77 with a SKIPPED line when the build step skipped (BUILD_DIR/skipped says why) or QEMU
// is absent; prints "N passed, M failed".
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "process.hpp"
#include "redis_server.hpp"
#if RESPLOCK_BOARD_TLS
#include "tls_fixture.hpp"
#endif

namespace {

int passed = 0;
int failed = 0;

void check(bool ok, const std::string& what) {
    if (ok) {
        ++passed;
        std::printf("ok: %s\n", what.c_str());
    } else {
        ++failed;
        std::printf("FAILED: %s\n", what.c_str());
    }
    std::fflush(stdout);
}

using Clock = std::chrono::steady_clock;

// qemu-system-arm with its console (semihosting output) on a pipe, read line by line.
class Qemu {
  public:
    ~Qemu() { stop(); }

    bool start(const std::vector<std::string>& args) {
        int fds[2];
        if (pipe(fds) != 0) return false;
        const pid_t parent = getpid();
        pid_ = fork();
        if (pid_ < 0) return false;
        if (pid_ == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(127);
            const int null = open("/dev/null", O_RDONLY);
            dup2(null, 0);
            dup2(fds[1], 1);
            dup2(fds[1], 2);
            close(fds[0]);
            std::vector<char*> argv;
            for (const auto& a : args)
                argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            execvp(argv[0], argv.data());
            _exit(127);
        }
        close(fds[1]);
        fd_ = fds[0];
        return true;
    }

    // The next line, or false at end of output or when the deadline passes.
    bool line(std::string& out, Clock::time_point deadline) {
        for (;;) {
            const auto nl = buf_.find('\n');
            if (nl != std::string::npos) {
                out = buf_.substr(0, nl);
                buf_.erase(0, nl + 1);
                std::printf("firmware| %s\n", out.c_str());
                std::fflush(stdout);
                return true;
            }
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (fd_ < 0 || left.count() <= 0) return false;
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
            char chunk[512];
            const ssize_t n = read(fd_, chunk, sizeof chunk);
            if (n <= 0) {
                close(fd_);
                fd_ = -1;
                if (!buf_.empty()) buf_ += '\n';
                continue;
            }
            buf_.append(chunk, static_cast<size_t>(n));
        }
    }

    // Exit status after waiting up to the deadline; -1 if it had to be killed.
    int wait(Clock::time_point deadline) {
        std::string rest;
        while (line(rest, deadline)) {
        }
        int status = 0;
        while (pid_ > 0 && Clock::now() < deadline) {
            const pid_t r = waitpid(pid_, &status, WNOHANG);
            if (r == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            usleep(20000);
        }
        stop();
        return -1;
    }

  private:
    void stop() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
        if (fd_ >= 0) close(fd_);
        fd_ = -1;
    }

    pid_t pid_ = -1;
    int fd_ = -1;
    std::string buf_;
};

bool on_path(const char* tool) {
    const std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
}

std::vector<std::string> words(const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

long number(const std::string& s) {
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    return end != s.c_str() && *end == '\0' ? v : -999;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s BUILD_DIR BOARD plain|tls\n", argv[0]);
        return 2;
    }
    const std::string build = argv[1];
    const std::string board = argv[2];
    const std::string mode = argv[3];
    {
        std::ifstream skipped(build + "/skipped");
        std::string why;
        if (skipped && std::getline(skipped, why)) {
            std::printf("SKIPPED: %s\n", why.c_str());
            return 77;
        }
    }
    if (mode == "tls") {
#if RESPLOCK_BOARD_TLS
        std::ifstream skipped(build + "/skipped-tls");
        std::string why;
        if (skipped && std::getline(skipped, why)) {
            std::printf("SKIPPED: %s\n", why.c_str());
            return 77;
        }
#else
        std::printf("SKIPPED: this build has no TLS support for the host side\n");
        return 77;
#endif
    }
    if (!on_path("qemu-system-arm")) {
        std::printf("SKIPPED: qemu-system-arm not installed\n");
        return 77;
    }
    const std::string elf = build + "/firmware-" + mode + ".elf";
    if (access(elf.c_str(), R_OK) != 0) {
        std::string step = "board." + board + ".build";
        for (char& c : step)
            if (c == '-') c = '_';
        std::printf("FAILED: %s does not exist: the build step (%s) failed\n", elf.c_str(),
                    step.c_str());
        return 1;
    }

#if RESPLOCK_BOARD_TLS
    const bool tls = mode == "tls";
    if (tls && !tls_fixture::certs().ok) {
        std::printf("FAILED: no test certificates\n");
        return 1;
    }
    support::RedisServer server =
        tls ? support::RedisServer(tls_fixture::server_files(false)) : support::RedisServer();
#else
    const bool tls = false;
    (void)tls;
    support::RedisServer server;
#endif
    if (!server.running()) {
        std::printf("FAILED: redis-server did not start\n");
        return 1;
    }
    const auto cli = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {RESPLOCK_CLI, "--url", server.url()});
#if RESPLOCK_BOARD_TLS
        if (tls) args.insert(args.begin() + 1, {"--cacert", tls_fixture::certs().ca});
#endif
        return support::run(args, {}, 30);
    };
    std::string big;
    for (int i = 0; i < 3000; ++i)
        big += static_cast<char>('a' + i % 26);
    server.cli({"SET", "board:big", big});
    server.cli({"SET", "{board:fenced}:fence", "9000000000000000041"});
    const auto gate = cli({"acquire", "board:gate", "--ttl", "120000"});
    const auto held = cli({"acquire", "board:lock", "--ttl", "60000"});
    check(gate.code == 0 && held.code == 0, "the host holds board:lock and board:gate (CLI)");
    const std::string gate_token = words(gate.out).empty() ? "" : words(gate.out)[0];
    const std::string host_token = words(held.out).empty() ? "" : words(held.out)[0];

    const support::SilentListener silent;
    std::string ca_arg;
#if RESPLOCK_BOARD_TLS
    if (tls) ca_arg = ",arg=ca=" + tls_fixture::certs().ca_der;
#endif
    std::random_device rd;
    char seed[17];
    std::snprintf(seed, sizeof seed, "%08x%08x", rd(), rd());
    const std::vector<std::string> cmd = {
        "qemu-system-arm",
        "-M",
        board,
        "-nic",
        "user,model=lan9118",
        "-semihosting-config",
        "enable=on,target=native,arg=firmware,arg=port=" + std::to_string(server.port()) +
            ",arg=seed=" + seed + ",arg=silent=" + std::to_string(silent.port()) + ca_arg,
        "-nographic",
        "-monitor",
        "none",
        "-no-reboot",
        "-kernel",
        elf};
    const auto started = Clock::now();
    const auto deadline = started + std::chrono::seconds(90);
    Qemu qemu;
    if (!qemu.start(cmd)) {
        std::printf("FAILED: cannot start qemu-system-arm\n");
        return 1;
    }

    std::string fw_token;
    std::string last;
    bool done = false;
    for (std::string line; !done && qemu.line(line, deadline);) {
        const auto w = words(line);
        if (w.size() < 2 || w[0] != "STEP") continue;
        last = w[1];
        const std::string& step = w[1];
        if (step == "up") {
            check(w.size() >= 3 && w[2] == board, "firmware: built for " + board);
        } else if (step == "init") {
            check(w.size() == 3 && w[2] == "checked",
                  "firmware: init refuses a missing config or poll hook, and a missing random");
        } else if (step == "no-host") {
            check(w.size() == 3 && w[2] == "no_host", "firmware: an unknown name is no_host");
        } else if (step == "wrong-name") {
            check(w.size() == 4 && w[2] != "ok" && w[3] == "verify-failed",
                  "firmware: the server's certificate is refused under another name");
        } else if (step == "busy") {
            check(w.size() == 3 && w[2] == "busy", "firmware: acquire while the host holds it");
            const auto r = cli({"release", "board:lock", host_token});
            check(r.code == 0, "host: release board:lock (CLI)");
        } else if (step == "acquired") {
            fw_token = w.size() == 4 ? w[3] : "";
            check(w.size() == 4 && w[2] == "ok" && fw_token != host_token,
                  "firmware: try_acquire with a wait got the lock with a token of its own");
        } else if (step == "extended") {
            check(w.size() == 4 && w[2] == "ok" && w[3] == fw_token, "firmware: extend");
            const long pttl = number(server.cli({"PTTL", "board:lock"}));
            check(pttl > 30000 && pttl <= 60000,
                  "host: PTTL after extend(60000) is " + std::to_string(pttl));
            check(server.cli({"GET", "board:lock"}) == fw_token,
                  "host: board:lock holds the firmware's token");
            const auto r = cli({"release", "board:gate", gate_token});
            check(r.code == 0, "host: release board:gate (CLI)");
        } else if (step == "released") {
            check(w.size() == 3 && w[2] == "ok", "firmware: release");
            check(server.cli({"EXISTS", "board:lock"}) == "0", "host: board:lock is gone");
        } else if (step == "fence") {
            check(w.size() == 4 && w[2] == "ok" && w[3] == "9000000000000000042",
                  "firmware: fencing number 9000000000000000042");
            check(server.cli({"GET", "{board:fenced}:fence"}) == "9000000000000000042",
                  "host: board:fenced:fence is 9000000000000000042");
        } else if (step == "big") {
            check(w.size() == 5 && w[2] == "ok" && w[3] == "3000" && w[4] == "intact",
                  "firmware: 3000-byte reply through the port's receive ring");
        } else if (step == "renewed") {
            check(w.size() == 6 && w[2] == "ok" && w[3] == "held=1",
                  "firmware: Renewer::tick() in the super-loop kept the lock");
            const std::string token = w.size() == 6 ? w[5] : "";
            check(!token.empty() && server.cli({"GET", "board:renewed"}) == token,
                  "host: board:renewed holds the renewed token");
            const long pttl = number(server.cli({"PTTL", "board:renewed"}));
            check(pttl > 0 && pttl <= 1500,
                  "host: PTTL of the renewed lock is " + std::to_string(pttl));
        } else if (step == "silent") {
            check(w.size() == 5 && (w[2] == "timeout" || w[2] == "unknown_outcome"),
                  "firmware: a peer that never answers ends the call at its timeout (" +
                      (w.size() > 3 ? w[3] : std::string("?")) + " ms for 300)");
        } else if (step == "kill-me") {
            server.kill();
            check(!server.running(), "host: redis-server killed");
        } else if (step == "after-kill") {
            const bool conn_error = line.find("acquire=connect_failed") != std::string::npos ||
                                    line.find("acquire=closed") != std::string::npos ||
                                    line.find("acquire=io_error") != std::string::npos ||
                                    line.find("acquire=timeout") != std::string::npos;
            check(line.find("lost=expired") != std::string::npos &&
                      line.find("held=0") != std::string::npos,
                  "firmware: the lock was reported lost, not held");
            check(conn_error, "firmware: a connection error after the server died");
        } else if (step == "pcbs") {
            check(w.size() == 4 && w[2] == "attached=0",
                  "firmware: every pcb the port made was closed or freed");
        } else if (step == "done") {
            check(line == "STEP done failures=0", "firmware: no failed step");
            done = true;
        }
    }
    const int code = qemu.wait(deadline);
    const double secs = std::chrono::duration<double>(Clock::now() - started).count();
    check(done, "the firmware reached its last step (last seen: " + last + ")");
    check(code == 0,
          "the firmware exited 0 through semihosting (status " + std::to_string(code) + ")");
    std::printf("firmware run: %.1f s\n", secs);
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
