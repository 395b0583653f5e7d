/* See plaintext_posix.h. */
#define _GNU_SOURCE

#include "plaintext_posix.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int set_timeout(int fd, int option, uint32_t ms) {
    struct timeval tv;
    tv.tv_sec = (time_t)(ms / 1000U);
    tv.tv_usec = (suseconds_t)((ms % 1000U) * 1000U);
    return setsockopt(fd, SOL_SOCKET, option, &tv, (socklen_t)sizeof tv);
}

void plaintext_init(NetworkContext_t* network) {
    memset(network, 0, sizeof *network);
    network->fd = -1;
    network->socket_timeout_ms = 5000U;
    network->tell_closed = 1;
}

int32_t plaintext_connect(NetworkContext_t* network, const char* host, uint16_t port,
                          uint32_t timeout_ms) {
    struct sockaddr_in addr;
    struct pollfd p;
    int fd = -1;
    int err = 0;
    int flags = 0;
    const int one = 1;
    socklen_t err_len = (socklen_t)sizeof err;

    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) return RESPLOCK_PORT_NO_HOST;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return RESPLOCK_PORT_ERROR;
    /* Connect without blocking, bounded by the timeout; then the usual blocking socket. */
    flags = fcntl(fd, F_GETFL);
    (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    if (connect(fd, (const struct sockaddr*)&addr, (socklen_t)sizeof addr) != 0) {
        if (errno != EINPROGRESS) {
            err = errno;
            (void)close(fd);
            return err == ECONNREFUSED ? RESPLOCK_PORT_REFUSED : RESPLOCK_PORT_ERROR;
        }
        p.fd = fd;
        p.events = POLLOUT;
        p.revents = 0;
        if (poll(&p, 1, (int)timeout_ms) != 1) {
            (void)close(fd);
            return RESPLOCK_PORT_TIMEOUT;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) err = errno;
        if (err != 0) {
            (void)close(fd);
            return err == ECONNREFUSED ? RESPLOCK_PORT_REFUSED : RESPLOCK_PORT_ERROR;
        }
    }
    (void)fcntl(fd, F_SETFL, flags);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, (socklen_t)sizeof one);
    if (set_timeout(fd, SO_RCVTIMEO, network->socket_timeout_ms) != 0 ||
        set_timeout(fd, SO_SNDTIMEO, network->socket_timeout_ms) != 0) {
        (void)close(fd);
        return RESPLOCK_PORT_ERROR;
    }
    network->fd = fd;
    network->recv_dontwait = 0;
    network->send_dontwait = 0;
    ++network->connects;
    return RESPLOCK_PORT_OK;
}

void plaintext_disconnect(NetworkContext_t* network) {
    if (network->fd >= 0) {
        (void)close(network->fd);
        network->fd = -1;
        ++network->disconnects;
    }
}

int32_t plaintext_recv(NetworkContext_t* network, void* buf, size_t len) {
    ssize_t n = 0;
    ++network->recv_calls;
    if (network->recv_dontwait) ++network->probes;
    if (network->fail_recv > 0) {
        --network->fail_recv;
        return PLAINTEXT_FAILED;
    }
    n = recv(network->fd, buf, len, network->recv_dontwait ? MSG_DONTWAIT : 0);
    if (n > 0) return (int32_t)n;
    if (n == 0) return network->tell_closed ? PLAINTEXT_CLOSED : PLAINTEXT_FAILED;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0; /* timed out */
    if (errno == ECONNRESET && network->tell_closed) return PLAINTEXT_CLOSED;
    return PLAINTEXT_FAILED;
}

int32_t plaintext_send(NetworkContext_t* network, const void* buf, size_t len) {
    ssize_t n = 0;
    ++network->send_calls;
    if (network->send_max > 0U && len > network->send_max) len = network->send_max;
    n = send(network->fd, buf, len, MSG_NOSIGNAL | (network->send_dontwait ? MSG_DONTWAIT : 0));
    if (n >= 0) return (int32_t)n;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    if ((errno == EPIPE || errno == ECONNRESET) && network->tell_closed) return PLAINTEXT_CLOSED;
    return PLAINTEXT_FAILED;
}

/* SO_RCVTIMEO = 0 would mean "wait forever": a zero timeout is MSG_DONTWAIT instead. */
int32_t plaintext_set_recv_timeout(NetworkContext_t* network, uint32_t ms) {
    ++network->timeout_sets;
    network->last_recv_timeout_ms = ms;
    network->recv_dontwait = ms == 0U;
    return ms == 0U || set_timeout(network->fd, SO_RCVTIMEO, ms) == 0 ? 0 : -1;
}

int32_t plaintext_set_send_timeout(NetworkContext_t* network, uint32_t ms) {
    network->send_dontwait = ms == 0U;
    return ms == 0U || set_timeout(network->fd, SO_SNDTIMEO, ms) == 0 ? 0 : -1;
}

uint32_t plaintext_now_ms(void* user) {
    struct timespec ts;
    (void)user;
    (void)clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000U + (uint64_t)ts.tv_nsec / 1000000U);
}

void plaintext_sleep_ms(void* user, uint32_t ms) {
    struct timespec ts;
    (void)user;
    ts.tv_sec = (time_t)(ms / 1000U);
    ts.tv_nsec = (long)((ms % 1000U) * 1000000U);
    (void)nanosleep(&ts, NULL);
}

int32_t plaintext_random(void* user, uint8_t* buf, size_t len) {
    (void)user;
    while (len > 0U) {
        const ssize_t n = getrandom(buf, len, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

resplock_transport_config_t plaintext_config(NetworkContext_t* network) {
    resplock_transport_config_t c;
    memset(&c, 0, sizeof c);
    c.network = network;
    c.recv = plaintext_recv;
    c.send = plaintext_send;
    c.connect = plaintext_connect;
    c.disconnect = plaintext_disconnect;
    c.set_recv_timeout = plaintext_set_recv_timeout;
    c.set_send_timeout = plaintext_set_send_timeout;
    c.closed = PLAINTEXT_CLOSED;
    c.now_ms = plaintext_now_ms;
    c.sleep_ms = plaintext_sleep_ms;
    c.random = plaintext_random;
    return c;
}
