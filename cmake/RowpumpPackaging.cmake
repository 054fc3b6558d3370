# Debian packages with CPack (`cpack -G DEB` in the build directory), one per install component:
#   rowpump                (component dispatcher) the `rowpump` binary, its systemd unit, the
#                          example configs and the deploy notes
#   librowpump-worker-dev  (component worker) the worker SDK: the shared library (SONAME
#                          librowpump-worker.so.<major>), headers, CMake package files and
#                          the pkg-config file rowpump-worker.pc
#   python3-rowpump        (component python) the Python worker SDK (worker-sdk/python), the
#                          package `rowpump` in /usr/lib/python3/dist-packages, on Debian's
#                          python3-redis
# The version of both, of `rowpump --version` and of the library is project(VERSION) in the
# top-level CMakeLists.txt, and nowhere else. Dependencies come from dpkg-shlibdeps.

set(ROWPUMP_PACKAGE_PREFIX /usr)

# --- component dispatcher -------------------------------------------------------------
# The unit as shipped in deploy/, with the binary where the package puts it.
file(READ ${PROJECT_SOURCE_DIR}/deploy/rowpump.service ROWPUMP_UNIT)
string(REPLACE "/usr/local/bin/rowpump" "${ROWPUMP_PACKAGE_PREFIX}/${CMAKE_INSTALL_BINDIR}/rowpump"
       ROWPUMP_UNIT "${ROWPUMP_UNIT}")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/package/rowpump.service CONTENT "${ROWPUMP_UNIT}")
install(FILES ${PROJECT_BINARY_DIR}/package/rowpump.service
        DESTINATION lib/systemd/system COMPONENT dispatcher)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
              ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/docs/upgrading.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dispatcher)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/deploy COMPONENT dispatcher)
file(GLOB ROWPUMP_EXAMPLE_CONFIGS ${PROJECT_SOURCE_DIR}/config/*.yaml)
install(FILES ${ROWPUMP_EXAMPLE_CONFIGS} ${PROJECT_SOURCE_DIR}/deploy/demo.yaml
              ${PROJECT_SOURCE_DIR}/deploy/seed.sql
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT dispatcher)

# --- component worker: the licence and the pkg-config file -----------------------------
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/librowpump-worker-dev COMPONENT worker)
file(RELATIVE_PATH ROWPUMP_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" ROWPUMP_PC_TO_PREFIX "${ROWPUMP_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/worker-sdk/cmake/rowpump-worker.pc.in
               ${PROJECT_BINARY_DIR}/package/rowpump-worker.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/rowpump-worker.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT worker)

# --- component python: the Python worker SDK ------------------------------------------
# The package as pip would install it: its modules, Lua scripts and py.typed, and metadata
# that `pip list` and importlib.metadata read.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/worker-sdk/python/rowpump
        DESTINATION lib/python3/dist-packages COMPONENT python
        FILES_MATCHING PATTERN "*.py" PATTERN "*.lua" PATTERN "py.typed"
        PATTERN "__pycache__" EXCLUDE)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/package/python/METADATA CONTENT
"Metadata-Version: 2.1
Name: rowpump
Version: ${PROJECT_VERSION}
Summary: rowpump worker SDK: take tasks from a rowpump queue in Redis, run a handler, report the outcome
Requires-Python: >=3.9
Requires-Dist: redis>=4.3
")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/package/python/INSTALLER CONTENT "dpkg\n")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/package/python/top_level.txt CONTENT "rowpump\n")
install(FILES ${PROJECT_BINARY_DIR}/package/python/METADATA
              ${PROJECT_BINARY_DIR}/package/python/INSTALLER
              ${PROJECT_BINARY_DIR}/package/python/top_level.txt
        DESTINATION lib/python3/dist-packages/rowpump-${PROJECT_VERSION}.dist-info
        COMPONENT python)

# --- CPack ----------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rowpump)
set(CPACK_PACKAGE_VENDOR rowpump)
set(CPACK_PACKAGE_CONTACT "rowpump developers <rowpump@example.org>")
set(CPACK_PACKAGING_INSTALL_PREFIX ${ROWPUMP_PACKAGE_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL dispatcher worker python)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(CPACK_DEBIAN_DISPATCHER_PACKAGE_NAME rowpump)
set(CPACK_DEBIAN_DISPATCHER_PACKAGE_SECTION database)
# The first line of each description is its synopsis.
set(CPACK_DEBIAN_DISPATCHER_DESCRIPTION "dispatcher that feeds due MySQL rows to Redis lists
Claims due rows of a MySQL/MariaDB table in batches and pushes their ids to a Redis list,
where workers written with the rowpump worker SDK take them. Ships a hardened systemd
unit (Type=notify, watchdog); the service is not enabled until configured.")
set(CPACK_DEBIAN_DISPATCHER_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/deb/postinst ${PROJECT_SOURCE_DIR}/deploy/deb/prerm
    ${PROJECT_SOURCE_DIR}/deploy/deb/postrm)

set(CPACK_DEBIAN_WORKER_PACKAGE_NAME librowpump-worker-dev)
set(CPACK_DEBIAN_WORKER_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_WORKER_DESCRIPTION "rowpump worker SDK for C++17
Takes tasks from a rowpump queue in Redis, runs a handler and reports the outcome.
Shared library, headers, CMake package (find_package(rowpump)) and pkg-config file
(rowpump-worker).")
set(CPACK_DEBIAN_WORKER_PACKAGE_GENERATE_SHLIBS ON)

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-rowpump)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.9), python3-redis (>= 4.3)")
set(CPACK_DEBIAN_PYTHON_DESCRIPTION "rowpump worker SDK for Python 3
Takes tasks from a rowpump queue in Redis, runs a handler (a function, or a coroutine
with asyncio) and reports the outcome. Import name: rowpump.")

include(CPack)
