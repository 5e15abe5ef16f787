#include "sim/app/run_options.h"

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "sim/app/run_config.h"
#include "sim/app/vllm_flags.h"
#include "sim/base/json_file.h"
#include "sim/base/output_file.h"

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

std::vector<std::string> run_input_paths(const RunOptions& o, const sim::SimulationConfig& c) {
  std::vector<std::string> in;
  if (!o.config_file.empty()) in.push_back(o.config_file);
  for (const std::string* s : {&c.model, &c.gpu, &c.calibration, &c.inter_node_link}) {
    if (looks_like_path(*s)) in.push_back(*s);
  }
  // A snapshot folder given as --model is read through its config.json (models/model_name.h).
  std::error_code ec;
  if (std::filesystem::is_directory(c.model, ec)) {
    in.push_back((std::filesystem::path(c.model) / "config.json").string());
  }
  for (const std::string* s : {&c.workload.dataset_path, &c.workload.trace}) {
    if (!s->empty()) in.push_back(*s);  // always files
  }
  return in;
}

void check_outputs(const std::string& flag, const std::string& path, bool with_csv,
                   const std::vector<std::string>& inputs) {
  if (path.empty()) return;
  check_output_path(path, flag, inputs);
  if (with_csv) check_output_path(csv_path_for(path), flag + " (its CSV)", inputs);
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
        // A repeated flag takes its last value, as vLLM's argparse does.
        cmd.add_option(flag, o.scalar[f.key], f.help)
            ->type_name(type_name(f.kind))
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
        break;
    }
  }
  if (!skipped(o, "enable_prefix_caching")) {
    cmd.add_flag("--no-enable-prefix-caching", o.no_prefix_caching, "turn prefix caching off");
  }
  if (!skipped(o, "async_scheduling")) {
    cmd.add_flag("--no-async-scheduling", o.no_async_scheduling, "turn async scheduling off");
  }
  if (!skipped(o, "enable_chunked_prefill")) {
    cmd.add_flag("--no-enable-chunked-prefill", o.no_chunked_prefill,
                 "turn chunked prefill off (V0 rows: V0's prefill-first scheduler)");
  }
  // vLLM's flags that servesim accepts without modelling, or refuses by name (vllm_flags.h).
  add_vllm_flags(cmd);
  cmd.footer(
      "vLLM's flags that change nothing simulated (--host, --port, --backend vllm, --endpoint\n"
      "/v1/completions, --tokenizer, --trust-remote-code, --served-model-name, --dtype auto|\n"
      "bfloat16|float16, --ignore-eos, ...) are accepted and listed as ignored; those that change\n"
      "serving in ways not modelled (--speculative-config, --enable-lora, --cpu-offload-gb,\n"
      "--kv-offloading-size, ...) are refused by name. docs/cli.md lists both.");
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
  if (o.no_chunked_prefill) from_flags["enable_chunked_prefill"] = false;
  apply_config_json(config, from_flags, "command line");
  return config;
}

// Run fields that describe the load or the report, not the deployment: the measured file gives
// the load, so validate and calibrate do not take them.
bool is_load_key(const std::string& key) {
  static const char* kKeys[] = {"request_rate",   "burstiness",         "arrival_process",
                                "num_prompts",    "seed",               "dataset_name",
                                "max_concurrency", "warmup_requests",   "percentile_metrics",
                                "metric_percentiles", "goodput",        "num_replicas",
                                "router",         "workload",           "multi_turn",
                                "num_turns",      "think_time",         "think_time_dist"};
  for (const char* k : kKeys) {
    if (key == k) return true;
  }
  return key.rfind("random_", 0) == 0 || key.rfind("gsp_", 0) == 0;
}

void add_deployment_options(CLI::App& cmd, RunOptions& o, const std::vector<std::string>& skip) {
  for (const ConfigField& f : config_fields()) {
    if (is_load_key(f.key)) o.skip.push_back(f.key);
  }
  for (const std::string& k : skip) o.skip.push_back(k);
  add_run_options(cmd, o);
}

json deployment_overrides(const CLI::App& cmd, const RunOptions& o) {
  json j = json::object();
  if (!o.config_file.empty()) {
    const json file = read_json_file(o.config_file);
    if (!file.is_object()) throw ConfigError(o.config_file + ": expected a JSON object");
    for (const auto& [k, v] : file.items()) j[k] = v;
  }
  for (const ConfigField& f : config_fields()) {
    if (is_load_key(f.key) || skipped(o, f.key)) continue;
    const std::string flag = flag_of(f.key);
    if (cmd.count(flag) == 0) continue;
    switch (f.kind) {
      case FieldKind::kBool:
        j[f.key] = true;
        break;
      case FieldKind::kStringList: {
        json items = json::array();
        for (const std::string& s : o.lists.at(f.key)) {
          for (const auto& part : parse_flag_value(f, s)) items.push_back(part);
        }
        j[f.key] = items;
        break;
      }
      default:
        j[f.key] = parse_flag_value(f, o.scalar.at(f.key));
        break;
    }
  }
  if (o.no_prefix_caching) j["enable_prefix_caching"] = false;
  if (o.no_async_scheduling) j["async_scheduling"] = false;
  if (o.no_chunked_prefill) j["enable_chunked_prefill"] = false;
  return j;
}

}  // namespace servesim::app
