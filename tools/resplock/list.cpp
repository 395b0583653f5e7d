// list_locks() (see list.hpp).
#include "list.hpp"

#include <cstdio>
#include <cstring>
#include <string_view>

#include "exit_codes.hpp"
#include "inspect.hpp"
#include "messages.hpp"
#include "resplock/core/resp.hpp"
#include "text.hpp"
#include "view_output.hpp"

namespace resplock_cli {

using resplock::Status;

namespace {

// One step of SCAN, run on the server so that its reply is three values whatever it found:
// {next cursor, the keys of at most ARGV[4] bytes, each as "<length>:<bytes>"}. Longer keys can
// be no lock (a lock's key has at most RESPLOCK_MAX_KEY_LEN bytes) and are not sent.
constexpr const char scan_script[] =
    "local s=redis.call('scan',ARGV[1],'match',ARGV[2],'count',ARGV[3]) "
    "local m=tonumber(ARGV[4]) local o={} "
    "for _,k in ipairs(s[2]) do if #k<=m then o[#o+1]=#k .. ':' .. k end end "
    "return {s[1],table.concat(o)}";

// Keys SCAN looks at per step: its reply holds at most about this many keys of at most
// RESPLOCK_MAX_KEY_LEN bytes, far below the buffer.
constexpr const char scan_count[] = "50";

// The connection's buffer, and where a step's keys are copied before each is read.
char list_buffer[65536];  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): no heap
char found[sizeof list_buffer];  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// The masters of a cluster, from CLUSTER NODES.
constexpr std::size_t max_masters = 128;
struct Master {
    char host[max_host_len + 1];
    std::uint16_t port;
};
Master masters[max_masters];  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

struct Listing {
    const Options& o;
    std::uint32_t listed;
    bool stopped;  // --max reached
};

// The next field of `line` after `pos`, split on blanks.
std::string_view next_field(std::string_view line, std::size_t& pos) {
    while (pos < line.size() && line[pos] == ' ')
        ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ')
        ++pos;
    return slice(line, start, pos - start);
}

bool has_flag(std::string_view flags, std::string_view flag) {
    std::size_t pos = 0;
    while (pos <= flags.size()) {
        std::size_t comma = flags.find(',', pos);
        if (comma == std::string_view::npos) comma = flags.size();
        if (slice(flags, pos, comma - pos) == flag) return true;
        pos = comma + 1;
    }
    return false;
}

// Reads the masters out of CLUSTER NODES' text: lines "<id> <ip:port@cport[,host]> <flags> ...",
// the masters those that are not failed, in handshake or without an address. An empty ip (a
// node that met no other yet) is the URL's host. Returns how many (at most max_masters).
std::size_t parse_masters(std::string_view text, const char* url_host) {
    std::size_t count = 0;
    while (!text.empty() && count < max_masters) {
        std::size_t end = text.find('\n');
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = slice(text, 0, end);
        text.remove_prefix(end == text.size() ? end : end + 1);
        std::size_t pos = 0;
        (void)next_field(line, pos);  // the node id
        std::string_view address = next_field(line, pos);
        const std::string_view flags = next_field(line, pos);
        if (!has_flag(flags, "master") || has_flag(flags, "fail") || has_flag(flags, "noaddr") ||
            has_flag(flags, "handshake")) {
            continue;
        }
        address = slice(address, 0, address.find('@'));
        const std::size_t colon = address.rfind(':');
        if (colon == std::string_view::npos) continue;
        unsigned long port = 0;
        for (const char c : slice(address, colon + 1)) {
            if (c < '0' || c > '9' || port > 65535) break;
            port = port * 10 + static_cast<unsigned long>(c - '0');
        }
        std::string_view ip = slice(address, 0, colon);
        if (ip.empty()) ip = url_host;
        if (port == 0 || port > 65535 || ip.size() > max_host_len) continue;
        Master& m = masters[count++];
        std::memcpy(m.host, ip.data(), ip.size());
        m.host[ip.size()] = '\0';
        m.port = static_cast<std::uint16_t>(port);
    }
    return count;
}

// Prints one key if it is a lock. Returns ok, or the failure that stopped it.
Status list_key(resplock::Connection& conn, std::string_view key, Listing& l) {
    // A name that could be a companion's is one only with the type its kind writes.
    if (is_companion(key, "string") || is_companion(key, "list") || is_companion(key, "hash")) {
        const std::string_view type[2] = {"TYPE", key};
        resplock::resp::Reply reply;
        const Status s = conn.command(type, 2, reply);
        if (s != Status::ok) return s;
        if (is_companion(key, reply.top().text())) return Status::ok;
    }
    KeyView view;
    Status s = inspect_key(conn, key, view);
    if (s != Status::ok) return s;
    if (view.kind == Kind::none || view.kind == Kind::other) return Status::ok;
    if (l.listed == l.o.max) {
        l.stopped = true;  // one more lock than --max allows
        return Status::ok;
    }
    s = l.o.json ? print_json(stdout, conn, key, view, 0) : print_row(stdout, conn, key, view);
    ++l.listed;
    return s;
}

// Scans the server of conn. Returns ok (done, or --max reached: l.stopped), or the failure.
Status scan_node(resplock::Connection& conn, Listing& l) {
    char cursor[24] = "0";
    char longest[16];
    (void)std::snprintf(longest, sizeof longest, "%d", RESPLOCK_MAX_KEY_LEN);
    const char* pattern = l.o.operand_count != 0 ? l.o.operands[0] : "*";
    do {
        const std::string_view args[] = {"EVAL",  scan_script, "0",    cursor,
                                         pattern, scan_count,  longest};
        resplock::resp::Reply reply;
        const Status s = conn.command(args, sizeof args / sizeof args[0], reply);
        if (s != Status::ok) return s;
        const resplock::resp::Value* v = reply.values;
        if (reply.count != 3 || !v[1].is(resplock::resp::Type::bulk_string) ||
            !v[2].is(resplock::resp::Type::bulk_string) || v[1].size >= sizeof cursor ||
            v[2].size > sizeof found) {
            return Status::protocol_error;
        }
        std::memcpy(cursor, v[1].data, v[1].size);
        cursor[v[1].size] = '\0';
        const std::size_t size = v[2].size;
        std::memcpy(found, v[2].data, size);
        // "<length>:<bytes>" after one another.
        for (std::size_t pos = 0; pos < size;) {
            std::size_t len = 0;
            while (pos < size && found[pos] >= '0' && found[pos] <= '9')
                len = len * 10 + static_cast<std::size_t>(found[pos++] - '0');
            if (pos >= size || found[pos] != ':' || len > size - pos - 1) {
                return Status::protocol_error;
            }
            const std::string_view key(found + pos + 1, len);
            pos += 1 + len;
            const Status k = list_key(conn, key, l);
            if (k != Status::ok || l.stopped) return k;
        }
    } while (std::strcmp(cursor, "0") != 0);
    return Status::ok;
}

int stop(Status s, const Listing& l, const Target& t) {
    const char* pattern = l.o.operand_count != 0 ? l.o.operands[0] : "*";
    return fail(s, "list", Shown(pattern).text, t);
}

}  // namespace

int list_locks(const Options& o, const Endpoint& ep, resplock::ConnectionConfig config,
               resplock_port_t port, const Target& t) {
    Listing l{o, 0, false};
    // Sentinel: the master it names. Otherwise the URL's own node: a cluster's masters are
    // found below and each scanned over a connection of its own, never redirected.
    if (!ep.sentinel) config.router = nullptr;
    std::size_t count = 0;
    {
        resplock::Connection conn(port, config, list_buffer, sizeof list_buffer);
        Target here = t;
        here.conn = &conn;
        here.buffer_size = sizeof list_buffer;
        if (config.router == nullptr) {
            const std::string_view nodes[2] = {"CLUSTER", "NODES"};
            resplock::resp::Reply reply;
            const Status s = conn.command(nodes, 2, reply);
            if (s == Status::ok && reply.top().is(resplock::resp::Type::bulk_string)) {
                count = parse_masters(reply.top().text(), config.host);
            } else if (s != Status::server_error && s != Status::no_permission) {
                return stop(s, l, here);  // unreachable, timeout...: no cluster error reply
            }
        }
        if (!o.json) print_header(stdout);
        if (count == 0) {
            const Status s = scan_node(conn, l);
            if (s != Status::ok) {
                (void)std::fflush(stdout);
                return stop(s, l, here);
            }
        }
    }
    for (std::size_t i = 0; i < count && !l.stopped; ++i) {
        resplock::ConnectionConfig node = config;
        node.host = masters[i].host;
        node.port = masters[i].port;
        resplock::Connection conn(port, node, list_buffer, sizeof list_buffer);
        Target here = t;
        here.conn = &conn;
        here.buffer_size = sizeof list_buffer;
        (void)std::snprintf(here.where, sizeof here.where,
                            std::strchr(node.host, ':') != nullptr ? "[%s]:%u" : "%s:%u", node.host,
                            static_cast<unsigned>(node.port));
        const Status s = scan_node(conn, l);
        if (s != Status::ok) {
            (void)std::fflush(stdout);
            return stop(s, l, here);
        }
    }
    if (std::fflush(stdout) != 0) return exit_io;
    if (l.stopped) {
        report("list: stopped after %u locks (--max %u): more locks match", l.listed, o.max);
    }
    return exit_ok;
}

}  // namespace resplock_cli
