#include "observe/key_view.hpp"

#include <cstdio>
#include <string>

#include "rowpump/common/log_text.hpp"

namespace rowpump {

namespace {

using nlohmann::json;

json figure_json(const protocol::KeyFigure& f) {
    return {{"pushed", f.pushed},
            {"recent", f.recent},
            {"passed_over", f.passed_over},
            {"in_flight", f.in_flight ? json(*f.in_flight) : json(nullptr)}};
}

void print_figure(std::ostream& out, const std::string& name, const protocol::KeyFigure& f) {
    const std::string in_flight = f.in_flight ? std::to_string(*f.in_flight) : "-";
    char numbers[160];
    std::snprintf(numbers, sizeof numbers,
                  "pushed %9lld recent %7lld in flight %6s passed over %6lld",
                  static_cast<long long>(f.pushed), static_cast<long long>(f.recent),
                  in_flight.c_str(), static_cast<long long>(f.passed_over));
    out << "  key " << name << "  " << numbers << "\n";
}

}  // namespace

json key_gauges_json(const std::optional<protocol::KeyGauges>& gauges) {
    if (!gauges) return nullptr;
    json top = json::array();
    for (const auto& f : gauges->top) {
        auto o = figure_json(f);
        o["key"] = f.key ? json(*f.key) : json(nullptr);
        top.push_back(std::move(o));
    }
    return {{"top", top},
            {"other", figure_json(gauges->other)},
            {"counted_by", gauges->leader},
            {"at_ms", gauges->at_ms}};
}

json key_limits_json(const protocol::KeyLimits& limits) {
    json shown = json::array();
    for (const auto& l : limits.shown) shown.push_back({{"key", l.key}, {"limits", l.limits}});
    return {{"shown", shown}, {"total", limits.total}};
}

void print_key_gauges(std::ostream& out, const std::optional<protocol::KeyGauges>& gauges) {
    if (!gauges) return;
    for (const auto& f : gauges->top)
        print_figure(out, f.key ? "'" + log_text(*f.key, protocol::kKeyBytes) + "'" : "NULL", f);
    print_figure(out, "(other keys)", gauges->other);
}

void print_key_limits(std::ostream& out, const protocol::KeyLimits& limits) {
    for (const auto& l : limits.shown) {
        out << "  limit '" << log_text(l.key, protocol::kKeyBytes) << "' "
            << log_text(l.limits, protocol::kLimitsBytes) << "\n";
    }
    const auto hidden = limits.total - static_cast<std::int64_t>(limits.shown.size());
    if (hidden > 0) out << "  ... and " << hidden << " more per-key limits\n";
}

}  // namespace rowpump
