// TLS to MySQL (`mysql.tls`) against a MariaDB that offers TLS with certificates made in the
// test: accounts created REQUIRE SSL and REQUIRE X509 log in only with the settings they
// need, a wrong CA is refused, and a server without TLS is refused when TLS is required.

#include <signal.h>

#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "rowpump/testing/tls_certificates.hpp"

using namespace rowpump::testing;

namespace {

constexpr const char* kSslUser = "rp_ssl";
constexpr const char* kX509User = "rp_x509";
constexpr const char* kPassword = "tls-test-pw";

// A MariaDB offering TLS (with a certificate for 127.0.0.1, or with `wrong_name` one for
// another name), a Redis, a database with the e2e table, and two accounts on it: kSslUser
// (REQUIRE SSL) and kX509User (REQUIRE X509).
struct TlsBed {
    TempDir dir{"rowpump-tls-"};
    TlsCertificates certs{dir.path()};
    MariaDb mysql;
    RedisServer redis;
    std::string database = mysql.create_database();

    explicit TlsBed(bool wrong_name = false)
        : mysql(ServerClock::real, certs.mariadb_args(wrong_name)) {
        MysqlClient root = mysql.connect_root();
        for (const auto& [user, require] :
             {std::pair{kSslUser, "SSL"}, std::pair{kX509User, "X509"}}) {
            const std::string account = std::string("'") + user + "'@'127.0.0.1'";
            root.exec("CREATE USER " + account + " IDENTIFIED BY " + sql_quote(kPassword) +
                      " REQUIRE " + require);
            root.exec("GRANT ALL PRIVILEGES ON `" + database + "`.* TO " + account);
        }
        MysqlClient db = mysql.connect(database);
        create_e2e_table(db);
        insert_e2e_rows(db, 1, 100);
    }

    // A config logging in as `user` with these `mysql.tls` lines ("tls: {...}").
    std::string config(const std::string& user, const std::string& tls_line,
                       const std::string& name) const {
        ConfigSpec spec = config_for(mysql, redis, database, {e2e_queue()});
        spec.user = user;
        spec.password = kPassword;
        if (!tls_line.empty()) spec.mysql_lines.push_back(tls_line);
        return write_config(dir.file(name), spec);
    }
};

std::string tls_line(const std::string& mode, const std::string& ca = "",
                     const TlsCertificates* client = nullptr) {
    std::string line = "tls: {mode: " + mode;
    if (!ca.empty()) line += ", ca: " + yaml_quote(ca);
    if (client) {
        line += ", cert: " + yaml_quote(client->client_cert) +
                ", key: " + yaml_quote(client->client_key);
    }
    return line + "}";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("mysql.tls required: a REQUIRE SSL account dispatches and completes rows over TLS",
          "[tls]") {
    TlsBed bed;
    const std::string config = bed.config(kSslUser, tls_line("required"), "required.yaml");
    migrate_apply(config);

    // `rowpump check` reports the session's cipher from the dispatcher's own connection code.
    const RunResult check = rowpump_cli({"check", "-c", config});
    INFO(check.describe());
    CHECK(check.status.success());
    CHECK(contains(check.out, "); TLS TLS_"));
    CHECK(contains(check.out, "(mysql.tls.mode: required)"));

    Dispatcher dispatcher(config, bed.dir.file("dispatcher.log"));
    TestWorkerSpec worker_spec;
    worker_spec.worker_id = "tls-worker";
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, bed.redis.port(), bed.dir, worker_spec);
    MysqlClient db = bed.mysql.connect(bed.database);
    const bool done = eventually(
        60s,
        [&] { return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 0") == 0; },
        100ms);
    INFO(dispatcher.log_tail());
    REQUIRE(done);
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs <> 1") == 0);
    CHECK(db.scalar(std::string("SELECT COUNT(*) FROM user_block_status WHERE ") + kClaimedSql) ==
          0);
    dispatcher.signal(SIGTERM);
    const auto status = dispatcher.wait(10s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}

TEST_CASE("mysql.tls disabled: a REQUIRE SSL account's login is refused at start, naming TLS",
          "[tls]") {
    TlsBed bed;
    const std::string config = bed.config(kSslUser, tls_line("disabled"), "disabled.yaml");
    Dispatcher dispatcher(config, bed.dir.file("dispatcher.log"));
    const auto status = dispatcher.wait(15s);
    const std::string log = dispatcher.log();
    INFO(log);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 3");
    CHECK(contains(log, "refused the login of user 'rp_ssl'"));
    CHECK(contains(log, "MySQL error 1045"));
    CHECK(contains(log,
                   "mysql.tls.mode: disabled, no TLS; an account created REQUIRE SSL "
                   "refuses a login without TLS"));
}

TEST_CASE("without mysql.tls the connection uses TLS when the server offers it", "[tls]") {
    TlsBed bed;
    const RunResult check = rowpump_cli({"check", "-c", bed.config(kSslUser, "", "default.yaml")});
    INFO(check.describe());
    CHECK(contains(check.out, "); TLS TLS_"));
    CHECK(contains(check.out, "(mysql.tls.mode: preferred)"));
}

TEST_CASE("mysql.tls verify modes: the right CA connects, a CA that did not sign is refused",
          "[tls]") {
    TlsBed bed;
    for (const std::string mode : {"verify_ca", "verify_identity"}) {
        INFO(mode);
        const RunResult good =
            rowpump_cli({"check", "-c",
                         bed.config(kSslUser, tls_line(mode, bed.certs.ca), mode + "-good.yaml")});
        INFO(good.describe());
        CHECK(contains(good.out, "); TLS TLS_"));
        CHECK(contains(good.out, "(mysql.tls.mode: " + mode + ")"));

        const RunResult wrong = rowpump_cli(
            {"check", "-c",
             bed.config(kSslUser, tls_line(mode, bed.certs.other_ca), mode + "-wrong.yaml")});
        INFO(wrong.describe());
        CHECK_FALSE(wrong.status.success());
        CHECK_FALSE(contains(wrong.out, "); TLS"));
        CHECK(contains(wrong.err, "MySQL error 2026"));
    }
}

TEST_CASE("mysql.tls verify_identity refuses a certificate for another name, verify_ca takes it",
          "[tls]") {
    TlsBed bed(true);
    const RunResult ca_only = rowpump_cli(
        {"check", "-c", bed.config(kSslUser, tls_line("verify_ca", bed.certs.ca), "ca.yaml")});
    INFO(ca_only.describe());
    CHECK(contains(ca_only.out, "); TLS TLS_"));

    const RunResult identity = rowpump_cli(
        {"check", "-c",
         bed.config(kSslUser, tls_line("verify_identity", bed.certs.ca), "identity.yaml")});
    INFO(identity.describe());
    CHECK_FALSE(identity.status.success());
    CHECK_FALSE(contains(identity.out, "); TLS"));
    CHECK(contains(identity.err, "MySQL error 2026"));
}

TEST_CASE("mysql.tls: a REQUIRE X509 account needs the client certificate", "[tls]") {
    TlsBed bed;
    const RunResult with_cert =
        rowpump_cli({"check", "-c",
                     bed.config(kX509User, tls_line("verify_identity", bed.certs.ca, &bed.certs),
                                "x509.yaml")});
    INFO(with_cert.describe());
    CHECK(contains(with_cert.out, "); TLS TLS_"));

    const RunResult without_cert =
        rowpump_cli({"check", "-c", bed.config(kX509User, tls_line("required"), "no-cert.yaml")});
    INFO(without_cert.describe());
    CHECK_FALSE(without_cert.status.success());
    CHECK(contains(without_cert.err, "MySQL error 1045"));
    CHECK(contains(without_cert.err,
                   "no client certificate; an account created REQUIRE X509 "
                   "refuses a login without one (mysql.tls.cert and "
                   "mysql.tls.key)"));
}

TEST_CASE("mysql.tls required or verify_ca refuses a server that does not start TLS", "[tls]") {
    TestBed bed;  // its MariaDB offers no TLS
    const TlsCertificates certs(bed.dir.path());
    for (const std::string& line : {tls_line("required"), tls_line("verify_ca", certs.ca),
                                    tls_line("verify_identity", certs.ca)}) {
        INFO(line);
        ConfigSpec spec = bed.config_spec();
        spec.mysql_lines = {line};
        const RunResult check =
            rowpump_cli({"check", "-c", write_config(bed.dir.file("plain.yaml"), spec)});
        INFO(check.describe());
        CHECK_FALSE(check.status.success());
        CHECK(contains(check.err, "MySQL error 2026"));
    }
    // preferred falls back to plain text, and says so.
    ConfigSpec spec = bed.config_spec();
    spec.mysql_lines = {tls_line("preferred")};
    const RunResult check =
        rowpump_cli({"check", "-c", write_config(bed.dir.file("plain.yaml"), spec)});
    CHECK(contains(check.out, "); not encrypted (mysql.tls.mode: preferred)"));
}
