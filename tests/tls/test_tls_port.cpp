// The mbedTLS port over the POSIX port against a real TLS-only redis-server: the lock round trip,
// mutual TLS, every way verification must refuse a server, the explicit insecure option, the
// DRBG's entropy source, and clean, time-bound failures when one side does not speak TLS.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "check.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mbedtls.h"
#include "resplock/ports/posix.h"
#include "tls_fixture.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
using tls_fixture::certs;
using tls_fixture::mtls_server;
using tls_fixture::read_file;
using tls_fixture::server;

namespace {

using Clock = std::chrono::steady_clock;

long long ms_since(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

struct Options {
    std::string ca = certs().ca;  // file name; empty: no CA
    bool client_cert = false;
    const char* server_name = nullptr;
    bool insecure = false;
    std::string host = "127.0.0.1";
    std::uint32_t timeout_ms = 2000;
};

// One connection through TLS over POSIX sockets. Large (mbedTLS contexts): keep it on the heap.
class TlsClient {
  public:
    TlsClient(std::uint16_t port, const Options& o) : host_(o.host) {
        inner_ = support::posix_port(tcp_);
        if (!o.ca.empty()) ca_ = read_file(o.ca);
        if (o.client_cert) {
            cert_ = read_file(certs().client);
            key_ = read_file(certs().client_key);
        }
        resplock_mbedtls_config_t c{};
        if (!ca_.empty()) {
            c.ca = reinterpret_cast<const unsigned char*>(ca_.c_str());
            c.ca_len = ca_.size() + 1;  // PEM: the NUL counts
        }
        if (o.client_cert) {
            c.cert = reinterpret_cast<const unsigned char*>(cert_.c_str());
            c.key = reinterpret_cast<const unsigned char*>(key_.c_str());
            // Lengths stay 0: NUL-terminated PEM.
        }
        c.server_name = o.server_name;
        c.insecure_skip_verify = o.insecure ? 1 : 0;
        c.inner = &inner_;
        init = resplock_mbedtls_port_init(&tls, &c, &port_);
        config_.host = host_.c_str();
        config_.port = port;
        config_.timeout_ms = o.timeout_ms;
        conn = std::make_unique<Connection>(port_, config_, buf_, sizeof buf_);
    }
    ~TlsClient() {
        conn.reset();
        resplock_mbedtls_free(&tls);
    }

    std::string why() const {
        char text[512];
        resplock_mbedtls_describe(&tls, text, sizeof text);
        return text;
    }

    resplock_mbedtls_t tls;
    resplock_status_t init = RESPLOCK_STATUS_invalid_argument;
    std::unique_ptr<Connection> conn;

  private:
    std::string host_, ca_, cert_, key_;
    resplock_posix_t tcp_;
    resplock_port_t inner_;
    resplock_port_t port_;
    ConnectionConfig config_;
    char buf_[512];
};

std::unique_ptr<TlsClient> client(const Options& o = Options(), std::uint16_t port = 0) {
    return std::make_unique<TlsClient>(port != 0 ? port : server().port(), o);
}

// Connects (handshake included) and reports the outcome and how long it took.
Status connect(TlsClient& c, long long* elapsed_ms = nullptr) {
    const auto start = Clock::now();
    const Status s =
        c.conn->connect(resplock::Deadline::after(c.conn->port(), c.conn->config().timeout_ms));
    if (elapsed_ms != nullptr) *elapsed_ms = ms_since(start);
    return s;
}

// Status of a failed connect through a refused certificate, with the reason checked.
void expect_verify_failure(TlsClient& c, std::uint32_t flag) {
    long long elapsed = 0;
    CHECK_EQ(connect(c, &elapsed), Status::io_error);
    CHECK(elapsed < 2000);
    CHECK_EQ(resplock_mbedtls_failure(&c.tls), RESPLOCK_MBEDTLS_FAILURE_verify);
    CHECK((resplock_mbedtls_verify_flags(&c.tls) & flag) != 0);
    const std::string why = c.why();
    CHECK(why.rfind("certificate verify failed: ", 0) == 0);
    CHECK(why.find('\n') == std::string::npos);
    if (check::failed()) std::printf("      why: %s\n", why.c_str());
}

}  // namespace

TEST(certificates_and_servers_are_ready) {
    REQUIRE(certs().ok);
    // Debian's redis-server is built with TLS; if this fails, check `redis-server --tls-port`.
    CHECK(server().running());
    CHECK(mtls_server().running());
    CHECK_EQ(server().cli({"PING"}), std::string("PONG"));
}

TEST(lock_round_trip_over_tls) {
    auto a = client();
    auto b = client();
    REQUIRE_EQ(a->init, RESPLOCK_STATUS_ok);
    REQUIRE_EQ(b->init, RESPLOCK_STATUS_ok);
    Lock la(*a->conn, "tls:round"), lb(*b->conn, "tls:round");
    REQUIRE_EQ(la.acquire(10000), Status::ok);
    CHECK_EQ(server().cli({"GET", "tls:round"}), std::string(la.token()));
    CHECK_EQ(lb.acquire(10000), Status::busy);
    LockInfo info;
    CHECK_EQ(lb.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    CHECK_EQ(la.extend(20000), Status::ok);
    const long long ttl = std::atoll(server().cli({"PTTL", "tls:round"}).c_str());
    CHECK(ttl > 19000 && ttl <= 20000);
    CHECK_EQ(lb.release(), Status::invalid_argument);  // b holds no token
    CHECK_EQ(la.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "tls:round"}), std::string("0"));
    CHECK_EQ(lb.acquire(10000), Status::ok);
    CHECK_EQ(lb.release(), Status::ok);
    CHECK_EQ(resplock_mbedtls_failure(&a->tls), RESPLOCK_MBEDTLS_FAILURE_none);
}

TEST(evalsha_falls_back_to_eval_over_tls) {
    auto c = client();
    REQUIRE_EQ(c->init, RESPLOCK_STATUS_ok);
    Lock lock(*c->conn, "tls:script");
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(server().cli({"CONFIG", "RESETSTAT"}), std::string("OK"));
    CHECK_EQ(lock.extend(10000), Status::ok);  // NOSCRIPT, then EVAL
    CHECK_EQ(lock.extend(10000), Status::ok);  // EVALSHA finds it now
    CHECK_EQ(lock.release(), Status::ok);
    const std::string stats = server().cli({"INFO", "commandstats"});
    // One NOSCRIPT answered by one EVAL; every other script call went through EVALSHA.
    CHECK(stats.find("cmdstat_eval:calls=1,") != std::string::npos);
    const std::size_t evalsha = stats.find("cmdstat_evalsha:");
    CHECK(evalsha != std::string::npos &&
          stats.find("failed_calls=1", evalsha) < stats.find('\n', evalsha));
    if (check::failed()) std::printf("      %s\n", stats.c_str());
}

TEST(verifies_by_dns_name_and_by_ip_address) {
    Options by_name;
    by_name.server_name = "localhost";  // connect to 127.0.0.1, verify the DNS name
    auto a = client(by_name);
    REQUIRE_EQ(a->init, RESPLOCK_STATUS_ok);
    CHECK_EQ(connect(*a), Status::ok);

    Options by_host;
    by_host.host = "localhost";  // the name given to connect is the name verified
    auto b = client(by_host);
    REQUIRE_EQ(b->init, RESPLOCK_STATUS_ok);
    CHECK_EQ(connect(*b), Status::ok);

    auto c = client();  // 127.0.0.1 against the certificate's iPAddress entry
    CHECK_EQ(connect(*c), Status::ok);

    Options v6;
    v6.server_name = "::1";
    auto d = client(v6);
    CHECK_EQ(connect(*d), Status::ok);
    if (check::failed()) std::printf("      why: %s / %s\n", c->why().c_str(), d->why().c_str());
}

TEST(reconnects_over_tls_after_the_server_restarts) {
    auto c = client();
    Lock lock(*c->conn, "tls:restart");
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    REQUIRE(server().restart());
    LockInfo info;
    Status s = lock.query(info);  // the old connection is dead: closed or io_error
    CHECK(s != Status::ok);
    s = lock.query(info);  // reconnects, new handshake
    CHECK_EQ(s, Status::ok);
    CHECK(info.state == LockState::free);  // persistence is off: the key went with the server
    Lock again(*c->conn, "tls:restart");
    CHECK_EQ(again.acquire(5000), Status::ok);
    CHECK_EQ(again.release(), Status::ok);
}

TEST(wrong_ca_is_refused) {
    Options o;
    o.ca = certs().other_ca;
    auto c = client(o);
    REQUIRE_EQ(c->init, RESPLOCK_STATUS_ok);
    expect_verify_failure(*c, MBEDTLS_X509_BADCERT_NOT_TRUSTED);
    Lock lock(*c->conn, "tls:wrong-ca");
    CHECK_EQ(lock.acquire(1000), Status::io_error);  // never sent: not unknown_outcome
    CHECK_EQ(server().cli({"EXISTS", "tls:wrong-ca"}), std::string("0"));
}

TEST(wrong_host_name_is_refused) {
    Options o;
    o.server_name = "wrong.example";
    auto c = client(o);
    REQUIRE_EQ(c->init, RESPLOCK_STATUS_ok);
    expect_verify_failure(*c, MBEDTLS_X509_BADCERT_CN_MISMATCH);
}

TEST(wrong_ip_address_is_refused) {
    Options v4;
    v4.server_name = "127.0.0.2";
    auto a = client(v4);
    expect_verify_failure(*a, MBEDTLS_X509_BADCERT_CN_MISMATCH);
    Options v6;
    v6.server_name = "::2";
    auto b = client(v6);
    expect_verify_failure(*b, MBEDTLS_X509_BADCERT_CN_MISMATCH);
}

TEST(a_der_ca_works_too) {
    const std::string der = read_file(certs().ca_der);
    REQUIRE(!der.empty() && der[0] == 0x30);  // an ASN.1 SEQUENCE, not text
    resplock_posix_t tcp;
    const resplock_port_t inner = support::posix_port(tcp);
    auto tls = std::make_unique<resplock_mbedtls_t>();
    resplock_mbedtls_config_t cfg{};
    cfg.ca = reinterpret_cast<const unsigned char*>(der.data());
    cfg.ca_len = der.size();
    cfg.inner = &inner;
    resplock_port_t port;
    REQUIRE_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_ok);
    CHECK_EQ(port.connect(port.ctx, "127.0.0.1", server().port(), 2000), RESPLOCK_PORT_OK);
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    CHECK_EQ(
        port.send(port.ctx, reinterpret_cast<const std::uint8_t*>(ping), sizeof ping - 1, 2000),
        static_cast<std::int32_t>(sizeof ping - 1));
    std::uint8_t reply[16];
    const std::int32_t n = port.recv(port.ctx, reply, sizeof reply, 2000);
    CHECK_EQ(std::string(reinterpret_cast<char*>(reply), n > 0 ? static_cast<std::size_t>(n) : 0),
             std::string("+PONG\r\n"));
    // Nothing more is coming: recv reports "nothing yet" within its timeout.
    const auto start = Clock::now();
    CHECK_EQ(port.recv(port.ctx, reply, sizeof reply, 200), 0);
    const long long waited = ms_since(start);
    CHECK(waited >= 190 && waited < 1000);
    port.close(port.ctx);
    port.close(port.ctx);  // twice is fine
    CHECK_EQ(port.send(port.ctx, reinterpret_cast<const std::uint8_t*>(ping), 4, 100),
             RESPLOCK_PORT_ERROR);
    resplock_mbedtls_free(tls.get());
}

TEST(mutual_tls_works_with_a_client_certificate) {
    Options o;
    o.client_cert = true;
    auto c = client(o, mtls_server().port());
    REQUIRE_EQ(c->init, RESPLOCK_STATUS_ok);
    Lock lock(*c->conn, "tls:mtls");
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(mtls_server().cli({"GET", "tls:mtls"}), std::string(lock.token()));
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(mutual_tls_fails_without_a_client_certificate) {
    auto c = client(Options(), mtls_server().port());
    REQUIRE_EQ(c->init, RESPLOCK_STATUS_ok);
    Lock lock(*c->conn, "tls:mtls-none");
    const auto start = Clock::now();
    const Status s = lock.acquire(5000);
    CHECK(ms_since(start) < 2500);
    // The server ends the handshake (alert or close); the request is never sent.
    CHECK(s == Status::io_error || s == Status::closed);
    CHECK_EQ(resplock_mbedtls_failure(&c->tls), RESPLOCK_MBEDTLS_FAILURE_handshake);
    CHECK(c->why().rfind("TLS handshake failed: ", 0) == 0);
    std::printf("      (without a client certificate: %s; %s)\n", resplock::to_string(s),
                c->why().c_str());
    CHECK_EQ(mtls_server().cli({"EXISTS", "tls:mtls-none"}), std::string("0"));
}

TEST(insecure_connects_only_when_explicitly_set) {
    // No CA and no insecure flag: refused at init.
    Options none;
    none.ca.clear();
    auto a = client(none);
    CHECK_EQ(a->init, RESPLOCK_STATUS_invalid_argument);
    CHECK(connect(*a) != Status::ok);

    // A CA that does not match: refused, as seen above, unless the flag is set.
    Options wrong;
    wrong.ca = certs().other_ca;
    wrong.server_name = "wrong.example";
    wrong.insecure = true;
    auto b = client(wrong);
    REQUIRE_EQ(b->init, RESPLOCK_STATUS_ok);
    Lock lock(*b->conn, "tls:insecure");
    CHECK_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);

    Options bare;
    bare.ca.clear();
    bare.insecure = true;
    auto c = client(bare);
    REQUIRE_EQ(c->init, RESPLOCK_STATUS_ok);
    CHECK_EQ(connect(*c), Status::ok);
}

TEST(init_refuses_bad_configurations) {
    resplock_posix_t tcp;
    const resplock_port_t inner = support::posix_port(tcp);
    auto tls = std::make_unique<resplock_mbedtls_t>();
    const std::string ca = read_file(certs().ca);
    const std::string cert = read_file(certs().client);
    const std::string key = read_file(certs().client_key);
    const std::string other_key = read_file(certs().server_key);
    auto bytes = [](const std::string& s) {
        return reinterpret_cast<const unsigned char*>(s.c_str());
    };

    resplock_mbedtls_config_t cfg{};
    resplock_port_t port;
    cfg.ca = bytes(ca);
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_invalid_argument);
    cfg.inner = &inner;
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), nullptr, &port),
             RESPLOCK_STATUS_invalid_argument);
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, nullptr),
             RESPLOCK_STATUS_invalid_argument);

    static const unsigned char garbage[] = "-----BEGIN CERTIFICATE-----\nnot base64\n";
    cfg.ca = garbage;
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_invalid_argument);
    CHECK_EQ(resplock_mbedtls_failure(tls.get()), RESPLOCK_MBEDTLS_FAILURE_ca);
    char why[256];
    CHECK(resplock_mbedtls_describe(tls.get(), why, sizeof why) > 0);
    CHECK(std::string(why).rfind("cannot parse the CA certificate(s): ", 0) == 0);

    cfg.ca = bytes(ca);
    cfg.cert = bytes(cert);  // without its key
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_invalid_argument);
    cfg.key = bytes(other_key);  // a key that is not the certificate's
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_invalid_argument);
    CHECK_EQ(resplock_mbedtls_failure(tls.get()), RESPLOCK_MBEDTLS_FAILURE_key);
    cfg.key = bytes(key);
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_ok);
    resplock_mbedtls_free(tls.get());

    const std::string long_name(RESPLOCK_MBEDTLS_MAX_NAME + 1, 'a');
    cfg.server_name = long_name.c_str();
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_invalid_argument);
}

namespace {

// An inner port that counts and can fail its random calls; everything else is POSIX.
struct CountingRandom {
    resplock_posix_t tcp;
    resplock_port_t posix = support::posix_port(tcp);
    int calls = 0;
    std::size_t bytes = 0;
    bool fail = false;

    resplock_port_t port() {
        resplock_port_t p = posix;
        p.ctx = this;
        p.connect = [](void* c, const char* h, std::uint16_t pt, std::uint32_t t) {
            auto* self = static_cast<CountingRandom*>(c);
            return self->posix.connect(self->posix.ctx, h, pt, t);
        };
        p.send = [](void* c, const std::uint8_t* d, std::size_t n, std::uint32_t t) {
            auto* self = static_cast<CountingRandom*>(c);
            return self->posix.send(self->posix.ctx, d, n, t);
        };
        p.recv = [](void* c, std::uint8_t* d, std::size_t n, std::uint32_t t) {
            auto* self = static_cast<CountingRandom*>(c);
            return self->posix.recv(self->posix.ctx, d, n, t);
        };
        p.close = [](void* c) {
            auto* self = static_cast<CountingRandom*>(c);
            self->posix.close(self->posix.ctx);
        };
        p.random = [](void* c, std::uint8_t* d, std::size_t n) -> std::int32_t {
            auto* self = static_cast<CountingRandom*>(c);
            ++self->calls;
            self->bytes += n;
            return self->fail ? -1 : self->posix.random(self->posix.ctx, d, n);
        };
        return p;
    }
};

}  // namespace

TEST(drbg_is_seeded_from_the_inner_ports_random) {
    const std::string ca = read_file(certs().ca);
    resplock_mbedtls_config_t cfg{};
    cfg.ca = reinterpret_cast<const unsigned char*>(ca.c_str());
    auto tls = std::make_unique<resplock_mbedtls_t>();

    CountingRandom counting;
    resplock_port_t inner = counting.port();
    cfg.inner = &inner;
    resplock_port_t port;
    REQUIRE_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_ok);
    CHECK(counting.calls >= 1);
    CHECK(counting.bytes >= 32);  // at least a 256-bit seed
    CHECK_EQ(port.connect(port.ctx, "127.0.0.1", server().port(), 2000), RESPLOCK_PORT_OK);
    port.close(port.ctx);
    resplock_mbedtls_free(tls.get());

    CountingRandom failing;
    failing.fail = true;
    inner = failing.port();
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_random_failed);
    CHECK(failing.calls >= 1);

    inner.random = nullptr;
    CHECK_EQ(resplock_mbedtls_port_init(tls.get(), &cfg, &port), RESPLOCK_STATUS_random_failed);
}

TEST(plain_client_against_the_tls_port_fails_within_its_deadline) {
    resplock_posix_t tcp;
    const resplock_port_t port = support::posix_port(tcp);
    ConnectionConfig cfg;
    cfg.port = server().port();
    cfg.timeout_ms = 1000;
    char buf[512];
    Connection conn(port, cfg, buf, sizeof buf);
    Lock lock(conn, "tls:plain-client");
    const auto start = Clock::now();
    const Status s = lock.acquire(5000);
    const long long elapsed = ms_since(start);
    std::printf("      (plain client on the TLS port: %s after %lld ms)\n", resplock::to_string(s),
                elapsed);
    CHECK(s == Status::timeout || s == Status::closed || s == Status::io_error ||
          s == Status::protocol_error || s == Status::unknown_outcome);
    CHECK(elapsed < 1500);
    CHECK_EQ(server().cli({"EXISTS", "tls:plain-client"}), std::string("0"));
}

TEST(tls_client_against_a_plain_port_fails_within_its_deadline) {
    support::RedisServer plain;
    REQUIRE(plain.running());
    Options o;
    o.timeout_ms = 1000;
    auto c = client(o, plain.port());
    REQUIRE_EQ(c->init, RESPLOCK_STATUS_ok);
    Lock lock(*c->conn, "tls:plain-server");
    const auto start = Clock::now();
    const Status s = lock.acquire(5000);
    const long long elapsed = ms_since(start);
    std::printf("      (TLS client on a plain port: %s after %lld ms; %s)\n",
                resplock::to_string(s), elapsed, c->why().c_str());
    CHECK(s == Status::timeout || s == Status::closed || s == Status::io_error);
    CHECK(elapsed < 1500);
    CHECK_EQ(plain.cli({"EXISTS", "tls:plain-server"}), std::string("0"));
}

TEST(tls_client_against_a_silent_server_times_out) {
    support::SilentListener silent;
    REQUIRE(silent.port() != 0);
    Options o;
    o.timeout_ms = 500;
    auto c = client(o, silent.port());
    long long elapsed = 0;
    CHECK_EQ(connect(*c, &elapsed), Status::timeout);
    CHECK(elapsed >= 450 && elapsed < 1000);
    CHECK_EQ(resplock_mbedtls_failure(&c->tls), RESPLOCK_MBEDTLS_FAILURE_none);
}
