// Where the servers are: the redis[s]://[[user]:password@]host[:port][/db] URL, or
// redis[s]-sentinel://[[user]:password@]host[:port][,host[:port]...][/db]#MASTERNAME for a master
// found through Redis Sentinel, and what it holds (Endpoint), percent-decoding of its user-info,
// lists of URLs separated by commas (--url values and REDIS_URL), the password file, and
// endpoint_from(), which turns one URL of the command line into an Endpoint with the checks every
// server gets.
#ifndef RESPLOCK_TOOL_URL_HPP
#define RESPLOCK_TOOL_URL_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"

namespace resplock_cli {

constexpr std::size_t max_host_len = 255;
constexpr std::size_t max_user_len = 128;
constexpr std::size_t max_password_len = 256;
constexpr std::size_t max_url_len = 2047;  // one URL of a list; longer ones are refused
constexpr std::uint16_t sentinel_default_port = 26379;

// One sentinel of a redis-sentinel:// URL (the library keeps hosts of RESPLOCK_MAX_HOST_LEN).
struct SentinelAddress {
    char host[RESPLOCK_MAX_HOST_LEN + 1] = "";
    std::uint16_t port = sentinel_default_port;
    bool ipv6 = false;
};

// One server, as a URL names it.
struct Endpoint {
    char host[max_host_len + 1] = "127.0.0.1";  // without the brackets of an IPv6 literal
    std::uint16_t port = 6379;
    bool ipv6 = false;  // host is an IPv6 literal: shown in brackets
    bool tls = false;   // rediss://
    char username[max_user_len + 1] = "";
    bool has_username = false;
    char password[max_password_len + 1] = "";
    bool has_password = false;
    std::uint32_t db = 0;
    // redis[s]-sentinel://: the master named master_name, found through sentinels[0..count).
    // host and port are then the first sentinel's (for messages).
    bool sentinel = false;
    char master_name[RESPLOCK_MAX_HOST_LEN + 1] = "";
    SentinelAddress sentinels[RESPLOCK_MAX_SENTINELS];
    std::size_t sentinel_count = 0;
};

// %XX-decodes `in` into out (NUL-terminated, at most cap - 1 bytes). False on a bad escape, a
// decoded NUL (the library takes credentials as C strings) or text that does not fit.
bool percent_decode(std::string_view in, char* out, std::size_t cap);

enum class UrlResult { ok, bad };

// Parses redis[s]://[[user]:password@]host[:port][/db] or
// redis[s]-sentinel://[[user]:password@]host[:port][,host[:port]...][/db]#MASTERNAME (sentinel
// port 26379 by default, up to RESPLOCK_MAX_SENTINELS sentinels; the master name %XX-decoded) into
// ep. The scheme's case does not matter; the user-info ends at the last '@' (a password may hold
// '/', ':' or '@' unescaped); an empty password means none. On `bad`, *why says what is wrong
// (never showing the URL).
UrlResult parse_url(const char* url, Endpoint& ep, const char** why);

// Where the first URL of a list ends: at the first comma followed by redis://, rediss://,
// redis-sentinel:// or rediss-sentinel:// (a comma elsewhere, as in a password or between the
// sentinels of one URL, is kept), else at the end.
std::size_t url_list_cut(std::string_view list);

// Whether a list of URLs (REDIS_URL's value; null: none) may carry a password: one of its URLs
// has user-info (user:password@, or user@, which some clients read as a password), or does not
// parse.
bool url_list_has_credentials(const char* list);

// Reads the first line of `path` (without its "\n" or "\r\n") into ep as the password. On
// failure, reports why (never showing the file's contents) and returns false.
bool read_password_file(const char* path, Endpoint& ep);

// Parses one URL of the command line (`source`: "--url" or "REDIS_URL") into ep, takes the
// password from `password_file` if not null, and refuses a user name without a password. Returns
// -1 on success, else the exit code, having reported why.
int endpoint_from(std::string_view url, const char* source, const char* password_file,
                  Endpoint& ep);

// The servers of a quorum, eps[0..count), parsed from `source`: refuses (reports, returns
// exit_usage) two that name one server, i.e. the same host (as written, ignoring case: no name
// is resolved, so localhost and 127.0.0.1 count as two), port and database; for Sentinel URLs,
// the same first sentinel, master name and database. Returns -1 when they are distinct.
int check_distinct(const Endpoint* eps, int count, const char* source);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_URL_HPP
