// A TCP proxy for fault-injection tests: listens on a free 127.0.0.1 port and relays every
// connection to 127.0.0.1:<server port>, applying a fault plan per direction that a test may
// change at any time. One thread, poll()-based, serves all connections; the destructor stops it
// and closes every socket.
#ifndef RESPLOCK_TESTS_FAULT_PROXY_HPP
#define RESPLOCK_TESTS_FAULT_PROXY_HPP

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace support {

// A direction through the proxy.
enum class Way : int { to_server = 0, to_client = 1 };

// What happens to the bytes going one way. The default passes them on untouched.
struct Fault {
    // Each chunk read is held this long before it is passed on (order is kept).
    std::uint32_t delay_ms = 0;
    // Every byte goes out in its own send() (TCP_NODELAY), at least gap_us after the previous
    // one, so the receiver sees one-byte segments.
    bool one_byte = false;
    std::uint32_t gap_us = 500;
    // Once this many bytes have passed this way on a connection (counted from the moment the
    // plan was set, or the connection accepted if later), the next byte is not passed on and
    // both sides are closed instead. -1: never.
    std::int64_t drop_after = -1;
    // Nothing is read or passed on this way; the sockets stay open. A peer closing still closes
    // the pair.
    bool stall = false;
};

// When injected bytes reach the client.
enum class Inject {
    with_reply,  // in front of the next chunk from the server, in the same send()
    on_request,  // as soon as the client's next request bytes arrive, ignoring to_client faults
};

class FaultProxy {
  public:
    explicit FaultProxy(std::uint16_t server_port);
    ~FaultProxy();
    FaultProxy(const FaultProxy&) = delete;
    FaultProxy& operator=(const FaultProxy&) = delete;

    // The port the proxy listens on (0 if it could not start).
    std::uint16_t port() const { return port_; }

    // Replaces the plan of one direction; applies to open connections too.
    void set(Way way, const Fault& fault);
    // Both directions back to pass-through; pending injections are dropped.
    void pass_through();
    // Bytes for the client that the server never sent, delivered once (see Inject).
    void inject(const std::string& bytes, Inject when);
    // From now on, every `from` in what the server sends is passed on as `to` (e.g. an address
    // the server names, translated to this client's way of reaching it); pass_through() keeps
    // it. Only within one read from the server: for short replies, which loopback delivers whole.
    void rewrite(const std::string& from, const std::string& to);

    // Bytes passed on each way so far (bytes injected with_reply included).
    std::uint64_t forwarded(Way way) const { return forwarded_[static_cast<int>(way)].load(); }
    // Connections accepted so far.
    unsigned accepted() const { return accepted_.load(); }

  private:
    struct Plan {
        Fault fault[2];
        unsigned generation[2] = {0, 0};
        std::string inject;
        Inject inject_when = Inject::with_reply;
        std::vector<std::pair<std::string, std::string>> rewrite;
    };
    void run();
    void wake();

    std::uint16_t server_port_;
    std::uint16_t port_ = 0;
    int listener_ = -1;
    int wake_[2] = {-1, -1};  // self-pipe: plan changed, or stop
    std::mutex mutex_;        // guards plan_
    Plan plan_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> forwarded_[2] = {{0}, {0}};
    std::atomic<unsigned> accepted_{0};
    std::thread thread_;
};

}  // namespace support

#endif  // RESPLOCK_TESTS_FAULT_PROXY_HPP
