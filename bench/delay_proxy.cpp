// A TCP delay proxy for the benchmark's link mode: a link with a fixed one-way delay, on loopback.
//   delay_proxy UPSTREAM_PORT DELAY_US [PORT_FILE]
// Listens on 127.0.0.1 on a free port (written, as `port N`, to stdout and to PORT_FILE when
// given), forwards each accepted connection to 127.0.0.1:UPSTREAM_PORT, and holds every chunk
// (what one read() returned) for DELAY_US in each direction before writing it on. Order is kept
// per connection and direction; the two directions are independent, as on a real link.
//
// One thread, epoll and one timerfd (CLOCK_MONOTONIC, absolute): since every chunk waits the same
// DELAY_US, each direction's queue is already in due order and the timer is armed for the
// earliest head among them. The timer slack of the thread is set to 1 ns, so the kernel does not
// round wake-ups up by its default 50 us. When it may (as root), it runs under SCHED_FIFO at the
// lowest real-time priority, so that a loaded machine's other processes do not delay its
// wake-ups; it sleeps in epoll_wait between chunks, so it takes no more CPU than forwarding needs.
// Whether it did is printed on exit (`realtime 1` or 0).
//
// Bounded memory: each direction of a connection has a fixed ring of kRingBytes bytes and
// kMaxChunks chunk slots, allocated when the connection is accepted; at most kMaxConnections
// connections (more are accepted and closed at once). When a direction's ring or its chunk slots
// are full, the proxy stops reading from that side until the due chunks have been written on:
// TCP flow control then pushes back on the sender (nothing is dropped). A chunk whose write would
// block stays at the head (and holds the ones behind it) until the destination is writable.
//
// On SIGTERM or SIGINT it prints, to stderr, `name value` lines: connections, chunks, and how late
// chunks were written after their due time (median, p99, max, in us; from a fixed histogram).
// An end of stream from one side is passed on (shutdown of the write side) after DELAY_US too; a
// reset or an error closes both sockets of the connection.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

constexpr std::size_t kRingBytes = 64 * 1024;  // per connection and direction
constexpr std::size_t kMaxChunks = 256;        // per connection and direction
constexpr int kMaxConnections = 256;
constexpr std::size_t kLateBuckets = 100001;  // 1 us buckets up to 100 ms, the last one beyond

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "delay_proxy: %s: %s\n", what, std::strerror(errno));
    std::exit(2);
}

struct Chunk {
    std::int64_t due_ns;
    std::uint32_t len;  // 0: the end of the stream
};

// One direction of a connection: bytes read from `from`, waiting to be written to `to`.
struct Direction {
    int from = -1;
    int to = -1;
    std::unique_ptr<char[]> ring{new char[kRingBytes]};
    std::size_t ring_head = 0;  // the next byte to write
    std::size_t ring_used = 0;
    std::array<Chunk, kMaxChunks> chunks{};
    std::size_t chunk_head = 0;
    std::size_t chunk_count = 0;
    std::size_t head_written = 0;  // bytes of the head chunk already written
    bool read_eof = false;         // `from` ended (or is no longer read)
    bool write_blocked = false;    // waiting for `to` to be writable

    bool full() const { return ring_used == kRingBytes || chunk_count == kMaxChunks; }
};

struct Connection {
    Direction up;    // client -> server
    Direction down;  // server -> client
    int client = -1;
    int server = -1;
    bool closed = false;
    int shut = 0;  // directions whose end of stream was passed on
};

struct Stats {
    long connections = 0;
    long refused = 0;
    long chunks = 0;
    long long bytes = 0;
    std::unique_ptr<long[]> late{new long[kLateBuckets]()};
};

int g_epoll = -1;
std::array<Connection*, kMaxConnections> g_conns{};
Stats g_stats;
bool g_realtime = false;

// epoll data: the connection's slot * 2 + (0 for the client socket, 1 for the server socket);
// the listener, the timer and the signals have tags of their own.
constexpr std::uint64_t kListenTag = ~std::uint64_t{0};
constexpr std::uint64_t kTimerTag = ~std::uint64_t{0} - 1;
constexpr std::uint64_t kSignalTag = ~std::uint64_t{0} - 2;

void set_events(int fd, std::uint64_t tag, bool in, bool out) {
    epoll_event ev{};
    ev.events = (in ? EPOLLIN | EPOLLRDHUP : 0u) | (out ? EPOLLOUT : 0u);
    ev.data.u64 = tag;
    if (epoll_ctl(g_epoll, EPOLL_CTL_MOD, fd, &ev) != 0) die("epoll_ctl MOD");
}

// The events a socket of a connection waits for: readable while its outgoing direction has room,
// writable while its incoming direction is blocked on it.
void update_events(int slot) {
    Connection& c = *g_conns[static_cast<std::size_t>(slot)];
    set_events(c.client, static_cast<std::uint64_t>(slot) * 2, !c.up.read_eof && !c.up.full(),
               c.down.write_blocked);
    set_events(c.server, static_cast<std::uint64_t>(slot) * 2 + 1,
               !c.down.read_eof && !c.down.full(), c.up.write_blocked);
}

void close_connection(int slot) {
    Connection* c = g_conns[static_cast<std::size_t>(slot)];
    close(c->client);
    close(c->server);
    delete c;
    g_conns[static_cast<std::size_t>(slot)] = nullptr;
}

// Reads what `d.from` has (as much as fits), each read one chunk due DELAY later. False on a
// reset or an error (the connection is then closed).
bool read_side(Direction& d, std::int64_t delay_ns) {
    while (!d.read_eof && !d.full()) {
        const std::size_t tail = (d.ring_head + d.ring_used) % kRingBytes;
        const std::size_t free_bytes = kRingBytes - d.ring_used;
        iovec iov[2];
        const std::size_t first = std::min(free_bytes, kRingBytes - tail);
        iov[0] = {d.ring.get() + tail, first};
        iov[1] = {d.ring.get(), free_bytes - first};
        const ssize_t n = readv(d.from, iov, iov[1].iov_len > 0 ? 2 : 1);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
            return false;
        }
        const std::int64_t due = now_ns() + delay_ns;
        Chunk& ch = d.chunks[(d.chunk_head + d.chunk_count) % kMaxChunks];
        ch.due_ns = due;
        ch.len = static_cast<std::uint32_t>(n);
        ++d.chunk_count;
        d.ring_used += static_cast<std::size_t>(n);
        if (n == 0) d.read_eof = true;
    }
    return true;
}

void record_late(std::int64_t late_ns) {
    const std::int64_t us = std::max<std::int64_t>(0, late_ns / 1000);
    ++g_stats.late[static_cast<std::size_t>(
        std::min<std::int64_t>(us, static_cast<std::int64_t>(kLateBuckets) - 1))];
}

// Writes the due chunks of `d`, in order. False on an error (the connection is then closed).
bool write_due(Connection& c, Direction& d, std::int64_t now) {
    while (d.chunk_count > 0) {
        Chunk& ch = d.chunks[d.chunk_head];
        if (ch.due_ns > now) break;
        if (ch.len == 0) {  // the end of the stream, passed on
            shutdown(d.to, SHUT_WR);
            ++c.shut;
            d.chunk_head = (d.chunk_head + 1) % kMaxChunks;
            --d.chunk_count;
            continue;
        }
        const std::size_t left = ch.len - d.head_written;
        const std::size_t first = std::min(left, kRingBytes - d.ring_head);
        iovec iov[2];
        iov[0] = {d.ring.get() + d.ring_head, first};
        iov[1] = {d.ring.get(), left - first};
        if (d.head_written == 0) record_late(now - ch.due_ns);
        const ssize_t n = writev(d.to, iov, iov[1].iov_len > 0 ? 2 : 1);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                d.write_blocked = true;
                return true;
            }
            return false;
        }
        d.ring_head = (d.ring_head + static_cast<std::size_t>(n)) % kRingBytes;
        d.ring_used -= static_cast<std::size_t>(n);
        d.head_written += static_cast<std::size_t>(n);
        g_stats.bytes += n;
        if (d.head_written < ch.len) {
            d.write_blocked = true;
            return true;
        }
        d.head_written = 0;
        ++g_stats.chunks;
        d.chunk_head = (d.chunk_head + 1) % kMaxChunks;
        --d.chunk_count;
    }
    d.write_blocked = false;
    return true;
}

// Writes whatever is due on every connection, then arms the timer for the earliest due chunk.
void flush_and_arm(int timer) {
    const std::int64_t now = now_ns();
    std::int64_t earliest = 0;
    for (int slot = 0; slot < kMaxConnections; ++slot) {
        Connection* c = g_conns[static_cast<std::size_t>(slot)];
        if (c == nullptr) continue;
        bool ok = true;
        for (Direction* d : {&c->up, &c->down}) {
            if (!d->write_blocked) ok = ok && write_due(*c, *d, now);
        }
        if (!ok || c->shut == 2) {
            close_connection(slot);
            continue;
        }
        update_events(slot);
        for (Direction* d : {&c->up, &c->down}) {
            if (d->chunk_count > 0 && !d->write_blocked) {
                const std::int64_t due = d->chunks[d->chunk_head].due_ns;
                if (earliest == 0 || due < earliest) earliest = due;
            }
        }
    }
    itimerspec its{};
    if (earliest != 0) {
        its.it_value.tv_sec = static_cast<time_t>(earliest / 1000000000);
        its.it_value.tv_nsec = static_cast<long>(earliest % 1000000000);
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
    }
    if (timerfd_settime(timer, TFD_TIMER_ABSTIME, &its, nullptr) != 0) die("timerfd_settime");
}

int connect_upstream(std::uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

void accept_all(int listener, std::uint16_t upstream) {
    for (;;) {
        const int client = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client < 0) {
            if (errno == EINTR) continue;
            return;  // EAGAIN, or an error on that one connection
        }
        const int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int slot = 0;
        while (slot < kMaxConnections && g_conns[static_cast<std::size_t>(slot)] != nullptr)
            ++slot;
        const int server = slot < kMaxConnections ? connect_upstream(upstream) : -1;
        if (server < 0) {
            ++g_stats.refused;
            close(client);
            continue;
        }
        auto* c = new Connection;
        c->client = client;
        c->server = server;
        c->up.from = client;
        c->up.to = server;
        c->down.from = server;
        c->down.to = client;
        g_conns[static_cast<std::size_t>(slot)] = c;
        ++g_stats.connections;
        for (int i = 0; i < 2; ++i) {
            epoll_event ev{};
            ev.events = EPOLLIN | EPOLLRDHUP;
            ev.data.u64 = static_cast<std::uint64_t>(slot) * 2 + static_cast<std::uint64_t>(i);
            if (epoll_ctl(g_epoll, EPOLL_CTL_ADD, i == 0 ? client : server, &ev) != 0)
                die("epoll_ctl ADD");
        }
    }
}

double late_percentile(double p) {
    long total = 0;
    for (std::size_t i = 0; i < kLateBuckets; ++i)
        total += g_stats.late[i];
    if (total == 0) return 0;
    const auto rank = static_cast<long>(p * static_cast<double>(total) + 0.999999);
    long seen = 0;
    for (std::size_t i = 0; i < kLateBuckets; ++i) {
        seen += g_stats.late[i];
        if (seen >= std::max(rank, 1L)) return static_cast<double>(i);
    }
    return static_cast<double>(kLateBuckets - 1);
}

void print_stats() {
    std::size_t most = 0;
    for (std::size_t i = 0; i < kLateBuckets; ++i) {
        if (g_stats.late[i] != 0) most = i;
    }
    std::fprintf(stderr,
                 "realtime %d\nconnections %ld\nrefused %ld\nchunks %ld\nbytes %lld\n"
                 "late_median_us %.0f\nlate_p99_us %.0f\nlate_max_us %zu\n",
                 g_realtime ? 1 : 0, g_stats.connections, g_stats.refused, g_stats.chunks,
                 g_stats.bytes, late_percentile(0.5), late_percentile(0.99), most);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3 || argc > 4) {
        std::fprintf(stderr, "usage: delay_proxy UPSTREAM_PORT DELAY_US [PORT_FILE]\n");
        return 64;
    }
    const long upstream = std::strtol(argv[1], nullptr, 10);
    const long delay_us = std::strtol(argv[2], nullptr, 10);
    if (upstream <= 0 || upstream > 65535 || delay_us < 0) {
        std::fprintf(stderr, "delay_proxy: bad port or delay\n");
        return 64;
    }
    const std::int64_t delay_ns = static_cast<std::int64_t>(delay_us) * 1000;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    sched_param sp{};
    sp.sched_priority = sched_get_priority_min(SCHED_FIFO);
    g_realtime = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    signal(SIGPIPE, SIG_IGN);

    const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = 0;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t alen = sizeof a;
    if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        listen(listener, 128) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&a), &alen) != 0) {
        die("listen");
    }
    const unsigned port = ntohs(a.sin_port);

    g_epoll = epoll_create1(EPOLL_CLOEXEC);
    const int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    const int sigs = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (g_epoll < 0 || timer < 0 || sigs < 0) die("epoll, timerfd or signalfd");
    for (const auto& [fd, tag] : {std::pair<int, std::uint64_t>{listener, kListenTag},
                                  {timer, kTimerTag},
                                  {sigs, kSignalTag}}) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = tag;
        if (epoll_ctl(g_epoll, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl ADD");
    }

    std::printf("port %u\n", port);
    std::fflush(stdout);
    if (argc == 4) {
        FILE* f = std::fopen(argv[3], "w");
        if (f == nullptr) die("port file");
        std::fprintf(f, "%u\n", port);
        std::fclose(f);
    }

    std::array<epoll_event, 64> events{};
    for (;;) {
        const int n = epoll_wait(g_epoll, events.data(), static_cast<int>(events.size()), -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        bool stop = false;
        for (int i = 0; i < n; ++i) {
            const std::uint64_t tag = events[static_cast<std::size_t>(i)].data.u64;
            const std::uint32_t what = events[static_cast<std::size_t>(i)].events;
            if (tag == kListenTag) {
                accept_all(listener, static_cast<std::uint16_t>(upstream));
            } else if (tag == kTimerTag) {
                std::uint64_t expirations = 0;
                ssize_t r = read(timer, &expirations, sizeof expirations);
                (void)r;
            } else if (tag == kSignalTag) {
                stop = true;
            } else {
                const int slot = static_cast<int>(tag / 2);
                Connection* c = g_conns[static_cast<std::size_t>(slot)];
                if (c == nullptr) continue;
                const bool from_client = tag % 2 == 0;
                Direction& in = from_client ? c->up : c->down;   // read from this socket
                Direction& out = from_client ? c->down : c->up;  // written to this socket
                if ((what & EPOLLERR) != 0) {
                    close_connection(slot);
                    continue;
                }
                if ((what & EPOLLOUT) != 0) out.write_blocked = false;
                if ((what & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0 &&
                    !read_side(in, delay_ns)) {
                    close_connection(slot);
                }
            }
        }
        if (stop) break;
        flush_and_arm(timer);
    }
    print_stats();
    return 0;
}
