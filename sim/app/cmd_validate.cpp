// `servesim validate`: simulates measured benchmark runs as they were run and prints predicted
// versus measured per run and metric, then the median absolute error per metric.
//
// Fitting and scoring are kept apart: validate fits nothing. With --calibration it scores the
// calibration's predictions and warns about every scored run the calibration lists as fitted on;
// --holdout FRACTION scores only the deterministic holdout share (measured::holdout_scored, the
// split `servesim calibrate --holdout` fits on the complement of); --score-on GLOB scores only the
// runs whose path matches.
#include <set>
#include <sstream>

#include <filesystem>
#include <fstream>

#include "hardware/gpu_spec.h"
#include "models/kernel_timer.h"
#include "sim/app/command.h"
#include "sim/app/measured_endpoint.h"
#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/app/study.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/base/printable.h"
#include "sim/calibration/cross_validation.h"
#include "sim/calibration/profile.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/replay.h"
#include "sim/measured/validation.h"
#include "sim/measured/validation_scope.h"
#include "sim/metrics/result_writer.h"

namespace servesim::app {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class ValidateCommand : public Command {
 public:
  // --endpoint is checked against every run's file and noted when it agrees.
  std::vector<std::string> vllm_flags_read() const override { return {"--endpoint"}; }
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "validate",
        "simulate measured benchmark runs as they were run; predicted vs measured per metric");
    cmd_->add_option("--measured", measured_,
                     "result files: vllm bench serve JSON, SGLang bench_serving JSONL, genai-perf "
                     "profile_export_genai_perf.json, LLMServingSim requests.jsonl (or its "
                     "folder), guidellm per-request CSV, InferenceX summary CSV, Argonne "
                     "LLM-Inference-Bench All_results.csv, a public-runs table "
                     "(data/realdata/public_vllm_runs)")
        ->required()
        ->expected(1, -1);
    cmd_->add_option("--sidecars", sidecar_dirs_,
                     "folder(s) of sidecar JSON files ({\"match\": GLOB, deployment keys...}) "
                     "giving what the result files do not say")
        ->expected(1, -1);
    cmd_->add_option("--calibration", calibration_file_,
                     "calibration profile (from servesim calibrate) to predict with; none = "
                     "datasheet + catalog defaults [the profile shipped for each GPU, if any]");
    auto* holdout = cmd_->add_option("--holdout", holdout_,
                                     "score only this fraction of the runs (deterministic split; "
                                     "calibrate --holdout fits on the rest)");
    auto* score_on = cmd_->add_option("--score-on", score_on_,
                                      "score only the runs whose path matches this glob");
    holdout->excludes(score_on);
    cmd_->add_option("--output", output_, "write the table as JSON to this file");
    auto* logo = cmd_->add_flag(
        "--leave-one-group-out", logo_,
        "cross-validate the calibration: for every group (model x GPU x TP x vLLM version) fit "
        "host terms on the other groups of its vLLM release line (any GPU, each with its own "
        "GPU's kernel terms) and score the group with them and with --calibration none");
    logo->excludes(holdout)->excludes(score_on);
    cmd_->add_option("--logo-fit", logo_fit_,
                     "with --leave-one-group-out: serving parameters to fit "
                     "[step_overhead_s,client_ttft_overhead_s]")
        ->expected(1, -1);
    cmd_->add_option("--logo-groups", logo_groups_,
                     "with --leave-one-group-out: what a left-out group is: deployment (model x "
                     "GPU x TP x vLLM version) or model (every TP size and checkpoint of a model "
                     "left out together) [deployment]");
    cmd_->add_option("--logo-max-iterations", logo_iterations_,
                     "with --leave-one-group-out: Levenberg-Marquardt iterations per fit [8]");
    cmd_->add_option(
        "--logo-prior-weight", logo_prior_weight_,
        "with --leave-one-group-out: weight of the pull toward the datasheet value per "
        "ms of deviation (0 = none) [0]");
    cmd_->add_option("--write-line-profiles", line_profiles_dir_,
                     "with --leave-one-group-out: also fit the host terms of every host line on "
                     "every GPU on all its runs and write them as DIR/vllm-<line>/<gpu>.json "
                     "(profiles to ship in hardware/calibration; docs/calibration.md)");
    cmd_->add_option("--seeds", seeds_,
                     "Poisson replays (runs without send times): seeds averaged [3]");
    cmd_->add_option("--jobs", jobs_, "threads, 0 = all cores [0]");
    // Deployment and engine flags: applied to every run, over what the files and sidecars say.
    // --calibration is handled here (a profile or none).
    add_deployment_options(*cmd_, opts_, {"calibration"});
    cmd_->add_option("--engine-version", engine_version_,
                     "vLLM version the runs were measured on, where the files do not record it: "
                     "its engine defaults and benchmark client are simulated [unrecorded: the "
                     "newest release modelled, reported as an assumption]");
    study_.add_to(*cmd_);
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& err) override {
    measured::SidecarOptions sidecars;
    sidecars.sidecar_dirs = sidecar_dirs_;
    sidecars.overrides = overrides();
    const DeclaredEndpoint endpoint =
        take_declared_endpoint(*cmd_, opts_.config_file, sidecars.overrides);
    check_flags();
    register_validate_inputs(sidecars.overrides);
    std::vector<measured::MeasuredRun> runs;
    for (const std::string& path : measured_) {
      std::vector<measured::MeasuredRun> some = measured::read_measured(path, sidecars);
      for (auto& r : some) runs.push_back(std::move(r));
    }
    check_declared_endpoint(endpoint, runs);
    if (const std::string note = declared_endpoint_note(endpoint, runs); !note.empty()) {
      err << "servesim: " << printable(note) << "\n";
    }
    // Runs their reader refused (a model, checkpoint or flag servesim does not model) are listed
    // with the reason and neither scored nor fitted.
    const std::vector<measured::MeasuredRun> refused = measured::take_refused(runs);
    print_refused(out, refused);
    if (runs.empty()) throw ConfigError("no run to score: every run read was refused (above)");
    measured::ScoredRuns scored{std::vector<bool>(runs.size(), true), ""};
    if (cmd_->count("--holdout") > 0) {
      scored = measured::scored_by_holdout(runs, holdout_);
    } else if (!score_on_.empty()) {
      scored = measured::scored_by_glob(runs, score_on_);
    }
    if (logo_) return run_logo(runs, out);
    std::vector<measured::MeasuredRun> chosen;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (scored.scored[i]) chosen.push_back(std::move(runs[i]));
    }
    if (chosen.empty()) throw ConfigError("no run to score (" + scored.scope + " selects none)");
    std::vector<sim::SimulationConfig> configs;
    for (const auto& r : chosen)
      configs.push_back(measured::simulation_config(r, apply_config_json));
    const measured::Calibration calibration =
        measured::scoring_calibration(calibration_file_, configs);
    measured::ReplayOptions options;
    options.seeds = seeds_;
    options.request_samples = true;  // the per-request distribution tests
    measured::ValidationTable table = measured::validate_runs(chosen, configs, calibration, options,
                                                              jobs_, study_.executor(jobs_));
    if (calibration.calibrated() && calibration.fitted_on.empty()) {
      table.warnings.push_back(
          "the calibration does not list the runs it was fitted on; cannot "
          "check that scored runs were not used for fitting");
    }
    if (!scored.scope.empty()) {
      out << "Scoring " << chosen.size() << " of " << runs.size() << " run(s) (" << scored.scope
          << ")\n";
    }
    measured::print_table(out, table);
    print_assumptions_and_warnings(err, table);
    if (!output_.empty()) write_table(out, table, scored.scope, refused);
    return exit_code(table, err);
  }

 private:
  void check_flags() const {
    check_seeds(seeds_, 1);
    check_jobs(jobs_);
    for (const char* flag : {"--logo-fit", "--logo-groups", "--logo-max-iterations",
                             "--logo-prior-weight", "--write-line-profiles"}) {
      if (!logo_ && cmd_->count(flag) > 0) {
        throw ConfigError(std::string(flag) + " applies only with --leave-one-group-out");
      }
    }
  }

  // 1 when no run could be simulated (nothing was validated: not a success), else 0; the runs
  // that could not be simulated are counted on `err`.
  static int exit_code(const measured::ValidationTable& table, std::ostream& err) {
    int failed = 0;
    for (const auto& r : table.runs) failed += !r.error.empty();
    if (failed > 0 && failed == static_cast<int>(table.runs.size())) {
      err << "servesim: error: none of the " << failed
          << " run(s) could be simulated (see the table for each reason)\n";
      return 1;
    }
    if (failed > 0) err << "servesim: " << failed << " run(s) could not be simulated (see above)\n";
    return 0;
  }

  // Every file validate reads is an input (refused as an output); the outputs are checked before
  // any work.
  void register_validate_inputs(const json& overrides) {
    std::vector<InputFile> inputs = measured_inputs(measured_, sidecar_dirs_);
    if (!opts_.config_file.empty()) {
      inputs.push_back({"--config", opts_.config_file, kMaxSettingsFileBytes});
    }
    if (!calibration_file_.empty() && calibration_file_ != "none") {
      inputs.push_back({"--calibration", calibration_file_, kMaxSettingsFileBytes});
    }
    for (InputFile& f : config_inputs(overrides)) inputs.push_back(std::move(f));
    register_inputs(inputs);
    check_outputs("--output", output_, false);
    check_output_folder("--write-line-profiles", line_profiles_dir_);
  }

  // --output: the table as JSON, with its scope and the runs refused.
  void write_table(std::ostream& out, const measured::ValidationTable& table,
                   const std::string& scope,
                   const std::vector<measured::MeasuredRun>& refused) const {
    nlohmann::ordered_json j = measured::to_json(table);
    j["scope"] = scope.empty() ? std::string("all runs") : scope;
    if (!refused.empty()) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& r : refused) {
        list.push_back({{"id", r.id}, {"label", r.label}, {"refused", r.refused}});
      }
      j["refused"] = list;
    }
    metrics::write_json_atomically(output_, j);
    out << "Table written to " << output_ << "\n";
  }

  // --leave-one-group-out: host terms fitted per left-out group on the other groups of its release
  // line, each run from the kernel terms of the profile shipped for its GPU (no serving run).
  int run_logo(const std::vector<measured::MeasuredRun>& runs, std::ostream& out) {
    if (!calibration_file_.empty()) {
      throw ConfigError("--leave-one-group-out fits its own profiles; drop --calibration " +
                        calibration_file_);
    }
    if (logo_prior_weight_ < 0) {
      throw ConfigError("--logo-prior-weight: " + std::to_string(logo_prior_weight_) +
                        " is invalid; expected >= 0");
    }
    std::vector<sim::SimulationConfig> configs;
    calibration::LogoOptions o;
    for (const auto& r : runs) {
      configs.push_back(measured::simulation_config(r, apply_config_json));
      configs.back().calibration = "none";
      const std::string gpu = calibration::gpu_of(r);
      if (o.base_by_gpu.count(gpu)) continue;
      try {
        const std::string name = hardware::load_gpu(gpu).name;
        if (auto p = calibration::default_calibration_path(name)) {
          o.base_by_gpu[gpu] = calibration::kernel_terms(calibration::load_calibration(*p));
        } else {
          o.base_by_gpu[gpu] = calibration::Calibration{};
        }
        const models::KernelSource table = models::find_kernel_source(hardware::load_gpu(gpu));
        if (!o.base_by_gpu[gpu].terms.empty() || (table.profile && !table.transferred)) {
          o.measured_kernel_gpus.insert(gpu);
        }
      } catch (const ConfigError&) {
        o.base_by_gpu[gpu] = calibration::Calibration{};  // reported per run by the scoring
      }
    }
    if (!logo_fit_.empty()) o.fit.parameters.clear();
    for (const std::string& item : logo_fit_) {
      std::stringstream ss(item);
      std::string part;
      while (std::getline(ss, part, ',')) {
        if (!part.empty()) o.fit.parameters.push_back(part);
      }
    }
    calibration::check_fit_parameters(o.fit.parameters, "--logo-fit");
    o.fit.prior_weight = logo_prior_weight_;
    if (logo_iterations_ < 1) {
      throw ConfigError("--logo-max-iterations: " + std::to_string(logo_iterations_) +
                        " is invalid; expected >= 1");
    }
    o.fit.max_iterations = logo_iterations_;
    if (logo_groups_ != "deployment" && logo_groups_ != "model") {
      throw ConfigError("--logo-groups: '" + logo_groups_ +
                        "' is not a grouping; expected deployment or model");
    }
    o.by_model = logo_groups_ == "model";
    o.fit.replay.seeds = seeds_;
    o.fit.jobs = jobs_;
    o.jobs = jobs_;
    const calibration::LogoTable table = calibration::leave_one_group_out(runs, configs, o);
    calibration::print_logo(out, table);
    if (!output_.empty()) {
      metrics::write_json_atomically(output_, calibration::to_json(table));
      out << "Table written to " << output_ << "\n";
    }
    if (!line_profiles_dir_.empty()) {
      for (const calibration::LineProfile& lp : calibration::line_profiles(runs, configs, o)) {
        const fs::path dir =
            fs::path(line_profiles_dir_) / calibration::host_line_dir(lp.host_line);
        const fs::path file = dir / (lp.gpu + ".json");
        fs::create_directories(file.parent_path());
        calibration::Calibration c = lp.profile;
        c.fit_info["serving_fit"]["dropped_unidentified_parameters"] = lp.dropped_parameters;
        metrics::write_json_atomically(file.string(), calibration::to_json(c));
        out << "Host terms of vLLM " << lp.host_line << " on " << lp.gpu << " (" << c.fit_set.size()
            << " runs) written to " << file.string()
            << (lp.problems.empty() ? std::string() : " (degenerate fit: see fit_info)") << "\n";
      }
    }
    return 0;
  }

  // On stderr, so that they are seen when the table goes to a file: what each run's simulation
  // assumed (run_assumptions.h) and the runs that measured less than the TTFT floor.
  static void print_assumptions_and_warnings(std::ostream& err,
                                             const measured::ValidationTable& table) {
    for (const auto& r : table.runs) {
      for (const std::string& a : r.assumptions) {
        err << "servesim: " << r.id << ": assumed " << a << "\n";
      }
      for (const std::string& w : r.warnings)
        err << "servesim: warning: " << r.id << ": " << w << "\n";
    }
  }

  static void print_refused(std::ostream& out, const std::vector<measured::MeasuredRun>& refused) {
    if (refused.empty()) return;
    out << "Refused " << refused.size() << " run(s) (not simulated):\n";
    for (const auto& r : refused)
      out << "  " << r.id << " (" << r.label << "): " << r.refused << "\n";
    out << "\n";
  }

  // The deployment settings given on the command line (and in --config), as config keys.
  json overrides() const {
    json j = deployment_overrides(*cmd_, opts_);
    if (!engine_version_.empty()) j["engine_version"] = engine_version_;
    return j;
  }

  CLI::App* cmd_ = nullptr;
  RunOptions opts_;
  std::vector<std::string> measured_;
  std::vector<std::string> sidecar_dirs_;
  std::string calibration_file_;
  double holdout_ = 0;
  std::string score_on_;
  std::string output_;
  int seeds_ = 3;
  int jobs_ = 0;
  StudyFlags study_;
  std::string engine_version_;
  bool logo_ = false;
  std::vector<std::string> logo_fit_;
  double logo_prior_weight_ = 0;
  int logo_iterations_ = 8;
  std::string logo_groups_ = "deployment";
  std::string line_profiles_dir_;
};

}  // namespace

std::unique_ptr<Command> make_validate_command() { return std::make_unique<ValidateCommand>(); }

}  // namespace servesim::app
