#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rowpump/dispatcher/config/config.hpp"

using namespace rowpump;

namespace {

const std::string kConfig =
    "mysql: { user: rowpump, password: \"${ROWPUMP_TEST_SECRET}\", database: app }\n"
    "queues:\n"
    "  q:\n"
    "    table: jobs\n"
    "    id: job_id\n"
    "    due: \"status = 0\"\n";

// A $CREDENTIALS_DIRECTORY as systemd's LoadCredential= makes it, removed afterwards.
class CredentialsDirectory {
public:
    CredentialsDirectory() {
        char pattern[] = "/tmp/rowpump-credentials-XXXXXX";
        path_ = ::mkdtemp(pattern);
        ::setenv("CREDENTIALS_DIRECTORY", path_.c_str(), 1);
    }
    ~CredentialsDirectory() {
        ::unsetenv("CREDENTIALS_DIRECTORY");
        std::filesystem::remove_all(path_);
    }
    void add(const std::string& name, const std::string& content) {
        std::ofstream(path_ / name, std::ios::binary) << content;
    }

private:
    std::filesystem::path path_;
};

}  // namespace

TEST_CASE("${VAR} comes from a systemd credential named VAR before the environment",
          "[config][credentials]") {
    ::setenv("ROWPUMP_TEST_SECRET", "from-environment", 1);
    {
        CredentialsDirectory credentials;
        credentials.add("ROWPUMP_TEST_SECRET", "from-credential\n");  // as `echo` writes it
        CHECK(parse_config(kConfig, "test.yaml").mysql.password == "from-credential");
    }
    CHECK(parse_config(kConfig, "test.yaml").mysql.password == "from-environment");
    ::unsetenv("ROWPUMP_TEST_SECRET");
}

TEST_CASE("without a credential of that name the environment still counts",
          "[config][credentials]") {
    CredentialsDirectory credentials;
    credentials.add("OTHER", "x");
    ::setenv("ROWPUMP_TEST_SECRET", "pa$word with spaces", 1);
    CHECK(parse_config(kConfig, "test.yaml").mysql.password == "pa$word with spaces");
    ::unsetenv("ROWPUMP_TEST_SECRET");
    CHECK_THROWS_WITH(parse_config(kConfig, "test.yaml"),
                      Catch::Contains("environment variable ROWPUMP_TEST_SECRET is not set"));
}
