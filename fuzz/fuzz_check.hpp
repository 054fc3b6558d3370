#pragma once

// What a fuzz target does when a property it checks does not hold: abort, so that libFuzzer
// saves the input as a crash. (assert() would vanish in a release build.)

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                                  \
    do {                                                                                       \
        if (!(condition)) {                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
            std::abort();                                                                      \
        }                                                                                      \
    } while (false)
