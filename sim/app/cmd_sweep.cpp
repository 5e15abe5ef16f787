// `servesim sweep`: QPS–latency (or concurrency–latency) curves with the knee and the saturation
// point, one curve per --vary combination. The study itself is sim/planning/sweep.h; this file
// turns flags into curve configs and writes the table, the JSON and the CSV.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include "sim/app/command.h"
#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/app/study.h"
#include "sim/app/vary_settings.h"
#include "sim/base/error.h"
#include "sim/base/exit_signals.h"
#include "sim/base/json_file.h"
#include "sim/base/output_file.h"
#include "sim/base/parallel.h"
#include "sim/metrics/result_writer.h"
#include "sim/planning/progress.h"
#include "sim/planning/sweep.h"
#include "sim/planning/sweep_report.h"
#include "sim/planning/sweep_setup.h"
#include "sim/planning/vary.h"

namespace servesim::app {
namespace {

using nlohmann::json;

// Sweep defaults that differ from simulate's (used unless a flag or the --config file sets them).
constexpr int64_t kSweepNumPrompts = 2000;
const std::vector<double> kSweepPercentiles = {50, 90, 99};

// FILE.json -> FILE.csv; any other name gets ".csv" appended.
class SweepCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "sweep",
        "QPS-latency curve: one simulation per request rate (or concurrency), with the "
        "knee and the saturation point; --vary gives one curve per knob value");
    opts_.skip = {"request_rate", "max_concurrency"};
    add_run_options(*cmd_, opts_);
    cmd_->add_option("--request-rate", rates_,
                     "swept request rates in requests/s: start:stop:step (inclusive) such as "
                     "1:40:1, or a list such as 1,2,5,10");
    cmd_->add_option("--max-concurrency", concurrencies_,
                     "swept client concurrency caps (closed-loop curve): start:stop:step or a list "
                     "such as 1,2,4,8; with one --request-rate value that rate is kept fixed");
    cmd_->add_option("--vary", vary_,
                     "KNOB=v1,v2,...: one curve per value (repeat for the cartesian product), "
                     "e.g. max-num-seqs=64,128,256")
        ->take_all();
    cmd_->add_option("--jobs", jobs_, "simulations run in parallel, 0 = all cores [0]");
    cmd_->add_option("--output", output_,
                     "write the sweep JSON here, and the CSV (one row per point) beside it");
    cmd_->add_option("--knee-metric", knee_metric_,
                     "metric whose departure from its low-load plateau defines the knee "
                     "[p99_ttft_ms]");
    cmd_->add_option("--knee-tolerance", knee_tolerance_,
                     "the knee is the last value before the metric exceeds (1 + tolerance) x its "
                     "plateau for two points in a row [1.0]");
    cmd_->add_flag("--no-early-stop", no_early_stop_,
                   "run every rate, also above the first saturated one");
    study_.add_to(*cmd_);
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& err) override {
    sim::SimulationConfig base = build_config(*cmd_, opts_);
    apply_sweep_defaults(base);
    planning::SweepOptions options = sweep_options(base);
    std::vector<planning::VaryAxis> axes;
    json vary_echo = json::array();
    for (const std::string& v : vary_) {
      axes.push_back(planning::parse_vary(v));
      vary_echo.push_back({{"knob", axes.back().knob.flag},
                           {"key", axes.back().knob.key},
                           {"values", axes.back().values}});
    }
    const std::vector<planning::SweepCurveSpec> curves =
        planning::sweep_curves(base, planning::vary_product(axes), apply_vary_settings);
    // Every file any curve reads is an input (a --vary value can name one), then the outputs.
    register_inputs(run_inputs(opts_, base));
    for (const planning::SweepCurveSpec& c : curves) register_inputs(run_inputs(opts_, c.config));
    check_outputs("--output", output_, true);
    options.executor = study_.executor(jobs_);

    json echo = config_to_json(base);
    echo.erase(planning::axis_key(options.axis));

    // Spans the outputs too: a SIGINT/SIGTERM while they are written lets them finish.
    const DeferredExit interrupt;
    const auto t0 = std::chrono::steady_clock::now();
    planning::SweepResult result;
    {
      planning::ProgressBar bar(static_cast<int64_t>(curves.size() * options.values.size()),
                                "sweep", planning::ProgressBar::terminal_stream(err));
      result = planning::run_sweep(curves, options, &bar, interrupt.flag());
    }
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    planning::print_sweep_table(out, result, options);
    if (!output_.empty()) {
      // JSON and CSV together or not at all.
      const std::string csv = csv_path_for(output_);
      write_files_atomically({{output_, metrics::json_file_text(planning::sweep_to_json(
                                            result, options, echo, vary_echo))},
                              {csv, planning::sweep_to_csv(result)}});
      out << "Sweep written to " << output_ << " and " << csv << "\n";
    }
    int64_t points = 0;
    for (const auto& c : result.curves) points += static_cast<int64_t>(c.points.size());
    err << "servesim: swept " << points << " points (" << result.curves.size() << " curve"
        << (result.curves.size() == 1 ? "" : "s") << ", " << base.workload.num_prompts
        << " requests each) in " << std::fixed << std::setprecision(2) << wall_s << " s wall on "
        << study_.workers_text(jobs_) << "\n";
    if (interrupt.interrupted()) {
      err << "servesim: " << interrupt.signal_name()
          << ": stopped; the points that finished are written, the others marked not run\n";
      return interrupt.exit_code();
    }
    return 0;
  }

 private:
  // Sweep's own defaults (kSweepNumPrompts, kSweepPercentiles) unless a flag or the --config
  // file sets them.
  void apply_sweep_defaults(sim::SimulationConfig& base) const {
    json file = json::object();
    if (!opts_.config_file.empty()) file = read_config_file(opts_.config_file);
    if (cmd_->count("--num-prompts") == 0 && !file.contains("num_prompts")) {
      base.workload.num_prompts = kSweepNumPrompts;
    }
    if (cmd_->count("--metric-percentiles") == 0 && !file.contains("metric_percentiles")) {
      base.metrics.metric_percentiles = kSweepPercentiles;
    }
  }

  // The study's options from the flags; the swept axis's fixed other value goes into `base`.
  planning::SweepOptions sweep_options(sim::SimulationConfig& base) const {
    planning::SweepOptions options;
    std::vector<double> rates, concs;
    if (!rates_.empty()) rates = planning::parse_axis_values("--request-rate", rates_, false);
    if (!concurrencies_.empty()) {
      concs = planning::parse_axis_values("--max-concurrency", concurrencies_, true);
    }
    planning::choose_sweep_axis(rates, concs, options, base);
    options.jobs = jobs_;
    check_jobs(jobs_);
    options.knee_metric = knee_metric_;
    if (!(knee_tolerance_ >= 0)) {
      throw ConfigError("--knee-tolerance: must be >= 0 (a relative rise such as 0.5)");
    }
    options.knee.tolerance = knee_tolerance_;
    options.stop_at_saturation = !no_early_stop_;
    return options;
  }

  CLI::App* cmd_ = nullptr;
  RunOptions opts_;
  std::string rates_;
  std::string concurrencies_;
  std::vector<std::string> vary_;
  int jobs_ = 0;
  std::string output_;
  std::string knee_metric_ = "p99_ttft_ms";
  double knee_tolerance_ = 1.0;
  bool no_early_stop_ = false;
  StudyFlags study_;
};

}  // namespace

std::unique_ptr<Command> make_sweep_command() { return std::make_unique<SweepCommand>(); }

}  // namespace servesim::app
