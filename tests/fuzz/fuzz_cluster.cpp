// Fuzz target for the Cluster router over the mock port, with the server played by the input:
// arbitrary replies, and redirections built from the input (any slot, host bytes of any length,
// any port text) so that MOVED / ASK chains, loops, ASKING answers and malformed redirections
// are all reached. Checks what each command returns and what the router keeps.
//
// Input format (tests/fuzz/make_corpus.py writes seeds in it):
//   config   1 byte: timeout 1 + 20 * b ms
//   op       b % 4: 0 GET k through the router; 1 close the connection; 2 advance the clock by
//            b ms; 3 forget the remembered node (reset)
// Server events, read as the calls need them:
//   connect  b % 4: 3 refused, else ok
//   send     0xff: the connection is closed, else accepted
//   recv     b % 8: 0-3 reply LEN BYTES at once; 4 timeout; 5 closed; 6 a redirection:
//            b2 & 1 ASK else MOVED, slot u16 (decimal), host LEN BYTES, port u16 (decimal;
//            b2 & 2: no port); 7 +OK
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_server.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/ha/cluster.hpp"
#include "resplock/ports/mock.hpp"

using resplock::Cluster;
using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Redirect;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

struct Harness {
    fuzz::Input in;
    MockPort mock;
    std::deque<std::string> replies;  // the bytes of the replies scripted so far
    Cluster cluster;
    ConnectionConfig config;
    std::vector<char> buf = std::vector<char>(512);

    Harness(const std::uint8_t* data, std::size_t size) : in(data, size) {
        mock.accept_any_send = true;
        mock.on_empty(&Harness::refill, this);
    }

    static void refill(void* user, MockPort& mock, MockPort::Call call) {
        Harness& h = *static_cast<Harness*>(user);
        if (h.in.empty()) return;  // the next call is unexpected: the port fails from now on
        const std::uint8_t b = h.in.byte();
        switch (call) {
            case MockPort::Call::connect:
                mock.on_connect(b % 4 == 3 ? RESPLOCK_PORT_REFUSED : RESPLOCK_PORT_OK);
                break;
            case MockPort::Call::send:
                if (b == 0xff) mock.send_fail(RESPLOCK_PORT_CLOSED);
                break;
            case MockPort::Call::recv:
                switch (b % 8) {
                    case 4:
                        mock.recv_timeout();
                        break;
                    case 5:
                        mock.recv_closed();
                        break;
                    case 6: {
                        const std::uint8_t how = h.in.byte();
                        std::string r = (how & 1) != 0 ? "-ASK " : "-MOVED ";
                        r += std::to_string(h.in.u16()) + " ";
                        r += h.in.bytes(h.in.byte());
                        if ((how & 2) == 0) r += ":" + std::to_string(h.in.u16());
                        r += "\r\n";
                        h.replies.push_back(std::move(r));
                        mock.reply(h.replies.back());
                        break;
                    }
                    case 7:
                        mock.reply("+OK\r\n");
                        break;
                    default:
                        mock.reply(h.in.bytes(h.in.byte()));
                }
                break;
        }
    }
};

bool is_redirect(std::string_view text) {
    Redirect r;
    return resplock::parse_redirect(text, r) == Status::ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Harness h(data, size);
    h.config.host = "seed";
    h.config.port = 7000;
    h.config.timeout_ms = 1 + 20U * h.in.byte();
    h.config.router = &h.cluster;
    resplock_port_t port = h.mock.port();
    Connection conn(port, h.config, h.buf.data(), h.buf.size());
    const std::string_view get[2] = {"GET", "k"};
    while (!h.in.empty()) {
        const std::uint8_t op = h.in.byte();
        switch (op % 4) {
            case 0: {
                resplock::resp::Reply reply;
                const std::uint32_t connects = h.mock.connects;
                const Status s = conn.command(get, 2, reply);
                // Each redirection costs at most two connects (the remembered node, then the
                // configured one); the first attempt too.
                FUZZ_CHECK(h.mock.connects - connects <= 2U * (RESPLOCK_MAX_REDIRECTS + 1));
                switch (s) {
                    case Status::ok:
                        FUZZ_CHECK(reply.count > 0 && !reply.top().is(resplock::resp::Type::error));
                        break;
                    case Status::too_many_redirects:
                        FUZZ_CHECK(is_redirect(conn.error_text()));
                        break;
                    case Status::server_error:
                        FUZZ_CHECK(!is_redirect(conn.error_text()));
                        break;
                    case Status::protocol_error:
                    case Status::too_large:
                    case Status::timeout:
                    case Status::closed:
                    case Status::io_error:
                        FUZZ_CHECK(!conn.connected());
                        break;
                    case Status::connect_failed:
                    case Status::no_host:
                    case Status::auth_required:
                    case Status::auth_failed:
                    case Status::no_permission:
                    case Status::no_script:
                    case Status::read_only:
                    case Status::loading:
                    case Status::server_busy:
                    case Status::out_of_memory:
                    case Status::wrong_type:
                    case Status::try_again:
                    case Status::no_replicas:
                        break;
                    default:
                        FUZZ_CHECK(false);  // no other status
                }
                const resplock::Node& node = h.cluster.node();
                if (node.port != 0) {
                    // Empty: the configured host (a redirection that named none).
                    FUZZ_CHECK(std::strlen(node.host) <= RESPLOCK_MAX_HOST_LEN);
                } else {
                    FUZZ_CHECK(node.host[0] == '\0');
                }
                break;
            }
            case 1:
                conn.close();
                break;
            case 2:
                h.mock.advance(h.in.byte());
                break;
            default:
                h.cluster.reset();
        }
    }
    return 0;
}
