// The host side of test_lwip_raw_port's relay, apart from lwIP's headers (whose htons and ntohs
// macros clash with the system's <netinet/in.h>).
#ifndef RESPLOCK_TESTS_LWIP_RAW_HOST_LINK_HPP
#define RESPLOCK_TESTS_LWIP_RAW_HOST_LINK_HPP

#include <cstdint>

// A non-blocking TCP socket connected to 127.0.0.1:port, or -1 (errno says why).
int host_connect_loopback(std::uint16_t port);

#endif
