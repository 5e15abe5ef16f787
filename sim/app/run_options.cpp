#include "sim/app/run_options.h"

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "sim/app/run_config.h"
#include "sim/base/json_file.h"

namespace servesim::app {

using nlohmann::json;

std::string flag_of(const std::string& key) {
  std::string f = "--" + key;
  for (char& c : f) {
    if (c == '_') c = '-';
  }
  return f;
}

std::string csv_path_for(const std::string& json_path) {
  std::filesystem::path p(json_path);
  if (p.extension() == ".json") return p.replace_extension(".csv").string();
  return json_path + ".csv";
}

std::string result_date() {
  std::time_t t = 0;
  if (const char* env = std::getenv("SOURCE_DATE_EPOCH"); env && *env) t = std::atoll(env);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

namespace {

const char* type_name(FieldKind k) {
  switch (k) {
    case FieldKind::kInt:
    case FieldKind::kPositiveInt: return "INT";
    case FieldKind::kDouble: return "FLOAT";
    case FieldKind::kRate: return "RATE";
    case FieldKind::kStringList: return "LIST";
    default: return "TEXT";
  }
}

bool skipped(const RunOptions& o, const std::string& key) {
  return std::find(o.skip.begin(), o.skip.end(), key) != o.skip.end();
}

}  // namespace

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--config", o.config_file,
                 "JSON file of run settings (keys = flag names with underscores); flags override it");
  for (const ConfigField& f : config_fields()) {
    if (skipped(o, f.key)) continue;
    const std::string flag = flag_of(f.key);
    switch (f.kind) {
      case FieldKind::kBool:
        o.flags[f.key] = false;
        cmd.add_flag(flag, o.flags[f.key], f.help);
        break;
      case FieldKind::kStringList:
        cmd.add_option(flag, o.lists[f.key], f.help)->expected(1, -1)->type_name(type_name(f.kind));
        break;
      default:
        cmd.add_option(flag, o.scalar[f.key], f.help)->type_name(type_name(f.kind));
        break;
    }
  }
  if (!skipped(o, "enable_prefix_caching")) {
    cmd.add_flag("--no-enable-prefix-caching", o.no_prefix_caching, "turn prefix caching off");
  }
  if (!skipped(o, "async_scheduling")) {
    cmd.add_flag("--no-async-scheduling", o.no_async_scheduling, "turn async scheduling off");
  }
}

sim::SimulationConfig build_config(const CLI::App& cmd, const RunOptions& o) {
  sim::SimulationConfig config;
  if (!o.config_file.empty()) {
    apply_config_json(config, read_json_file(o.config_file), o.config_file);
  }
  json from_flags = json::object();
  for (const ConfigField& f : config_fields()) {
    if (skipped(o, f.key)) continue;
    const std::string flag = flag_of(f.key);
    if (cmd.count(flag) == 0) continue;
    switch (f.kind) {
      case FieldKind::kBool:
        from_flags[f.key] = true;
        break;
      case FieldKind::kStringList: {
        json items = json::array();
        for (const std::string& s : o.lists.at(f.key)) {
          for (const auto& part : parse_flag_value(f, s)) items.push_back(part);
        }
        from_flags[f.key] = items;
        break;
      }
      default:
        from_flags[f.key] = parse_flag_value(f, o.scalar.at(f.key));
        break;
    }
  }
  if (o.no_prefix_caching) from_flags["enable_prefix_caching"] = false;
  if (o.no_async_scheduling) from_flags["async_scheduling"] = false;
  apply_config_json(config, from_flags, "command line");
  return config;
}

}  // namespace servesim::app
