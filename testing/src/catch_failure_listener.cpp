// Lets scratch directories outlive a failed test case (see TempDir): only test executables
// link this (target rowpump_testing_catch), so the rest of rowpump_testing needs no Catch.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

namespace {

struct FailureListener : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;

    void testCaseStarting(const Catch::TestCaseInfo&) override { set_current_test_failed(false); }
    bool assertionEnded(const Catch::AssertionStats& stats) override {
        if (!stats.assertionResult.isOk()) set_current_test_failed(true);
        return true;
    }
};

}  // namespace

CATCH_REGISTER_LISTENER(FailureListener)

}  // namespace rowpump::testing
