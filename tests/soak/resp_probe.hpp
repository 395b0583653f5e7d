// A plain RESP2 client for the soak orchestrators' own reads of the server (the library's
// Connection keeps replies small on purpose; these reads list whole sorted sets, queues and logs):
// one blocking TCP connection to 127.0.0.1, one command at a time, every reply parsed into a tree.
// A test's helper only: it allocates freely and gives up (ok() false) on the first error.
#ifndef RESPLOCK_TESTS_SOAK_RESP_PROBE_HPP
#define RESPLOCK_TESTS_SOAK_RESP_PROBE_HPP

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace soak {

struct RespValue {
    char type = 0;          // '+', '-', ':', '$', '*'; 0 when there was no reply
    bool nil = false;       // $-1 or *-1
    std::string text;       // simple string, error, bulk string
    long long integer = 0;  // integer
    std::vector<RespValue> items;
};

class RespProbe {
  public:
    explicit RespProbe(std::uint16_t port, int timeout_ms = 5000) : timeout_ms_(timeout_ms) {
        fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0) return;
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            close(fd_);
            fd_ = -1;
            return;
        }
        const int one = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    ~RespProbe() {
        if (fd_ >= 0) close(fd_);
    }
    RespProbe(const RespProbe&) = delete;
    RespProbe& operator=(const RespProbe&) = delete;

    bool ok() const { return fd_ >= 0; }

    // Sends one command and returns its reply (type 0 after any failure, which closes the
    // connection for good).
    RespValue call(const std::vector<std::string>& args) {
        RespValue v;
        if (fd_ < 0) return v;
        std::string out = "*" + std::to_string(args.size()) + "\r\n";
        for (const std::string& a : args)
            out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
        for (std::size_t sent = 0; sent < out.size();) {
            const ssize_t n = send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return fail();
            sent += static_cast<std::size_t>(n);
        }
        if (!parse(v, 0)) return fail();
        return v;
    }

    // Shorthands for the replies the tests read.
    long long integer(const std::vector<std::string>& args) {
        const RespValue v = call(args);
        return v.type == ':'             ? v.integer
               : v.type == '$' && !v.nil ? std::atoll(v.text.c_str())
                                         : -9;
    }
    // The bulk strings of an array reply (empty for anything else).
    std::vector<std::string> strings(const std::vector<std::string>& args) {
        std::vector<std::string> out;
        const RespValue v = call(args);
        for (const RespValue& item : v.items)
            out.push_back(item.text);
        return out;
    }
    // The server's clock (TIME) in ms, -1 on failure.
    long long time_ms() {
        const std::vector<std::string> t = strings({"TIME"});
        if (t.size() != 2) return -1;
        return std::atoll(t[0].c_str()) * 1000 + std::atoll(t[1].c_str()) / 1000;
    }

  private:
    RespValue fail() {
        if (fd_ >= 0) close(fd_);
        fd_ = -1;
        return {};
    }

    // Fills the buffer until it holds at least `want` unread bytes.
    bool need(std::size_t want) {
        while (in_.size() - at_ < want) {
            if (at_ > 0) {
                in_.erase(0, at_);
                at_ = 0;
            }
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, timeout_ms_) <= 0) return false;
            char buf[16384];
            const ssize_t n = recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) return false;
            in_.append(buf, static_cast<std::size_t>(n));
        }
        return true;
    }

    bool line(std::string& out) {
        for (;;) {
            const std::size_t end = in_.find("\r\n", at_);
            if (end != std::string::npos) {
                out = in_.substr(at_, end - at_);
                at_ = end + 2;
                return true;
            }
            if (!need(in_.size() - at_ + 1)) return false;
        }
    }

    bool parse(RespValue& v, int depth) {
        if (depth > 8) return false;
        std::string head;
        if (!line(head) || head.empty()) return false;
        v.type = head[0];
        const std::string rest = head.substr(1);
        switch (v.type) {
            case '+':
            case '-':
                v.text = rest;
                return true;
            case ':':
                v.integer = std::atoll(rest.c_str());
                return true;
            case '$': {
                const long long len = std::atoll(rest.c_str());
                if (len < 0) {
                    v.nil = true;
                    return true;
                }
                if (!need(static_cast<std::size_t>(len) + 2)) return false;
                v.text = in_.substr(at_, static_cast<std::size_t>(len));
                at_ += static_cast<std::size_t>(len) + 2;
                return true;
            }
            case '*': {
                const long long count = std::atoll(rest.c_str());
                if (count < 0) {
                    v.nil = true;
                    return true;
                }
                v.items.resize(static_cast<std::size_t>(count));
                for (RespValue& item : v.items) {
                    if (!parse(item, depth + 1)) return false;
                }
                return true;
            }
            default:
                return false;
        }
    }

    int fd_ = -1;
    int timeout_ms_;
    std::string in_;
    std::size_t at_ = 0;
};

}  // namespace soak

#endif  // RESPLOCK_TESTS_SOAK_RESP_PROBE_HPP
