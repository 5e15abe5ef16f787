// `servesim compare`: A/B of two configurations on the same request sets over several seeds, with
// a paired t-test per metric (sim/planning/compare.h). Sides come from two --config-style JSON
// files (`compare a.json b.json`) or from one --vary knob with two values.
#include <chrono>
#include <iomanip>

#include "sim/app/command.h"
#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/app/study.h"
#include "sim/app/vary_settings.h"
#include "sim/base/error.h"
#include "sim/base/exit_signals.h"
#include "sim/base/parallel.h"
#include "sim/metrics/result_writer.h"
#include "sim/planning/compare.h"
#include "sim/planning/progress.h"
#include "sim/planning/vary.h"

namespace servesim::app {
namespace {

class CompareCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "compare",
        "A/B test of two configurations (two --config JSON files, or --vary KNOB=a,b) on the same "
        "request sets over several seeds, with a paired t-test");
    cmd_->add_option("configs", configs_,
                     "A.json B.json: run configs (keys as in --config); the flags given apply to "
                     "both and override the files");
    add_run_options(*cmd_, opts_);
    cmd_->add_option("--vary", vary_, "KNOB=a,b: A and B differ only in this knob")->take_all();
    cmd_->add_option("--seeds", seeds_,
                     "paired runs: workload seeds A's seed + 0..N-1, the same on both sides [10]");
    cmd_->add_option("--confidence", confidence_,
                     "confidence of the intervals; differences with p < 1 - confidence are "
                     "called significant [0.95]");
    cmd_->add_option("--jobs", jobs_, "simulations run in parallel, 0 = all cores [0]");
    cmd_->add_option("--output", output_, "write the comparison JSON here");
    study_.add_to(*cmd_);
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& err) override {
    auto [a, b] = sides();
    for (const planning::CompareSide* side : {&a, &b}) {
      register_inputs(run_inputs(opts_, side->config));
    }
    check_outputs("--output", output_, false);
    planning::CompareOptions options;
    options.seeds = seeds_;
    check_seeds(seeds_, 2);
    options.jobs = jobs_;
    check_jobs(jobs_);
    options.executor = study_.executor(jobs_);
    if (!(confidence_ > 0 && confidence_ < 1)) {
      throw ConfigError("--confidence: must be in (0, 1), e.g. 0.95");
    }
    options.confidence = confidence_;

    // Spans the output too: a SIGINT/SIGTERM while it is written lets it finish.
    const DeferredExit interrupt;
    const auto t0 = std::chrono::steady_clock::now();
    planning::CompareResult result;
    {
      planning::ProgressBar bar(2 * int64_t(seeds_ > 0 ? seeds_ : 0), "compare",
                                planning::ProgressBar::terminal_stream(err));
      result = planning::run_compare(a, b, options, &bar, interrupt.flag());
    }
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    planning::print_compare_table(out, result, a, b, options);
    if (!output_.empty()) {
      metrics::write_json_atomically(
          output_, planning::compare_to_json(result, a, b, options, config_to_json(a.config),
                                             config_to_json(b.config)));
      out << "Comparison written to " << output_ << "\n";
    }
    err << "servesim: compared " << result.seeds.size() << " seed pairs ("
        << a.config.workload.num_prompts << " requests per run) in " << std::fixed
        << std::setprecision(2) << wall_s << " s wall on " << study_.workers_text(jobs_) << "\n";
    if (interrupt.interrupted()) {
      err << "servesim: " << interrupt.signal_name()
          << ": stopped; only seeds where both sides finished are used\n";
      return interrupt.exit_code();
    }
    return 0;
  }

 private:
  // A and B: two config files, or the two points of --vary on the run's config.
  std::pair<planning::CompareSide, planning::CompareSide> sides() const {
    planning::CompareSide a, b;
    if (!configs_.empty()) {
      if (configs_.size() != 2) {
        throw ConfigError("compare: give exactly two config files (A.json B.json), got " +
                          std::to_string(configs_.size()));
      }
      if (!vary_.empty() || !opts_.config_file.empty()) {
        throw ConfigError(
            "compare: give either two config files, or --vary KNOB=a,b (with an optional "
            "--config base), not both");
      }
      RunOptions oa = opts_, ob = opts_;
      oa.config_file = configs_[0];
      ob.config_file = configs_[1];
      a = {configs_[0], build_config(*cmd_, oa)};
      b = {configs_[1], build_config(*cmd_, ob)};
    } else {
      if (vary_.empty()) {
        throw ConfigError(
            "compare: give two config files (compare A.json B.json) or --vary "
            "KNOB=a,b");
      }
      std::vector<planning::VaryAxis> axes;
      for (const std::string& v : vary_) axes.push_back(planning::parse_vary(v));
      const std::vector<planning::VaryPoint> points = planning::vary_product(axes);
      if (points.size() != 2) {
        throw ConfigError("compare: --vary must give exactly two configurations (A and B), got " +
                          std::to_string(points.size()));
      }
      const sim::SimulationConfig base = build_config(*cmd_, opts_);
      a = {points[0].label, base};
      b = {points[1].label, base};
      apply_vary_settings(a.config, points[0].settings);
      apply_vary_settings(b.config, points[1].settings);
    }
    return {a, b};
  }

  CLI::App* cmd_ = nullptr;
  RunOptions opts_;
  std::vector<std::string> configs_;
  std::vector<std::string> vary_;
  int seeds_ = 10;
  double confidence_ = 0.95;
  int jobs_ = 0;
  StudyFlags study_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

}  // namespace servesim::app
