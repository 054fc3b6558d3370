#include "rowpump/testing/tls_certificates.hpp"

#include <stdexcept>

#include "rowpump/testing/process.hpp"
#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

namespace {

void openssl(std::vector<std::string> args) {
    args.insert(args.begin(), "openssl");
    RunResult r = run_program(args, 60s);
    if (!r.status.success()) throw std::runtime_error("openssl failed: " + r.describe());
}

// A self-signed CA: <dir>/<name>.pem and <name>.key.
void make_ca(const std::string& dir, const std::string& name) {
    openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
             "/CN=rowpump test " + name, "-keyout", dir + "/" + name + ".key", "-out",
             dir + "/" + name + ".pem"});
}

// <dir>/<name>.pem and .key, signed by <dir>/ca.pem; `extensions` a line for -extfile.
void make_signed(const std::string& dir, const std::string& name, const std::string& subject,
                 const std::string& extensions) {
    const std::string base = dir + "/" + name;
    openssl({"req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", base + ".key",
             "-out", base + ".csr"});
    write_file(base + ".ext", extensions + "\n");
    openssl({"x509", "-req", "-in", base + ".csr", "-CA", dir + "/ca.pem", "-CAkey",
             dir + "/ca.key", "-CAcreateserial", "-days", "2", "-extfile", base + ".ext", "-out",
             base + ".pem"});
}

}  // namespace

TlsCertificates::TlsCertificates(const std::string& dir)
    : ca(dir + "/ca.pem"),
      server_cert(dir + "/server.pem"),
      server_key(dir + "/server.key"),
      wrong_name_cert(dir + "/wrong-name.pem"),
      wrong_name_key(dir + "/wrong-name.key"),
      client_cert(dir + "/client.pem"),
      client_key(dir + "/client.key"),
      other_ca(dir + "/other-ca.pem") {
    make_ca(dir, "ca");
    make_ca(dir, "other-ca");
    make_signed(dir, "server", "/CN=127.0.0.1",
                "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth");
    make_signed(dir, "wrong-name", "/CN=elsewhere.invalid",
                "subjectAltName=DNS:elsewhere.invalid\nextendedKeyUsage=serverAuth");
    make_signed(dir, "client", "/CN=rowpump-client", "extendedKeyUsage=clientAuth");
}

std::vector<std::string> TlsCertificates::mariadb_args(bool wrong_name) const {
    return {"--ssl-ca=" + ca, "--ssl-cert=" + (wrong_name ? wrong_name_cert : server_cert),
            "--ssl-key=" + (wrong_name ? wrong_name_key : server_key)};
}

}  // namespace rowpump::testing
