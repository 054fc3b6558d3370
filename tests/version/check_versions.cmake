# One version everywhere: project(VERSION) in CMakeLists.txt (passed as VERSION) is what
# `rowpump --version` prints, what the worker SDK's shared library and pkg-config file carry,
# what CPack stamps on both .deb packages, and the newest released version in CHANGELOG.md.
# Run by ctest (tests/CMakeLists.txt) as
#   cmake -DVERSION=... -DROWPUMP=... -DSDK_LIBRARY=... -DBUILD_DIR=... -DSOURCE_DIR=... -P this
set(problems "")
macro(expect what actual)
  if(NOT "${actual}" STREQUAL "${VERSION}")
    string(APPEND problems "\n  ${what}: '${actual}', not '${VERSION}'")
  endif()
endmacro()

execute_process(COMMAND ${ROWPUMP} --version OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX REPLACE "^rowpump " "" out "${out}")
expect("rowpump --version" "${out}")

get_filename_component(library "${SDK_LIBRARY}" NAME)
string(REGEX REPLACE "^librowpump-worker\\.so\\." "" library "${library}")
expect("the SDK's shared library (librowpump-worker.so.X.Y.Z)" "${library}")

# The pkg-config file and the packages exist when the build sets them up (ROWPUMP_PACKAGE).
if(EXISTS ${BUILD_DIR}/CPackConfig.cmake)
  file(STRINGS ${BUILD_DIR}/package/rowpump-worker.pc pc REGEX "^Version: ")
  string(REGEX REPLACE "^Version: " "" pc "${pc}")
  expect("rowpump-worker.pc" "${pc}")

  # Both packages take CPack's version: no component sets its own.
  file(STRINGS ${BUILD_DIR}/CPackConfig.cmake cpack REGEX "^set\\(CPACK_PACKAGE_VERSION \"")
  string(REGEX REPLACE "^set\\(CPACK_PACKAGE_VERSION \"([^\"]*)\"\\)$" "\\1" cpack "${cpack}")
  expect("the .deb packages (CPACK_PACKAGE_VERSION)" "${cpack}")
  file(STRINGS ${BUILD_DIR}/CPackConfig.cmake own_version REGEX "CPACK_DEBIAN_.*PACKAGE_VERSION")
  if(own_version)
    string(APPEND problems "\n  a package sets a version of its own: ${own_version}")
  endif()
else()
  message(STATUS "no packages set up in this build (ROWPUMP_PACKAGE off): not compared")
endif()

# Keep a Changelog: "## [Unreleased]" first, then "## [X.Y.Z] - YYYY-MM-DD", newest first.
file(STRINGS ${SOURCE_DIR}/CHANGELOG.md released REGEX "^## \\[[0-9]+\\.[0-9]+\\.[0-9]+\\] - ")
list(GET released 0 newest)
string(REGEX REPLACE "^## \\[([0-9.]+)\\].*" "\\1" newest "${newest}")
expect("the newest release in CHANGELOG.md" "${newest}")

if(problems)
  message(FATAL_ERROR "versions disagree with project(VERSION ${VERSION}):${problems}\n"
                      "A release moves CHANGELOG.md's Unreleased entries under a new version "
                      "and sets that version in project() in CMakeLists.txt.")
endif()
message(STATUS "version ${VERSION} everywhere")
