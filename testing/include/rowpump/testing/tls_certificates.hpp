#pragma once

// Certificates for TLS tests, made with the `openssl` command in a directory of the test's:
// a CA, a server certificate for 127.0.0.1 and localhost, one for another name, a client
// certificate, all signed by the CA, and a second CA that signed none of them. Keys are unencrypted
// RSA 2048, PEM.

#include <string>
#include <vector>

namespace rowpump::testing {

struct TlsCertificates {
    std::string ca;           // ca.pem
    std::string server_cert;  // server.pem: CN and subjectAltName 127.0.0.1 / localhost
    std::string server_key;
    std::string wrong_name_cert;  // wrong-name.pem: CN and subjectAltName elsewhere.invalid
    std::string wrong_name_key;
    std::string client_cert;  // client.pem: CN rowpump-client
    std::string client_key;
    std::string other_ca;  // other-ca.pem: a CA that signed nothing here

    // Makes them all in `dir`; throws with openssl's output when a step fails.
    explicit TlsCertificates(const std::string& dir);

    // The mariadbd options that make it offer TLS with the server certificate (or the one
    // for another name).
    std::vector<std::string> mariadb_args(bool wrong_name = false) const;
};

}  // namespace rowpump::testing
