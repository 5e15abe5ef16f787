// `servesim calibrate`: fit the cost model's free parameters for one GPU and write a calibration
// profile (sim/calibration/profile.h) that every command takes with --calibration FILE.
//
//   servesim calibrate --gpu h100-sxm --vidur-mlp .../compute/h100/*/*/mlp.csv
//       --measured runs/*.json --sidecars DIR --holdout 0.5 --out h100-sxm.json
//
// Sources, any of them:
//   --vidur-mlp FILES  GEMM profiles → compute/memory efficiency, small-GEMM ramp, per-kernel
//                      latency (hardware/profile_fit.h: LM on log time against datasheet peaks).
//   --kernels FILES    measured kernel tables (kernels_<gpu>.csv, scripts/profile_gpu.py; or
//                      Vidur mlp.csv) → the profile's monotone per-shape kernel curves
//                      (hardware/kernel_profile.h) that time GEMMs and prefill attention.
//   --measured FILES   serving runs → step overhead and client TTFT overhead by default (--fit):
//                      the simulator runs inside the fit (sim/calibration/serving_fit.h), on top
//                      of the profile fit or --base.
// --holdout F fits the serving part only on the runs the same `validate --holdout F` does NOT
// score, so fit and score never share a run; the profile lists its fit set either way.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include "hardware/gpu_identity.h"
#include "hardware/gpu_spec.h"
#include "hardware/kernel_profile.h"
#include "hardware/profile_fit.h"
#include "hardware/profiles.h"
#include "models/model_spec.h"
#include "sim/app/command.h"
#include "sim/app/measured_endpoint.h"
#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/app/study.h"
#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/json_file.h"
#include "sim/base/printable.h"
#include "sim/calibration/profile.h"
#include "sim/calibration/profile_sources.h"
#include "sim/calibration/serving_fit.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/replay.h"
#include "sim/measured/validation.h"
#include "sim/metrics/result_writer.h"

namespace servesim::app {
namespace {

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ',')) {
      if (!part.empty()) out.push_back(part);
    }
  }
  return out;
}

class CalibrateCommand : public Command {
 public:
  // --endpoint is checked against every run's file and noted when it agrees.
  std::vector<std::string> vllm_flags_read() const override { return {"--endpoint"}; }
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand("calibrate",
                              "fit the cost model to GEMM profiles and/or measured serving runs");
    cmd_->add_option("--gpu", gpu_, "the GPU the profile is for (catalog name or JSON path)")
        ->required();
    cmd_->add_option("--vidur-mlp", vidur_mlp_, "Vidur mlp.csv GEMM profiles measured on that GPU")
        ->expected(1, -1);
    cmd_->add_option("--llmservingsim-layers", layer_files_,
                     "LLMServingSim per-layer tables (layers.csv) measured on that GPU: their GEMM "
                     "layers join the GEMM fit (needs --layers-model)")
        ->expected(1, -1);
    cmd_->add_option(
        "--layers-model", layers_model_,
        "the model of the --llmservingsim-layers tables (catalog name or config.json)");
    cmd_->add_option("--vidur-allreduce", vidur_allreduce_,
                     "Vidur all_reduce.csv measured on that GPU's nodes: the scale-up link's "
                     "bandwidth (α per worker count is recorded in fit_info)");
    cmd_->add_option("--kernels", kernel_files_,
                     "measured kernel tables of that GPU (kernels_<gpu>.csv columns, as "
                     "scripts/profile_gpu.py writes; or Vidur mlp.csv): stored in the profile as "
                     "monotone per-shape curves that time the linear ops and prefill attention")
        ->expected(1, -1);
    cmd_->add_option("--measured", measured_, "measured serving runs (as for validate)")
        ->expected(1, -1);
    cmd_->add_option("--sidecars", sidecar_dirs_, "sidecar folders (as for validate)")
        ->expected(1, -1);
    cmd_->add_option("--holdout", holdout_,
                     "keep this fraction of the runs out of the fit (validate --holdout scores "
                     "exactly those)");
    cmd_->add_option("--fit", fit_,
                     "serving parameters to fit [step_overhead_s,client_ttft_overhead_s]")
        ->expected(1, -1);
    cmd_->add_option("--metrics", metrics_,
                     "metrics whose relative errors are minimised "
                     "[mean_tpot_ms,mean_itl_ms,mean_ttft_ms,mean_e2el_ms,p100_e2el_ms]")
        ->expected(1, -1);
    cmd_->add_option("--base", base_, "start from this calibration profile");
    cmd_->add_option("--prior-weight", prior_weight_,
                     "pull each fitted serving term toward its starting (datasheet or --base) "
                     "value: weight per ms of deviation, 0 = none [0]");
    cmd_->add_option("--seeds", seeds_, "Poisson replays: seeds averaged per run [2]");
    cmd_->add_option("--jobs", jobs_, "threads, 0 = all cores [0]");
    cmd_->add_option("--description", description_, "free text stored in the profile");
    cmd_->add_option("--out", out_, "the calibration profile to write")->required();
    study_.add_to(*cmd_);
    cmd_->add_flag("--force", force_,
                   "write the profile even when the serving fit is degenerate (a parameter on a "
                   "bound, rms error above 25%, a singular Jacobian)");
    // The deployment and engine flags of validate, applied to every measured run (--gpu is the
    // profile's GPU, above; --calibration makes no sense here: --base starts from a profile).
    add_deployment_options(*cmd_, opts_, {"gpu", "calibration"});
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& err) override {
    check_jobs(jobs_);
    check_seeds(seeds_, 1);
    register_calibrate_inputs();
    JobExecutor* executor = study_.executor(jobs_);  // refuses --shard before any work
    if (vidur_mlp_.empty() && layer_files_.empty() && vidur_allreduce_.empty() &&
        measured_.empty() && kernel_files_.empty()) {
      throw ConfigError(
          "calibrate: nothing to fit; give --vidur-mlp, --vidur-allreduce, "
          "--kernels and/or --measured");
    }
    const hardware::GpuSpec gpu = hardware::load_gpu(gpu_);
    calibration::Calibration cal;
    if (!base_.empty()) {
      cal = calibration::load_calibration(base_);
      // A base of another GPU is how host terms are carried across GPUs (the script that makes
      // the shipped profiles does, saying so in --description); one of --gpu's name fitted on
      // other figures would have its unrefitted terms written as this GPU's own.
      calibration::check_profile_gpu(cal, gpu, "--base: " + base_);
    }
    cal.gpu = gpu.name;
    cal.gpu_identity = hardware::GpuIdentity::of(gpu);
    cal.description = description_;
    std::map<std::string, std::string> origin;  // term name -> what it was fitted on
    for (const calibration::TermField& f : calibration::term_fields()) {
      if (cal.terms.*f.member) origin[std::string(f.name)] = "base " + base_;
    }
    if (!vidur_mlp_.empty() || !layer_files_.empty()) {
      out << calibration::fit_gemm_profiles({vidur_mlp_, layer_files_, layers_model_}, gpu, cal,
                                            origin);
    }
    if (!kernel_files_.empty()) out << calibration::read_kernel_tables(kernel_files_, gpu, cal);
    if (!vidur_allreduce_.empty()) {
      out << calibration::fit_allreduce_profile(vidur_allreduce_, cal, origin);
    }
    std::vector<std::string> degenerate;  // the serving fit's problems, if any
    if (!measured_.empty()) degenerate = fit_measured_runs(executor, cal, origin, out, err);
    print_terms(cal, origin, out);
    // A source listed twice (e.g. in --base and again here) is recorded once.
    std::vector<std::string> unique;
    for (const std::string& f : cal.fit_set) {
      if (std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(f);
    }
    cal.fit_set = unique;
    if (!degenerate.empty()) {
      for (const std::string& p : degenerate) err << "servesim: degenerate fit: " << p << "\n";
      if (!force_) {
        err << "servesim: error: the serving fit is degenerate (see above); " << out_
            << " not written (--force writes it anyway)\n";
        return 1;
      }
    }
    metrics::write_json_atomically(out_, calibration::to_json(cal));
    out << "\nCalibration written to " << out_ << "\n";
    err << "";
    return 0;
  }

 private:
  // Every file calibrate reads is an input (refused as an output); --out is checked before any
  // work.
  void register_calibrate_inputs() {
    std::vector<InputFile> inputs = measured_inputs(measured_, sidecar_dirs_);
    for (const auto& [flag, list] :
         {std::pair{"--vidur-mlp", &vidur_mlp_}, std::pair{"--llmservingsim-layers", &layer_files_},
          std::pair{"--kernels", &kernel_files_}}) {
      for (const std::string& f : *list) inputs.push_back({flag, f, kMaxDataFileBytes});
    }
    if (!vidur_allreduce_.empty()) {
      inputs.push_back({"--vidur-allreduce", vidur_allreduce_, kMaxDataFileBytes});
    }
    if (!base_.empty()) inputs.push_back({"--base", base_, kMaxSettingsFileBytes});
    if (!opts_.config_file.empty()) {
      inputs.push_back({"--config", opts_.config_file, kMaxSettingsFileBytes});
    }
    nlohmann::json keys = deployment_overrides(*cmd_, opts_);
    keys["gpu"] = gpu_;
    if (looks_like_path(layers_model_)) {
      inputs.push_back({"--layers-model", layers_model_, kMaxSettingsFileBytes});
    }
    for (InputFile& f : config_inputs(keys)) inputs.push_back(std::move(f));
    register_inputs(inputs);
    check_outputs("--out", out_, false);
  }

  // --measured: the serving runs (those --holdout leaves in) fitted on top of `cal`'s terms;
  // returns the fit's problems (empty when it can be trusted). Notes go to `err`.
  std::vector<std::string> fit_measured_runs(JobExecutor* executor, calibration::Calibration& cal,
                                             std::map<std::string, std::string>& origin,
                                             std::ostream& out, std::ostream& err) const {
    measured::SidecarOptions sidecars;
    sidecars.sidecar_dirs = sidecar_dirs_;
    sidecars.overrides = deployment_overrides(*cmd_, opts_);
    sidecars.overrides["gpu"] = gpu_;
    const DeclaredEndpoint endpoint =
        take_declared_endpoint(*cmd_, opts_.config_file, sidecars.overrides);
    std::vector<measured::MeasuredRun> runs;
    for (const std::string& path : measured_) {
      for (auto& r : measured::read_measured(path, sidecars)) runs.push_back(std::move(r));
    }
    check_declared_endpoint(endpoint, runs);
    if (const std::string note = declared_endpoint_note(endpoint, runs); !note.empty()) {
      err << "servesim: " << printable(note) << "\n";
    }
    // Runs their reader refused (a model or flag servesim does not model) are not fitted on.
    for (const auto& r : measured::take_refused(runs)) {
      out << "Not fitted on " << r.id << ": " << r.refused << "\n";
    }
    std::vector<bool> fit_on(runs.size(), true);
    if (holdout_ > 0) {
      std::vector<std::string> ids;
      for (const auto& r : runs) ids.push_back(r.id);
      const std::vector<bool> scored = measured::holdout_scored(ids, holdout_);
      for (size_t i = 0; i < runs.size(); ++i) fit_on[i] = !scored[i];
    }
    std::vector<measured::MeasuredRun> chosen;
    std::vector<sim::SimulationConfig> configs;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!fit_on[i]) continue;
      configs.push_back(measured::simulation_config(runs[i], apply_config_json));
      configs.back().calibration = "none";  // the fit supplies every parameter itself
      chosen.push_back(std::move(runs[i]));
    }
    if (chosen.empty())
      throw ConfigError("--holdout " + std::to_string(holdout_) + " leaves no run to fit on");
    calibration::ServingFitOptions opts;
    if (!fit_.empty()) opts.parameters = split_commas(fit_);
    if (!metrics_.empty()) opts.metrics = split_commas(metrics_);
    opts.replay.seeds = seeds_;
    if (prior_weight_ < 0) {
      throw ConfigError("--prior-weight: " + std::to_string(prior_weight_) +
                        " is invalid; expected >= 0");
    }
    opts.prior_weight = prior_weight_;
    opts.jobs = jobs_;
    opts.executor = executor;
    const std::vector<std::string> profile_sources = cal.fit_set;
    const calibration::ServingFit fit = calibration::fit_serving(chosen, configs, cal, opts);
    const auto serving_info = fit.calibration.fit_info;
    cal.terms = fit.calibration.terms;
    cal.domain = fit.calibration.domain;
    cal.residuals = fit.calibration.residuals;
    for (auto& row : cal.residuals)
      row["run"] = calibration::portable_source(row["run"].get<std::string>());
    cal.fit_info["serving_fit"] = serving_info["serving_fit"];
    cal.fit_set = profile_sources;
    for (const auto& id : fit.calibration.fit_set)
      cal.fit_set.push_back(calibration::portable_source(id));
    for (const auto& p : opts.parameters) origin[p] = "serving runs";
    out << "Serving fit: " << fit.calibration.fit_set.size() << " runs, " << fit.residual_count
        << " residuals, rms relative error " << std::fixed << std::setprecision(1)
        << 100 * fit.initial_rms << "% -> " << 100 * fit.final_rms << "% in " << fit.iterations
        << " iterations" << (holdout_ > 0 ? " (held-out runs excluded)" : "") << "\n";
    return fit.problems;
  }

  // The profile's terms as a table: value, standard error and what each was fitted on.
  static void print_terms(const calibration::Calibration& cal,
                          std::map<std::string, std::string>& origin, std::ostream& out) {
    out << "\n"
        << std::left << std::setw(30) << "parameter" << std::setw(16) << "value" << std::setw(14)
        << "std error"
        << "fitted on\n";
    for (const calibration::TermField& f : calibration::term_fields()) {
      const std::optional<calibration::FittedValue>& term = cal.terms.*f.member;
      if (!term) continue;
      std::ostringstream v, e;
      v << std::setprecision(5) << term->value;
      e << std::setprecision(3) << term->std_error;
      out << std::setw(30) << f.name << std::setw(16) << v.str() << std::setw(14) << e.str()
          << origin[std::string(f.name)] << "\n";
    }
  }

  CLI::App* cmd_ = nullptr;
  std::vector<std::string> kernel_files_;
  std::string gpu_;
  std::vector<std::string> vidur_mlp_, measured_, sidecar_dirs_, fit_, metrics_;
  std::string vidur_allreduce_;
  std::vector<std::string> layer_files_;
  std::string layers_model_;
  double holdout_ = 0;
  double prior_weight_ = 0;
  std::string base_, description_, out_;
  int seeds_ = 2;
  int jobs_ = 0;
  StudyFlags study_{
      "calibrate is an iterative fit (each Levenberg-Marquardt step needs every "
      "replay of the step before), so it cannot be cut into independent parts; run "
      "it under mpirun instead"};
  bool force_ = false;
  RunOptions opts_;
};

}  // namespace

std::unique_ptr<Command> make_calibrate_command() { return std::make_unique<CalibrateCommand>(); }

}  // namespace servesim::app
