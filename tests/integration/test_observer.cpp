// Who holds what, against a real redis-server: CLIENT SETNAME on every connect (CLIENT LIST shows
// the name, again after the server dropped the connection), a server whose ACL refuses the name,
// owner labels in tokens (GET KEY shows them; only the whole token releases), a quorum with one
// label on every server, and the resplock tool's --owner, --no-client-name and status.
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/quorum_lock.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

using resplock::AcquireOptions;
using resplock::EventKind;
using resplock::Lock;
using resplock::Observer;
using resplock::Status;

namespace {

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

// The events of one test, in order (kind and status only).
struct Events {
    std::vector<EventKind> kinds;
    std::vector<Status> statuses;
    static void record(void* user, const resplock_event_t* e) {
        auto& ev = *static_cast<Events*>(user);
        ev.kinds.push_back(resplock::kind_of(*e));
        ev.statuses.push_back(resplock::status_of(*e));
    }
};

// A Connection over its own POSIX port context and buffer.
struct Client {
    explicit Client(const Observer* observer, std::uint16_t port, const char* user = nullptr,
                    const char* password = nullptr)
        : port_(support::posix_port(ctx)),
          conn(port_, config(observer, port, user, password), buf, sizeof buf) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    static resplock::ConnectionConfig config(const Observer* observer, std::uint16_t port,
                                             const char* user, const char* password) {
        resplock::ConnectionConfig c;
        c.port = port;
        c.username = user;
        c.password = password;
        c.observer = observer;
        return c;
    }
    Status ping() {
        const std::string_view args[1] = {"PING"};
        return conn.command(args, 1, reply);
    }

    resplock_posix_t ctx{};
    resplock_port_t port_;
    char buf[1024];
    resplock::Connection conn;
    resplock::resp::Reply reply;
};

support::Result cli(std::vector<std::string> args) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return support::run(args, {}, 30);
}

}  // namespace

TEST(client_list_shows_the_name_again_after_a_reconnect) {
    REQUIRE(server().running());
    Events events;
    Observer observer(&Events::record, &events);
    REQUIRE_EQ(observer.set_client_name("door-17"), Status::ok);
    Client c(&observer, server().port());
    CHECK_EQ(c.ping(), Status::ok);
    CHECK(contains(server().cli({"CLIENT", "LIST"}), "name=door-17 "));
    // The server drops it: the next command reconnects and names it again.
    CHECK(trim(server().cli({"CLIENT", "KILL", "USER", "default"})) != "0");
    CHECK_EQ(c.ping(), Status::ok);
    CHECK(contains(server().cli({"CLIENT", "LIST"}), "name=door-17 "));
    REQUIRE_EQ(events.kinds.size(), 2U);
    CHECK_EQ(events.kinds[0], EventKind::connect);
    CHECK_EQ(events.kinds[1], EventKind::reconnect);
    CHECK_EQ(events.statuses[1], Status::ok);
}

TEST(an_acl_without_client_setname_does_not_stop_the_lock) {
    REQUIRE(server().running());
    REQUIRE_EQ(trim(server().cli({"ACL", "SETUSER", "noname", "on", ">pw-9", "resetkeys", "~obs:*",
                                  "-@all", "+set", "+get", "+pttl", "+pexpire", "+del", "+eval",
                                  "+evalsha"})),
               std::string("OK"));
    Events events;
    Observer observer(&Events::record, &events);
    REQUIRE_EQ(observer.set_client_name("door-18"), Status::ok);
    Client c(&observer, server().port(), "noname", "pw-9");
    Lock lock(c.conn, "obs:acl");
    CHECK_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    REQUIRE_EQ(events.kinds.size(), 1U);
    CHECK_EQ(events.kinds[0], EventKind::connect);
    CHECK_EQ(events.statuses[0], Status::no_permission);
    CHECK(!contains(server().cli({"CLIENT", "LIST"}), "name=door-18"));
    // With client|setname allowed, the name is taken.
    REQUIRE_EQ(trim(server().cli({"ACL", "SETUSER", "noname", "+client|setname"})),
               std::string("OK"));
    Client named(&observer, server().port(), "noname", "pw-9");
    Lock again(named.conn, "obs:acl");
    CHECK_EQ(again.acquire(5000), Status::ok);
    CHECK(contains(server().cli({"CLIENT", "LIST"}), "name=door-18 "));
    CHECK_EQ(events.statuses.back(), Status::ok);
}

TEST(get_key_shows_the_owner_label_and_only_the_whole_token_releases) {
    REQUIRE(server().running());
    Client c(nullptr, server().port());
    Client other(nullptr, server().port());
    Lock lock(c.conn, "obs:label");
    AcquireOptions o;
    o.owner = "edge-7.plant";
    REQUIRE_EQ(lock.try_acquire(5000, 0, o), Status::ok);
    const std::string value = trim(server().cli({"GET", "obs:label"}));
    CHECK_EQ(value, std::string(lock.token()));
    CHECK_EQ(value.rfind("edge-7.plant:", 0), 0U);
    CHECK_EQ(value.size(), std::strlen("edge-7.plant:") + resplock::token_len);
    // Another holder with the same label is another token.
    Lock same_label(other.conn, "obs:label");
    CHECK_EQ(same_label.acquire(5000, o), Status::busy);
    REQUIRE_EQ(same_label.adopt("edge-7.plant:00000000000000000000000000000000"), Status::ok);
    CHECK_EQ(same_label.release(), Status::not_owner);
    CHECK_EQ(lock.extend(6000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(trim(server().cli({"EXISTS", "obs:label"})), std::string("0"));
}

TEST(a_quorum_carries_the_same_label_on_every_server) {
    support::RedisServer s1;
    support::RedisServer s2;
    REQUIRE(server().running() && s1.running() && s2.running());
    Client a(nullptr, server().port());
    Client b(nullptr, s1.port());
    Client d(nullptr, s2.port());
    resplock::Connection* conns[3] = {&a.conn, &b.conn, &d.conn};
    resplock::QuorumLock lock(conns, 3, "obs:quorum");
    AcquireOptions o;
    o.owner = "door-19";
    REQUIRE_EQ(lock.try_acquire(5000, 0, o), Status::ok);
    const std::string token(lock.token());
    CHECK_EQ(token.rfind("door-19:", 0), 0U);
    CHECK_EQ(trim(server().cli({"GET", "obs:quorum"})), token);
    CHECK_EQ(trim(s1.cli({"GET", "obs:quorum"})), token);
    CHECK_EQ(trim(s2.cli({"GET", "obs:quorum"})), token);
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(cli_owner_labels_the_token_names_the_connection_and_shows_in_status) {
    REQUIRE(server().running());
    const std::string url = server().url();
    support::Result r =
        cli({"-u", url, "--owner", "door-20", "--ttl", "10000", "acquire", "obs:cli"});
    REQUIRE_EQ(r.code, 0);
    const std::string token = trim(r.out);
    CHECK_EQ(token.rfind("door-20:", 0), 0U);
    CHECK_EQ(trim(server().cli({"GET", "obs:cli"})), token);
    r = cli({"-u", url, "status", "obs:cli"});
    CHECK_EQ(r.code, 0);
    CHECK(trim(r.out).rfind("held ", 0) == 0);
    CHECK(contains(r.out, " door-20\n"));
    CHECK_EQ(cli({"-u", url, "release", "obs:cli", token}).code, 0);
    // While COMMAND runs, the tool's connection carries the label as its name.
    const std::string port = std::to_string(server().port());
    r = cli({"-u", url, "--owner", "door-21", "run", "obs:cli", "--", "redis-cli", "-p", port,
             "CLIENT", "LIST"});
    CHECK_EQ(r.code, 0);
    CHECK(contains(r.out, "name=door-21 "));
    r = cli({"-u", url, "--owner", "door-22", "--no-client-name", "run", "obs:cli", "--",
             "redis-cli", "-p", port, "CLIENT", "LIST"});
    CHECK_EQ(r.code, 0);
    CHECK(!contains(r.out, "name=door-22"));
    // No label: a plain token, and status shows no label.
    r = cli({"-u", url, "--owner=", "--ttl", "10000", "acquire", "obs:plain"});
    REQUIRE_EQ(r.code, 0);
    CHECK_EQ(trim(r.out).size(), resplock::token_len);
    r = cli({"-u", url, "status", "obs:plain"});
    CHECK(trim(r.out).rfind("held ", 0) == 0);
    CHECK(trim(r.out).find(' ', 5) == std::string::npos);
}

TEST(cli_default_owner_is_the_host_name) {
    REQUIRE(server().running());
    char host[256] = {};
    REQUIRE_EQ(gethostname(host, sizeof host - 1), 0);
    std::string label;
    for (const char* p = host; *p != '\0' && label.size() < RESPLOCK_MAX_OWNER_LEN; ++p) {
        const char c = *p;
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        label += ok ? c : '-';
    }
    const support::Result r = cli({"-u", server().url(), "--ttl", "5000", "acquire", "obs:host"});
    REQUIRE_EQ(r.code, 0);
    CHECK_EQ(trim(r.out).rfind(label + ":", 0), 0U);
}
