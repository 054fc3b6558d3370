// `mysql.tls` (config_sections.hpp): how the MySQL connection is encrypted and checked.

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "config/config_sections.hpp"

namespace rowpump {

namespace {

using yaml::Item;
using yaml::Map;
using yaml::Reader;

constexpr std::array<std::pair<TlsMode, const char*>, 5> kModes = {{
    {TlsMode::disabled, "disabled"},
    {TlsMode::preferred, "preferred"},
    {TlsMode::required, "required"},
    {TlsMode::verify_ca, "verify_ca"},
    {TlsMode::verify_identity, "verify_identity"},
}};

TlsMode read_mode(const Reader& r, const Item& item) {
    const std::string text = r.string(item);
    for (const auto& [mode, name] : kModes) {
        if (text == name) return mode;
    }
    r.fail(item, "must be one of disabled, preferred, required, verify_ca, verify_identity; got '" +
                     text + "'");
}

// A path to a file this process can read now (the connector only says "SSL error" later).
std::string read_readable_file(const Reader& r, const Item& item) {
    std::string path = r.nonempty_string(item);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        r.fail(item, "cannot read '" + path + "': " + std::strerror(error));
    }
    ::close(fd);
    return path;
}

}  // namespace

const char* tls_mode_name(TlsMode mode) {
    for (const auto& [known, name] : kModes) {
        if (known == mode) return name;
    }
    return "?";
}

MysqlTls read_mysql_tls(const Reader& r, const Item& item) {
    Map map(r, item, {"mode", "ca", "cert", "key"});
    MysqlTls tls;
    tls.mode = read_mode(r, map.require("mode"));
    const std::string mode = tls_mode_name(tls.mode);
    const bool verify = tls.mode == TlsMode::verify_ca || tls.mode == TlsMode::verify_identity;
    if (auto v = map.get("ca")) {
        // The client library checks the chain whenever it has a CA: with `required` that would
        // quietly be verify_ca, with `preferred` a check that a plain-text server skips.
        if (!verify) {
            r.fail(*v, "is only used with mode verify_ca or verify_identity; mode " + mode +
                           " does not check the server's certificate");
        }
        tls.ca = read_readable_file(r, *v);
    } else if (verify) {
        r.fail(map.self(),
               "mode " + mode + " needs ca: the CA certificate (PEM) that signed the server's");
    }
    auto cert = map.get("cert");
    auto key = map.get("key");
    if (cert && tls.mode == TlsMode::disabled) {
        r.fail(*cert, "a client certificate needs TLS; mode is disabled");
    }
    if (key && tls.mode == TlsMode::disabled)
        r.fail(*key, "a client key needs TLS; mode is disabled");
    if (cert && !key) r.fail(*cert, "needs key: the private key of the client certificate");
    if (key && !cert) r.fail(*key, "needs cert: the client certificate the key belongs to");
    if (cert) tls.cert = read_readable_file(r, *cert);
    if (key) tls.key = read_readable_file(r, *key);
    return tls;
}

}  // namespace rowpump
