// `servesim matrix`: the standard workload rows for one deployment, side by side in one table, so
// that prefill-bound, decode-bound and cache effects are seen together. Each row is run twice: all
// requests at once (its saturation throughput), then Poisson arrivals (a trace: its recorded
// shape) at --load-fraction of that throughput for the latencies; the "saturating mix" row reports
// its all-at-once run instead.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "sim/app/command.h"
#include "sim/app/run_options.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/cluster/simulation.h"
#include "sim/metrics/result_writer.h"
#include "sim/planning/error_band.h"
#include "sim/planning/matrix_row.h"

namespace servesim::app {
namespace {

using nlohmann::json;

constexpr int64_t kMatrixNumPrompts = 2000;

struct Row {
  std::string name;
  std::string what;  // the workload, in words
  bool saturate = false;
  void (*apply)(workloads::WorkloadConfig&);
};

// The rows (docs/workloads.md "The workload matrix"). Lengths fit an 8,192-token max-model-len.
const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      {"short chat", "sharegpt (shipped first-turn lengths)", false,
       [](workloads::WorkloadConfig& w) { w.dataset_name = "sharegpt"; }},
      {"long prefill", "random 7936 in / 128 out", false,
       [](workloads::WorkloadConfig& w) {
         w.random_input_len = 7936;
         w.random_output_len = 128;
       }},
      {"long decode", "random 128 in / 2048 out", false,
       [](workloads::WorkloadConfig& w) {
         w.random_input_len = 128;
         w.random_output_len = 2048;
       }},
      {"saturating mix", "sharegpt, all requests at t = 0", true,
       [](workloads::WorkloadConfig& w) { w.dataset_name = "sharegpt"; }},
      {"warm shared prefix", "prefix_repetition 8 x 2048 + 128 in / 128 out", false,
       [](workloads::WorkloadConfig& w) {
         w.dataset_name = "prefix_repetition";
         w.prefix_repetition_num_prefixes = 8;
         w.prefix_repetition_prefix_len = 2048;
         w.prefix_repetition_suffix_len = 128;
         w.prefix_repetition_output_len = 128;
       }},
      {"production replay", "Azure 2023 conversation trace, rescaled", false,
       [](workloads::WorkloadConfig& w) {
         w.dataset_name = "trace";
         w.trace =
             (data_dir() / "data/realdata/azure_llm_trace_2023/AzureLLMInferenceTrace_conv.csv")
                 .string();
         w.trace_format = "azure";
       }},
  };
  return r;
}

double percentile(const metrics::BenchmarkMetrics& m, const char* key, double p) {
  for (const auto& [q, v] : m.summaries.at(key).percentiles_ms) {
    if (q == p) return v;
  }
  return 0;
}

class MatrixCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand("matrix",
                              "the standard workload rows (short chat, long prefill, long decode, "
                              "saturating mix, warm shared prefix, production replay) for one "
                              "deployment, in one table");
    opts_.skip = {"request_rate", "dataset_name", "trace", "trace_format"};
    add_run_options(*cmd_, opts_);
    cmd_->add_option("--load-fraction", load_fraction_,
                     "latency runs at this fraction of each row's saturation throughput [0.7]");
    cmd_->add_option("--output", output_, "write the table as JSON here");
    return cmd_;
  }

  int run(std::ostream& out, std::ostream&) override {
    sim::SimulationConfig base = build_config(*cmd_, opts_);
    register_inputs(run_inputs(opts_, base));
    check_outputs("--output", output_, false);
    if (cmd_->count("--num-prompts") == 0) base.workload.num_prompts = kMatrixNumPrompts;
    base.metrics.metric_percentiles = {50, 99};
    if (!(load_fraction_ > 0 && load_fraction_ <= 1)) {
      throw ConfigError("--load-fraction: " + std::to_string(load_fraction_) +
                        " is out of range; expected a fraction in (0, 1]");
    }
    const sim::PreparedDeployment prepared = sim::prepare_deployment(base);
    json table = json::array();
    char line[256];
    std::snprintf(line, sizeof line, "%-19s %9s %8s %15s %15s %9s %6s %8s\n", "Row", "sat_req/s",
                  "req/s", "TTFT p50/p99", "TPOT p50/p99", "out_tok/s", "hit%", "preempt");
    out << line;
    std::vector<std::pair<std::string, calibration::PredictionBasis>> bases;  // row name, basis
    for (const Row& row : rows()) {
      sim::SimulationConfig c = base;
      row.apply(c.workload);
      const planning::MatrixRowRun run =
          planning::run_matrix_row(c, prepared, row.saturate, load_fraction_);
      const double saturation = run.saturation_rps, rate = run.request_rate;
      const json& summary = run.summary;
      const calibration::PredictionBasis& basis = run.basis;
      bases.emplace_back(row.name, basis);
      const double hit = summary["prefix_cache_hit_rate"].get<double>();
      const int64_t preempt = summary["preemptions"].get<int64_t>();
      const auto& m = run.result.metrics;
      std::snprintf(line, sizeof line,
                    "%-19s %9.2f %8.2f %7.0f/%-7.0f %7.1f/%-7.1f %9.0f %6.1f %8lld\n",
                    row.name.c_str(), saturation, rate, percentile(m, "ttft", 50),
                    percentile(m, "ttft", 99), percentile(m, "tpot", 50), percentile(m, "tpot", 99),
                    m.output_throughput, 100 * hit, static_cast<long long>(preempt));
      out << line;
      table.push_back({{"row", row.name},
                       {"workload", row.what},
                       {"saturation_rps", saturation},
                       {"request_rate", rate},
                       {"requests", m.completed + m.failed},
                       {"p50_ttft_ms", percentile(m, "ttft", 50)},
                       {"p99_ttft_ms", percentile(m, "ttft", 99)},
                       {"p50_tpot_ms", percentile(m, "tpot", 50)},
                       {"p99_tpot_ms", percentile(m, "tpot", 99)},
                       {"output_throughput", m.output_throughput},
                       {"prefix_cache_hit_rate", hit},
                       {"preemptions", preempt},
                       {"prediction_basis", basis.label},
                       {"prediction_basis_reason", basis.reason}});
    }
    print_footer(out, bases);
    if (!output_.empty()) write_matrix(base, prepared, table);
    return 0;
  }

 private:
  // The rows' workloads, the load, and the prediction basis (once when every row has the same).
  void print_footer(
      std::ostream& out,
      const std::vector<std::pair<std::string, calibration::PredictionBasis>>& bases) const {
    out << "Rows: ";
    for (size_t i = 0; i < rows().size(); ++i) {
      out << (i ? "; " : "") << rows()[i].name << " = " << rows()[i].what;
    }
    out << ". Latencies at " << load_fraction_ << " x each row's saturation throughput (the "
        << "saturating mix: all at once).\n";
    const bool one_basis = std::all_of(bases.begin(), bases.end(), [&](const auto& b) {
      return b.second.label == bases.front().second.label &&
             b.second.reason == bases.front().second.reason;
    });
    for (const auto& [name, basis] : bases) {
      out << "Prediction basis" << (one_basis ? std::string() : " of " + name) << ": "
          << basis.label << " — " << basis.reason << "\n"
          << "  expected error (median |error|): " << planning::expected_error_text(basis.label)
          << "\n";
      if (one_basis) break;
    }
  }

  // --output: the deployment and the table as JSON.
  void write_matrix(const sim::SimulationConfig& base, const sim::PreparedDeployment& prepared,
                    const json& table) const {
    const json doc = {
        {"deployment",
         {{"model", base.model},
          {"catalog_model", sim::catalog_model_json(prepared)},
          {"gpu", base.gpu},
          {"tensor_parallel_size", base.tensor_parallel_size},
          {"calibration", prepared.calibration_source.empty()
                              ? json(nullptr)
                              : json(relative_to_data_dir(prepared.calibration_source))},
          {"kernel_source", prepared.kernel_source}}},
        {"load_fraction", load_fraction_},
        {"rows", table}};
    metrics::write_text_atomically(output_, doc.dump(2) + "\n");
  }

  CLI::App* cmd_ = nullptr;
  RunOptions opts_;
  double load_fraction_ = 0.7;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> make_matrix_command() { return std::make_unique<MatrixCommand>(); }

}  // namespace servesim::app
