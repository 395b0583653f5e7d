// `resplock list`, `status --json` and `status --verbose` against a real redis-server: every lock
// kind (a plain lock with an owner label, one with a fencing number, a fair lock with a waiter
// queued, a semaphore with two leases, a reentrant lock written in its documented shape, a key
// without a TTL) shows with its fields; companion keys and values no lock kind writes are not
// listed, and such values are held in every status output, as `status` says; PATTERN filters; --max
// stops early and says so; the JSON lines parse (python3's json) with the documented fields; a key
// holding quotes, a backslash, control bytes and invalid UTF-8 comes back byte for byte; no token
// is ever printed; and the usage errors.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_server.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::Result;

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

Result cli(std::vector<std::string> args) {
    args.insert(args.begin(), {RESPLOCK_CLI, "-u", server().url()});
    return support::run(args, {}, 30);
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return lines;
}

std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> words;
    std::size_t at = 0;
    while (at < line.size()) {
        const std::size_t start = line.find_first_not_of(' ', at);
        if (start == std::string::npos) break;
        std::size_t end = line.find(' ', start);
        if (end == std::string::npos) end = line.size();
        words.push_back(line.substr(start, end - start));
        at = end;
    }
    return words;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

void show(const char* what, const Result& r) {
    std::printf("      %s: exit %d\n      stdout: %s      stderr: %s", what, r.code, r.out.c_str(),
                r.err.c_str());
}

// The random hex of a token "label:hex" (or "hex"), and of "TOKEN FENCE".
std::string hex_of(std::string token) {
    token = trimmed(token);
    const std::size_t blank = token.find(' ');
    if (blank != std::string::npos) token.resize(blank);
    const std::size_t colon = token.find(':');
    return colon == std::string::npos ? token : token.substr(colon + 1);
}

// Each JSON line of `out` parsed by python3's json module (strict: one object a line), and
// written back as "name=value" words, one line per object: the field names in order
// (fields=key,key_hex,...), the key's bytes in hex as JSON decoded them (key=...; each code point
// below 256 as one byte, so \u00ff gives ff, and others as UTF-8), every other field as JSON writes
// it, holders as owner/remaining pairs. "error ..." when a line does not parse.
constexpr const char checker[] = R"PY(
import json, sys
for line in open(sys.argv[1], encoding='utf-8', errors='strict'):
    try:
        o = json.loads(line)
    except ValueError as e:
        print('error', e); continue
    if not isinstance(o, dict):
        print('error not an object'); continue
    k = o.get('key')
    raw = bytes(ord(c) if ord(c) < 256 else 0 for c in k) if all(ord(c) < 256 for c in k) \
        else k.encode('utf-8')
    words = ['fields=' + ','.join(o.keys()), 'key=' + raw.hex()]
    for name in ('key_hex', 'kind', 'state', 'remaining_ms', 'owner', 'count', 'limit', 'fence',
                 'waiters'):
        v = o.get(name)
        t = 'int' if type(v) is int else 'str' if type(v) is str else 'null' if v is None \
            else 'other'
        words.append(name + '=' + t + ':' + json.dumps(v))
    words.append('holders=' + ';'.join(
        json.dumps(h.get('owner')) + '/' + ('int' if type(h.get('remaining_ms')) is int
                                            else json.dumps(h.get('remaining_ms')))
        for h in o['holders']))
    print(' '.join(words))
)PY";

// The objects of `out`, by key (hex of its bytes): name -> "type:value" (holders: the pairs).
using Object = std::map<std::string, std::string>;
std::map<std::string, Object> parsed(const std::string& out, bool& ok) {
    const std::string dir = "/tmp/resplock-inspect-" + std::to_string(getpid());
    const std::string data = dir + ".jsonl";
    const std::string script = dir + ".py";
    std::ofstream(data, std::ios::binary) << out;
    std::ofstream(script) << checker;
    const Result r = support::run({"python3", script, data}, {}, 30);
    std::remove(data.c_str());
    std::remove(script.c_str());
    std::map<std::string, Object> objects;
    ok = r.code == 0 && !r.out.empty();
    for (const std::string& line : lines_of(r.out)) {
        if (line.rfind("error", 0) == 0) ok = false;
        Object o;
        for (const std::string& w : words_of(line)) {
            const std::size_t eq = w.find('=');
            if (eq != std::string::npos) o[w.substr(0, eq)] = w.substr(eq + 1);
        }
        objects[o["key"]] = o;
    }
    if (!ok) show("python3", r);
    return objects;
}

std::string hex(const std::string& s) {
    std::string out;
    char two[3];
    for (const char c : s) {
        std::snprintf(two, sizeof two, "%02x",
                      static_cast<unsigned>(static_cast<unsigned char>(c)));
        out += two;
    }
    return out;
}

constexpr const char fields[] =
    "key,key_hex,kind,state,remaining_ms,owner,holders,count,limit,fence,waiters";

// The rows of list's text output by KEY (its first word), header checked.
std::map<std::string, std::vector<std::string>> rows_of(const std::string& out, bool& header) {
    std::map<std::string, std::vector<std::string>> rows;
    const std::vector<std::string> lines = lines_of(out);
    header = !lines.empty() &&
             words_of(lines[0]) == std::vector<std::string>{"KEY",   "KIND",    "REMAINING",
                                                            "FENCE", "WAITERS", "HOLDERS"};
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const std::vector<std::string> w = words_of(lines[i]);
        if (!w.empty()) rows[w[0]] = w;
    }
    return rows;
}

// Every kind on the server, with the tokens it printed (none may show in any output).
struct Kinds {
    std::vector<std::string> tokens;
    support::Process waiter;  // the fair lock's queued waiter, killed when the test ends
    support::Process sem_waiter;
    bool ok = true;

    Kinds() {
        server().cli({"FLUSHALL"});
        take({"--owner", "alice", "acquire", "plain"});
        take({"--owner", "bob", "--fence", "acquire", "fenced"});
        take({"--owner", "s1", "--limit", "2", "acquire", "sem"});
        take({"--owner", "s2", "--limit", "2", "--fence", "acquire", "sem"});
        take({"--owner", "f1", "--fair", "acquire", "fairk"});
        // Its marker {oncek}:once holds the token too: a companion, not a lock.
        take({"--owner", "o", "--once-per", "1h", "acquire", "oncek"});
        ok = ok && waiter.start({RESPLOCK_CLI, "-u", server().url(), "--fair", "--wait", "60s",
                                 "acquire", "fairk"});
        ok = ok && sem_waiter.start({RESPLOCK_CLI, "-u", server().url(), "--fair", "--limit", "2",
                                     "--wait", "60s", "acquire", "sem"});
        ok = ok && support::wait_until(
                       [] {
                           return server().cli({"LLEN", "{fairk}:q"}) == "1" &&
                                  server().cli({"LLEN", "{sem}:q"}) == "1";
                       },
                       10);
        // The reentrant lock's shape (docs/variants.md): field "" the TTL, the owner id's count.
        server().cli({"HSET", "reent", "", "30000", "worker-7:00ff00ff00ff00ff", "2"});
        server().cli({"PEXPIRE", "reent", "30000"});
        tokens.push_back("00ff00ff00ff00ff");
        // A lock without a TTL (set by hand), and values no lock kind writes.
        server().cli({"SET", "forever", "hand:0123456789abcdef0123456789abcdef"});
        tokens.push_back("0123456789abcdef0123456789abcdef");
        server().cli({"SET", "junk", "not a token"});
        server().cli({"RPUSH", "somelist", "x"});
        server().cli({"HSET", "somehash", "a", "b"});
    }

    void take(std::vector<std::string> args) {
        const Result r = cli(std::move(args));
        if (r.code != 0) {
            show("acquire", r);
            ok = false;
        }
        tokens.push_back(hex_of(r.out));
    }

    bool secret_in(const std::string& text) const {
        for (const std::string& t : tokens) {
            if (t.size() >= 16 && contains(text, t)) return true;
        }
        return false;
    }
};

}  // namespace

TEST(server_starts) {
    REQUIRE(server().running());
}

TEST(list_shows_every_kind_and_no_companion_or_token) {
    REQUIRE(server().running());
    Kinds kinds;
    REQUIRE(kinds.ok);
    const Result r = cli({"list"});
    CHECK_EQ(r.code, 0);
    CHECK(r.err.empty());
    bool header = false;
    auto rows = rows_of(r.out, header);
    CHECK(header);
    CHECK_EQ(rows.size(), std::size_t{7});
    CHECK_EQ(lines_of(r.out).size(), std::size_t{8});  // each lock once, after the header
    // KEY KIND REMAINING FENCE WAITERS HOLDERS
    CHECK(rows["plain"] ==
          (std::vector<std::string>{"plain", "lock", rows["plain"][2], "-", "0", "alice"}));
    CHECK(std::atol(rows["plain"][2].c_str()) > 20000);
    CHECK_EQ(rows["fenced"][1], std::string("lock"));
    CHECK(rows["fenced"][3] != "-" && std::atoll(rows["fenced"][3].c_str()) > 0);
    CHECK_EQ(rows["fenced"][5], std::string("bob"));
    CHECK_EQ(rows["fairk"][1], std::string("fair"));
    CHECK_EQ(rows["fairk"][4], std::string("1"));
    CHECK_EQ(rows["sem"][1], std::string("semaphore"));
    CHECK_EQ(rows["sem"][4], std::string("1"));
    CHECK_EQ(rows["sem"][5], std::string("s1,s2"));
    CHECK(rows["sem"][3] != "-");
    CHECK_EQ(rows["reent"][1], std::string("reentrant"));
    CHECK_EQ(rows["reent"][5], std::string("worker-7"));
    CHECK_EQ(rows["forever"][2], std::string("forever"));
    CHECK_EQ(rows["forever"][5], std::string("hand"));
    CHECK_EQ(rows["oncek"][5], std::string("o"));
    for (const char* absent : {"junk", "somelist", "somehash", "{fenced}:fence", "{sem}:fence",
                               "{fairk}:q", "{fairk}:w", "{sem}:q", "{sem}:w", "{oncek}:once"}) {
        CHECK(rows.count(absent) == 0);
        CHECK(!contains(r.out, absent));
    }
    CHECK(!kinds.secret_in(r.out + r.err));
    if (rows.size() != 7) show("list", r);
}

TEST(list_json_parses_with_the_documented_fields) {
    REQUIRE(server().running());
    Kinds kinds;
    REQUIRE(kinds.ok);
    const Result r = cli({"list", "--json"});
    CHECK_EQ(r.code, 0);
    CHECK(!kinds.secret_in(r.out + r.err));
    bool ok = false;
    auto objects = parsed(r.out, ok);
    CHECK(ok);
    CHECK_EQ(objects.size(), std::size_t{7});
    CHECK_EQ(lines_of(r.out).size(), std::size_t{7});
    for (auto& [key, o] : objects)
        CHECK_EQ(o["fields"], std::string(fields));
    Object& plain = objects[hex("plain")];
    CHECK_EQ(plain["kind"], std::string("str:\"lock\""));
    CHECK_EQ(plain["state"], std::string("str:\"held\""));
    CHECK_EQ(plain["owner"], std::string("str:\"alice\""));
    CHECK_EQ(plain["holders"], std::string("\"alice\"/int"));
    CHECK_EQ(plain["fence"], std::string("null:null"));
    CHECK_EQ(plain["key_hex"], std::string("null:null"));
    CHECK(plain["remaining_ms"].rfind("int:", 0) == 0);
    CHECK(objects[hex("fenced")]["fence"].rfind("int:", 0) == 0);
    Object& fair = objects[hex("fairk")];
    CHECK_EQ(fair["kind"], std::string("str:\"fair\""));
    CHECK_EQ(fair["waiters"], std::string("int:1"));
    CHECK_EQ(fair["holders"], std::string("\"f1\"/int"));
    Object& sem = objects[hex("sem")];
    CHECK_EQ(sem["kind"], std::string("str:\"semaphore\""));
    CHECK_EQ(sem["count"], std::string("int:2"));
    CHECK_EQ(sem["owner"], std::string("null:null"));
    CHECK_EQ(sem["limit"], std::string("null:null"));  // the server keeps no limit
    CHECK_EQ(sem["waiters"], std::string("int:1"));
    CHECK_EQ(sem["holders"], std::string("\"s1\"/int;\"s2\"/int"));
    CHECK(sem["fence"].rfind("int:", 0) == 0);
    Object& reent = objects[hex("reent")];
    CHECK_EQ(reent["kind"], std::string("str:\"reentrant\""));
    CHECK_EQ(reent["count"], std::string("int:2"));
    CHECK_EQ(reent["owner"], std::string("str:\"worker-7\""));
    Object& forever = objects[hex("forever")];
    CHECK_EQ(forever["remaining_ms"], std::string("null:null"));
    CHECK_EQ(forever["holders"], std::string("\"hand\"/null"));
}

TEST(status_json_and_verbose_show_each_kind) {
    REQUIRE(server().running());
    Kinds kinds;
    REQUIRE(kinds.ok);
    std::string all;
    for (const char* key : {"plain", "fenced", "fairk", "reent", "forever"}) {
        const Result r = cli({"status", "--json", key});
        CHECK_EQ(r.code, 0);
        all += r.out;
    }
    const Result sem = cli({"status", "--json", "--limit", "2", "sem"});
    CHECK_EQ(sem.code, 0);
    all += sem.out;
    const Result free_key = cli({"status", "--json", "nothing-here"});
    CHECK_EQ(free_key.code, 1);
    all += free_key.out;
    CHECK(!kinds.secret_in(all));
    bool ok = false;
    auto objects = parsed(all, ok);
    CHECK(ok);
    CHECK_EQ(objects.size(), std::size_t{7});
    CHECK_EQ(objects[hex("sem")]["limit"], std::string("int:2"));
    CHECK_EQ(objects[hex("sem")]["holders"], std::string("\"s1\"/int;\"s2\"/int"));
    CHECK_EQ(objects[hex("fairk")]["waiters"], std::string("int:1"));
    CHECK_EQ(objects[hex("reent")]["kind"], std::string("str:\"reentrant\""));
    Object& none = objects[hex("nothing-here")];
    CHECK_EQ(none["kind"], std::string("null:null"));
    CHECK_EQ(none["state"], std::string("str:\"free\""));
    CHECK_EQ(none["holders"], std::string(""));
    CHECK_EQ(none["fields"], std::string(fields));

    const Result v = cli({"status", "--verbose", "--limit", "2", "sem"});
    CHECK_EQ(v.code, 0);
    const std::vector<std::string> lines = lines_of(v.out);
    CHECK(lines.size() == 11);
    if (lines.size() == 11) {
        CHECK_EQ(lines[0], std::string("key sem"));
        CHECK_EQ(lines[1], std::string("kind semaphore"));
        CHECK_EQ(lines[2], std::string("state held"));
        CHECK(lines[3].rfind("remaining ", 0) == 0);
        CHECK_EQ(lines[4], std::string("owner -"));
        CHECK_EQ(lines[5], std::string("count 2"));
        CHECK_EQ(lines[6], std::string("limit 2"));
        CHECK(lines[7].rfind("fence ", 0) == 0);
        CHECK_EQ(lines[8], std::string("waiters 1"));
        CHECK(lines[9].rfind("holder ", 0) == 0 && lines[9].substr(lines[9].size() - 3) == " s1");
        CHECK(lines[10].rfind("holder ", 0) == 0 &&
              lines[10].substr(lines[10].size() - 3) == " s2");
    }
    const Result f = cli({"status", "--verbose", "fenced"});
    CHECK_EQ(f.code, 0);
    CHECK(contains(f.out, "\nkind lock\n"));
    CHECK(contains(f.out, "\nowner bob\n"));
    CHECK(contains(f.out, "\nfence "));
    CHECK(contains(f.out, "\nwaiters 0\n"));
    CHECK(!kinds.secret_in(v.out + f.out));
    // Without --json or --verbose, status prints what it always did.
    const Result plain = cli({"status", "plain"});
    CHECK_EQ(plain.code, 0);
    CHECK(plain.out.rfind("held ", 0) == 0 && plain.out.size() > 12 &&
          plain.out.substr(plain.out.size() - 7) == " alice\n");
}

// Values no lock kind writes (set by hand) hold KEY all the same: `status`, `status --json` and
// `status --verbose` all say held, with the key's PTTL (forever without one), and exit 0, as an
// acquisition finds KEY busy; the kind is null (`-`), the one holder has no label; `list` leaves
// them out.
TEST(foreign_values_are_held_in_every_status_output) {
    REQUIRE(server().running());
    server().cli({"FLUSHALL"});
    server().cli({"SET", "job", "hello"});
    server().cli({"SET", "job2", "hello", "PX", "60000"});
    server().cli({"RPUSH", "job3", "a"});
    std::string all;
    for (const char* key : {"job", "job2", "job3"}) {
        const bool forever = std::string(key) != "job2";
        const Result text = cli({"status", key});
        CHECK_EQ(text.code, 0);
        CHECK(forever ? text.out == "held forever\n" : text.out.rfind("held ", 0) == 0);
        CHECK_EQ(cli({"-n", "acquire", key}).code, 75);

        const Result json = cli({"status", "--json", key});
        CHECK_EQ(json.code, 0);
        all += json.out;

        const Result verbose = cli({"status", "--verbose", key});
        CHECK_EQ(verbose.code, 0);
        const std::vector<std::string> lines = lines_of(verbose.out);
        if (CHECK_EQ(lines.size(), std::size_t{7})) {
            CHECK_EQ(lines[0], "key " + std::string(key));
            CHECK_EQ(lines[1], std::string("kind -"));
            CHECK_EQ(lines[2], std::string("state held"));
            if (forever) {
                CHECK_EQ(lines[3], std::string("remaining forever"));
            } else {
                const long long ms = std::atoll(lines[3].c_str() + 10);
                CHECK(lines[3].rfind("remaining ", 0) == 0 && ms > 0 && ms <= 60000);
            }
            CHECK_EQ(lines[4], std::string("owner -"));
            CHECK_EQ(lines[5], std::string("count 1"));
            CHECK_EQ(lines[6], std::string("waiters 0"));
        }
    }
    bool ok = false;
    auto objects = parsed(all, ok);
    CHECK(ok);
    CHECK_EQ(objects.size(), std::size_t{3});
    for (const char* key : {"job", "job2", "job3"}) {
        Object& o = objects[hex(key)];
        const bool forever = std::string(key) != "job2";
        CHECK_EQ(o["fields"], std::string(fields));
        CHECK_EQ(o["kind"], std::string("null:null"));
        CHECK_EQ(o["state"], std::string("str:\"held\""));
        CHECK(forever ? o["remaining_ms"] == "null:null" : o["remaining_ms"].rfind("int:", 0) == 0);
        CHECK_EQ(o["owner"], std::string("null:null"));
        CHECK_EQ(o["holders"], std::string(forever ? "null/null" : "null/int"));
        CHECK_EQ(o["count"], std::string("int:1"));
        CHECK_EQ(o["fence"], std::string("null:null"));
        CHECK_EQ(o["waiters"], std::string("int:0"));
    }
    const Result listed = cli({"list", "job*"});
    CHECK_EQ(listed.code, 0);
    CHECK_EQ(lines_of(listed.out).size(), std::size_t{1});  // the header alone
}

TEST(list_pattern_filters_and_max_stops_early) {
    REQUIRE(server().running());
    server().cli({"FLUSHALL"});
    for (const char* key : {"job:1", "job:2", "job:3", "job:4", "other:1"})
        CHECK_EQ(cli({"--owner", "w", "acquire", key}).code, 0);
    const Result jobs = cli({"list", "job:*"});
    CHECK_EQ(jobs.code, 0);
    CHECK_EQ(lines_of(jobs.out).size(), std::size_t{5});
    CHECK(!contains(jobs.out, "other:1"));
    CHECK(jobs.err.empty());
    const Result capped = cli({"list", "--max", "2", "job:*"});
    CHECK_EQ(capped.code, 0);
    CHECK_EQ(lines_of(capped.out).size(), std::size_t{3});
    CHECK(contains(capped.err, "stopped after 2 locks (--max 2)"));
    const Result exact = cli({"list", "--max", "4", "--json", "job:*"});
    CHECK_EQ(exact.code, 0);
    CHECK_EQ(lines_of(exact.out).size(), std::size_t{4});
    CHECK(exact.err.empty());
    const Result none = cli({"list", "nomatch:*"});
    CHECK_EQ(none.code, 0);  // nothing matches: still listed (the header alone)
    CHECK_EQ(lines_of(none.out).size(), std::size_t{1});
    const Result none_json = cli({"list", "--json", "nomatch:*"});
    CHECK_EQ(none_json.code, 0);
    CHECK(none_json.out.empty());
}

TEST(odd_key_bytes_are_escaped_and_come_back) {
    REQUIRE(server().running());
    server().cli({"FLUSHALL"});
    const std::string key = std::string("q\"b\\c\x01\n\x7f") + "\xc3\xa9" + "\xff" + "end";
    const Result taken = cli({"--owner", "odd", "acquire", key});
    REQUIRE(taken.code == 0);
    const Result l = cli({"list", "--json"});
    CHECK_EQ(l.code, 0);
    CHECK_EQ(lines_of(l.out).size(), std::size_t{1});
    // Every control byte escaped: the line holds none but its newline.
    bool clean = true;
    for (std::size_t i = 0; i + 1 < l.out.size(); ++i)
        clean = clean && static_cast<unsigned char>(l.out[i]) >= 0x20 && l.out[i] != 0x7f;
    CHECK(clean);
    CHECK(contains(l.out, "\"key\":\"q\\\"b\\\\c\\u0001\\u000a\\u007f\xc3\xa9\\u00ffend\""));
    bool ok = false;
    auto objects = parsed(l.out + cli({"status", "--json", key}).out, ok);
    CHECK(ok);
    // Decoded, the key is its bytes with \xff read as U+00FF; key_hex gives them exactly.
    const std::string decoded = std::string("q\"b\\c\x01\n\x7f") + "\xe9" + "\xff" + "end";
    CHECK_EQ(objects.size(), std::size_t{1});
    CHECK_EQ(objects[hex(decoded)]["key_hex"], "str:\"" + hex(key) + "\"");
    CHECK(!contains(l.out, hex_of(taken.out)));
    const Result rows = cli({"list"});
    CHECK_EQ(lines_of(rows.out).size(), std::size_t{2});  // the key's row is one line
}

TEST(usage_and_unreachable) {
    REQUIRE(server().running());
    const Result quorum =
        support::run({RESPLOCK_CLI, "-u", server().url(), "-u", "redis://127.0.0.1:1", "-u",
                      "redis://127.0.0.1:2", "list"});
    CHECK_EQ(quorum.code, 64);
    CHECK(contains(quorum.err, "not with a quorum"));
    CHECK_EQ(cli({"list", "a", "b"}).code, 64);
    CHECK_EQ(cli({"acquire", "k", "--json"}).code, 64);
    CHECK_EQ(cli({"list", "--verbose"}).code, 64);
    CHECK_EQ(cli({"status", "k", "--max", "3"}).code, 64);
    CHECK_EQ(cli({"list", "--max", "0"}).code, 64);
    CHECK_EQ(cli({"status", "--json", "--verbose", "k"}).code, 64);
    const Result down = support::run({RESPLOCK_CLI, "-u", "redis://127.0.0.1:1", "list"});
    CHECK_EQ(down.code, 69);
    CHECK(down.out.empty());
}

// Whatever the server holds, list reads bounded amounts: a 4 MB value and a 100 KB key name are
// not locks and are not listed (measured and filtered on the server), a fair queue of 20000
// entries is counted, not read, and a semaphore of 3000 live leases is read page by page.
TEST(huge_values_queues_and_semaphores_are_read_in_bounded_steps) {
    REQUIRE(server().running());
    server().cli({"FLUSHALL"});
    // Taken first: a fair attempt drops queued tokens that have no entry in {held}:w.
    REQUIRE(cli({"--fair", "acquire", "held"}).code == 0);
    server().cli({"EVAL",
                  "redis.call('set','big',string.rep('a',4*1024*1024)) "
                  "redis.call('set',string.rep('k',100*1024),'x:00ff') "
                  "for i=1,20000 do redis.call('rpush','{held}:q','t'..i) end "
                  "local t=redis.call('time') local n=t[1]*1000+math.floor(t[2]/1000) "
                  "for i=1,3000 do redis.call('zadd','many',n+600000+i,'h'..i..':00ff') end "
                  "redis.call('pexpire','many',700000) return 1",
                  "0"});
    const Result r = cli({"list"});
    CHECK_EQ(r.code, 0);
    CHECK(r.err.empty());
    bool header = false;
    auto rows = rows_of(r.out, header);
    CHECK_EQ(rows.size(), std::size_t{2});
    CHECK_EQ(rows["held"][1], std::string("fair"));
    CHECK_EQ(rows["held"][4], std::string("20000"));
    CHECK_EQ(rows["many"][1], std::string("semaphore"));
    CHECK_EQ(rows["many"][5], std::string("h1,h2,h3,h4,+2996"));
    const Result j = cli({"status", "--json", "many"});
    CHECK_EQ(j.code, 0);
    bool ok = false;
    auto objects = parsed(j.out, ok);
    CHECK(ok);
    CHECK_EQ(objects[hex("many")]["count"], std::string("int:3000"));
    const std::string holders = objects[hex("many")]["holders"];
    CHECK_EQ(std::count(holders.begin(), holders.end(), ';'), 2999);
    if (rows.size() != 2) show("list", r);
}
