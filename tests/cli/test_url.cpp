// In-process tests of where the tool's servers are (tools/resplock/url.hpp) and of what its
// messages show of user text (messages.hpp): every accepted and refused form of the URL (schemes,
// user-info, %XX escapes and %00, IPv6 brackets, ports, databases, query and fragment, length
// limits), lists of URLs separated by commas (with commas inside passwords, as in REDIS_URL),
// whether such a list may carry a password, the password file, endpoint_from() and check_tls(),
// and what masking shows for each form: never a password.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "capture.hpp"
#include "check.hpp"
#include "exit_codes.hpp"
#include "messages.hpp"
#include "tls.hpp"
#include "url.hpp"

namespace {

using cli_test::contains;
using resplock_cli::Endpoint;
using resplock_cli::exit_usage;
using resplock_cli::Masked;
using resplock_cli::UrlResult;

constexpr int go_on = -1;  // endpoint_from / check_tls: the endpoint may be used

#define CHECK_TEXT(a, b) CHECK_EQ(std::string_view(a), std::string_view(b))

// parse_url() over one text.
struct Parsed {
    Endpoint ep;
    const char* why = "";
    UrlResult result;
    explicit Parsed(const std::string& url)
        : result(resplock_cli::parse_url(url.c_str(), ep, &why)) {}
};

// What a URL that parses must give.
struct Expected {
    std::string url;
    const char* host;
    std::uint16_t port;
    std::uint32_t db;
    bool ipv6;
    bool tls;
    const char* user;      // null: none
    const char* password;  // null: none
};

void check_accepted(const Expected& e) {
    const Parsed p(e.url);
    bool ok = CHECK(p.result == UrlResult::ok);
    if (ok) {
        ok = CHECK_TEXT(p.ep.host, e.host) && CHECK_EQ(p.ep.port, e.port) &&
             CHECK_EQ(p.ep.db, e.db) && CHECK_EQ(p.ep.ipv6, e.ipv6) && CHECK_EQ(p.ep.tls, e.tls) &&
             CHECK_EQ(p.ep.has_username, e.user != nullptr) &&
             CHECK_EQ(p.ep.has_password, e.password != nullptr) &&
             (e.user == nullptr || CHECK_TEXT(p.ep.username, e.user)) &&
             (e.password == nullptr || CHECK_TEXT(p.ep.password, e.password));
    }
    if (!ok) std::printf("      url: %s (why: %s)\n", e.url.c_str(), p.why);
}

void check_refused(const std::string& url, const char* why) {
    const Parsed p(url);
    const bool ok = CHECK(p.result == UrlResult::bad) && CHECK(std::strstr(p.why, why) != nullptr);
    if (!ok)
        std::printf("      url: %s\n      why: %s\n      expected: %s\n", url.c_str(), p.why, why);
}

std::string masked(std::string_view text) {
    return Masked(text).text;
}

// A temporary folder for password files, removed with what it holds.
struct TempDir {
    std::string path;
    std::vector<std::string> files;
    TempDir() {
        char tmpl[] = "/tmp/resplock-cli-url-XXXXXX";
        const char* d = mkdtemp(tmpl);
        path = d != nullptr ? d : "/tmp";
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        for (const std::string& f : files)
            unlink(f.c_str());
        rmdir(path.c_str());
    }
    std::string write(const char* name, const std::string& bytes) {
        const std::string file = path + "/" + name;
        std::FILE* f = std::fopen(file.c_str(), "wb");
        if (f != nullptr) {
            std::fwrite(bytes.data(), 1, bytes.size(), f);
            std::fclose(f);
        }
        files.push_back(file);
        return file;
    }
};

// read_password_file() into a fresh endpoint: the password, or null; what it reported.
struct PasswordFile {
    Endpoint ep;
    bool ok = false;
    std::string err;
    explicit PasswordFile(const std::string& path) {
        err =
            cli_test::capture([&] { ok = resplock_cli::read_password_file(path.c_str(), ep); }).err;
    }
};

// endpoint_from() over one URL, with what it reported.
struct FromUrl {
    Endpoint ep;
    int code = 0;
    std::string err;
    FromUrl(std::string_view url, const char* source, const char* password_file = nullptr) {
        err = cli_test::capture([&] {
                  code = resplock_cli::endpoint_from(url, source, password_file, ep);
              }).err;
    }
};

bool refused_with(int code, const std::string& err, const std::string& text) {
    const bool ok = CHECK_EQ(code, exit_usage) && CHECK(cli_test::one_message(err)) &&
                    CHECK(contains(err, text));
    if (!ok) std::printf("      stderr: %s      expected: %s\n", err.c_str(), text.c_str());
    return ok;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Accepted forms

TEST(hosts_ports_and_databases) {
    const std::vector<Expected> cases = {
        {"redis://127.0.0.1", "127.0.0.1", 6379, 0, false, false, nullptr, nullptr},
        {"redis://localhost:6380", "localhost", 6380, 0, false, false, nullptr, nullptr},
        {"redis://h:6380/3", "h", 6380, 3, false, false, nullptr, nullptr},
        {"redis://h/15", "h", 6379, 15, false, false, nullptr, nullptr},
        {"redis://h/", "h", 6379, 0, false, false, nullptr, nullptr},  // empty db: 0
        {"redis://h:1/", "h", 1, 0, false, false, nullptr, nullptr},
        {"redis://h:65535/2147483647", "h", 65535, 2147483647, false, false, nullptr, nullptr},
        {"redis://h:00080/007", "h", 80, 7, false, false, nullptr, nullptr},
        {"redis://my-host_1.example.com", "my-host_1.example.com", 6379, 0, false, false, nullptr,
         nullptr},
    };
    for (const Expected& e : cases)
        check_accepted(e);
}

TEST(schemes_in_any_case) {
    const std::vector<Expected> cases = {
        {"REDIS://H", "H", 6379, 0, false, false, nullptr, nullptr},
        {"Redis://h:1", "h", 1, 0, false, false, nullptr, nullptr},
        {"rediss://h", "h", 6379, 0, false, true, nullptr, nullptr},
        {"RediSS://h:6380/1", "h", 6380, 1, false, true, nullptr, nullptr},
    };
    for (const Expected& e : cases)
        check_accepted(e);
}

TEST(ipv6_in_brackets) {
    const std::vector<Expected> cases = {
        {"redis://[::1]", "::1", 6379, 0, true, false, nullptr, nullptr},
        {"redis://[::1]:6380/2", "::1", 6380, 2, true, false, nullptr, nullptr},
        {"redis://[::1]/", "::1", 6379, 0, true, false, nullptr, nullptr},
        {"rediss://[2001:db8::1]:65535", "2001:db8::1", 65535, 0, true, true, nullptr, nullptr},
        {"redis://:pw@[::1]:7000", "::1", 7000, 0, true, false, nullptr, "pw"},
        {"redis://[fe80::1%eth0]:7000", "fe80::1%eth0", 7000, 0, true, false, nullptr, nullptr},
    };
    for (const Expected& e : cases)
        check_accepted(e);
}

TEST(user_and_password_forms) {
    const std::vector<Expected> cases = {
        {"redis://:pw@h", "h", 6379, 0, false, false, nullptr, "pw"},
        {"redis://user:pw@h:1/2", "h", 1, 2, false, false, "user", "pw"},
        // An empty password is none, like an absent one; a lone user is refused later.
        {"redis://user:@h", "h", 6379, 0, false, false, "user", nullptr},
        {"redis://user@h", "h", 6379, 0, false, false, "user", nullptr},
        {"redis://:@h", "h", 6379, 0, false, false, nullptr, nullptr},
        {"redis://@h", "h", 6379, 0, false, false, nullptr, nullptr},
        // The user-info ends at the last '@'; the password at... the first ':' ends the user.
        {"redis://default:p@ss:w%25rd/1@h:6380/2", "h", 6380, 2, false, false, "default",
         "p@ss:w%rd/1"},
        {"redis://u:pw@h@h2", "h2", 6379, 0, false, false, "u", "pw@h"},
        {"redis://u:p:a:s:s@h", "h", 6379, 0, false, false, "u", "p:a:s:s"},
        {"redis://:p,w@h", "h", 6379, 0, false, false, nullptr, "p,w"},
        {"redis://:p w@h", "h", 6379, 0, false, false, nullptr, "p w"},
    };
    for (const Expected& e : cases)
        check_accepted(e);
}

TEST(percent_escapes_are_decoded) {
    const std::vector<Expected> cases = {
        {"redis://:p%40ss%3Aw%25rd%2F1@h", "h", 6379, 0, false, false, nullptr, "p@ss:w%rd/1"},
        {"redis://us%65r:%41%62%e9%FF@h", "h", 6379, 0, false, false, "user", "Ab\xe9\xff"},
        {"redis://u%3Ax:pw@h", "h", 6379, 0, false, false, "u:x", "pw"},
        {"redis://%3A:%3A@h", "h", 6379, 0, false, false, ":", ":"},
        {"redis://:%23%3F@h", "h", 6379, 0, false, false, nullptr, "#?"},
    };
    for (const Expected& e : cases)
        check_accepted(e);
}

TEST(longest_host_user_and_password) {
    const std::string host(255, 'h');
    const std::string user(128, 'u');
    const std::string password(256, 'p');
    check_accepted({"redis://" + user + ":" + password + "@" + host, host.c_str(), 6379, 0, false,
                    false, user.c_str(), password.c_str()});
    // Lengths count decoded bytes.
    std::string encoded;
    for (int i = 0; i < 256; ++i)
        encoded += "%41";
    const Parsed p("redis://:" + encoded + "@h");
    REQUIRE(p.result == UrlResult::ok);
    CHECK_EQ(std::string(p.ep.password), std::string(256, 'A'));
}

// ---------------------------------------------------------------------------------------------
// Refused forms

TEST(other_schemes_are_refused) {
    for (const char* url :
         {"http://127.0.0.1:6379", "127.0.0.1:6379", "", "redis:/h", "redis:h", "redis//h",
          "unix:///tmp/redis.sock", "rediss:/h", " redis://h", "redis+tls://h", "valkey://h"}) {
        check_refused(url, "it must start with redis:// or rediss://");
    }
}

TEST(query_and_fragment_are_refused) {
    for (const char* url : {"redis://h?db=1", "redis://h#x", "redis://h:1/2?x", "redis://h/#",
                            "redis://:pa#ss@h", "redis://:pa?ss@h", "redis://h?"}) {
        check_refused(url, "query strings and fragments are not supported");
    }
}

TEST(bad_escapes_and_nul_are_refused) {
    check_refused("redis://us%zzer:pw@h", "bad user name (too long, a bad %XX escape, or %00)");
    check_refused("redis://us%00er:pw@h", "bad user name");
    check_refused("redis://u%:pw@h", "bad user name");
    for (const char* url :
         {"redis://:pw%4@h", "redis://:pw%00@h", "redis://:pw%@h", "redis://:%g1@h",
          "redis://:%1g@h", "redis://:%%41@h", "redis://u:pw%2@h"}) {
        check_refused(url, "bad password (too long, a bad %XX escape, or %00)");
    }
}

TEST(over_long_parts_are_refused) {
    check_refused("redis://" + std::string(256, 'h'), "host name too long");
    check_refused("redis://[" + std::string(256, 'a') + "]", "host name too long");
    check_refused("redis://" + std::string(129, 'u') + ":pw@h", "bad user name");
    check_refused("redis://:" + std::string(257, 'p') + "@h", "bad password");
    std::string encoded;
    for (int i = 0; i < 257; ++i)
        encoded += "%41";
    check_refused("redis://:" + encoded + "@h", "bad password");
}

TEST(bad_ipv6_is_refused) {
    check_refused("redis://[::1", "bad IPv6 address: expected [address]");
    check_refused("redis://[]:6379", "bad IPv6 address");
    check_refused("redis://[", "bad IPv6 address");
    check_refused("redis://[::1]x", "unexpected text after ']'");
    check_refused("redis://[::1]]", "unexpected text after ']'");
    check_refused("redis://[a[b]", "bad character in the host name");
    check_refused("redis://[a b]", "bad character in the host name");
    check_refused("redis://[::1]:", "the port must be a number in 1..65535");
}

TEST(bad_ports_are_refused) {
    for (const char* port : {"0", "65536", "99999999999", "x", "", "-1", "63 79", "+1", "6379x",
                             "0x10", "6379:pw", "１"}) {
        check_refused(std::string("redis://127.0.0.1:") + port,
                      "the port must be a number in 1..65535");
        check_refused(std::string("redis://[::1]:") + port + "/0",
                      "the port must be a number in 1..65535");
    }
}

TEST(bad_databases_are_refused) {
    for (const char* db :
         {"x", "-1", "99999999999", "2147483648", "1/2", "+1", " 1", "1 ", "0x1"}) {
        check_refused(std::string("redis://h:6379/") + db,
                      "the database after '/' must be a number");
        check_refused(std::string("redis://h/") + db, "the database after '/' must be a number");
    }
}

TEST(missing_host_is_refused) {
    for (const char* url : {"redis://", "redis://:pw@", "redis://:6379", "redis:///0",
                            "redis://u:pw@:6379", "rediss://"}) {
        check_refused(url, "missing host (e.g. redis://127.0.0.1:6379)");
    }
}

TEST(bad_host_characters_are_refused) {
    for (const std::string& url :
         {std::string("redis://bad host"), std::string("redis://h\t"), std::string("redis://a]b"),
          std::string("redis://a[b"), std::string("redis://h\n"), std::string("redis:// h"),
          std::string("redis://h\x01")}) {
        check_refused(url, "bad character in the host name");
    }
}

// ---------------------------------------------------------------------------------------------
// percent_decode

TEST(percent_decode_fits_its_buffer) {
    char out[4];
    CHECK(resplock_cli::percent_decode("", out, sizeof out));
    CHECK_TEXT(out, "");
    CHECK(resplock_cli::percent_decode("abc", out, sizeof out));
    CHECK_TEXT(out, "abc");
    CHECK(!resplock_cli::percent_decode("abcd", out, sizeof out));  // no room for the NUL
    CHECK(resplock_cli::percent_decode("%41%4a%4B", out, sizeof out));
    CHECK_TEXT(out, "AJK");
    CHECK(!resplock_cli::percent_decode("%41%41%41%41", out, sizeof out));
    for (const char* bad : {"%", "%4", "a%2", "%G1", "%00", "%%", "% 1"})
        CHECK(!resplock_cli::percent_decode(bad, out, sizeof out));
}

// ---------------------------------------------------------------------------------------------
// Lists of URLs

TEST(list_cut_at_a_comma_before_a_scheme) {
    struct Case {
        const char* list;
        std::size_t cut;
    };
    const Case cases[] = {
        {"redis://a", 9},
        {"redis://a,redis://b", 9},
        {"redis://a,rediss://b", 9},
        {"redis://a,REDIS://b", 9},
        {"redis://a,RediSS://b", 9},
        {"redis://:p,w@a,redis://b", 14},
        {"redis://:p,,w@a,redis://b", 15},
        {"redis://a,b", 11},
        {"redis://a,", 10},
        {"redis://a,redis:/b", 18},
        {"redis://a,http://b", 18},
        {",redis://a", 0},
        {"", 0},
        // A password that itself holds ",redis://" is cut there (write it %2C-escaped).
        {"redis://:x,redis://y@a", 10},
    };
    for (const Case& c : cases) {
        if (!CHECK_EQ(resplock_cli::url_list_cut(c.list), c.cut)) std::printf("      %s\n", c.list);
    }
}

TEST(redis_url_with_commas_in_passwords_parses_item_by_item) {
    // REDIS_URL's form: a list whose passwords hold commas, '@', ':' and '/'.
    std::string_view rest = "redis://:p,w@a:1/2,rediss://u:x@y,z@[::1]:3,redis://b";
    std::vector<std::string> items;
    for (;;) {
        const std::size_t cut = resplock_cli::url_list_cut(rest);
        items.emplace_back(rest.substr(0, cut));
        if (cut == rest.size()) break;
        rest.remove_prefix(cut + 1);
    }
    REQUIRE_EQ(items.size(), std::size_t{3});
    check_accepted({items[0], "a", 1, 2, false, false, nullptr, "p,w"});
    check_accepted({items[1], "::1", 3, 0, true, true, "u", "x@y,z"});
    check_accepted({items[2], "b", 6379, 0, false, false, nullptr, nullptr});
}

TEST(list_may_carry_a_password) {
    struct Case {
        const char* list;
        bool credentials;
    };
    const Case cases[] = {
        {nullptr, false},
        {"", false},
        {"redis://h:1", false},
        {"redis://h:1/2", false},
        {"rediss://[::1]:6380", false},
        {"redis://a,redis://b:2/3", false},
        {"redis://:pw@h", true},
        {"redis://user:pw@h", true},
        {"redis://user@h", true},
        {"redis://@h", true},  // no credentials parsed, but an '@': some clients differ
        {"redis://:@h", true},
        {"redis://a,redis://:pw@b", true},
        {"redis://:pw@a,redis://b", true},
        {"redis://default:pw", true},  // does not parse: may hold anything
        {"not a URL", true},
        {",redis://h", true},  // an empty item
    };
    for (const Case& c : cases) {
        if (!CHECK_EQ(resplock_cli::url_list_has_credentials(c.list), c.credentials))
            std::printf("      %s\n", c.list != nullptr ? c.list : "(null)");
    }
    const std::string huge = "redis://" + std::string(resplock_cli::max_url_len, 'h');
    CHECK(resplock_cli::url_list_has_credentials(huge.c_str()));
}

// ---------------------------------------------------------------------------------------------
// Masking

TEST(masking_shows_scheme_user_and_host_only) {
    struct Case {
        std::string text;
        const char* shown;
    };
    const std::vector<Case> cases = {
        {"redis://h:6379", "redis://h:6379"},
        {"redis://[::1]:6379/2", "redis://[::1]:6379/2"},
        {"rediss://h/", "rediss://h/"},
        {"redis://:pw@h:1", "redis://:***@h:1"},
        {"redis://user:pw@h", "redis://user:***@h"},
        {"redis://pw@h", "redis://***@h"},
        {"redis://user:@h", "redis://user:***@h"},
        {"redis://default:pw", "redis://***"},
        {"redis://default:pw/x", "redis://***"},
        {"redis://h:6379:pw", "redis://***"},
        {"redis://us er:pw@h", "redis://***:***@h"},
        {"redis://u%41.-_~:pw@h", "redis://u%41.-_~:***@h"},
        {"redis://default:p@ss:w%rd/1@h", "redis://default:***@h"},
        {"redis://:pw@h?x=1", "redis://:***@***"},
        {"redis://:pw@", "redis://:***@"},
        {"http://u:pw@h", "http://u:***@h"},
        {"REDIS://U:pw@H", "REDIS://U:***@H"},
        {"redis://h,redis://:pw@g", "redis://***:***@g"},
        {"redis://u:pw@h,redis://v:pw2@g", "redis://u:***@g"},
        {"--url=redis://:pw@h", "--url=redis://:***@h"},
        {"--URL=redis://:pw@h", "--URL=redis://:***@h"},
        {"-uredis://u:pw@h", "-uredis://u:***@h"},
        {"-x=redis://h", "-x=redis://h"},
        {"pw@redis://h", "***redis://h"},
        {"xyz redis://h", "***redis://h"},
        {"--url=a,redis://h", "***redis://h"},
        {"secretsecretsecret://h", "***://h"},
        {"://h", "://h"},
        {"plain text, no scheme", "plain text, no scheme"},
        {"127.0.0.1:6379", "127.0.0.1:6379"},
    };
    for (const Case& c : cases) {
        if (!CHECK_EQ(std::string_view(masked(c.text)), std::string_view(c.shown)))
            std::printf("      text: %s\n", c.text.c_str());
    }
}

TEST(masking_never_shows_a_password) {
    for (const std::string pw : {"Hunter2Pw", "p@ss:w%rd/1", "a,b", "x y", "Zq7%41"}) {
        const std::vector<std::string> forms = {
            "redis://:" + pw + "@h",
            "redis://u:" + pw + "@h:1/2",
            "redis://" + pw + "@h",
            "redis://u:" + pw,
            "redis://:" + pw + "@h:notaport",
            "redis://:" + pw + "@h?x",
            "rediss://:" + pw + "@[::1]:1/2",
            "redis://u:" + pw + "@",
            "redis://" + pw + "@",
            "redis://h:6379:" + pw,
            "--url=redis://:" + pw + "@h",
            "-uredis://u:" + pw + "@h",
            "--ttl=redis://u:" + pw,
            "redis://h,redis://:" + pw + "@g",
            "redis://:" + pw + "@h,redis://g",
            "redis://:" + pw + "@h,redis://u:" + pw + "@g",
            "http://u:" + pw + "@h",
        };
        for (const std::string& text : forms) {
            const std::string shown = masked(text);
            if (!CHECK(!contains(shown, pw)))
                std::printf("      text: %s\n      shown: %s\n", text.c_str(), shown.c_str());
        }
    }
}

TEST(masking_cuts_long_text) {
    CHECK_EQ(masked(std::string(500, 'k')), std::string(300, 'k'));
    const std::string host(400, 'h');
    CHECK_EQ(masked("redis://" + host), "redis://" + std::string(270, 'h'));
    const resplock_cli::Shown shown("redis://:pw@" + host);
    CHECK_EQ(std::string(shown.text), "redis://:***@" + std::string(27, 'h'));
    CHECK_EQ(std::string(resplock_cli::Shown("short").text), std::string("short"));
}

TEST(report_writes_one_line) {
    const cli_test::Output o =
        cli_test::capture([] { resplock_cli::report("key %s: %d", "a\nb\r\x7f\tc", 7); });
    CHECK(o.out.empty());
    CHECK_EQ(o.err, std::string("resplock: key a?b???c: 7\n"));
    const cli_test::Output high =
        cli_test::capture([] { resplock_cli::report("%s", "\xff\xc3\xa9"); });
    CHECK_EQ(high.err, std::string("resplock: \xff\xc3\xa9\n"));  // bytes >= 0x80 are kept
}

// ---------------------------------------------------------------------------------------------
// The password file

TEST(password_file_first_line) {
    TempDir dir;
    struct Case {
        const char* name;
        std::string bytes;
        const char* password;
    };
    const std::string max(256, 'p');
    const std::vector<Case> cases = {
        {"lf", "pw\n", "pw"},
        {"crlf", "pw\r\n", "pw"},
        {"bare", "pw", "pw"},
        {"cr-at-end", "pw\r", "pw"},
        {"two-lines", "pw\nsecond line\n", "pw"},
        {"blank-kept", " pw \n", " pw "},
        {"tab-kept", "\tpw\n", "\tpw"},
        {"only-one-cr", "pw\r\r\n", "pw\r"},
        {"max", max + "\n", max.c_str()},
        {"max-crlf", max + "\r\n", max.c_str()},
        {"max-bare", max, max.c_str()},
        {"high-bytes", "p\xc3\xa9\n", "p\xc3\xa9"},
    };
    for (const Case& c : cases) {
        const PasswordFile f(dir.write(c.name, c.bytes));
        const bool ok = CHECK(f.ok) && CHECK(f.ep.has_password) &&
                        CHECK_TEXT(f.ep.password, c.password) && CHECK(f.err.empty());
        if (!ok) std::printf("      %s: %s", c.name, f.err.c_str());
    }
}

TEST(password_file_refused) {
    TempDir dir;
    struct Case {
        const char* name;
        std::string bytes;
        const char* message;
    };
    const std::vector<Case> cases = {
        {"empty", "", "is empty"},
        {"empty-line", "\n", "is empty"},
        {"crlf-only", "\r\n", "is empty"},
        {"cr-only", "\r", "is empty"},
        {"too-long", std::string(257, 'S') + "\n", "is longer than 256 bytes"},
        {"too-long-crlf", std::string(257, 'S') + "\r\n", "is longer than 256 bytes"},
        {"too-long-bare", std::string(300, 'S'), "is longer than 256 bytes"},
        {"much-too-long", std::string(5000, 'S') + "\n", "is longer than 256 bytes"},
    };
    for (const Case& c : cases) {
        const std::string path = dir.write(c.name, c.bytes);
        const PasswordFile f(path);
        const bool ok = CHECK(!f.ok) && CHECK(!f.ep.has_password) &&
                        CHECK(cli_test::one_message(f.err)) && CHECK(contains(f.err, c.message)) &&
                        CHECK(contains(f.err, path)) && CHECK(!contains(f.err, "SSSS"));
        if (!ok) std::printf("      %s: %s", c.name, f.err.c_str());
    }
    const PasswordFile missing("/nonexistent/pw");
    CHECK(!missing.ok);
    CHECK(contains(missing.err,
                   "cannot read password file /nonexistent/pw: No such file or directory"));
    const PasswordFile folder(dir.path);
    CHECK(!folder.ok);
    CHECK(contains(folder.err, "cannot read password file"));
    // A file name that looks like a URL with a password is masked too.
    const PasswordFile url("redis://:Hunter2Pw@nowhere");
    CHECK(!url.ok);
    CHECK(contains(url.err, "redis://:***@nowhere"));
    CHECK(!contains(url.err, "Hunter2Pw"));
}

TEST(password_file_with_a_nul_byte_is_refused) {
    // Taken as a C string, "ab\0cd" would be the password "ab", silently (a UTF-16 file gives
    // its first letter). It is refused instead, like %00 in a URL.
    TempDir dir;
    for (const std::string& bytes :
         {std::string("ab\0cd\n", 6), std::string("\0pw\n", 4), std::string("p\0w\0\n\0", 6)}) {
        const std::string path = dir.write("nul", bytes);
        const PasswordFile f(path);
        const bool ok = CHECK(!f.ok) && CHECK(!f.ep.has_password) &&
                        CHECK(cli_test::one_message(f.err)) &&
                        CHECK(contains(f.err, "password in " + path + " holds a NUL byte"));
        if (!ok) std::printf("      stderr: %s", f.err.c_str());
    }
    // A NUL on a later line does not matter.
    const PasswordFile later(dir.write("later", std::string("pw\n\0\n", 5)));
    CHECK(later.ok);
    CHECK_TEXT(later.ep.password, "pw");
}

TEST(password_file_replaces_the_urls_password) {
    TempDir dir;
    FromUrl from("redis://u:old@h", "--url", dir.write("pw", "new\n").c_str());
    REQUIRE_EQ(from.code, go_on);
    CHECK_TEXT(from.ep.username, "u");
    CHECK_TEXT(from.ep.password, "new");
    CHECK(from.err.empty());
}

// ---------------------------------------------------------------------------------------------
// endpoint_from and check_tls

TEST(endpoint_from_a_good_url) {
    const FromUrl from("redis://:pw@h:1/2", "--url");
    REQUIRE_EQ(from.code, go_on);
    CHECK(from.err.empty());
    CHECK_TEXT(from.ep.host, "h");
    CHECK_EQ(from.ep.port, 1);
    CHECK_EQ(from.ep.db, 2U);
    CHECK_TEXT(from.ep.password, "pw");
    // A view that is not NUL-terminated (an item of a list) is taken to its end only.
    const std::string_view item = std::string_view("redis://a:1,redis://b").substr(0, 11);
    const FromUrl first(item, "REDIS_URL");
    REQUIRE_EQ(first.code, go_on);
    CHECK_TEXT(first.ep.host, "a");
    CHECK_EQ(first.ep.port, 1);
}

TEST(endpoint_from_reports_a_bad_url_masked) {
    const FromUrl from("redis://:Hunter2Pw@127.0.0.1:notaport", "--url");
    refused_with(from.code, from.err,
                 "invalid URL in --url 'redis://:***@***': the port must be a number in 1..65535");
    CHECK(!contains(from.err, "Hunter2Pw"));
    const FromUrl env("redis://default:Hunter2Pw", "REDIS_URL");
    refused_with(env.code, env.err, "invalid URL in REDIS_URL 'redis://***': ");
    CHECK(!contains(env.err, "Hunter2Pw"));
    const FromUrl empty("", "--url");
    refused_with(empty.code, empty.err,
                 "invalid URL in --url '': it must start with redis:// or rediss://");
    // A mistyped scheme: shown, but what may be a password is masked.
    struct Typo {
        const char* text;
        const char* shown;
    };
    for (const Typo typo :
         {Typo{"redis:Hunter2Pw@h", "'***@h'"}, Typo{"redis:/:Hunter2Pw@h:1/2", "'***@h:1/2'"},
          Typo{"redis//user:Hunter2Pw@host", "'redis//***@host'"},
          Typo{"redis//:Hunter2Pw@h@host", "'redis//***@host'"},
          Typo{"Hunter2Pw//u:x@h", "'***@h'"}, Typo{"redis:Hunter2Pw", "'***'"},
          Typo{"redis//default:Hunter2Pw", "'redis//***'"},
          Typo{"redis:u:Hunter2Pw@h:x", "'***@***'"}}) {
        const FromUrl from_typo(typo.text, "--url");
        refused_with(from_typo.code, from_typo.err,
                     std::string("invalid URL in --url ") + typo.shown +
                         ": it must start with redis:// or rediss://");
        if (!CHECK(!contains(from_typo.err, "Hunter2Pw"))) std::printf("      %s", typo.text);
    }
}

TEST(endpoint_from_shows_a_bad_url_without_password) {
    // No scheme, no '@': plainly host[:port][/db], shown as typed.
    for (const char* text : {"127.0.0.1:16379", "localhost", "cache.example:6379/2", "[::1]:1"}) {
        const FromUrl from(text, "--url");
        refused_with(from.code, from.err,
                     std::string("invalid URL in --url '") + text +
                         "': it must start with redis:// or rediss://");
    }
    const FromUrl with_scheme("redis://:secret@h:0", "--url");
    refused_with(with_scheme.code, with_scheme.err,
                 "invalid URL in --url 'redis://:***@h:0': the port must be a number");
    CHECK(!contains(with_scheme.err, "secret"));
}

TEST(endpoint_from_refuses_an_over_long_url) {
    const std::string url = "redis://:" + std::string(3000, 'S') + "@h";
    const FromUrl from(url, "--url");
    refused_with(from.code, from.err, "invalid URL in --url: longer than 2047 characters");
    CHECK(!contains(from.err, "SSSS"));
    const std::string longest = "redis://h/" + std::string(2047 - 10, '0');
    CHECK_EQ(FromUrl(longest, "--url").code, go_on);
}

TEST(endpoint_from_refuses_a_user_without_password) {
    for (const char* url : {"redis://name@h", "redis://name:@h"}) {
        const FromUrl from(url, "REDIS_URL");
        refused_with(from.code, from.err,
                     "the URL in REDIS_URL names a user but no password (redis://user:password@"
                     "host, or --password-file)");
        CHECK(!contains(from.err, "name@"));  // redis-cli reads this form as a password
    }
    TempDir dir;
    const FromUrl with_file("redis://name@h", "--url", dir.write("pw", "pw\n").c_str());
    CHECK_EQ(with_file.code, go_on);
    CHECK_TEXT(with_file.ep.password, "pw");
}

TEST(endpoint_from_reads_the_password_file_after_the_url) {
    // A bad URL fails first, whatever the file holds.
    const FromUrl bad("redis://h:0", "--url", "/nonexistent/pw");
    refused_with(bad.code, bad.err, "the port must be a number");
    const FromUrl missing("redis://h", "--url", "/nonexistent/pw");
    refused_with(missing.code, missing.err, "cannot read password file /nonexistent/pw");
}

TEST(tls_options_need_rediss) {
    const auto expect = [](const resplock_cli::Options& o, const char* url, int code,
                           const char* text) {
        Endpoint ep;
        const char* why = "";
        REQUIRE(resplock_cli::parse_url(url, ep, &why) == UrlResult::ok);
        int got = 0;
        const cli_test::Output out =
            cli_test::capture([&] { got = resplock_cli::check_tls(o, ep, "--url"); });
        const bool ok =
            CHECK_EQ(got, code) && (code == go_on ? CHECK(out.err.empty())
                                                  : CHECK(cli_test::one_message(out.err)) &&
                                                        CHECK(contains(out.err, text)));
        if (!ok) std::printf("      %s: %s", url, out.err.c_str());
    };
    const resplock_cli::Options none{};
    expect(none, "redis://h", go_on, "");
    for (int i = 0; i < 5; ++i) {
        resplock_cli::Options o;
        const char* file = "f.pem";
        (i == 0 ? o.cacert : i == 1 ? o.cert : i == 2 ? o.key : o.tls_server_name) = file;
        if (i == 4) {
            o.tls_server_name = nullptr;
            o.insecure = true;
        }
        expect(o, "redis://h", exit_usage,
               "--cacert, --cert, --key, --tls-server-name and --insecure-skip-tls-verify "
               "need a rediss:// URL (--url is redis://)");
#ifdef RESPLOCK_CLI_TLS
        expect(o, "rediss://h", go_on, "");
#endif
    }
#ifdef RESPLOCK_CLI_TLS
    expect(none, "rediss://h", go_on, "");  // setup_tls() asks for --cacert
#else
    expect(none, "rediss://h", exit_usage, "rediss:// (TLS) is not supported by this build");
#endif
}

// ---------------------------------------------------------------------------------------------
// Sentinel URLs: redis[s]-sentinel://[[user]:password@]host[:port][,host[:port]...][/db]#NAME

TEST(sentinel_urls_name_their_sentinels_and_master) {
    const Parsed p("redis-sentinel://u:p%40ss@10.0.0.2,sentinel-b:26380,[::1]:1/3#my%20master");
    REQUIRE(p.result == UrlResult::ok);
    CHECK(p.ep.sentinel);
    CHECK(!p.ep.tls);
    CHECK_TEXT(p.ep.master_name, "my master");
    REQUIRE_EQ(p.ep.sentinel_count, std::size_t{3});
    CHECK_TEXT(p.ep.sentinels[0].host, "10.0.0.2");
    CHECK_EQ(p.ep.sentinels[0].port, 26379U);
    CHECK_TEXT(p.ep.sentinels[1].host, "sentinel-b");
    CHECK_EQ(p.ep.sentinels[1].port, 26380U);
    CHECK_TEXT(p.ep.sentinels[2].host, "::1");
    CHECK(p.ep.sentinels[2].ipv6);
    CHECK_EQ(p.ep.sentinels[2].port, 1U);
    CHECK_EQ(p.ep.db, 3U);
    CHECK_TEXT(p.ep.username, "u");
    CHECK_TEXT(p.ep.password, "p@ss");
    // host and port: the first sentinel's, for messages.
    CHECK_TEXT(p.ep.host, "10.0.0.2");
    CHECK_EQ(p.ep.port, 26379U);
}

TEST(sentinel_schemes_and_defaults) {
    const Parsed plain("REDIS-SENTINEL://h#m");
    REQUIRE(plain.result == UrlResult::ok);
    CHECK(plain.ep.sentinel && !plain.ep.tls);
    CHECK_EQ(plain.ep.sentinel_count, std::size_t{1});
    CHECK_EQ(plain.ep.sentinels[0].port, 26379U);
    CHECK_EQ(plain.ep.db, 0U);
    CHECK(!plain.ep.has_password);
    const Parsed tls("rediss-sentinel://:pw@h:5,g/#m");
    REQUIRE(tls.result == UrlResult::ok);
    CHECK(tls.ep.sentinel && tls.ep.tls);
    CHECK_EQ(tls.ep.sentinel_count, std::size_t{2});
    CHECK_TEXT(tls.ep.password, "pw");
    // A password may hold '#', ',' and '/': the user-info ends at the last '@'.
    const Parsed odd("redis-sentinel://:a#b,c/d@h#m");
    REQUIRE(odd.result == UrlResult::ok);
    CHECK_TEXT(odd.ep.password, "a#b,c/d");
    CHECK_TEXT(odd.ep.master_name, "m");
    const Parsed five("redis-sentinel://a,b,c,d,e#m");
    REQUIRE(five.result == UrlResult::ok);
    CHECK_EQ(five.ep.sentinel_count, std::size_t{5});
    CHECK_TEXT(five.ep.sentinels[4].host, "e");
    // A plain URL is no Sentinel one.
    const Parsed redis("redis://h");
    REQUIRE(redis.result == UrlResult::ok);
    CHECK(!redis.ep.sentinel);
}

TEST(bad_sentinel_urls_are_refused) {
    check_refused("redis-sentinel://h", "needs #MASTERNAME");
    check_refused("redis-sentinel://h#", "needs #MASTERNAME");
    check_refused("redis-sentinel://h/1", "needs #MASTERNAME");
    check_refused("redis-sentinel://h#m?x", "query strings and fragments are not supported");
    check_refused("redis-sentinel://a,b,c,d,e,f#m", "too many sentinels");
    check_refused("redis-sentinel://a,,b#m", "missing host");
    check_refused("redis-sentinel://a,#m", "missing host");
    check_refused("redis-sentinel://#m", "missing host");
    check_refused("redis-sentinel://h:0#m", "the port must be a number in 1..65535");
    check_refused("redis-sentinel://h:65536#m", "the port must be a number");
    check_refused("redis-sentinel://h:x,g#m", "the port must be a number");
    check_refused("redis-sentinel://h/x#m", "the database after '/' must be a number");
    check_refused("redis-sentinel://h#m%00", "bad master name");
    check_refused("redis-sentinel://h#m%zz", "bad master name");
    check_refused("redis-sentinel://h#" + std::string(RESPLOCK_MAX_HOST_LEN + 1, 'n'),
                  "bad master name");
    check_refused("redis-sentinel://" + std::string(RESPLOCK_MAX_HOST_LEN + 1, 'h') + "#m",
                  "sentinel host name too long");
    check_refused("redis-sentinel://[::1#m", "bad IPv6 address");
    check_refused("redis-sentinel://h g#m", "bad character in the host name");
    check_refused("redis-sentinel:/h#m", "it must start with");
    check_refused("sentinel://h#m", "it must start with");
    // The longest accepted host and name.
    const Parsed longest("redis-sentinel://" + std::string(RESPLOCK_MAX_HOST_LEN, 'h') + "#" +
                         std::string(RESPLOCK_MAX_HOST_LEN, 'n'));
    CHECK(longest.result == UrlResult::ok);
}

TEST(a_list_keeps_the_commas_between_sentinels) {
    struct Case {
        const char* list;
        std::size_t cut;
    };
    const Case cases[] = {
        {"redis-sentinel://a,b:1,c#m", 26},
        {"redis-sentinel://a,b#m,redis://c", 22},
        {"redis://c,redis-sentinel://a,b#m", 9},
        {"redis-sentinel://a,b#m,rediss-sentinel://c,d#n", 22},
        {"redis-sentinel://a,b#m,REDIS-SENTINEL://c#n", 22},
        {"rediss-sentinel://:p,w@a,b#m", 28},
    };
    for (const Case& c : cases) {
        if (!CHECK_EQ(resplock_cli::url_list_cut(c.list), c.cut)) std::printf("      %s\n", c.list);
    }
    // REDIS_URL / --url values split into whole URLs: each parses with all its sentinels.
    std::string_view rest = "redis-sentinel://a,b:2#m,redis-sentinel://:x,y@c,d,e#n";
    std::vector<std::string> items;
    for (;;) {
        const std::size_t cut = resplock_cli::url_list_cut(rest);
        items.emplace_back(rest.substr(0, cut));
        if (cut == rest.size()) break;
        rest.remove_prefix(cut + 1);
    }
    REQUIRE_EQ(items.size(), std::size_t{2});
    const Parsed first(items[0]);
    REQUIRE(first.result == UrlResult::ok);
    CHECK_EQ(first.ep.sentinel_count, std::size_t{2});
    CHECK_EQ(first.ep.sentinels[1].port, 2U);
    const Parsed second(items[1]);
    REQUIRE(second.result == UrlResult::ok);
    CHECK_EQ(second.ep.sentinel_count, std::size_t{3});
    CHECK_TEXT(second.ep.password, "x,y");
    CHECK_TEXT(second.ep.master_name, "n");
}

TEST(a_sentinel_url_with_a_password_may_carry_credentials) {
    CHECK(resplock_cli::url_list_has_credentials("redis-sentinel://:pw@a,b#m"));
    CHECK(!resplock_cli::url_list_has_credentials("redis-sentinel://a,b#m"));
    CHECK(resplock_cli::url_list_has_credentials("redis-sentinel://a,b#m,redis://:pw@c"));
}

TEST(endpoint_from_a_sentinel_url) {
    const FromUrl f("redis-sentinel://u:pw@a,b#m", "--url");
    CHECK_EQ(f.code, go_on);
    CHECK(f.err.empty());
    CHECK(f.ep.sentinel);
    CHECK_EQ(f.ep.sentinel_count, std::size_t{2});
    const FromUrl user_only("redis-sentinel://u@a#m", "--url");
    CHECK_EQ(user_only.code, exit_usage);
}

// ---------------------------------------------------------------------------------------------
// The servers of a quorum

namespace {

// check_distinct() over the URLs of `urls`, each parsed first.
struct Distinct {
    int code = 0;
    std::string err;
    explicit Distinct(const std::vector<std::string>& urls) {
        std::vector<Endpoint> eps(urls.size());
        for (std::size_t i = 0; i < urls.size(); ++i)
            REQUIRE_EQ(FromUrl(urls[i], "--url").code, go_on);
        for (std::size_t i = 0; i < urls.size(); ++i) {
            const char* why = "";
            (void)resplock_cli::parse_url(urls[i].c_str(), eps[i], &why);
        }
        err = cli_test::capture([&] {
                  code = resplock_cli::check_distinct(eps.data(), static_cast<int>(eps.size()),
                                                      "--url");
              }).err;
    }
};

}  // namespace

TEST(a_quorum_refuses_one_server_twice) {
    const Distinct same({"redis://127.0.0.1:6379", "redis://127.0.0.1:6379"});
    refused_with(same.code, same.err,
                 "resplock: the same server twice in --url: 127.0.0.1:6379/0 (URLs 1 and 2); a "
                 "quorum needs distinct servers\n");
    // Another spelling of the same host, port and database: the default port and database, the
    // host's case, a password or TLS make no other server.
    const Distinct spelled(
        {"redis://a:1", "redis://b:1", "redis://:pw@B:1/0", "rediss://c", "redis://c:6379/"});
    refused_with(spelled.code, spelled.err, "twice in --url: B:1/0 (URLs 2 and 3)");
    CHECK(!contains(spelled.err, "pw"));
    const Distinct v6({"redis://[::1]:7/3", "redis://h", "redis://[::1]:7/3"});
    refused_with(v6.code, v6.err, "twice in --url: [::1]:7/3 (URLs 1 and 3)");
    const Distinct sentinels({"redis-sentinel://s:1#m", "redis-sentinel://s:1,t#m"});
    refused_with(sentinels.code, sentinels.err,
                 "twice in --url: Sentinel master m via s:1/0 (URLs 1 and 2)");
}

TEST(a_quorum_of_distinct_servers_passes) {
    for (const std::vector<std::string>& urls : std::vector<std::vector<std::string>>{
             {"redis://h:1", "redis://h:2"},
             {"redis://h/1", "redis://h/2"},
             {"redis://h", "redis://g"},
             // No name is resolved: two names of one host count as two servers.
             {"redis://localhost:6379", "redis://127.0.0.1:6379"},
             {"redis-sentinel://s#m", "redis-sentinel://s#n"},
             {"redis://s:26379", "redis-sentinel://s#m"},
             {"redis://h"}}) {
        const Distinct d(urls);
        CHECK_EQ(d.code, go_on);
        CHECK(d.err.empty());
    }
}
