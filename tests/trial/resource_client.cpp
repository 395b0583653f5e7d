// The resource protocol's client side (see resource_client.hpp): a blocking exchange of lines
// over a Unix-domain socket, each request bounded by one deadline through poll().
#include "resource_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace trial {

namespace {

// Longest reply line accepted: the protocol's are a word.
constexpr std::size_t max_reply = 4096;

std::int64_t monotonic_ms() {
    timespec ts{};
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Waits up to the deadline for `events` on fd. True when it is ready.
bool wait_for(int fd, short events, std::int64_t deadline_ms) {
    for (;;) {
        const std::int64_t left = deadline_ms - monotonic_ms();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int n = poll(&p, 1, static_cast<int>(left));
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

}  // namespace

std::int64_t boot_us() {
    timespec ts{};
#ifdef CLOCK_BOOTTIME
    (void)clock_gettime(CLOCK_BOOTTIME, &ts);
#else
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

bool parse_u64(const char* s, std::uint64_t& out) {
    if (s == nullptr || *s < '0' || *s > '9') return false;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    out = v;
    return true;
}

ResourceClient::~ResourceClient() {
    if (fd_ >= 0) (void)close(fd_);
}

bool ResourceClient::connect(const char* path) {
    const std::lock_guard<std::mutex> hold(mutex_);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::size_t len = std::strlen(path);
    if (len == 0 || len >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return false;
    }
    std::memcpy(addr.sun_path, path, len + 1);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    int rc = 0;
    do {
        rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        const int saved = errno;
        (void)close(fd);
        errno = saved;
        return false;
    }
    if (fd_ >= 0) (void)close(fd_);
    fd_ = fd;
    pending_.clear();
    return true;
}

bool ResourceClient::request(std::string_view line, std::string& reply) {
    const std::lock_guard<std::mutex> hold(mutex_);
    if (fd_ < 0) return false;
    if (exchange(line, reply)) return true;
    (void)close(fd_);
    fd_ = -1;
    return false;
}

bool ResourceClient::exchange(std::string_view line, std::string& reply) {
    const std::int64_t deadline = monotonic_ms() + timeout_ms_;
    std::string out(line);
    out.push_back('\n');
    std::size_t sent = 0;
    while (sent < out.size()) {
        if (!wait_for(fd_, POLLOUT, deadline)) return false;
        const ssize_t n = send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            return false;
        }
        sent += static_cast<std::size_t>(n);
    }
    for (;;) {
        const std::size_t end = pending_.find('\n');
        if (end != std::string::npos) {
            reply.assign(pending_, 0, end);
            pending_.erase(0, end + 1);
            return true;
        }
        if (pending_.size() > max_reply) return false;
        if (!wait_for(fd_, POLLIN, deadline)) return false;
        char chunk[512];
        const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
        if (n == 0) return false;  // the resource closed the socket
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            return false;
        }
        pending_.append(chunk, static_cast<std::size_t>(n));
    }
}

}  // namespace trial
