// Test harness: a real redis-server on a free 127.0.0.1 port, started by the test and stopped
// when the object goes away, when the test process dies (PR_SET_PDEATHSIG), or on kill().
#ifndef RESPLOCK_TESTS_REDIS_SERVER_HPP
#define RESPLOCK_TESTS_REDIS_SERVER_HPP

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace support {

// Files of a TLS-only server (see RedisServer's TLS constructor).
struct TlsFiles {
    std::string cert;           // the server's certificate (PEM)
    std::string key;            // its private key
    std::string ca;             // CA that verifies client certificates (and that redis-cli trusts)
    bool auth_clients = false;  // --tls-auth-clients yes: a client certificate is required
    // The certificate and key redis-cli presents (needed when auth_clients is set).
    std::string client_cert;
    std::string client_key;
};

class RedisServer {
  public:
    // Starts redis-server with persistence off, bound to 127.0.0.1 only, plus `extra` arguments
    // (e.g. {"--requirepass", "secret"}), and waits (up to 5 s) until it accepts connections.
    explicit RedisServer(std::initializer_list<const char*> extra = {});
    // The same with TLS only: no plain-text port (--port 0), TLS on port(), and waits (up to 5 s)
    // until `redis-cli --tls` gets PONG from it. cli() then talks TLS too.
    explicit RedisServer(const TlsFiles& tls, std::initializer_list<const char*> extra = {});
    ~RedisServer();
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    bool running() const { return pid_ > 0; }
    std::uint16_t port() const { return port_; }
    bool tls() const { return tls_; }
    // "redis://127.0.0.1:PORT" ("rediss://..." for a TLS server)
    std::string url() const;

    // Runs redis-cli against this server (-h 127.0.0.1 -p PORT, --no-auth-warning, plus any
    // `auth` args given at construction with set_cli_auth) and returns its stdout, trailing
    // newline removed. Uses RESP text as redis-cli prints it in --raw mode.
    std::string cli(const std::vector<std::string>& args) const;
    // Arguments put before every cli() call, e.g. {"--user", "u", "--pass", "p"}.
    void set_cli_auth(std::vector<std::string> auth) { cli_auth_ = std::move(auth); }

    // SIGKILL and reap the server (its data is gone: persistence is off).
    void kill();
    // SIGSTOP / SIGCONT the server: stopped, it accepts connections (the kernel does) but answers
    // nothing, like a host that froze. cli() must not be called while it is stopped (it would
    // wait 10 s). True if the signal was sent.
    bool pause();
    bool resume();
    bool paused() const { return paused_; }
    // Start again on the same port with the same arguments.
    bool restart();

  private:
    bool start();
    bool answers() const;
    std::vector<std::string> args_;
    bool tls_ = false;
    std::vector<std::string> tls_cli_;  // redis-cli's TLS arguments
    std::vector<std::string> cli_auth_;
    std::uint16_t port_ = 0;
    int pid_ = -1;
    bool paused_ = false;
};

// A TCP listener on 127.0.0.1 that accepts connections and never answers (a silent server).
class SilentListener {
  public:
    SilentListener();
    ~SilentListener();
    std::uint16_t port() const { return port_; }

  private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
    int pid_ = -1;  // child that accepts and holds connections
};

// A free TCP port on 127.0.0.1 (bound and released; a tiny race is accepted in tests).
std::uint16_t free_port();

}  // namespace support

#endif  // RESPLOCK_TESTS_REDIS_SERVER_HPP
