#pragma once

// docs/operations.md's "Least privilege" lines as tests use them, so that the lines and the tests
// cannot drift: the one line starting with a prefix, and an ACL line as the words of
// `ACL SETUSER`.

#include <string>
#include <vector>

namespace rowpump::testing {

// The one line of the file at `path` that starts with `prefix` and contains `part`; throws
// std::runtime_error when there is not exactly one.
std::string readme_line(const std::string& path, const std::string& prefix,
                        const std::string& part = "");

// The words after "user <name>" of an ACL file line, a selector "(...)" as one word.
std::vector<std::string> acl_words(const std::string& line);

// `ACL SETUSER <name> <words...>`, with every `>password` word replaced by `>` + `password`.
std::vector<std::string> acl_setuser(const std::string& name, const std::vector<std::string>& words,
                                     const std::string& password);

}  // namespace rowpump::testing
