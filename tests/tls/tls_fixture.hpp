// Certificates for the TLS tests, made with the openssl command in a fresh temporary directory
// the first time they are needed and removed when the test binary exits:
//   ca        the CA that signs the server and client certificates
//   server    CN=localhost, subjectAltName DNS:localhost, IP:127.0.0.1, IP:::1 (serverAuth)
//   client    CN=resplock-test-client (clientAuth), for servers that require client certificates
//   other_ca  an unrelated CA that signed nothing here
// and the TLS-only redis-servers that use them.
#ifndef RESPLOCK_TESTS_TLS_FIXTURE_HPP
#define RESPLOCK_TESTS_TLS_FIXTURE_HPP

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "redis_server.hpp"

namespace tls_fixture {

struct Certs {
    bool ok = false;
    std::string dir;
    std::string ca, ca_key, ca_der, server, server_key, client, client_key, other_ca;

    std::string path(const char* name) const { return dir + "/" + name; }

    Certs() {
        char tmpl[] = "/tmp/resplock-tls-XXXXXX";
        if (mkdtemp(tmpl) == nullptr) return;
        dir = tmpl;
        ca = path("ca.crt");
        ca_key = path("ca.key");
        ca_der = path("ca.der");
        server = path("server.crt");
        server_key = path("server.key");
        client = path("client.crt");
        client_key = path("client.key");
        other_ca = path("other-ca.crt");
        const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
        const std::string ca_ext =
            " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign";
        std::ofstream(path("server.ext")) << "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n"
                                             "extendedKeyUsage=serverAuth\n";
        std::ofstream(path("client.ext")) << "extendedKeyUsage=clientAuth\n";
        const std::string script =
            "cd '" + dir + "' && " + "openssl req -x509" + ec +
            " -keyout ca.key -out ca.crt -days 2" + " -subj /CN=resplock-test-ca" + ca_ext +
            " && " + "openssl x509 -in ca.crt -outform DER -out ca.der && " + "openssl req -x509" +
            ec + " -keyout other-ca.key -out other-ca.crt -days 2" +
            " -subj /CN=resplock-unrelated-ca" + ca_ext + " && " + "openssl req -new" + ec +
            " -keyout server.key -out server.csr -subj /CN=localhost && " +
            "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 2 -days 2" +
            " -extfile server.ext -out server.crt && " + "openssl req -new" + ec +
            " -keyout client.key -out client.csr -subj /CN=resplock-test-client && " +
            "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -set_serial 3 -days 2" +
            " -extfile client.ext -out client.crt";
        const std::string quiet = "( " + script + " ) >/dev/null 2>&1";
        ok = std::system(quiet.c_str()) == 0;
        if (!ok) std::printf("openssl failed to make the test certificates in %s\n", dir.c_str());
    }

    ~Certs() {
        if (dir.empty()) return;
        const std::string rm = "rm -rf '" + dir + "'";
        (void)std::system(rm.c_str());
    }
};

inline const Certs& certs() {
    static Certs c;
    return c;
}

inline support::TlsFiles server_files(bool auth_clients) {
    support::TlsFiles f;
    f.cert = certs().server;
    f.key = certs().server_key;
    f.ca = certs().ca;
    f.auth_clients = auth_clients;
    f.client_cert = certs().client;
    f.client_key = certs().client_key;
    return f;
}

// A TLS-only server that does not ask for client certificates, and one that requires them.
inline support::RedisServer& server() {
    static support::RedisServer s(server_files(false));
    return s;
}
inline support::RedisServer& mtls_server() {
    static support::RedisServer s(server_files(true));
    return s;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace tls_fixture

#endif  // RESPLOCK_TESTS_TLS_FIXTURE_HPP
