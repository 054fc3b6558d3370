#include "rowpump/testing/readme_acl.hpp"

#include <sstream>
#include <stdexcept>

#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

std::string readme_line(const std::string& path, const std::string& prefix,
                        const std::string& part) {
    std::istringstream readme(read_file(path));
    std::vector<std::string> found;
    for (std::string line; std::getline(readme, line);) {
        if (line.rfind(prefix, 0) == 0 && line.find(part) != std::string::npos)
            found.push_back(line);
    }
    if (found.size() != 1) {
        throw std::runtime_error(path + " has " + std::to_string(found.size()) +
                                 " lines starting with '" + prefix + "' with '" + part +
                                 "', expected one");
    }
    return found[0];
}

std::vector<std::string> acl_words(const std::string& line) {
    std::istringstream in(line);
    std::string word;
    in >> word >> word;  // "user <name>"
    std::vector<std::string> words;
    bool in_selector = false;
    while (in >> word) {
        if (in_selector) {
            words.back() += " " + word;
        } else {
            words.push_back(word);
        }
        if (word.front() == '(') in_selector = true;
        if (word.back() == ')') in_selector = false;
    }
    return words;
}

std::vector<std::string> acl_setuser(const std::string& name, const std::vector<std::string>& words,
                                     const std::string& password) {
    std::vector<std::string> command{"ACL", "SETUSER", name};
    for (const auto& word : words) command.push_back(word[0] == '>' ? ">" + password : word);
    return command;
}

}  // namespace rowpump::testing
