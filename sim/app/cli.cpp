#include "sim/app/cli.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>

#include "hardware/gpu_spec.h"
#include "models/model_spec.h"
#include "sim/app/run_config.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/cluster/simulation.h"
#include "sim/metrics/result_writer.h"

namespace servesim::app {
namespace {

using nlohmann::json;

std::string flag_of(const std::string& key) {
  std::string f = "--" + key;
  for (char& c : f) {
    if (c == '_') c = '-';
  }
  return f;
}

// Python's str(float) for the rates in vLLM's default file name: 10 -> "10.0", 2.5 -> "2.5".
std::string python_float(double v) {
  if (std::isinf(v)) return "inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::ostringstream os;
    os << static_cast<long long>(v) << ".0";
    return os.str();
  }
  for (int prec = 1; prec <= 17; ++prec) {
    std::ostringstream os;
    os << std::setprecision(prec) << v;
    if (std::stod(os.str()) == v) return os.str();
  }
  return std::to_string(v);
}

// The "date" of result files. Wall-clock dates would break byte-identical results, so the date is
// fixed: $SOURCE_DATE_EPOCH (the reproducible-builds convention) when set, else the epoch.
std::string result_date() {
  std::time_t t = 0;
  if (const char* env = std::getenv("SOURCE_DATE_EPOCH"); env && *env) t = std::atoll(env);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// Options every run-describing command shares: the config file plus one CLI option per field.
struct RunOptions {
  std::string config_file;
  std::map<std::string, std::string> scalar;               // key -> text
  std::map<std::string, std::vector<std::string>> lists;   // key -> items
  bool no_prefix_caching = false;
  std::map<std::string, bool> flags;  // bool fields given as bare flags
};

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--config", o.config_file,
                 "JSON file of run settings (keys = flag names with underscores); flags override it");
  for (const ConfigField& f : config_fields()) {
    const std::string flag = flag_of(f.key);
    switch (f.kind) {
      case FieldKind::kBool:
        o.flags[f.key] = false;
        cmd.add_flag(flag, o.flags[f.key], f.help);
        break;
      case FieldKind::kStringList:
        cmd.add_option(flag, o.lists[f.key], f.help)->expected(1, -1);
        break;
      default:
        cmd.add_option(flag, o.scalar[f.key], f.help);
        break;
    }
  }
  cmd.add_flag("--no-enable-prefix-caching", o.no_prefix_caching, "turn prefix caching off");
}

sim::SimulationConfig build_config(const CLI::App& cmd, const RunOptions& o) {
  sim::SimulationConfig config;
  if (!o.config_file.empty()) {
    apply_config_json(config, read_json_file(o.config_file), o.config_file);
  }
  json from_flags = json::object();
  for (const ConfigField& f : config_fields()) {
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
  apply_config_json(config, from_flags, "command line");
  return config;
}

void print_extras(std::ostream& out, const json& s) {
  const json& kv = s["kv_cache"];
  char line[160];
  out << std::string(17, '-') << "servesim engine" << std::string(18, '-') << "\n";
  auto row = [&](const char* label, const std::string& value) {
    std::snprintf(line, sizeof line, "%-40s %-10s\n", label, value.c_str());
    out << line;
  };
  auto num = [](double v, int prec) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(prec) << v;
    return os.str();
  };
  row("KV cache blocks (tokens):", std::to_string(kv["num_gpu_blocks"].get<int64_t>()) + " (" +
                                       std::to_string(kv["kv_tokens"].get<int64_t>()) + ")");
  row("Peak KV blocks used:", std::to_string(kv["peak_used_blocks"].get<int64_t>()));
  row("Preemptions:", std::to_string(s["preemptions"].get<int64_t>()));
  row("Prefix cache hit rate (%):", num(100.0 * s["prefix_cache_hit_rate"].get<double>(), 2));
  row("Mean batch size (seqs):", num(s["mean_batch_size"].get<double>(), 2));
  row("GPU busy fraction:", num(s["busy_fraction"].get<double>(), 3));
  row("Ideal-roofline TPOT bound (ms):", num(s["ideal_tpot_bound_ms"].get<double>(), 2));
  out << std::string(50, '=') << "\n";
}

int cmd_simulate(const CLI::App& cmd, const RunOptions& o, bool save_result, bool save_detailed,
                 const std::string& result_dir, const std::string& result_filename,
                 std::ostream& out, std::ostream& err) {
  const sim::SimulationConfig config = build_config(cmd, o);
  const auto t0 = std::chrono::steady_clock::now();
  const sim::PreparedDeployment prepared = sim::prepare_deployment(config);
  const sim::SimulationResult result = sim::run_simulation(config, prepared);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  metrics::ResultContext ctx;
  ctx.date = result_date();
  ctx.model_id = config.model;
  ctx.tokenizer_id = config.model;
  ctx.num_prompts = config.workload.num_prompts;
  ctx.request_rate = std::isinf(config.workload.request_rate)
                         ? json("inf")
                         : json(config.workload.request_rate);
  ctx.burstiness = config.workload.burstiness;
  ctx.max_concurrency = config.max_concurrency > 0 ? json(config.max_concurrency) : json(nullptr);
  ctx.save_detailed = save_detailed;
  ctx.servesim = sim::servesim_summary(config, prepared, result);

  metrics::print_summary_table(out, result.metrics, config.metrics, ctx);
  print_extras(out, ctx.servesim);

  if (save_result || save_detailed) {
    std::string name = result_filename;
    if (name.empty()) {
      // vLLM: {backend}-{request_rate}qps[-concurrency{N}]-{model_basename}-{date}.json
      name = "vllm-" + python_float(config.workload.request_rate) + "qps";
      if (config.max_concurrency > 0) name += "-concurrency" + std::to_string(config.max_concurrency);
      name += "-" + std::filesystem::path(config.model).filename().string() + "-" + ctx.date +
              ".json";
    }
    if (!result_dir.empty()) name = (std::filesystem::path(result_dir) / name).string();
    metrics::write_json_atomically(
        name, metrics::build_result_json(result.metrics, config.metrics, ctx, result.records,
                                         result.step_logs));
    out << "Result written to " << name << "\n";
  }
  err << "servesim: simulated " << result.records.size() << " requests, "
      << std::fixed << std::setprecision(1) << result.simulated_s << " s of serving, in "
      << std::setprecision(3) << wall_s << " s wall ("
      << std::setprecision(0) << (wall_s > 0 ? double(result.records.size()) / wall_s : 0.0)
      << " requests/s)\n";
  return 0;
}

int cmd_list(std::ostream& out) {
  out << "Models (models/catalog):\n";
  for (const std::string& n : models::model_catalog_names()) out << "  " << n << "\n";
  out << "GPUs (hardware/catalog):\n";
  for (const std::string& n : hardware::gpu_catalog_names()) out << "  " << n << "\n";
  return 0;
}

}  // namespace

int run_cli(const std::vector<std::string>& raw_args, std::ostream& out, std::ostream& err) {
  // vLLM's two-letter short flags; CLI11 only has one-letter ones.
  std::vector<std::string> args;
  for (const std::string& a : raw_args) {
    if (a == "-tp") {
      args.push_back("--tensor-parallel-size");
    } else if (a == "-pp") {
      args.push_back("--pipeline-parallel-size");
    } else {
      args.push_back(a);
    }
  }

  CLI::App app{"servesim: discrete-event simulator of LLM serving for capacity planning"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "servesim 0.1");

  CLI::App* simulate = app.add_subcommand(
      "simulate", "one benchmark run: latency percentiles at a load (like vllm bench serve)");
  RunOptions sim_opts;
  add_run_options(*simulate, sim_opts);
  bool save_result = false, save_detailed = false;
  std::string result_dir, result_filename;
  simulate->add_flag("--save-result", save_result, "write the result JSON (vllm bench serve schema)");
  simulate->add_flag("--save-detailed", save_detailed,
                     "also write per-request arrays (implies --save-result)");
  simulate->add_option("--result-dir", result_dir, "folder for the result file");
  simulate->add_option("--result-filename", result_filename,
                       "result file name [vllm-{rate}qps-{model}-{date}.json]");

  CLI::App* list = app.add_subcommand("list", "list the model and GPU catalogs");

  // CLI11 parses from the back of a reversed vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, e2;
    const int code = app.exit(e, o, e2);
    out << o.str();
    if (code != 0) {
      err << "servesim: error: " << e.what() << "\n";
      return 2;
    }
    return 0;
  }

  try {
    if (simulate->parsed()) {
      return cmd_simulate(*simulate, sim_opts, save_result, save_detailed, result_dir,
                          result_filename, out, err);
    }
    if (list->parsed()) return cmd_list(out);
  } catch (const ConfigError& e) {
    err << "servesim: error: " << e.what() << "\n";
    return 2;
  } catch (const InternalError& e) {
    err << "servesim: internal error (please report): " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace servesim::app
