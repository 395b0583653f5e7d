// The fault-injection proxy: one poll() loop relays every accepted connection to the server,
// queueing what it reads per direction and passing it on as the current plan allows.
#include "fault_proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <list>
#include <vector>

namespace support {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

void no_delay(int fd) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A blocking connect to the server on loopback (immediate), then non-blocking. -1 on failure.
int connect_server(std::uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    const sockaddr_in a = loopback(port);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
        fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        close(fd);
        return -1;
    }
    no_delay(fd);
    return fd;
}

struct Chunk {
    Clock::time_point due;
    std::string bytes;
    std::size_t off = 0;
};

// One direction of one connection.
struct Flow {
    std::deque<Chunk> queue;
    bool eof = false;      // the source has closed or failed
    bool blocked = false;  // the destination's send buffer is full
    unsigned generation = 0;
    std::uint64_t passed = 0;  // bytes passed on since `generation` of the plan
    Clock::time_point next_send{};
    Clock::time_point last_due{};
};

struct Pair {
    int fd[2] = {-1, -1};  // client, server
    Flow flow[2];          // indexed by Way
    std::string direct;    // injected bytes for the client, ahead of everything else
    bool dead = false;

    int source(int way) const { return fd[way]; }
    int sink(int way) const { return fd[1 - way]; }
};

// Sends what it can of `bytes` from `off` without blocking; false when the socket failed.
bool send_some(int fd, const std::string& bytes, std::size_t& off, std::size_t max, bool& blocked) {
    const ssize_t n = send(fd, bytes.data() + off, std::min(max, bytes.size() - off),
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
        blocked = errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        return blocked;
    }
    blocked = false;
    off += static_cast<std::size_t>(n);
    return true;
}

}  // namespace

FaultProxy::FaultProxy(std::uint16_t server_port) : server_port_(server_port) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listener_ < 0) return;
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    if (bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
        listen(listener_, 64) != 0 || pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(listener_);
        listener_ = -1;
        return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
}

FaultProxy::~FaultProxy() {
    stop_ = true;
    wake();
    if (thread_.joinable()) thread_.join();
    for (int fd : {listener_, wake_[0], wake_[1]})
        if (fd >= 0) close(fd);
}

void FaultProxy::wake() {
    if (wake_[1] >= 0) (void)!write(wake_[1], "x", 1);
}

void FaultProxy::set(Way way, const Fault& fault) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const int w = static_cast<int>(way);
        plan_.fault[w] = fault;
        ++plan_.generation[w];
    }
    wake();
}

void FaultProxy::pass_through() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (int w = 0; w < 2; ++w) {
            plan_.fault[w] = Fault{};
            ++plan_.generation[w];
        }
        plan_.inject.clear();
    }
    wake();
}

void FaultProxy::inject(const std::string& bytes, Inject when) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        plan_.inject = bytes;
        plan_.inject_when = when;
    }
    wake();
}

void FaultProxy::rewrite(const std::string& from, const std::string& to) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        plan_.rewrite.emplace_back(from, to);
    }
    wake();
}

void FaultProxy::run() {
    std::list<Pair> pairs;  // erased from the middle; list keeps that simple
    std::vector<pollfd> fds;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
        // What to wait for, and until when.
        const Clock::time_point now = Clock::now();
        Clock::time_point until = Clock::time_point::max();
        fds.assign({{wake_[0], POLLIN, 0}, {listener_, POLLIN, 0}});
        for (const Pair& p : pairs) {
            short events[2] = {POLLRDHUP, POLLRDHUP};
            for (int w = 0; w < 2; ++w) {
                const Flow& f = p.flow[w];
                const Fault& fault = plan_.fault[w];
                if (!fault.stall && !f.eof) events[w] |= POLLIN;
                if (f.blocked) events[1 - w] |= POLLOUT;
                if (!fault.stall && !f.blocked && !f.queue.empty()) {
                    Clock::time_point at = f.queue.front().due;
                    if (fault.one_byte) at = std::max(at, f.next_send);
                    until = std::min(until, at);
                }
            }
            if (!p.direct.empty()) events[0] |= POLLOUT;
            fds.push_back({p.fd[0], events[0], 0});
            fds.push_back({p.fd[1], events[1], 0});
        }
        timespec wait{};
        const timespec* timeout = nullptr;
        if (until != Clock::time_point::max()) {
            const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::max(until - now, Clock::duration::zero()))
                                .count();
            wait.tv_sec = static_cast<time_t>(ns / 1000000000);
            wait.tv_nsec = static_cast<long>(ns % 1000000000);
            timeout = &wait;
        }

        lock.unlock();
        const int ready = ppoll(fds.data(), fds.size(), timeout, nullptr);
        lock.lock();
        if (ready < 0 && errno != EINTR) break;
        if (ready < 0) continue;

        if ((fds[0].revents & POLLIN) != 0) {
            char drain[64];
            while (read(wake_[0], drain, sizeof drain) > 0) {
            }
        }
        if ((fds[1].revents & POLLIN) != 0) {
            for (;;) {
                const int client =
                    accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (client < 0) break;
                ++accepted_;
                const int server = connect_server(server_port_);
                if (server < 0) {
                    close(client);
                    continue;
                }
                no_delay(client);
                Pair p;
                p.fd[0] = client;
                p.fd[1] = server;
                for (int w = 0; w < 2; ++w)
                    p.flow[w].generation = plan_.generation[w];
                pairs.push_back(std::move(p));
            }
        }

        // Read what the plan lets through. Pairs accepted above have no entry in fds yet.
        const Clock::time_point read_at = Clock::now();
        std::size_t i = 0;
        for (auto it = pairs.begin(); 2 + 2 * i < fds.size(); ++it, ++i) {
            Pair& p = *it;
            for (int w = 0; w < 2; ++w) {
                const short revents = fds[2 + 2 * i + static_cast<std::size_t>(w)].revents;
                Flow& f = p.flow[w];
                const Fault& fault = plan_.fault[w];
                if ((revents & POLLOUT) != 0) p.flow[1 - w].blocked = false;
                if (fault.stall) {
                    // Not reading: a peer that hangs up or fails closes the pair.
                    if ((revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) p.dead = true;
                    continue;
                }
                if ((revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) == 0 || f.eof) continue;
                char buf[65536];
                const ssize_t n = recv(p.source(w), buf, sizeof buf, MSG_DONTWAIT);
                if (n <= 0) {
                    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                        f.eof = true;
                    }
                    continue;
                }
                Chunk c;
                c.bytes.assign(buf, static_cast<std::size_t>(n));
                if (w == static_cast<int>(Way::to_client)) {
                    for (const auto& [from, to] : plan_.rewrite) {
                        for (std::size_t at = 0;
                             !from.empty() && (at = c.bytes.find(from, at)) != std::string::npos;
                             at += to.size())
                            c.bytes.replace(at, from.size(), to);
                    }
                }
                if (!plan_.inject.empty()) {
                    if (w == static_cast<int>(Way::to_server) &&
                        plan_.inject_when == Inject::on_request) {
                        p.direct += plan_.inject;
                        plan_.inject.clear();
                    } else if (w == static_cast<int>(Way::to_client) &&
                               plan_.inject_when == Inject::with_reply) {
                        c.bytes.insert(0, plan_.inject);
                        plan_.inject.clear();
                    }
                }
                // A shorter delay set meanwhile must not overtake bytes already queued.
                c.due = std::max(read_at + std::chrono::milliseconds(fault.delay_ms), f.last_due);
                f.last_due = c.due;
                f.queue.push_back(std::move(c));
            }
        }

        // Pass on what is due.
        const Clock::time_point send_at = Clock::now();
        for (Pair& p : pairs) {
            if (!p.direct.empty() && !p.dead) {
                std::size_t off = 0;
                bool blocked = false;
                if (!send_some(p.fd[0], p.direct, off, p.direct.size(), blocked)) p.dead = true;
                p.direct.erase(0, off);
            }
            for (int w = 0; w < 2 && !p.dead; ++w) {
                Flow& f = p.flow[w];
                const Fault& fault = plan_.fault[w];
                if (f.generation != plan_.generation[w]) {
                    f.generation = plan_.generation[w];
                    f.passed = 0;
                }
                if (fault.stall) continue;
                while (!f.queue.empty() && !p.dead) {
                    Chunk& c = f.queue.front();
                    if (c.due > send_at || (fault.one_byte && f.next_send > send_at)) break;
                    std::size_t max = c.bytes.size() - c.off;
                    if (fault.drop_after >= 0) {
                        const auto limit = static_cast<std::uint64_t>(fault.drop_after);
                        if (f.passed >= limit) {
                            p.dead = true;
                            break;
                        }
                        max = static_cast<std::size_t>(
                            std::min<std::uint64_t>(max, limit - f.passed));
                    }
                    if (fault.one_byte) max = 1;
                    const std::size_t before = c.off;
                    if (!send_some(p.sink(w), c.bytes, c.off, max, f.blocked)) {
                        p.dead = true;
                        break;
                    }
                    f.passed += c.off - before;
                    forwarded_[w] += c.off - before;
                    if (c.off == c.bytes.size()) f.queue.pop_front();
                    if (f.blocked) break;
                    if (fault.one_byte) {
                        f.next_send = send_at + std::chrono::microseconds(fault.gap_us);
                        break;
                    }
                }
                // The source is done and all it sent has been passed on: close like it did.
                if (f.eof && f.queue.empty()) p.dead = true;
            }
        }
        for (auto it = pairs.begin(); it != pairs.end();) {
            if (!it->dead) {
                ++it;
                continue;
            }
            close(it->fd[0]);
            close(it->fd[1]);
            it = pairs.erase(it);
        }
    }
    for (const Pair& p : pairs) {
        close(p.fd[0]);
        close(p.fd[1]);
    }
}

}  // namespace support
