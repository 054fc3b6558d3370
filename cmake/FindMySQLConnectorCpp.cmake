# mysql-connector-c++ 1.1 ships neither a CMake package nor a pkg-config file.
# Provides the imported target MySQLConnectorCpp::MySQLConnectorCpp.
find_path(MySQLConnectorCpp_INCLUDE_DIR NAMES mysql_driver.h cppconn/driver.h)
find_library(MySQLConnectorCpp_LIBRARY NAMES mysqlcppconn)
find_package(Boost 1.60 QUIET)  # the connector's headers include Boost

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MySQLConnectorCpp
  REQUIRED_VARS MySQLConnectorCpp_LIBRARY MySQLConnectorCpp_INCLUDE_DIR Boost_INCLUDE_DIRS)

if(MySQLConnectorCpp_FOUND AND NOT TARGET MySQLConnectorCpp::MySQLConnectorCpp)
  add_library(MySQLConnectorCpp::MySQLConnectorCpp UNKNOWN IMPORTED)
  set_target_properties(MySQLConnectorCpp::MySQLConnectorCpp PROPERTIES
    IMPORTED_LOCATION "${MySQLConnectorCpp_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${MySQLConnectorCpp_INCLUDE_DIR};${Boost_INCLUDE_DIRS}")
endif()
