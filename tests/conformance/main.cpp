// The conformance suite's main: Catch's, plus --sdk NAME to run the scenarios against one SDK
// (ctest runs each scenario once per SDK that way); without it, against every SDK in turn.

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "sdk_worker.hpp"

int main(int argc, char** argv) {
    Catch::Session session;
    std::string sdk;
    session.cli(session.cli() |
                Catch::clara::Opt(sdk, "name")["--sdk"]("only this SDK's conformance worker"));
    if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
    if (!sdk.empty() && !rowpump::testing::select_sdk(sdk)) {
        std::fprintf(stderr, "--sdk: no SDK named '%s'\n", sdk.c_str());
        return 2;
    }
    return session.run();
}
