// Small helpers the tests share: time, waiting for a condition, reading a file and the times
// of a log, a scratch folder that tells when a `resplock run`'s COMMAND started.
#ifndef RESPLOCK_TESTS_HELPERS_HPP
#define RESPLOCK_TESTS_HELPERS_HPP

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace support {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sleeps the whole `ms`, signals or not.
inline void sleep_ms(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

// Polls `done` every 10 ms until it is true or `timeout_s` has passed.
inline bool wait_until(const std::function<bool()>& done, double timeout_s) {
    const auto start = Clock::now();
    for (;;) {
        if (done()) return true;
        if (seconds_since(start) > timeout_s) return false;
        sleep_ms(10);
    }
}

// The whole file, or "" if it cannot be read.
inline std::string read_file(const std::string& path) {
    std::string s;
    FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return s;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        s.append(buf, n);
    std::fclose(f);
    return s;
}

// The numbers of the lines "KIND <number>" of the file at `path` (a log of times), in order.
inline std::vector<long long> log_times(const std::string& path, const std::string& kind) {
    std::vector<long long> v;
    const std::string text = read_file(path);
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        if (line.rfind(kind + " ", 0) == 0) v.push_back(std::atoll(line.c_str() + kind.size()));
        at = end + 1;
    }
    return v;
}

// A scratch folder for a `resplock run`'s COMMAND, removed with what it holds: command() makes
// COMMAND create started() first, so that a test knows the acquisition is over (its WAIT
// included) before it stops a node; a test ends such a COMMAND by creating go().
struct CommandScratch {
    std::string dir;
    CommandScratch() {
        char dir_template[] = "/tmp/resplock-command-XXXXXX";
        const char* made = mkdtemp(dir_template);
        if (made != nullptr) dir = made;
    }
    CommandScratch(const CommandScratch&) = delete;
    CommandScratch& operator=(const CommandScratch&) = delete;
    ~CommandScratch() {
        if (dir.empty()) return;
        (void)std::remove(started().c_str());
        (void)std::remove(go().c_str());
        (void)std::remove(dir.c_str());
    }
    std::string started() const { return dir + "/started"; }
    std::string go() const { return dir + "/go"; }
    bool has_started() const { return access(started().c_str(), F_OK) == 0; }
    // A shell command line: create started(), then `rest`.
    std::string command(const std::string& rest) const {
        return "touch '" + started() + "' && " + rest;
    }
};

}  // namespace support

#endif  // RESPLOCK_TESTS_HELPERS_HPP
