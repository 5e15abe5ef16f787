// `servesim simulate`: one benchmark run, reported like `vllm bench serve`.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "sim/app/command.h"
#include "sim/app/run_options.h"
#include "sim/app/vllm_flags.h"
#include "sim/base/error.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/cluster/saturation.h"
#include "sim/cluster/simulation.h"
#include "sim/metrics/result_writer.h"
#include "sim/planning/error_band.h"
#include "sim/planning/slo.h"
#include "workloads/workload_classes.h"

namespace servesim::app {
namespace {

using nlohmann::json;

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
  // The lengths the workload actually sent (every measured request), so that a dataset's meaning
  // is visible in every run: vLLM's ShareGPT first turns are about 215 / 200 tokens.
  const json& sent = s["sent"];
  row("Mean input / output tokens sent:", num(sent["mean_input_tokens"].get<double>(), 1) + " / " +
                                              num(sent["mean_output_tokens"].get<double>(), 1));
  if (sent.contains("chat_template_tokens")) {
    row("Chat template tokens per prompt:",
        std::to_string(sent["chat_template_tokens"].get<int64_t>()));
  }
  // With data parallelism every rank has a cache of its own (docs/semantics.md).
  const bool dp = s.contains("config") && s["config"].contains("data_parallel_size");
  row(dp ? "KV cache blocks (tokens), per DP rank:" : "KV cache blocks (tokens):",
      std::to_string(kv["num_gpu_blocks"].get<int64_t>()) + " (" +
          std::to_string(kv["kv_tokens"].get<int64_t>()) + ")");
  row("Peak KV blocks used:", std::to_string(kv["peak_used_blocks"].get<int64_t>()));
  row("Preemptions:", std::to_string(s["preemptions"].get<int64_t>()));
  row("Prefix cache hit rate (%):", num(100.0 * s["prefix_cache_hit_rate"].get<double>(), 2));
  if (s.contains("prefix_cache")) {
    row("Prefix cache hit tokens:", std::to_string(s["prefix_cache"]["hit_tokens"].get<int64_t>()));
    row("Cached KV blocks evicted:",
        std::to_string(s["prefix_cache"]["evicted_blocks"].get<int64_t>()));
  }
  if (s.contains("kv_offload")) {
    // vLLM's native KV offloading (docs/deployment-modes.md): hit rates per tier, in prompt tokens.
    const json& o = s["kv_offload"];
    row("KV offload CPU blocks, per replica:",
        std::to_string(o["cpu_blocks_per_replica"].get<int64_t>()));
    row("Hit rate GPU / CPU tier (%):", num(100.0 * o["gpu_hit_rate"].get<double>(), 2) + " / " +
                                            num(100.0 * o["cpu_hit_rate"].get<double>(), 2));
    row("CPU tier blocks stored / loaded:", std::to_string(o["stored_blocks"].get<int64_t>()) +
                                                " / " +
                                                std::to_string(o["loaded_blocks"].get<int64_t>()));
    const json& link = o["host_link"];
    row("Host link (copies):", link["kind"].get<std::string>() + " " +
                                   num(link["bandwidth_bytes_per_s"].get<double>() / 1e9, 1) +
                                   " GB/s per GPU");
    row("CPU tier loads, mean load (ms):",
        std::to_string(o["loads"].get<int64_t>()) + ", " + num(o["mean_load_ms"].get<double>(), 3));
  }
  if (s.contains("speculative_decoding")) {
    // Speculative decoding (docs/deployment-modes.md): vLLM's mean acceptance length, the
    // closed form of the given rates, and the tokens a decoding request streams per chunk.
    const json& sd = s["speculative_decoding"];
    row("Spec decode acceptance length:",
        num(sd["mean_acceptance_length"].get<double>(), 3) + " (expected " +
            num(sd["expected_acceptance_length"].get<double>(), 3) + ")");
    row("Spec decode tokens per chunk:", num(sd["tokens_per_verify_row"].get<double>(), 3));
    row("Spec decode drafter busy share:", num(sd["drafter_fraction_of_busy"].get<double>(), 3));
  }
  if (s.contains("lora")) {
    // --enable-lora (sim/cluster/lora_report.h).
    const json& l = s["lora"];
    row("LoRA slots memory per GPU (GiB):", num(kv["lora_slots_gib_per_gpu"].get<double>(), 3));
    row("LoRA adapter slot loads (from storage):",
        std::to_string(l["slot_loads"].get<int64_t>()) + " (" +
            std::to_string(l["storage_loads"].get<int64_t>()) + ")");
    row("LoRA CPU cache hit rate (%):", num(100.0 * l["cpu_cache_hit_rate"].get<double>(), 2));
    row("LoRA requests waiting for a slot:", std::to_string(l["waited_requests"].get<int64_t>()));
    row("LoRA mean / max slot wait (ms):", num(l["mean_slot_wait_ms"].get<double>(), 2) + " / " +
                                               num(l["max_slot_wait_ms"].get<double>(), 2));
  }
  row("Mean batch size (seqs):", num(s["mean_batch_size"].get<double>(), 2));
  row("GPU busy fraction:", num(s["busy_fraction"].get<double>(), 3));
  row("Ideal-roofline TPOT bound (ms):", num(s["ideal_tpot_bound_ms"].get<double>(), 2));
  row("Kernel times:", s.value("kernel_source", std::string("roofline")));
  if (s.contains("prediction")) {
    // calibrated / transferred / datasheet-only, and why (calibration::classify_prediction).
    const std::string basis = s["prediction"]["basis"].get<std::string>();
    row("Prediction basis:", basis);
    out << "  " << s["prediction"]["reason"].get<std::string>() << "\n";
    // How far to trust it: the median error measured for this basis (sim/planning/error_band.h).
    out << "  expected error (median |error|): " << planning::expected_error_text(basis) << "\n";
  }
  if (s.contains("replicas")) {
    // One line per replica: requests, TTFT/TPOT (mean and P99), busy fraction, preemptions.
    out << std::string(17, '-') << "per replica" << std::string(22, '-') << "\n";
    std::snprintf(line, sizeof line, "%-8s %8s %9s %9s %9s %9s %6s %7s\n", "replica", "requests",
                  "TTFT mean", "TTFT p99", "TPOT mean", "TPOT p99", "busy", "preempt");
    out << line;
    // A replica with no completed request (or none with output > 1) has null latencies: "-".
    auto ms = [](const json& v) {
      if (!v.is_number()) return std::string("-");
      char b[32];
      std::snprintf(b, sizeof b, "%.2f", v.get<double>());
      return std::string(b);
    };
    for (const json& r : s["replicas"]) {
      std::snprintf(line, sizeof line, "%-8d %8lld %9s %9s %9s %9s %6.3f %7lld\n",
                    r["replica"].get<int>(), static_cast<long long>(r["requests"].get<int64_t>()),
                    ms(r["mean_ttft_ms"]).c_str(), ms(r["p99_ttft_ms"]).c_str(),
                    ms(r["mean_tpot_ms"]).c_str(), ms(r["p99_tpot_ms"]).c_str(),
                    r["busy_fraction"].get<double>(),
                    static_cast<long long>(r["preemptions"].get<int64_t>()));
      out << line;
    }
  }
  out << std::string(50, '=') << "\n";
}

// Adds each class's SLO verdicts to servesim.classes[c]: "slo": [{"slo", "value", "met"}] and
// "slo_met" (all met; true when the class has no SLO).
void add_class_slos(json& s, const std::vector<planning::Slo>& slos,
                    const metrics::BenchmarkMetrics& m) {
  if (!s.contains("classes")) return;
  for (json& c : s["classes"]) {
    const std::string prefix = c["name"].get<std::string>() + "/";
    json list = json::array();
    bool all = true;
    for (const planning::Slo& slo : slos) {
      if (slo.key.rfind(prefix, 0) != 0) continue;
      const std::optional<double> v = planning::metric_value(m, slo.key);
      const bool met = v && slo.holds(*v);
      all = all && met;
      list.push_back({{"slo", slo.text().substr(prefix.size())},
                      {"value", v ? json(*v) : json(nullptr)},
                      {"met", met}});
    }
    c["slo"] = std::move(list);
    c["slo_met"] = all;
  }
}

// One line per workload class, then the pooled line: requests, throughput, TTFT and TPOT (mean
// and the highest --metric-percentiles percentile), and the class's SLO verdict.
void print_classes(std::ostream& out, const json& s, const json& pooled,
                   const metrics::MetricsOptions& options) {
  if (!s.contains("classes")) return;
  const std::string p = options.metric_percentiles.empty()
                            ? std::string("99")
                            : metrics::percentile_word(options.metric_percentiles.back());
  char line[200];
  out << std::string(17, '-') << "per class" << std::string(24, '-') << "\n";
  std::snprintf(line, sizeof line, "%-12s %6s %9s %8s %9s %9s %9s %9s %5s\n", "class", "share",
                "completed", "req/s", "TTFT mean", ("TTFT p" + p).c_str(), "TPOT mean",
                ("TPOT p" + p).c_str(), "SLO");
  out << line;
  auto ms = [](const json& j, const std::string& key) {
    if (!j.contains(key) || !j[key].is_number()) return std::string("-");
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", j[key].get<double>());
    return std::string(b);
  };
  auto put = [&](const std::string& name, const std::string& share, const json& j,
                 const std::string& slo) {
    std::snprintf(line, sizeof line, "%-12s %6s %9lld %8.2f %9s %9s %9s %9s %5s\n",
                  name.substr(0, 12).c_str(), share.c_str(),
                  static_cast<long long>(j["completed"].get<int64_t>()),
                  j["request_throughput"].get<double>(), ms(j, "mean_ttft_ms").c_str(),
                  ms(j, "p" + p + "_ttft_ms").c_str(), ms(j, "mean_tpot_ms").c_str(),
                  ms(j, "p" + p + "_tpot_ms").c_str(), slo.c_str());
    out << line;
  };
  for (const json& c : s["classes"]) {
    char share[16];
    std::snprintf(share, sizeof share, "%.3f", c["share"].get<double>());
    const std::string slo = !c.contains("slo") || c["slo"].empty() ? "-"
                            : c["slo_met"].get<bool>()             ? "met"
                                                                   : "MISS";
    put(c["name"].get<std::string>(), share, c, slo);
  }
  put("(pooled)", "1.000", pooled, "");
}

class SimulateCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "simulate", "one benchmark run: latency percentiles at a load (like vllm bench serve)");
    add_run_options(*cmd_, opts_);
    cmd_->add_flag("--save-result", save_result_,
                   "write the result JSON (vllm bench serve schema)");
    cmd_->add_flag("--save-detailed", save_detailed_,
                   "also write per-request arrays (implies --save-result)");
    cmd_->add_option("--result-dir", result_dir_, "folder for the result file");
    cmd_->add_option("--result-filename", result_filename_,
                     "write the result file to this name [vllm-{rate}qps-{model}-{date}.json, the "
                     "date the wall clock's or $SOURCE_DATE_EPOCH's]");
    cmd_->add_flag("--overwrite", overwrite_,
                   "replace the result file if it exists (else an existing file is an error)");
    // Read (and taken off the command line) by expand_pasted_commands before parsing; declared
    // here for --help.
    cmd_->add_option("--vllm-serve-cmd", pasted_,
                     "a pasted `vllm serve MODEL ...` line, quoted: its model and engine flags "
                     "(flags typed here win)");
    cmd_->add_option("--vllm-bench-cmd", pasted_,
                     "a pasted `vllm bench serve ...` line, quoted: its load, dataset and result "
                     "flags; or: simulate [flags] -- vllm bench serve ...");
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& err) override {
    sim::SimulationConfig config = build_config(*cmd_, opts_);
    register_inputs(run_inputs(opts_, config));
    std::vector<planning::Slo> class_slos;
    if (!config.workload.workload_file.empty()) {
      // The classes' SLOs decide which percentiles must be computed (they are reported too).
      class_slos =
          planning::class_slos(workloads::load_workload_classes(config.workload.workload_file));
      planning::require_slo_metrics(config.metrics, class_slos);
    }
    const std::string result_path = result_file_path(config);
    check_result_path(result_path);
    const auto t0 = std::chrono::steady_clock::now();
    const sim::PreparedDeployment prepared = sim::prepare_deployment(config);
    const sim::SimulationResult result = sim::run_simulation(config, prepared);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const sim::SaturationCheck saturation = sim::check_saturation(config, result);
    const metrics::ResultContext ctx =
        result_context(config, prepared, result, class_slos, saturation);
    metrics::print_summary_table(out, result.metrics, config.metrics, ctx);
    print_extras(out, ctx.servesim);
    if (ctx.servesim.contains("disaggregation")) {
      sim::print_pd_summary(out, ctx.servesim["disaggregation"]);
    }
    if (ctx.servesim.contains("classes")) {
      print_classes(out, ctx.servesim,
                    json(metrics::metrics_summary_json(result.metrics, config.metrics)),
                    config.metrics);
    }

    if (result.metrics.completed == 0) return no_result(err, result);
    if (saturation.saturated) {
      err << "servesim: warning: " << sim::saturation_message(saturation) << "\n";
    }
    if (ctx.servesim.contains("physics_floor")) {
      err << "servesim: warning: " << ctx.servesim["physics_floor"].get<std::string>()
          << " (they are faster than the GPU's datasheet peaks allow)\n";
    }

    if (save_result_ || save_detailed_) {
      const std::string& name = result_path;
      // The per-request arrays get the same client TTFT overhead as the summary metrics
      // (run_simulation adds the calibration's to config.metrics), so that the file's ttfts and
      // latencies reproduce its own percentiles.
      metrics::MetricsOptions file_metrics = config.metrics;
      file_metrics.ttft_offset_s += prepared.client_ttft_overhead_s;
      metrics::write_result_atomically(name, result.metrics, file_metrics, ctx, result.records,
                                       result.step_logs, /*replace=*/overwrite_);
      out << "Result written to " << name << "\n";
    }
    err << "servesim: simulated " << result.records.size() << " requests, " << std::fixed
        << std::setprecision(1) << result.simulated_s << " s of serving, in "
        << std::setprecision(3) << wall_s << " s wall (" << std::setprecision(0)
        << (wall_s > 0 ? double(result.records.size()) / wall_s : 0.0) << " requests/s)\n";
    return 0;
  }

 private:
  // The result file's context: vLLM's fields and the servesim object (servesim_summary, with the
  // run's ignored flags, class SLOs and saturation).
  metrics::ResultContext result_context(const sim::SimulationConfig& config,
                                        const sim::PreparedDeployment& prepared,
                                        const sim::SimulationResult& result,
                                        const std::vector<planning::Slo>& class_slos,
                                        const sim::SaturationCheck& saturation) const {
    metrics::ResultContext ctx;
    ctx.date = result_date();
    ctx.model_id = config.model;
    ctx.tokenizer_id = config.model;
    ctx.request_rate =
        std::isinf(config.workload.request_rate) ? json("inf") : json(config.workload.request_rate);
    ctx.burstiness = config.workload.burstiness;
    ctx.max_concurrency = config.max_concurrency > 0 ? json(config.max_concurrency) : json(nullptr);
    ctx.save_detailed = save_detailed_;
    ctx.servesim = sim::servesim_summary(config, prepared, result);
    // num_prompts is the requests the run sent and measured (completed + failed). vLLM writes
    // --num-prompts, which is that count whenever it oversamples a dataset to it; a trace,
    // --no-oversample, --multi-turn (conversations) or warm-ups send another count, and a file
    // saying 1000 for 160 sent would be replayed (validate) or read as the 1000. The flag's value
    // is kept beside it when the two differ.
    ctx.num_prompts = ctx.servesim["sent"]["requests"].get<int64_t>();
    if (ctx.num_prompts != config.workload.num_prompts) {
      ctx.servesim["requested_num_prompts"] = config.workload.num_prompts;
    }
    // vLLM flags accepted without effect: recorded only when given, so that other files keep
    // their bytes.
    if (const std::vector<IgnoredFlag> ignored = ignored_flags(*cmd_); !ignored.empty()) {
      ctx.servesim["ignored_flags"] = ignored_to_json(ignored);
    }
    add_class_slos(ctx.servesim, class_slos, result.metrics);
    if (saturation.saturated) {
      // Recorded only when it fires, so that result files of healthy runs keep their schema.
      ctx.servesim["saturation"] = sim::saturation_to_json(saturation);
    }
    return ctx;
  }

  // A run with no successful request is not a result: say why, write nothing, exit 1.
  static int no_result(std::ostream& err, const sim::SimulationResult& result) {
    std::string why;
    for (const auto& r : result.records) {
      if (!r.warmup && r.failed && !r.error.empty()) {
        why = ", e.g. " + r.error;
        break;
      }
    }
    err << "servesim: error: no request completed successfully: " << result.metrics.failed
        << " failed" << why << " No result file written.\n";
    return 1;
  }

  // Where --save-result writes, or "" when nothing is saved.
  std::string result_file_path(const sim::SimulationConfig& config) const {
    if (!save_result_ && !save_detailed_) return "";
    std::string name = result_filename_;
    if (name.empty()) {
      // vLLM: {backend}-{request_rate}qps[-concurrency{N}]-{model_basename}-{date}.json
      name = "vllm-" + python_float(config.workload.request_rate) + "qps";
      if (config.max_concurrency > 0) {
        name += "-concurrency" + std::to_string(config.max_concurrency);
      }
      name += "-" + std::filesystem::path(config.model).filename().string() + "-" +
              result_file_date() + ".json";
    }
    if (!result_dir_.empty()) name = (std::filesystem::path(result_dir_) / name).string();
    return name;
  }

  // The output rule for the result file, and no existing file replaced without --overwrite
  // (vLLM's own default names carry the wall-clock date, so that runs do not share a file).
  void check_result_path(const std::string& path) const {
    const std::string flag = result_filename_.empty() ? "--save-result" : "--result-filename";
    check_outputs(flag, path, false);
    std::error_code ec;
    if (!path.empty() && !overwrite_ && std::filesystem::exists(path, ec)) {
      throw ConfigError(flag + ": '" + path +
                        "' already exists; expected a new file (--overwrite "
                        "replaces it)");
    }
  }

  CLI::App* cmd_ = nullptr;
  RunOptions opts_;
  bool overwrite_ = false;
  bool save_result_ = false;
  bool save_detailed_ = false;
  std::string result_dir_;
  std::string result_filename_;
  std::string pasted_;  // never set: see --vllm-serve-cmd above
};

}  // namespace

std::unique_ptr<Command> make_simulate_command() { return std::make_unique<SimulateCommand>(); }

}  // namespace servesim::app
