// A real lwIP stack inside the test process (Debian's liblwip, NO_SYS=0) and what the lwIP suites
// connect to through it:
//   - one netif, 10.11.0.1/24 and fd00:11::1, whose traffic to its own addresses loops inside
//     lwIP (LWIP_NETIF_LOOPBACK) and whose traffic to any other address vanishes (a host that
//     never answers, e.g. 10.11.0.2);
//   - a bridge: lwIP listeners on 10.11.0.1 and fd00:11::1 that relay each accepted connection,
//     byte for byte both ways, to the real redis-server on the host's 127.0.0.1;
//   - Peer: an lwIP listener that accepts and, until asked, never reads nor answers.
#ifndef RESPLOCK_TESTS_LWIP_NET_HPP
#define RESPLOCK_TESTS_LWIP_NET_HPP

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "resplock/core/port.h"

namespace lwipnet {

inline constexpr const char* ipv4 = "10.11.0.1";
inline constexpr const char* ipv6 = "fd00:11::1";
inline constexpr const char* nowhere = "10.11.0.2";  // on the netif's subnet; never answers

// Brings the stack up once (tcpip thread, netif up) and returns; later calls do nothing.
void stack();

// The port where the bridge listens on both addresses; starts the stack, the bridge and
// lock_cases::server() on first use.
std::uint16_t bridge_port();

// A fresh lwIP port number nothing has listened on in this process.
std::uint16_t unused_port();

// Reads OS randomness (getrandom); the random source the suites give the port.
std::int32_t os_random(void* user, std::uint8_t* buf, std::size_t len);

// An lwIP listener on `host` that accepts connections and keeps them open, unread and
// unanswered, until destroyed (or until a test reads or closes one through the methods below).
class Peer {
  public:
    explicit Peer(const char* host = ipv4);
    ~Peer();
    Peer(const Peer&) = delete;
    Peer& operator=(const Peer&) = delete;

    std::uint16_t port() const { return port_; }
    // The i-th accepted connection's lwIP socket, waiting up to timeout_ms for it; -1 if none.
    int accepted(std::size_t i, std::uint32_t timeout_ms = 2000);
    // Reads connection i until the client closes it (or timeout_ms passes); returns the bytes.
    std::string read_to_end(std::size_t i, std::uint32_t timeout_ms);
    // Closes connection i from this side.
    void close(std::size_t i);

  private:
    void run();
    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::vector<int> conns_;
    std::thread thread_;
};

}  // namespace lwipnet

#endif  // RESPLOCK_TESTS_LWIP_NET_HPP
