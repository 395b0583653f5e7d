// In-process tests of what tools/resplock/failure.hpp says about a request that brought no
// usable answer: request_may_have_gone() and describe()'s words for too_large and protocol_error,
// over a real Connection whose port is a stub (it connects, takes every byte sent, and answers
// each request with a canned reply), and for a quorum, from the count of completed set-ups. A
// request that did not fit the buffer, or that a malformed reply to the connection's set-up kept
// back, was not sent: the tool must never say then that the lock may have been taken.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "check.hpp"
#include "failure.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/port.h"
#include "resplock/core/resp.hpp"

namespace {

using resplock::Status;

// The stub's state: the reply it gives to each request, and whether one is due.
struct Stub {
    std::string reply;
    std::size_t at = 0;
    bool due = false;
    uint32_t clock_ms = 0;
};

int32_t stub_connect(void* /*ctx*/, const char* /*host*/, uint16_t /*port*/, uint32_t /*ms*/) {
    return RESPLOCK_PORT_OK;
}
int32_t stub_send(void* ctx, const uint8_t* /*data*/, std::size_t len, uint32_t /*ms*/) {
    auto& s = *static_cast<Stub*>(ctx);
    s.due = true;
    s.at = 0;
    return static_cast<int32_t>(len);
}
int32_t stub_recv(void* ctx, uint8_t* buf, std::size_t len, uint32_t /*ms*/) {
    auto& s = *static_cast<Stub*>(ctx);
    if (!s.due || s.at == s.reply.size()) return 0;
    const std::size_t n = std::min(len, s.reply.size() - s.at);
    std::memcpy(buf, s.reply.data() + s.at, n);
    s.at += n;
    return static_cast<int32_t>(n);
}
void stub_close(void* ctx) {
    static_cast<Stub*>(ctx)->due = false;
}
uint32_t stub_now(void* ctx) {
    return ++static_cast<Stub*>(ctx)->clock_ms;  // a reply that never comes times out
}
void stub_sleep(void* /*ctx*/, uint32_t /*ms*/) {}

// A connection over the stub with a 64-byte buffer, and the Target that names it.
struct Scene {
    Stub stub;
    resplock_port_t port{&stub,      stub_connect, stub_send,  stub_recv,
                         stub_close, stub_now,     stub_sleep, nullptr};
    char buffer[64];
    resplock::ConnectionConfig config;
    resplock::Connection conn{port, config, buffer, sizeof buffer};
    resplock_cli::Target target{};

    explicit Scene(std::string reply) {
        stub.reply = std::move(reply);
        target.host = "127.0.0.1";
        std::strcpy(target.where, "127.0.0.1:6379");
        target.buffer_size = sizeof buffer;
        target.conn = &conn;
    }

    // SET with a value of value_len bytes; the request takes about 40 + value_len.
    Status set(std::size_t value_len) {
        const std::string value(value_len, 'v');
        const std::string_view args[3] = {"SET", "k", value};
        resplock::resp::Reply reply;
        return conn.command(args, 3, reply);
    }

    std::string why(Status s) const {
        char out[resplock_cli::why_max];
        resplock_cli::describe(s, target, out, sizeof out);
        return out;
    }
};

bool has(const std::string& text, const char* part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(request_too_large_for_the_buffer_was_not_sent) {
    Scene scene("+OK\r\n");
    REQUIRE_EQ(scene.set(100), Status::too_large);
    CHECK(!scene.conn.request_sent());
    CHECK(!resplock_cli::request_may_have_gone(scene.target));
    const std::string why = scene.why(Status::too_large);
    if (!CHECK(has(why, "request not sent to 127.0.0.1:6379") && has(why, "64-byte buffer") &&
               !has(why, "reply from"))) {
        std::printf("      %s\n", why.c_str());
    }
}

TEST(reply_too_large_for_the_buffer_came_after_the_request) {
    Scene scene("+" + std::string(100, 'a') + "\r\n");
    REQUIRE_EQ(scene.set(1), Status::too_large);
    CHECK(scene.conn.request_sent());
    CHECK(resplock_cli::request_may_have_gone(scene.target));
    const std::string why = scene.why(Status::too_large);
    if (!CHECK(has(why, "reply from 127.0.0.1:6379 exceeds the 64-byte buffer") &&
               !has(why, "not sent"))) {
        std::printf("      %s\n", why.c_str());
    }
}

TEST(malformed_reply_came_after_the_request) {
    Scene scene("hello\r\n");
    REQUIRE_EQ(scene.set(1), Status::protocol_error);
    CHECK(resplock_cli::request_may_have_gone(scene.target));
    const std::string why = scene.why(Status::protocol_error);
    if (!CHECK(has(why, "malformed or unexpected reply from 127.0.0.1:6379") &&
               !has(why, "not sent"))) {
        std::printf("      %s\n", why.c_str());
    }
}

// The reply to AUTH is malformed: the connection's set-up fails, and SET never goes out.
TEST(malformed_reply_to_the_set_up_keeps_the_request_back) {
    Scene scene("hello\r\n");
    scene.config.password = "secret";
    resplock::Connection conn(scene.port, scene.config, scene.buffer, sizeof scene.buffer);
    scene.target.conn = &conn;
    const std::string_view args[3] = {"SET", "k", "v"};
    resplock::resp::Reply reply;
    REQUIRE_EQ(conn.command(args, 3, reply), Status::protocol_error);
    CHECK(!resplock_cli::request_may_have_gone(scene.target));
    const std::string why = scene.why(Status::protocol_error);
    if (!CHECK(has(why, "while setting up the connection (request not sent)"))) {
        std::printf("      %s\n", why.c_str());
    }
}

// A quorum: no connection to ask afterwards; no request went out before a set-up completed.
TEST(quorum_request_may_have_gone_once_a_connection_was_set_up) {
    resplock_cli::Target t{};
    std::strcpy(t.where, "a quorum of 3 servers");
    t.buffer_size = 2048;
    std::atomic<unsigned> set_ups{0};
    t.set_ups = &set_ups;
    CHECK(!resplock_cli::request_may_have_gone(t));
    char out[resplock_cli::why_max];
    resplock_cli::describe(Status::too_large, t, out, sizeof out);
    CHECK(has(out, "request not sent to a quorum of 3 servers"));
    resplock_cli::describe(Status::protocol_error, t, out, sizeof out);
    CHECK(has(out, "(request not sent)"));
    set_ups = 1;
    CHECK(resplock_cli::request_may_have_gone(t));
    resplock_cli::describe(Status::protocol_error, t, out, sizeof out);
    CHECK(!has(out, "not sent"));
    // Nothing counted: assume the request may have gone.
    t.set_ups = nullptr;
    CHECK(resplock_cli::request_may_have_gone(t));
}
