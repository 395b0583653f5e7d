// POSIX port: non-blocking TCP sockets driven by poll() against deadlines on the port's clock
// (CLOCK_BOOTTIME where it exists, so that time spent suspended counts; else CLOCK_MONOTONIC).
// Every wait is bounded by the timeout the library passes; a signal (EINTR) only makes a wait
// recompute what is left of its time.
#include "resplock/ports/posix.h"

#include "resplock/core/resp.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstring>

#if defined(__linux__)
#include <sys/random.h>
#endif

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0  // platforms without it rely on SO_NOSIGPIPE, set on the socket
#endif

namespace {

std::uint64_t monotonic_ms() noexcept {
    timespec ts{};
    // Linux's CLOCK_MONOTONIC stops while the system is suspended: a lock's validity would then
    // outlast a suspend longer than its TTL. CLOCK_BOOTTIME keeps counting.
#ifdef CLOCK_BOOTTIME
    (void)clock_gettime(CLOCK_BOOTTIME, &ts);
#else
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000U +
           static_cast<std::uint64_t>(ts.tv_nsec) / 1000000U;
}

// An absolute point on the 64-bit monotonic clock (no wrap within any realistic uptime).
struct Deadline {
    std::uint64_t at_ms;

    static Deadline after(std::uint32_t ms) noexcept { return {monotonic_ms() + ms}; }
    int remaining() const noexcept {
        const std::uint64_t now = monotonic_ms();
        if (now >= at_ms) return 0;
        const std::uint64_t left = at_ms - now;
        return left > static_cast<std::uint64_t>(INT_MAX) ? INT_MAX : static_cast<int>(left);
    }
};

enum class Wait { ready, timed_out, failed };

// Waits until `events` are signalled on fd, for at most wait_ms and never past the deadline
// (wait_ms is what is left of it, read by the caller). POLLERR/POLLHUP count as ready: the
// following socket call reports what happened.
Wait wait_for(int fd, short events, int wait_ms, Deadline deadline) noexcept {
    for (;; wait_ms = deadline.remaining()) {
        pollfd p{};
        p.fd = fd;
        p.events = events;
        const int r = poll(&p, 1, wait_ms);
        if (r > 0) return (p.revents & POLLNVAL) != 0 ? Wait::failed : Wait::ready;
        if (r == 0) return Wait::timed_out;
        if (errno != EINTR) return Wait::failed;
        // Interrupted: poll again with whatever time is left (0 makes it a last check).
    }
}

void close_fd(int& fd) noexcept {
    if (fd >= 0) {
        // Not retried on EINTR: on Linux the descriptor is released regardless.
        (void)close(fd);
        fd = -1;
    }
}

// The outcome of a failed connect() in port terms.
std::int32_t connect_error(int err) noexcept {
    switch (err) {
        case ECONNREFUSED:
        case ENETUNREACH:
        case EHOSTUNREACH:
        case ENETDOWN:
#ifdef EHOSTDOWN
        case EHOSTDOWN:
#endif
        case EADDRNOTAVAIL:
        case EAFNOSUPPORT:
        case ECONNRESET:
            return RESPLOCK_PORT_REFUSED;
        case ETIMEDOUT:
            return RESPLOCK_PORT_TIMEOUT;
        default:
            return RESPLOCK_PORT_ERROR;
    }
}

int open_socket(int family) noexcept {
#if defined(SOCK_CLOEXEC) && defined(SOCK_NONBLOCK)
    return socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);
#else
    const int fd = socket(family, SOCK_STREAM, IPPROTO_TCP);
    if (fd < 0) return fd;
    const int flags = fcntl(fd, F_GETFL, 0);
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || flags < 0 ||
        fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        (void)close(fd);
        return -1;
    }
    return fd;
#endif
}

// Connects a fresh socket to one address before the deadline. On RESPLOCK_PORT_OK, *out holds
// the connected socket; otherwise no socket is left open.
std::int32_t connect_address(const sockaddr* addr, socklen_t addr_len, Deadline deadline,
                             int* out) noexcept {
    int fd = open_socket(addr->sa_family);
    if (fd < 0) return errno == EAFNOSUPPORT ? RESPLOCK_PORT_REFUSED : RESPLOCK_PORT_ERROR;

    const int one = 1;
    // Requests are small and each waits for its reply: Nagle's delay would only add latency.
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
#ifdef SO_NOSIGPIPE
    (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif

    if (connect(fd, addr, addr_len) != 0) {
        // A non-blocking connect interrupted by a signal goes on in the background, like one
        // still in progress; either way the outcome is learnt by waiting for writability.
        if (errno != EINPROGRESS && errno != EINTR) {
            const std::int32_t r = connect_error(errno);
            close_fd(fd);
            return r;
        }
        const Wait w = wait_for(fd, static_cast<short>(POLLOUT), deadline.remaining(), deadline);
        if (w != Wait::ready) {
            close_fd(fd);
            return w == Wait::timed_out ? RESPLOCK_PORT_TIMEOUT : RESPLOCK_PORT_ERROR;
        }
        int err = 0;
        socklen_t err_len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) err = errno;
        if (err != 0) {
            close_fd(fd);
            return connect_error(err);
        }
    }
    *out = fd;
    return RESPLOCK_PORT_OK;
}

// Parses a numeric IPv4 or IPv6 address without allocating. Returns false for anything else.
bool parse_numeric(const char* host, std::uint16_t port, sockaddr_storage* addr,
                   socklen_t* addr_len) noexcept {
    std::memset(addr, 0, sizeof *addr);
    auto* v4 = reinterpret_cast<sockaddr_in*>(addr);
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        *addr_len = sizeof *v4;
        return true;
    }
    auto* v6 = reinterpret_cast<sockaddr_in6*>(addr);
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        *addr_len = sizeof *v6;
        return true;
    }
    return false;
}

// Resolves a host name and tries each address in turn within the one deadline. getaddrinfo
// itself cannot be bounded by a timeout; the resolver's own limits apply to it.
std::int32_t connect_by_name(const char* host, std::uint16_t port, Deadline deadline,
                             int* out) noexcept {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    hints.ai_flags = AI_NUMERICSERV;
    char digits[10];
    const std::size_t n = resplock::resp::format_decimal(port, digits);
    char service[6];
    std::memcpy(service, digits, n);  // a uint16_t has at most 5 digits
    service[n] = '\0';

    addrinfo* list = nullptr;
    const int gai = getaddrinfo(host, service, &hints, &list);
    if (gai != 0) {
#ifdef EAI_MEMORY
        if (gai == EAI_MEMORY) return RESPLOCK_PORT_ERROR;
#endif
#ifdef EAI_SYSTEM
        if (gai == EAI_SYSTEM) return RESPLOCK_PORT_ERROR;
#endif
        return RESPLOCK_PORT_NO_HOST;
    }

    std::int32_t result = RESPLOCK_PORT_NO_HOST;  // stays so only if the list is empty
    for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
        if (deadline.remaining() == 0 && result != RESPLOCK_PORT_NO_HOST) {
            result = RESPLOCK_PORT_TIMEOUT;
            break;
        }
        result = connect_address(ai->ai_addr, ai->ai_addrlen, deadline, out);
        if (result == RESPLOCK_PORT_OK) break;
    }
    freeaddrinfo(list);
    return result;
}

}  // namespace

extern "C" {

static std::int32_t posix_port_connect(void* ctx, const char* host, std::uint16_t port,
                                       std::uint32_t timeout_ms) {
    auto* self = static_cast<resplock_posix_t*>(ctx);
    close_fd(self->fd);  // the library never connects twice, but a stale socket must not leak
    if (host == nullptr || host[0] == '\0') return RESPLOCK_PORT_NO_HOST;

    const Deadline deadline = Deadline::after(timeout_ms);
    int fd = -1;
    sockaddr_storage addr{};
    socklen_t addr_len = 0;
    const std::int32_t r =
        parse_numeric(host, port, &addr, &addr_len)
            ? connect_address(reinterpret_cast<const sockaddr*>(&addr), addr_len, deadline, &fd)
            : connect_by_name(host, port, deadline, &fd);
    if (r == RESPLOCK_PORT_OK) self->fd = fd;
    return r;
}

static std::int32_t posix_port_send(void* ctx, const std::uint8_t* data, std::size_t len,
                                    std::uint32_t timeout_ms) {
    auto* self = static_cast<resplock_posix_t*>(ctx);
    if (self->fd < 0) return RESPLOCK_PORT_ERROR;
    if (len == 0) return 0;
    if (len > static_cast<std::size_t>(INT32_MAX)) len = static_cast<std::size_t>(INT32_MAX);

    // The clock is read only once the call has to wait: the common case sends at once.
    Deadline deadline{0};
    for (bool waited = false;; waited = true) {
        const ssize_t n = send(self->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) return static_cast<std::int32_t>(n);
        if (n < 0) {
            if (errno == EPIPE || errno == ECONNRESET) return RESPLOCK_PORT_CLOSED;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return RESPLOCK_PORT_ERROR;
            }
        }
        if (timeout_ms == 0) return 0;
        if (!waited) deadline = Deadline::after(timeout_ms);
        const int left = deadline.remaining();
        if (left == 0) return 0;
        const Wait w = wait_for(self->fd, static_cast<short>(POLLOUT), left, deadline);
        if (w == Wait::timed_out) return 0;
        if (w == Wait::failed) return RESPLOCK_PORT_ERROR;
    }
}

static std::int32_t posix_port_recv(void* ctx, std::uint8_t* buf, std::size_t len,
                                    std::uint32_t timeout_ms) {
    auto* self = static_cast<resplock_posix_t*>(ctx);
    if (self->fd < 0) return RESPLOCK_PORT_ERROR;
    if (len == 0) return 0;
    if (len > static_cast<std::size_t>(INT32_MAX)) len = static_cast<std::size_t>(INT32_MAX);

    // A check without waiting reads no clock; a wait polls first (a reply is rarely there at
    // once) and reads the clock once, for the deadline of any further poll.
    Deadline deadline{0};
    int wait_ms = 0;
    if (timeout_ms != 0) {
        deadline = Deadline::after(timeout_ms);
        wait_ms = timeout_ms > static_cast<std::uint32_t>(INT_MAX) ? INT_MAX
                                                                   : static_cast<int>(timeout_ms);
    }
    for (;;) {
        if (wait_ms != 0) {
            const Wait w = wait_for(self->fd, static_cast<short>(POLLIN), wait_ms, deadline);
            if (w == Wait::timed_out) return 0;
            if (w == Wait::failed) return RESPLOCK_PORT_ERROR;
        }
        const ssize_t n = recv(self->fd, buf, len, MSG_DONTWAIT);
        if (n > 0) return static_cast<std::int32_t>(n);
        if (n == 0) return RESPLOCK_PORT_CLOSED;  // orderly shutdown by the peer
        if (errno == ECONNRESET) return RESPLOCK_PORT_CLOSED;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return RESPLOCK_PORT_ERROR;
        if (timeout_ms == 0) return 0;
        wait_ms = deadline.remaining();  // woken without data: wait for what is left
        if (wait_ms == 0) return 0;
    }
}

static void posix_port_close(void* ctx) {
    close_fd(static_cast<resplock_posix_t*>(ctx)->fd);
}

static std::uint32_t posix_port_now_ms(void*) {
    return static_cast<std::uint32_t>(monotonic_ms());
}

static void posix_port_sleep_ms(void*, std::uint32_t ms) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ms / 1000U);
    ts.tv_nsec = static_cast<long>(ms % 1000U) * 1000000L;
    // An interrupted sleep returns early, which the port contract allows.
    (void)nanosleep(&ts, nullptr);
}

static std::int32_t posix_port_random(void* ctx, std::uint8_t* buf, std::size_t len) {
    const resplock_posix_config_t& config = static_cast<resplock_posix_t*>(ctx)->config;
    if (config.random != nullptr) return config.random(config.random_user, buf, len);
    std::size_t filled = 0;
    while (filled < len) {
#if defined(__linux__)
        const ssize_t n = getrandom(buf + filled, len - filled, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        filled += static_cast<std::size_t>(n);
#else
        // getentropy returns at most 256 bytes per call, all or nothing.
        const std::size_t chunk = len - filled > 256U ? 256U : len - filled;
        if (getentropy(buf + filled, chunk) != 0) return -1;
        filled += chunk;
#endif
    }
    return 0;
}

resplock_status_t resplock_posix_port_init(resplock_posix_t* ctx,
                                           const resplock_posix_config_t* config,
                                           resplock_port_t* out) {
    if (ctx == nullptr || out == nullptr) return RESPLOCK_STATUS_invalid_argument;
    ctx->fd = -1;
    ctx->config = config != nullptr ? *config : resplock_posix_config_t{nullptr, nullptr};
    out->ctx = ctx;
    out->connect = posix_port_connect;
    out->send = posix_port_send;
    out->recv = posix_port_recv;
    out->close = posix_port_close;
    out->now_ms = posix_port_now_ms;
    out->sleep_ms = posix_port_sleep_ms;
    out->random = posix_port_random;
    return RESPLOCK_STATUS_ok;
}

}  // extern "C"
