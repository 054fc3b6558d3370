// `mysql.tls`: the modes, and what load refuses (files it cannot read, a key without its
// certificate, a verify mode without a CA, TLS files with TLS off).

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "config_text.hpp"
#include "rowpump/dispatcher/config/config.hpp"

using namespace rowpump;

namespace {

// Three readable files, as ca.pem, client.pem and client.key (load reads no content).
struct TlsFiles {
    std::string dir;
    TlsFiles() {
        char pattern[] = "/tmp/rowpump-tls-config-XXXXXX";
        dir = ::mkdtemp(pattern);
        for (const char* name : {"ca.pem", "client.pem", "client.key"})
            std::ofstream(dir + "/" + name) << "-----BEGIN-----\n";
    }
    ~TlsFiles() {
        for (const char* name : {"ca.pem", "client.pem", "client.key"})
            std::remove((dir + "/" + name).c_str());
        ::rmdir(dir.c_str());
    }
    std::string path(const std::string& name) const { return dir + "/" + name; }
};

// The config of config_text.hpp with `tls` as mysql.tls (on line 1).
std::string with_tls(const std::string& tls) {
    return "mysql: { user: rowpump, database: app, tls: " + tls + " }\nqueues:\n  q:\n" + kBody;
}

std::string error_of(const std::string& text) {
    try {
        parse_config(text, "test.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    FAIL("loaded without an error:\n" << text);
    return "";
}

}  // namespace

TEST_CASE("mysql.tls is preferred without a tls key, with no files", "[config][tls]") {
    const auto config = parsed(kHead + kBody);
    CHECK(config.mysql.tls.mode == TlsMode::preferred);
    CHECK(config.mysql.tls.ca.empty());
    CHECK(config.mysql.tls.cert.empty());
    CHECK(config.mysql.tls.key.empty());
}

TEST_CASE("mysql.tls takes each mode with the files it needs", "[config][tls]") {
    const TlsFiles files;
    const std::string ca = "ca: " + files.path("ca.pem");
    const std::string client =
        "cert: " + files.path("client.pem") + ", key: " + files.path("client.key");
    CHECK(parsed(with_tls("{mode: disabled}")).mysql.tls.mode == TlsMode::disabled);
    CHECK(parsed(with_tls("{mode: preferred}")).mysql.tls.mode == TlsMode::preferred);
    CHECK(parsed(with_tls("{mode: required}")).mysql.tls.mode == TlsMode::required);
    const auto verify_ca = parsed(with_tls("{mode: verify_ca, " + ca + "}")).mysql.tls;
    CHECK(verify_ca.mode == TlsMode::verify_ca);
    CHECK(verify_ca.ca == files.path("ca.pem"));
    const auto identity =
        parsed(with_tls("{mode: verify_identity, " + ca + ", " + client + "}")).mysql.tls;
    CHECK(identity.mode == TlsMode::verify_identity);
    CHECK(identity.cert == files.path("client.pem"));
    CHECK(identity.key == files.path("client.key"));
    const auto required = parsed(with_tls("{mode: required, " + client + "}")).mysql.tls;
    CHECK(required.cert == files.path("client.pem"));
    CHECK(tls_mode_name(TlsMode::verify_identity) == std::string("verify_identity"));
}

TEST_CASE("mysql.tls refuses an unknown mode, a missing mode and unknown keys", "[config][tls]") {
    CHECK(error_of(with_tls("{mode: require}")) ==
          "test.yaml:1: mysql.tls.mode: must be one of disabled, preferred, required, verify_ca, "
          "verify_identity; got 'require'");
    CHECK(error_of(with_tls("{}")) == "test.yaml:1: mysql.tls.mode: is required");
    CHECK(error_of(with_tls("{mode: required, sslca: x}")).find("mysql.tls.sslca: unknown key") !=
          std::string::npos);
}

TEST_CASE("mysql.tls: verify modes need a CA, and only they take one", "[config][tls]") {
    const TlsFiles files;
    CHECK(error_of(with_tls("{mode: verify_ca}")) ==
          "test.yaml:1: mysql.tls: mode verify_ca needs ca: the CA certificate (PEM) that signed "
          "the server's");
    CHECK(error_of(with_tls("{mode: verify_identity}")).find("mode verify_identity needs ca") !=
          std::string::npos);
    for (const char* mode : {"disabled", "preferred", "required"}) {
        INFO(mode);
        CHECK(error_of(with_tls(std::string("{mode: ") + mode + ", ca: " + files.path("ca.pem") +
                                "}")) ==
              std::string("test.yaml:1: mysql.tls.ca: is only used with mode verify_ca or "
                          "verify_identity; mode ") +
                  mode + " does not check the server's certificate");
    }
}

TEST_CASE("mysql.tls: a key needs its certificate and the other way round", "[config][tls]") {
    const TlsFiles files;
    CHECK(error_of(with_tls("{mode: required, key: " + files.path("client.key") + "}")) ==
          "test.yaml:1: mysql.tls.key: needs cert: the client certificate the key belongs to");
    CHECK(error_of(with_tls("{mode: required, cert: " + files.path("client.pem") + "}")) ==
          "test.yaml:1: mysql.tls.cert: needs key: the private key of the client certificate");
    CHECK(error_of(with_tls("{mode: disabled, cert: " + files.path("client.pem") +
                            ", key: " + files.path("client.key") + "}")) ==
          "test.yaml:1: mysql.tls.cert: a client certificate needs TLS; mode is disabled");
}

TEST_CASE("mysql.tls refuses files it cannot read, naming the file and why", "[config][tls]") {
    const TlsFiles files;
    CHECK(error_of(with_tls("{mode: verify_ca, ca: /nonexistent/ca.pem}")) ==
          "test.yaml:1: mysql.tls.ca: cannot read '/nonexistent/ca.pem': No such file or "
          "directory");
    CHECK(error_of(with_tls("{mode: required, cert: " + files.path("client.pem") +
                            ", key: " + files.dir + "/missing.key}")) ==
          "test.yaml:1: mysql.tls.key: cannot read '" + files.dir +
              "/missing.key': No such file or directory");
    CHECK(
        error_of(with_tls("{mode: verify_ca, ca: \"\"}")).find("mysql.tls.ca: must not be empty") !=
        std::string::npos);
}

TEST_CASE("a shard's mysql.tls replaces the top-level one, and splits servers by TLS",
          "[config][tls][shards]") {
    const TlsFiles files;
    const auto config = parsed(
        "mysql: { user: rowpump, database: app, tls: {mode: required} }\nqueues:\n  q:\n" + kBody +
        "    shards:\n"
        "      - name: a\n"
        "      - name: b\n"
        "        mysql: { database: app_b, tls: {mode: verify_ca, ca: " +
        files.path("ca.pem") + "} }\n");
    const auto& shards = config.queues.at(0).shards;
    CHECK(shards.at(0).mysql.tls.mode == TlsMode::required);
    CHECK(shards.at(1).mysql.tls.mode == TlsMode::verify_ca);
    CHECK(shards.at(1).mysql.tls.ca == files.path("ca.pem"));
    MysqlConfig other_tls = config.mysql;
    other_tls.tls.mode = TlsMode::disabled;
    CHECK_FALSE(same_server(config.mysql, other_tls));
    CHECK(same_server(config.mysql, config.mysql));
}
