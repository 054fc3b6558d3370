// Redis over TLS the way docs/operations.md ("Running in production") describes it: hiredis 0.14
// has no TLS, so a Redis that listens with TLS only is reached through a local socat tunnel that
// checks the server's certificate and name, one for the dispatcher and one for the worker.

#include <signal.h>

#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "rowpump/testing/tls_certificates.hpp"

using namespace rowpump::testing;

namespace {

// `socat` listening on a free loopback port, each connection a TLS connection to
// 127.0.0.1:`tls_port` whose certificate must be signed by `ca` and name 127.0.0.1.
struct Tunnel {
    int port = free_port();
    ChildProcess process;
    Tunnel(int tls_port, const std::string& ca, const std::string& log)
        : process({"socat", "TCP-LISTEN:" + std::to_string(port) + ",bind=127.0.0.1,reuseaddr,fork",
                   "OPENSSL:127.0.0.1:" + std::to_string(tls_port) + ",cafile=" + ca + ",verify=1"},
                  log_to(log)) {}
};

}  // namespace

TEST_CASE("a dispatcher and a worker reach a TLS-only Redis through socat tunnels", "[tls]") {
    TestBed bed;  // its Redis is not used
    const TlsCertificates certs(bed.dir.path());
    const int tls_port = free_port();
    ChildProcess redis(
        {find_server_program("redis-server"), "--port", "0", "--tls-port", std::to_string(tls_port),
         "--tls-cert-file", certs.server_cert, "--tls-key-file", certs.server_key,
         "--tls-ca-cert-file", certs.ca, "--tls-auth-clients", "no", "--save", "", "--appendonly",
         "no", "--dir", bed.dir.path()},
        log_to(bed.dir.file("redis-tls.log")));
    Tunnel for_dispatcher(tls_port, certs.ca, bed.dir.file("socat-dispatcher.log"));
    Tunnel for_worker(tls_port, certs.ca, bed.dir.file("socat-worker.log"));
    REQUIRE(eventually(10s, [&] {
        try {
            return connect_redis_port(for_dispatcher.port).command({"PING"}).string() == "PONG";
        } catch (const std::exception&) {
            return false;
        }
    }));

    MysqlClient db = bed.db();
    create_e2e_table(db);
    insert_e2e_rows(db, 1, 100);
    ConfigSpec spec = bed.config_spec({e2e_queue()});
    spec.redis_port = for_dispatcher.port;
    const std::string config = write_config(bed.dir.file("tunnel.yaml"), spec);
    migrate_apply(config);
    Dispatcher dispatcher(config, bed.dir.file("dispatcher.log"));
    TestWorkerSpec worker_spec;
    worker_spec.worker_id = "tunnel-worker";
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, for_worker.port, bed.dir, worker_spec);
    const bool done = eventually(
        60s,
        [&] { return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 0") == 0; },
        100ms);
    INFO(dispatcher.log_tail() << "\nworker:\n" << worker.output());
    REQUIRE(done);
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs <> 1") == 0);

    // A tunnel that does not trust the server's CA gets no command through: socat refuses
    // the certificate.
    const std::string other_log = bed.dir.file("socat-other-ca.log");
    Tunnel untrusting(tls_port, certs.other_ca, other_log);
    bool got_through = false;
    CHECK(eventually(10s, [&] {
        try {
            got_through =
                connect_redis_port(untrusting.port, 1s).command({"PING"}).string() == "PONG";
        } catch (const std::exception&) {
        }
        return got_through ||
               read_file(other_log).find("certificate verify failed") != std::string::npos;
    }));
    CHECK_FALSE(got_through);
    dispatcher.signal(SIGTERM);
    const auto status = dispatcher.wait(10s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}
