// Fuzz target for the Sentinel router's reply handling. The input is read in two parts:
//   1. LEN BYTES: one reply, parsed and given to Sentinel::parse_master_addr() and parse_role(),
//      whose results are checked against the reply (an address only from a [bulk, bulk] array,
//      copied exactly, its port the decimal number sent; nil only as "unknown"; "master" only
//      when the first element says so);
//   2. config (sentinels 1 + b % 3, timeout 1 + 20 * b ms), then up to eight commands over a
//      connection routed by a Sentinel, with every connect, send and recv scripted by the input
//      as in fuzz_lock (see fuzz_server.hpp). Each command must end within its deadline on the
//      fake clock, return a status the router documents, and succeed only on a confirmed master;
//      after each success the sentinels confirm it as after a granted lock (ok or not_replicated,
//      within its deadline). Part 1 is also read as a prefix (as the router reads ROLE, which
//      grows with the replicas): a reply of any length whose first values fit.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_server.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/ha/sentinel.hpp"
#include "resplock/ports/mock.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Node;
using resplock::Sentinel;
using resplock::Status;
using resplock::mock::MockPort;
using resplock::resp::Parser;
using resplock::resp::Reply;
using resplock::resp::Type;
using resplock::resp::Value;

namespace {

void check_role(const Reply& reply) {
    const Value& top = reply.top();
    const Status role = Sentinel::parse_role(reply);
    if (role == Status::ok) {
        FUZZ_CHECK(top.is(Type::array) && reply.count >= 2 && reply.values[1].equals("master"));
    } else {
        FUZZ_CHECK(role == Status::read_only || role == Status::protocol_error);
    }
}

void check_parsers(std::string_view bytes) {
    std::vector<char> buf(bytes.begin(), bytes.end());  // exactly sized: ASan sees an overrun
    Value values[RESPLOCK_MAX_REPLY_VALUES];
    Parser parser(values, RESPLOCK_MAX_REPLY_VALUES);
    if (parser.parse(buf.data(), buf.size()) != Status::ok) return;
    const Reply reply = parser.reply();
    const Value& top = reply.top();

    Node node;
    const Status addr = Sentinel::parse_master_addr(reply, node);
    FUZZ_CHECK((addr == Status::no_host) == (top.is(Type::nil_array) || top.is(Type::nil_bulk)));
    if (addr == Status::ok) {
        FUZZ_CHECK(top.is(Type::array) && top.size == 2 && reply.count == 3);
        const Value& host = reply.values[1];
        const Value& port = reply.values[2];
        FUZZ_CHECK(host.is(Type::bulk_string) && port.is(Type::bulk_string));
        FUZZ_CHECK(host.size >= 1 && host.size <= RESPLOCK_MAX_HOST_LEN);
        FUZZ_CHECK(std::strlen(node.host) == host.size);
        FUZZ_CHECK(std::memcmp(node.host, host.data, host.size) == 0);
        FUZZ_CHECK(port.size >= 1 && port.size <= 5);
        std::uint32_t number = 0;
        for (const char c : port.text()) {
            FUZZ_CHECK(c >= '0' && c <= '9');
            number = number * 10 + static_cast<std::uint32_t>(c - '0');
        }
        FUZZ_CHECK(number == node.port && node.port != 0);
    } else if (addr != Status::no_host) {
        FUZZ_CHECK(node.port == 0 && node.host[0] == '\0');  // untouched
        FUZZ_CHECK(top.is(Type::error) || addr == Status::protocol_error);
    }

    check_role(reply);
}

// The same bytes read as a prefix (as the router reads ROLE): any reply whose first values fit
// parses whatever its length, and parse_role judges those values alone.
void check_prefix(std::string_view bytes) {
    std::vector<char> buf(bytes.begin(), bytes.end());
    Value values[RESPLOCK_MAX_REPLY_VALUES];
    Parser parser(values, RESPLOCK_MAX_REPLY_VALUES);
    parser.reset(true);
    const Status s = parser.parse(buf.data(), buf.size());
    Value whole_values[RESPLOCK_MAX_REPLY_VALUES];
    Parser whole(whole_values, RESPLOCK_MAX_REPLY_VALUES);
    const Status w = whole.parse(buf.data(), buf.size());
    // A reply the plain parser reads whole reads the same as a prefix; a prefix reads more.
    if (w == Status::ok) FUZZ_CHECK(s == Status::ok && parser.reply().count == whole.reply().count);
    if (s != Status::ok) return;
    FUZZ_CHECK(parser.consumed() <= buf.size());
    const Reply reply = parser.reply();
    FUZZ_CHECK(reply.count >= 1 && reply.count <= RESPLOCK_MAX_REPLY_VALUES);
    check_role(reply);
}

bool documented(Status s) {
    return fuzz::common(s) || s == Status::ok || s == Status::read_only;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    const std::string_view parsed = in.bytes(in.byte());
    check_parsers(parsed);
    check_prefix(parsed);

    MockPort mock;
    mock.accept_any_send = true;
    mock.on_empty(fuzz::refill, &in);
    const resplock_port_t port = mock.port();
    Sentinel sentinel("mymaster");
    const int sentinels = 1 + in.byte() % 3;
    for (int i = 0; i < sentinels; ++i)
        FUZZ_CHECK(sentinel.add("127.0.0.1", static_cast<std::uint16_t>(26379 + i)));
    ConnectionConfig config;
    config.router = &sentinel;
    config.timeout_ms = 1 + 20U * in.byte();
    std::vector<char> buf(resplock::lock_buffer_min());
    Connection conn(port, config, buf.data(), buf.size());

    const std::string_view ping[1] = {"PING"};
    for (int op = 0; op < 8 && !in.empty(); ++op) {
        const std::uint32_t start = mock.now_ms;
        Reply reply;
        const Status s = conn.command(ping, 1, reply);
        FUZZ_CHECK(documented(s));
        // Every wait, pause and timeout is cut to the one deadline.
        FUZZ_CHECK(static_cast<std::uint32_t>(mock.now_ms - start) <= config.timeout_ms);
        FUZZ_CHECK(sentinel.tried() <= static_cast<std::size_t>(sentinels));
        if (s == Status::ok) {
            FUZZ_CHECK(conn.connected());
            FUZZ_CHECK(sentinel.resolved() && sentinel.master().port != 0);
            // As after a granted lock: the sentinels are asked whether the node is still the
            // master. Only ok or not_replicated, within its deadline, and the link is closed.
            const std::uint32_t asked = mock.now_ms;
            const Status c =
                conn.confirm_write(resplock::Deadline::after(asked, config.timeout_ms));
            FUZZ_CHECK(c == Status::ok || c == Status::not_replicated);
            FUZZ_CHECK(static_cast<std::uint32_t>(mock.now_ms - asked) <= config.timeout_ms);
            FUZZ_CHECK(!conn.connected());
        }
        if (s == Status::no_host) FUZZ_CHECK(sentinel.name_unknown());
        const std::string_view err = conn.error_text();
        if (!err.empty()) {
            FUZZ_CHECK(err.data() >= buf.data() &&
                       err.data() + err.size() <= buf.data() + buf.size());
        }
    }
    return 0;
}
