// The trial's resource: see resource.hpp.
#include "resource.hpp"

#include "resource_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace trial {

const char* to_string(Mode mode) {
    switch (mode) {
        case Mode::plain:
            return "plain";
        case Mode::fenced:
            return "fenced";
        case Mode::broken:
            return "broken";
    }
    return "?";
}

bool parse(const std::string& line, Event& e) {
    std::istringstream in(line);
    std::string kind;
    if (!(in >> kind) || kind.size() != 1) return false;
    e.kind = kind[0];
    e.line = line;
    switch (e.kind) {
        case 'A': {
            std::string client;
            return static_cast<bool>(in >> e.session >> e.fence >> e.begin_us >> e.end_us >>
                                     e.ttl_ms >> client);
        }
        case 'E':
            return static_cast<bool>(in >> e.session >> e.begin_us >> e.end_us >> e.ttl_ms);
        case 'W':
            return static_cast<bool>(in >> e.session >> e.fence);
        case 'L':
        case 'R':
            return static_cast<bool>(in >> e.session);
        case 'B':
        case 'U':
            return true;
        default:
            return false;
    }
}

Resource::Resource(std::string path, Mode mode, std::uint32_t limit)
    : path_(std::move(path)), mode_(mode), limit_(limit == 0 ? 1 : limit) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path_.size() >= sizeof a.sun_path || pipe2(wake_, O_CLOEXEC) != 0) return;
    std::memcpy(a.sun_path, path_.c_str(), path_.size() + 1);
    unlink(path_.c_str());
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 64) != 0) {
        close(fd);
        return;
    }
    listener_ = fd;
    thread_ = std::thread([this] { run(); });
}

Resource::~Resource() {
    if (thread_.joinable()) {
        stop_ = true;
        const char b = 0;
        (void)!write(wake_[1], &b, 1);
        thread_.join();
    }
    if (listener_ >= 0) {
        close(listener_);
        unlink(path_.c_str());
    }
    for (int fd : wake_)
        if (fd >= 0) close(fd);
}

std::int64_t Resource::note(char kind, const std::string& text) {
    Event e;
    e.kind = kind;
    e.line = std::string(1, kind) + " " + text;
    std::lock_guard<std::mutex> hold(mutex_);
    e.at_us = boot_us();
    history_.push_back(e);
    return e.at_us;
}

History Resource::history() {
    std::lock_guard<std::mutex> hold(mutex_);
    return history_;
}

std::string Resource::answer(const std::string& line) {
    Event e;
    if (!parse(line, e)) return "error: not a record";
    if (e.kind == 'W' && mode_ == Mode::fenced && highest_.size() == limit_ &&
        e.fence < highest_.back())
        e.refused = true;
    if (e.kind == 'W' && !e.refused &&
        std::find(highest_.begin(), highest_.end(), e.fence) == highest_.end()) {
        highest_.insert(std::upper_bound(highest_.begin(), highest_.end(), e.fence,
                                         [](std::uint64_t a, std::uint64_t b) { return a > b; }),
                        e.fence);
        if (highest_.size() > limit_) highest_.pop_back();
    }
    std::lock_guard<std::mutex> hold(mutex_);
    e.at_us = boot_us();
    history_.push_back(e);
    return e.refused ? "refused" : "ok";
}

void Resource::run() {
    struct Client {
        int fd;
        std::string in;
    };
    std::vector<Client> clients;
    while (!stop_) {
        std::vector<pollfd> fds = {{wake_[0], POLLIN, 0}, {listener_, POLLIN, 0}};
        for (const Client& c : clients)
            fds.push_back({c.fd, POLLIN, 0});
        if (poll(fds.data(), fds.size(), 1000) < 0) continue;
        if (fds[1].revents & POLLIN) {
            const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd >= 0) clients.push_back({fd, {}});
        }
        for (std::size_t i = 2; i < fds.size(); ++i) {
            if (fds[i].revents == 0) continue;
            Client& c = clients[i - 2];
            char buf[4096];
            const ssize_t n = read(c.fd, buf, sizeof buf);
            if (n <= 0) {
                close(c.fd);
                c.fd = -1;
                continue;
            }
            c.in.append(buf, static_cast<std::size_t>(n));
            for (std::size_t end; (end = c.in.find('\n')) != std::string::npos;) {
                const std::string reply = answer(c.in.substr(0, end)) + "\n";
                c.in.erase(0, end + 1);
                if (write(c.fd, reply.data(), reply.size()) != static_cast<ssize_t>(reply.size()))
                    break;  // the client went away: its next read ends it
            }
        }
        std::vector<Client> open;
        for (const Client& c : clients)
            if (c.fd >= 0) open.push_back(c);
        clients.swap(open);
    }
    for (const Client& c : clients)
        close(c.fd);
}

}  // namespace trial
