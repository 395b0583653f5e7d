// The lock's integration cases (lock_cases.hpp, the same code the POSIX suite runs) over the lwIP
// port: every request crosses Debian's real lwIP stack inside this process, then a bridge to the
// real redis-server on 127.0.0.1.
#include "lock_cases.hpp"
#include "lwip_net.hpp"
#include "resplock/ports/lwip.h"

namespace {

struct LwipNet {
    resplock_lwip_t ctx;
    resplock_port_t port_;

    LwipNet() {
        lwipnet::stack();
        resplock_lwip_config_t config{};
        config.random = lwipnet::os_random;
        if (resplock_lwip_port_init(&ctx, &config, &port_) != RESPLOCK_STATUS_ok) {
            check::fail(__FILE__, __LINE__, "resplock_lwip_port_init refused a config with random");
        }
    }
    LwipNet(const LwipNet&) = delete;
    LwipNet& operator=(const LwipNet&) = delete;
    const resplock_port_t& port() const { return port_; }

    static lock_cases::Endpoint server() { return {lwipnet::ipv4, lwipnet::bridge_port()}; }
    // An lwIP port on the netif's own address with no listener: lwIP answers the SYN with RST.
    static lock_cases::Endpoint refused() { return {lwipnet::ipv4, lwipnet::unused_port()}; }

    struct Silent {
        lwipnet::Peer peer;
        lock_cases::Endpoint endpoint() const { return {lwipnet::ipv4, peer.port()}; }
    };
};

}  // namespace

RESPLOCK_LOCK_CASES(LwipNet)
