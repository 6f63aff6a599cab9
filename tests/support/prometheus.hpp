// Reads a Prometheus metrics file with the reference parser (python3-prometheus-client's
// text_string_to_metric_families), so tests check the format with another implementation than
// the one that wrote it. Header-only.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_harness.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

// Debian's python3 (python3-prometheus-client is installed for it by scripts/deps), not one a
// version manager put first on PATH.
inline constexpr const char* kSystemPython = "/usr/bin/python3";

struct ParsedMetrics {
    // "name{label=value,...}" (labels sorted by name, values unescaped) -> sample value.
    std::map<std::string, double> samples;
    // family name -> type ("gauge", ...), and -> its HELP text.
    std::map<std::string, std::string> types;
    std::map<std::string, std::string> help;
};

// Returns the samples of the metrics file `file`, parsed by prometheus_client; throws
// std::runtime_error (with the parser's message) iff it rejects the file.
inline ParsedMetrics parse_metrics_file(const std::filesystem::path& file,
                                        const std::filesystem::path& work_dir) {
    static constexpr const char* kScript = R"(
import json, sys
from prometheus_client.parser import text_string_to_metric_families
families = []
with open(sys.argv[1], encoding="utf-8") as stream:
    for family in text_string_to_metric_families(stream.read()):
        families.append({"name": family.name, "type": family.type,
                         "help": family.documentation,
                         "samples": [{"name": s.name, "labels": s.labels, "value": s.value}
                                     for s in family.samples]})
with open(sys.argv[2], "w", encoding="utf-8") as stream:
    json.dump(families, stream)
)";
    const std::filesystem::path out = work_dir / "parsed-metrics.json";
    run_checked({kSystemPython, "-c", kScript, file.string(), out.string()}, work_dir / "logs");
    ParsedMetrics parsed;
    for (const nlohmann::json& family : nlohmann::json::parse(read_file(out))) {
        parsed.types[family["name"]] = family["type"];
        parsed.help[family["name"]] = family["help"];
        for (const nlohmann::json& sample : family["samples"]) {
            std::string key = sample["name"].get<std::string>() + "{";
            std::map<std::string, std::string> labels = sample["labels"];
            bool first = true;
            for (const auto& [name, value] : labels) {
                key += (first ? "" : ",") + name + "=" + value;
                first = false;
            }
            parsed.samples[key + "}"] = sample["value"].get<double>();
        }
    }
    return parsed;
}

}  // namespace rpmirror::test
