// The lwIP stack, the bridge to redis-server and the Peer listener of the lwIP suites.
#include "lwip_net.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lock_cases.hpp"
// Debian's lwipopts.h declares the core-locking functions without C linkage guards.
extern "C" {
#include "lwip/ip4_addr.h"
#include "lwip/ip6_addr.h"
#include "lwip/netif.h"
#include "lwip/sockets.h"
#include "lwip/tcpip.h"
}

namespace lwipnet {
namespace {

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "lwip test stack: %s (errno %d)\n", what, errno);
    std::abort();
}

// Packets for any address but the netif's own (which lwIP loops back before calling this)
// vanish, like those sent to a host that is down.
err_t drop_ip4(struct netif*, struct pbuf*, const ip4_addr_t*) {
    return ERR_OK;
}
err_t drop_ip6(struct netif*, struct pbuf*, const ip6_addr_t*) {
    return ERR_OK;
}

err_t init_netif(struct netif* nif) {
    nif->name[0] = 't';
    nif->name[1] = 'l';
    nif->output = drop_ip4;
    nif->output_ip6 = drop_ip6;
    nif->mtu = 1500;
    return ERR_OK;
}

struct netif the_netif;

// Socket address for an lwIP socket: host is numeric IPv4 or IPv6.
socklen_t make_address(const char* host, std::uint16_t port, sockaddr_storage* addr) {
    std::memset(addr, 0, sizeof *addr);
    auto* v4 = reinterpret_cast<sockaddr_in*>(addr);
    if (lwip_inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return sizeof *v4;
    }
    auto* v6 = reinterpret_cast<sockaddr_in6*>(addr);
    if (lwip_inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        return sizeof *v6;
    }
    die("not a numeric address");
}

int lwip_listener(const char* host, std::uint16_t port) {
    sockaddr_storage addr;
    const socklen_t len = make_address(host, port, &addr);
    const int s = lwip_socket(addr.ss_family, SOCK_STREAM, IPPROTO_TCP);
    if (s < 0) die("lwip_socket");
    if (lwip_bind(s, reinterpret_cast<sockaddr*>(&addr), len) != 0) die("lwip_bind");
    if (lwip_listen(s, 8) != 0) die("lwip_listen");
    // Accept without blocking so the accepting thread can notice it must stop.
    if (lwip_fcntl(s, F_SETFL, O_NONBLOCK) != 0) die("lwip_fcntl");
    return s;
}

bool lwip_readable(int s, int timeout_ms) {
    pollfd p{};
    p.fd = s;
    p.events = POLLIN;
    return lwip_poll(&p, 1, timeout_ms) > 0;
}

bool lwip_send_all(int s, const char* data, std::size_t len) {
    while (len > 0) {
        const ssize_t n = lwip_send(s, data, len, 0);
        if (n <= 0) return false;
        data += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

bool host_send_all(int fd, const char* data, std::size_t len) {
    while (len > 0) {
        const ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0) return false;
        data += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

// Relays one accepted lwIP connection to redis-server on 127.0.0.1, both ways, until either
// side closes; then closes the other. One thread does both directions, so no lwIP socket is
// ever used by two threads at once.
void relay(int lwip_sock, std::uint16_t redis_port, const std::atomic<bool>& stop) {
    const int host = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(redis_port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (host < 0 || ::connect(host, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
        if (host >= 0) ::close(host);
        lwip_close(lwip_sock);
        return;
    }
    char buf[4096];
    while (!stop.load()) {
        bool moved = false;
        const ssize_t n = lwip_recv(lwip_sock, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) break;
        if (n > 0) {
            if (!host_send_all(host, buf, static_cast<std::size_t>(n))) break;
            moved = true;
        } else if (errno != EWOULDBLOCK && errno != EAGAIN) {
            break;
        }
        const ssize_t m = ::recv(host, buf, sizeof buf, MSG_DONTWAIT);
        if (m == 0) break;
        if (m > 0) {
            if (!lwip_send_all(lwip_sock, buf, static_cast<std::size_t>(m))) break;
            moved = true;
        } else if (errno != EWOULDBLOCK && errno != EAGAIN) {
            break;
        }
        if (!moved) {
            // Wait briefly on the lwIP side, then look at the host side again: a reply from the
            // server is relayed within about a millisecond.
            (void)lwip_readable(lwip_sock, 1);
        }
    }
    ::close(host);
    lwip_close(lwip_sock);
}

class Bridge {
  public:
    Bridge() : redis_port_(lock_cases::server().port()) {
        if (!lock_cases::server().running()) die("redis-server did not start");
        stack();
        port_ = unused_port();
        listeners_[0] = lwip_listener(ipv4, port_);
        listeners_[1] = lwip_listener(ipv6, port_);
        thread_ = std::thread([this] { run(); });
    }
    ~Bridge() {
        stop_ = true;
        thread_.join();
        for (std::thread& t : relays_)
            t.join();
        for (int s : listeners_)
            lwip_close(s);
    }
    std::uint16_t port() const { return port_; }

  private:
    void run() {
        while (!stop_.load()) {
            pollfd p[2]{};
            for (int i = 0; i < 2; ++i) {
                p[i].fd = listeners_[i];
                p[i].events = POLLIN;
            }
            if (lwip_poll(p, 2, 20) <= 0) continue;
            for (int i = 0; i < 2; ++i) {
                if ((p[i].revents & POLLIN) == 0) continue;
                const int s = lwip_accept(listeners_[i], nullptr, nullptr);
                if (s < 0) continue;
                // The accepted socket may inherit non-blocking mode: the relay wants blocking
                // sends and uses MSG_DONTWAIT for its reads.
                (void)lwip_fcntl(s, F_SETFL, 0);
                relays_.emplace_back(relay, s, redis_port_, std::cref(stop_));
            }
        }
    }

    std::uint16_t redis_port_;
    std::uint16_t port_ = 0;
    int listeners_[2] = {-1, -1};
    std::atomic<bool> stop_{false};
    std::vector<std::thread> relays_;  // touched only by the accepting thread until it is joined
    std::thread thread_;
};

}  // namespace

void stack() {
    static std::once_flag once;
    std::call_once(once, [] {
        std::mutex m;
        std::condition_variable cv;
        bool ready = false;
        struct Up {
            std::mutex* m;
            std::condition_variable* cv;
            bool* ready;
        } up{&m, &cv, &ready};
        tcpip_init(
            [](void* arg) {
                auto* u = static_cast<Up*>(arg);
                std::lock_guard<std::mutex> g(*u->m);
                *u->ready = true;
                u->cv->notify_one();
            },
            &up);
        {
            std::unique_lock<std::mutex> lk(m);
            cv.wait(lk, [&] { return ready; });
        }

        ip4_addr_t ip, mask, gw;
        IP4_ADDR(&ip, 10, 11, 0, 1);
        IP4_ADDR(&mask, 255, 255, 255, 0);
        IP4_ADDR(&gw, 10, 11, 0, 254);
        ip6_addr_t ip6;
        if (!ip6addr_aton(ipv6, &ip6)) die("ip6addr_aton");
        LOCK_TCPIP_CORE();
        if (netif_add(&the_netif, &ip, &mask, &gw, nullptr, init_netif, tcpip_input) == nullptr) {
            die("netif_add");
        }
        s8_t index = -1;
        if (netif_add_ip6_address(&the_netif, &ip6, &index) != ERR_OK) die("ip6 address");
        // Skip duplicate address detection: no one else is on this link.
        netif_ip6_addr_set_state(&the_netif, index, IP6_ADDR_PREFERRED);
        netif_set_up(&the_netif);
        netif_set_link_up(&the_netif);
        UNLOCK_TCPIP_CORE();
    });
}

std::uint16_t bridge_port() {
    static Bridge bridge;
    return bridge.port();
}

std::uint16_t unused_port() {
    static std::atomic<std::uint16_t> next{20000};
    return next++;
}

std::int32_t os_random(void*, std::uint8_t* buf, std::size_t len) {
    std::size_t filled = 0;
    while (filled < len) {
        const ssize_t n = getrandom(buf + filled, len - filled, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        filled += static_cast<std::size_t>(n);
    }
    return 0;
}

Peer::Peer(const char* host) {
    stack();
    port_ = unused_port();
    listener_ = lwip_listener(host, port_);
    thread_ = std::thread([this] { run(); });
}

Peer::~Peer() {
    stop_ = true;
    thread_.join();
    for (int s : conns_) {
        if (s >= 0) lwip_close(s);
    }
    lwip_close(listener_);
}

void Peer::run() {
    while (!stop_.load()) {
        if (!lwip_readable(listener_, 20)) continue;
        const int s = lwip_accept(listener_, nullptr, nullptr);
        if (s < 0) continue;
        std::lock_guard<std::mutex> g(mutex_);
        conns_.push_back(s);
    }
}

int Peer::accepted(std::size_t i, std::uint32_t timeout_ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        {
            std::lock_guard<std::mutex> g(mutex_);
            if (i < conns_.size()) return conns_[i];
        }
        if (std::chrono::steady_clock::now() >= until) return -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

std::string Peer::read_to_end(std::size_t i, std::uint32_t timeout_ms) {
    std::string out;
    const int s = accepted(i, timeout_ms);
    if (s < 0) return out;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    char buf[8192];
    while (std::chrono::steady_clock::now() < until) {
        const ssize_t n = lwip_recv(s, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) break;
        if (n > 0) {
            out.append(buf, static_cast<std::size_t>(n));
        } else if (errno == EWOULDBLOCK || errno == EAGAIN) {
            (void)lwip_readable(s, 10);
        } else {
            break;
        }
    }
    return out;
}

void Peer::close(std::size_t i) {
    const int s = accepted(i, 0);
    if (s < 0) return;
    lwip_close(s);
    std::lock_guard<std::mutex> g(mutex_);
    conns_[i] = -1;
}

}  // namespace lwipnet
