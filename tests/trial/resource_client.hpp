// The client side of the trial's resource protocol: one Unix-domain stream socket to the resource
// process, over which a workload program sends one request line and reads exactly one reply line
// before it sends the next (the requests are listed in trial_client.cpp). One object is one
// socket; its calls hold a mutex for a whole request and its reply, so every thread of a process
// may share it (trial_client does: its workers and its renewal thread use one socket, and the
// resource sees each process's requests in the order they were answered).
#ifndef RESPLOCK_TESTS_TRIAL_RESOURCE_CLIENT_HPP
#define RESPLOCK_TESTS_TRIAL_RESOURCE_CLIENT_HPP

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace trial {

// CLOCK_BOOTTIME in microseconds: the clock of every time the protocol carries (one clock for
// every process of the host, counting through a suspend). Never a port clock a test skews.
std::int64_t boot_us();

// Reads all of `s` as a whole decimal number (the programs' arguments, RESPLOCK_FENCE): false if
// it is not one or does not fit 64 bits.
bool parse_u64(const char* s, std::uint64_t& out);

class ResourceClient {
  public:
    // How long one request and its reply may take, in all.
    static constexpr int default_timeout_ms = 5000;

    explicit ResourceClient(int timeout_ms = default_timeout_ms) : timeout_ms_(timeout_ms) {}
    ~ResourceClient();
    ResourceClient(const ResourceClient&) = delete;
    ResourceClient& operator=(const ResourceClient&) = delete;

    // Connects to the socket at `path`. False (with errno) if it cannot be reached.
    bool connect(const char* path);

    // Sends `line` (without its '\n') and reads the reply line into `reply` (without its '\n').
    // False when the socket failed, the resource closed it or no reply came within the timeout:
    // the socket is then closed and every later call fails too.
    bool request(std::string_view line, std::string& reply);

  private:
    bool exchange(std::string_view line, std::string& reply);

    std::mutex mutex_;
    int fd_ = -1;
    int timeout_ms_;
    std::string pending_;  // bytes received after the last reply line (none in a sane exchange)
};

}  // namespace trial

#endif  // RESPLOCK_TESTS_TRIAL_RESOURCE_CLIENT_HPP
