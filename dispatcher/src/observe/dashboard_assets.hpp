#pragma once

// The dashboard's files (dispatcher/web/), compiled into the executable by
// cmake/EmbedAssets.cmake: plain HTML, JavaScript and CSS, no build step.

#include <string_view>
#include <vector>

namespace rowpump {

struct Asset {
    const char* path;  // "/index.html"
    const char* content_type;
    std::string_view body;
};

const std::vector<Asset>& dashboard_assets();

}  // namespace rowpump
