#include "sim/app/run_options.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <optional>

#include "sim/app/run_config.h"
#include "sim/app/vllm_flags.h"
#include "sim/app/yaml_config.h"
#include "sim/base/json_file.h"
#include "sim/base/output_file.h"
#include "workloads/workload_classes.h"

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

std::vector<InputFile> config_inputs(const json& keys) {
  struct FileKey {
    const char* key;
    bool catalog;  // a catalog name unless it looks like a path
    uint64_t max_bytes;
  };
  static const FileKey kFileKeys[] = {{"model", true, kMaxSettingsFileBytes},
                                      {"gpu", true, kMaxSettingsFileBytes},
                                      {"inter_node_link", true, kMaxSettingsFileBytes},
                                      {"prefill_gpu", true, kMaxSettingsFileBytes},
                                      {"decode_gpu", true, kMaxSettingsFileBytes},
                                      {"kv_transfer_link", true, kMaxSettingsFileBytes},
                                      {"calibration", false, kMaxSettingsFileBytes},
                                      {"kernel_table", false, kMaxSettingsFileBytes},
                                      {"workload", false, kMaxSettingsFileBytes},
                                      {"dataset_path", false, 0},
                                      {"trace", false, 0}};
  std::vector<InputFile> in;
  for (const FileKey& k : kFileKeys) {
    auto it = keys.find(k.key);
    if (it == keys.end() || !it->is_string()) continue;
    const std::string v = it->get<std::string>();
    if (v.empty() || v == "none" || (k.catalog && !looks_like_path(v))) continue;
    const std::string flag = flag_of(k.key);
    if (std::string(k.key) == "model") {
      // An existing path is read (a snapshot folder through its config.json); anything else is
      // a catalog name or a Hugging Face id the catalog records (models/model_name.h).
      std::error_code ec;
      if (std::filesystem::is_directory(v, ec)) {
        in.push_back({flag, (std::filesystem::path(v) / "config.json").string(), k.max_bytes});
        continue;
      }
      if (!std::filesystem::exists(v, ec)) continue;
    }
    if (std::string(k.key) == "workload") {
      register_inputs({{flag, v, k.max_bytes}});  // checked before it is read for its paths
      for (const std::string& p : workloads::workload_input_paths(v)) {
        in.push_back({flag, p, p == v ? k.max_bytes : 0});
      }
    } else {
      in.push_back({flag, v, k.max_bytes});
    }
  }
  // A draft model given as a path inside --speculative-config (vLLM's "model" key) is read too.
  auto spec = keys.find("speculative_config");
  if (spec != keys.end() && spec->is_object()) {
    auto m = spec->find("model");
    if (m != spec->end() && m->is_string()) {
      const std::string v = m->get<std::string>();
      std::error_code ec;
      if (looks_like_path(v) && std::filesystem::is_directory(v, ec)) {
        in.push_back({"--speculative-config", (std::filesystem::path(v) / "config.json").string(),
                      kMaxSettingsFileBytes});
      } else if (looks_like_path(v) && std::filesystem::exists(v, ec)) {
        in.push_back({"--speculative-config", v, kMaxSettingsFileBytes});
      }
    }
  }
  return in;
}

std::vector<InputFile> run_inputs(const RunOptions& o, const sim::SimulationConfig& c) {
  std::vector<InputFile> in;
  if (!o.config_file.empty()) in.push_back({"--config", o.config_file, kMaxSettingsFileBytes});
  for (InputFile& f : config_inputs(config_to_json(c))) in.push_back(std::move(f));
  return in;
}

std::vector<InputFile> measured_inputs(const std::vector<std::string>& measured,
                                       const std::vector<std::string>& sidecar_dirs) {
  std::vector<InputFile> in;
  auto add_folder = [&in](const std::string& flag, const std::string& dir, uint64_t max_bytes) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      if (e.is_regular_file()) in.push_back({flag, e.path().string(), max_bytes});
    }
  };
  for (const std::string& m : measured) {
    std::error_code ec;
    if (std::filesystem::is_directory(m, ec)) {
      add_folder("--measured", m, 0);  // an LLMServingSim run folder
    } else {
      in.push_back({"--measured", m, 0});
    }
  }
  for (const std::string& d : sidecar_dirs) add_folder("--sidecars", d, kMaxSettingsFileBytes);
  return in;
}

void check_output_folder(const std::string& flag, const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(dir, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_directory(st)) {
    const char* kind = non_regular_kind(st.type());
    throw ConfigError(flag + ": '" + dir + "' is " + (kind ? kind : "a file") +
                      "; expected a folder (created if missing)");
  }
}

json read_config_file(const std::string& path) {
  check_input_file(path, "--config", kMaxSettingsFileBytes);
  if (is_yaml_config_path(path)) return read_yaml_config(path);
  return read_json_file(path);
}

void register_inputs(const std::vector<InputFile>& inputs) {
  for (const InputFile& f : inputs) check_input_file(f.path, f.flag, f.max_bytes);
}

void check_outputs(const std::string& flag, const std::string& path, bool with_csv) {
  if (path.empty()) return;
  check_output_path(path, flag, {});
  if (with_csv) check_output_path(csv_path_for(path), flag + " (its CSV)", {});
}

void check_jobs(int jobs) {
  if (jobs < 0 || jobs > kMaxJobs) {
    throw ConfigError("--jobs: " + std::to_string(jobs) +
                      " is invalid; expected 0 (all cores) "
                      "to " +
                      std::to_string(kMaxJobs) + " threads");
  }
}

void check_seeds(int seeds, int min) {
  if (seeds < min || seeds > kMaxSeeds) {
    throw ConfigError("--seeds: " + std::to_string(seeds) + " is invalid; expected " +
                      std::to_string(min) + " to " + std::to_string(kMaxSeeds) + " seeds");
  }
}

namespace {

std::string date_text(const std::tm& tm) {
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// $SOURCE_DATE_EPOCH (reproducible-builds.org), when set and non-empty.
std::optional<std::time_t> source_date_epoch() {
  const char* env = std::getenv("SOURCE_DATE_EPOCH");
  if (env == nullptr || *env == '\0') return std::nullopt;
  return static_cast<std::time_t>(std::atoll(env));
}

}  // namespace

std::string result_date() {
  const std::time_t t = source_date_epoch().value_or(0);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return date_text(tm);
}

std::string result_file_date() {
  if (source_date_epoch()) return result_date();
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  return date_text(tm);
}

namespace {

const char* type_name(FieldKind k) {
  switch (k) {
    case FieldKind::kInt:
    case FieldKind::kPositiveInt:
      return "INT";
    case FieldKind::kDouble:
      return "FLOAT";
    case FieldKind::kRate:
      return "RATE";
    case FieldKind::kStringList:
      return "LIST";
    default:
      return "TEXT";
  }
}

bool skipped(const RunOptions& o, const std::string& key) {
  return std::find(o.skip.begin(), o.skip.end(), key) != o.skip.end();
}

}  // namespace

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option(
      "--config", o.config_file,
      "run settings: a JSON object (keys = flag names with underscores) or, as vllm serve "
      "--config, a .yaml/.yml file; flags override it");
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
      "vLLM's flags that change nothing simulated (--host, --port, --backend vllm, --tokenizer,\n"
      "--trust-remote-code, --served-model-name, --dtype auto|\n"
      "bfloat16|float16, --ignore-eos, ...) are accepted and listed as ignored; those that change\n"
      "serving in ways not modelled (--speculative-model, --lora-modules, --cpu-offload-gb,\n"
      "--kv-transfer-config, ...) are refused by name. docs/cli.md lists both.");
}

sim::SimulationConfig build_config(const CLI::App& cmd, const RunOptions& o) {
  sim::SimulationConfig config;
  if (!o.config_file.empty()) {
    // A JSON file may be an echoed config (plan, sweep, compare), whose unset flags read back as
    // unset; a YAML file is vllm serve's, whose values are flags as typed.
    const json file = read_config_file(o.config_file);
    if (is_yaml_config_path(o.config_file)) {
      apply_config_json(config, file, o.config_file);
    } else {
      apply_config_file_json(config, file, o.config_file);
    }
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
  // --backend openai-chat against the endpoint in effect, the --config file's included.
  check_chat_backend(cmd, config.workload.endpoint);
  return config;
}

// Run fields that describe the load or the report, not the deployment: the measured file gives
// the load, so validate and calibrate do not take them.
bool is_load_key(const std::string& key) {
  static const char* kKeys[] = {"request_rate",
                                "burstiness",
                                "arrival_process",
                                "num_prompts",
                                "seed",
                                "dataset_name",
                                "endpoint",
                                "max_concurrency",
                                "warmup_requests",
                                "percentile_metrics",
                                "metric_percentiles",
                                "goodput",
                                "num_replicas",
                                "router",
                                "workload",
                                "multi_turn",
                                "num_turns",
                                "think_time",
                                "think_time_dist"};
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
    const json file = read_config_file(o.config_file);
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
