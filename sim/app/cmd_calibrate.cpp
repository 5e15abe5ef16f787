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
#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/app/study.h"
#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/json_file.h"
#include "sim/calibration/profile.h"
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

// Sources are recorded from "realdata/" on for files of the shared real-data set, so that a
// profile does not depend on where the data was mounted (validate compares them the same way).
std::string portable_source(const std::string& path) {
  const auto at = path.rfind("/realdata/");
  return at == std::string::npos ? path : path.substr(at + 1);
}

class CalibrateCommand : public Command {
 public:
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
    {
      std::vector<InputFile> inputs = measured_inputs(measured_, sidecar_dirs_);
      for (const auto& [flag, list] : {std::pair{"--vidur-mlp", &vidur_mlp_},
                                       std::pair{"--llmservingsim-layers", &layer_files_},
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
    JobExecutor* executor = study_.executor(jobs_);  // refuses --shard before any work
    if (vidur_mlp_.empty() && layer_files_.empty() && vidur_allreduce_.empty() &&
        measured_.empty() && kernel_files_.empty()) {
      throw ConfigError(
          "calibrate: nothing to fit; give --vidur-mlp, --vidur-allreduce, "
          "--kernels and/or --measured");
    }
    const hardware::GpuSpec gpu = hardware::load_gpu(gpu_);
    std::vector<std::string> degenerate;  // the serving fit's problems, if any
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
    std::map<std::string, std::string> origin;
    for (const calibration::TermField& f : calibration::term_fields()) {
      if (cal.terms.*f.member) origin[std::string(f.name)] = "base " + base_;
    }

    if (!vidur_mlp_.empty() || !layer_files_.empty()) {
      std::vector<hardware::GemmSample> samples;
      // A GEMM sample the fit can use: positive finite sizes and time (a NaN or header-only
      // table once reached the fit's internal checks).
      auto check_samples = [](const std::vector<hardware::GemmSample>& some, const std::string& f) {
        for (const auto& g : some) {
          if (!(g.tokens >= 1 && g.in_dim > 0 && g.out_dim > 0 && g.time_s > 0) ||
              !std::isfinite(g.in_dim * g.out_dim * g.time_s)) {
            throw ConfigError(f + ": a " + g.op + " GEMM row has tokens " +
                              std::to_string(g.tokens) + ", time " + std::to_string(g.time_s) +
                              " s; expected positive finite sizes and times");
          }
        }
        if (some.empty()) {
          throw ConfigError(f + ": no GEMM rows; expected a profile table with data rows");
        }
      };
      for (const std::string& f : vidur_mlp_) {
        auto some = hardware::read_vidur_mlp(f);
        check_samples(some, f);
        samples.insert(samples.end(), some.begin(), some.end());
        cal.fit_set.push_back(portable_source(f));
      }
      if (!layer_files_.empty()) {
        if (layers_model_.empty()) {
          throw ConfigError("--llmservingsim-layers: give the tables' model with --layers-model");
        }
        const models::ModelSpec m = models::load_model(layers_model_);
        hardware::LayerDims dims;
        dims.hidden = static_cast<double>(m.hidden_size);
        dims.heads = static_cast<double>(m.num_heads);
        dims.kv_heads = static_cast<double>(m.num_kv_heads);
        dims.head_dim = static_cast<double>(m.head_dim);
        dims.intermediate = static_cast<double>(m.intermediate_size);
        dims.vocab = static_cast<double>(m.vocab_size);
        for (const std::string& f : layer_files_) {
          auto some =
              hardware::gemm_samples_from_layers(hardware::read_llmservingsim_layers(f), dims);
          check_samples(some, f);
          samples.insert(samples.end(), some.begin(), some.end());
          cal.fit_set.push_back(portable_source(f));
        }
      }
      const hardware::GemmFit g =
          hardware::fit_gemm(samples, gpu.bf16_flops, gpu.hbm_bandwidth_bytes_per_s);
      using T = calibration::CalibrationTerms;
      cal.terms.compute_efficiency = {g.params.compute_efficiency, g.std_error.compute_efficiency};
      cal.terms.compute_ramp_tokens = {g.params.compute_ramp_tokens,
                                       g.std_error.compute_ramp_tokens};
      cal.terms.memory_efficiency = {g.params.memory_efficiency, g.std_error.memory_efficiency};
      cal.terms.op_latency_s = {g.params.op_latency_s, g.std_error.op_latency_s};
      for (auto member : {&T::compute_efficiency, &T::compute_ramp_tokens, &T::memory_efficiency,
                          &T::op_latency_s}) {
        origin[std::string(calibration::term_name(member))] = "GEMM profiles";
      }
      cal.fit_info["profile_fit"] = {
          {"method", "Levenberg-Marquardt on log time, hardware/profile_fit.h"},
          {"files", vidur_mlp_.size() + layer_files_.size()},
          {"samples", g.samples},
          {"iterations", g.iterations},
          {"rms_log_error", g.rms_log_error},
          {"median_abs_relative_error", g.median_abs_rel_error}};
      out << "GEMM profile fit: " << g.samples << " samples from "
          << vidur_mlp_.size() + layer_files_.size() << " files, median |error| " << std::fixed
          << std::setprecision(1) << 100 * g.median_abs_rel_error << "%, rms log error "
          << std::setprecision(3) << g.rms_log_error << "\n";
    }

    if (!kernel_files_.empty()) read_kernel_tables(gpu, cal, out);

    if (!vidur_allreduce_.empty()) {
      // Single-node all-reduces (devices_per_node == workers), one α–β line per worker count.
      // Only the bandwidth becomes a parameter: the measured α is eager NCCL with a kernel
      // launch (tens of µs), while vLLM runs its custom all-reduce inside CUDA graphs (a few µs),
      // so the α stays the catalog's and the fitted ones are kept for reference.
      const auto samples = hardware::read_vidur_collective(vidur_allreduce_);
      std::set<int> workers;
      for (const auto& c : samples) {
        if (c.collective == "all_reduce" && c.devices_per_node == c.num_workers) {
          workers.insert(c.num_workers);
        }
      }
      if (workers.empty()) {
        throw ConfigError(vidur_allreduce_ + ": no single-node all_reduce rows");
      }
      nlohmann::json fits = nlohmann::json::array();
      hardware::LinkFit widest;
      for (int n : workers) {
        const hardware::LinkFit f = hardware::fit_collective(samples, "all_reduce", n, n);
        fits.push_back({{"num_workers", n},
                        {"latency_s", f.latency_s},
                        {"latency_std_error_s", f.latency_std_error},
                        {"bus_bandwidth_bytes_per_s", f.bandwidth_bytes_per_s},
                        {"samples", f.samples},
                        {"median_abs_relative_error", f.median_abs_rel_error}});
        widest = f;
      }
      cal.terms.link_bandwidth_bytes_per_s = {widest.bandwidth_bytes_per_s, 0};
      origin[std::string(
          calibration::term_name(&calibration::CalibrationTerms::link_bandwidth_bytes_per_s))] =
          "all-reduce profile (" + std::to_string(widest.num_workers) + " GPUs)";
      cal.fit_set.push_back(portable_source(vidur_allreduce_));
      cal.fit_info["collective_fit"] = {
          {"method",
           "weighted linear least squares t = alpha + 2(p-1)/p*bytes/bw per worker count"},
          {"file", portable_source(vidur_allreduce_)},
          {"fits", fits}};
      out << "All-reduce profile fit: " << workers.size() << " worker counts; "
          << widest.num_workers << " GPUs: bus bandwidth " << std::fixed << std::setprecision(0)
          << widest.bandwidth_bytes_per_s / 1e9 << " GB/s, eager NCCL alpha "
          << std::setprecision(1) << widest.latency_s * 1e6 << " us (not applied)\n";
    }

    if (!measured_.empty()) {
      measured::SidecarOptions sidecars;
      sidecars.sidecar_dirs = sidecar_dirs_;
      sidecars.overrides = deployment_overrides(*cmd_, opts_);
      sidecars.overrides["gpu"] = gpu_;
      std::vector<measured::MeasuredRun> runs;
      for (const std::string& path : measured_) {
        for (auto& r : measured::read_measured(path, sidecars)) runs.push_back(std::move(r));
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
      for (auto& row : cal.residuals) row["run"] = portable_source(row["run"].get<std::string>());
      cal.fit_info["serving_fit"] = serving_info["serving_fit"];
      cal.fit_set = profile_sources;
      for (const auto& id : fit.calibration.fit_set) cal.fit_set.push_back(portable_source(id));
      for (const auto& p : opts.parameters) origin[p] = "serving runs";
      out << "Serving fit: " << fit.calibration.fit_set.size() << " runs, " << fit.residual_count
          << " residuals, rms relative error " << std::fixed << std::setprecision(1)
          << 100 * fit.initial_rms << "% -> " << 100 * fit.final_rms << "% in " << fit.iterations
          << " iterations" << (holdout_ > 0 ? " (held-out runs excluded)" : "") << "\n";
      degenerate = fit.problems;
    }

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
  // --kernels: every file's rows (kernel table CSV, or a Vidur mlp.csv's four GEMMs per row)
  // become one KernelProfile for the GPU.
  void read_kernel_tables(const hardware::GpuSpec& gpu, calibration::Calibration& cal,
                          std::ostream& out) const {
    std::vector<hardware::KernelRow> rows;
    for (const std::string& f : kernel_files_) {
      check_input_file(f, "--kernels", kMaxDataFileBytes);
      std::ifstream in(f);
      std::string header;
      if (!in || !std::getline(in, header)) throw ConfigError("--kernels: " + f + ": cannot read");
      std::vector<hardware::KernelRow> some;
      if (header.find("time_us") != std::string::npos) {
        some = hardware::read_kernel_csv(f);
        hardware::check_rows_measured_on(some, gpu, "--kernels", f);
      } else if (header.find("time_stats.attn_pre_proj.median") != std::string::npos) {
        some = hardware::kernel_rows_from_gemms(hardware::read_vidur_mlp(f), gpu.name);
      } else {
        throw ConfigError("--kernels: " + f +
                          ": expected a kernel table (columns of kernels_h100.csv, with time_us) "
                          "or a Vidur mlp.csv (time_stats.attn_pre_proj.median)");
      }
      rows.insert(rows.end(), some.begin(), some.end());
      cal.fit_set.push_back(portable_source(f));
    }
    auto profile = std::make_shared<hardware::KernelProfile>(
        hardware::KernelProfile::from_rows(rows, gpu.name));
    profile->set_identity(hardware::GpuIdentity::of(gpu));
    // How far the monotone (isotonic) curves moved from the measured medians.
    int moved = 0, points = 0;
    double worst = 0;
    for (const hardware::KernelRow& r : rows) {
      if (r.kind != "linear") continue;
      const double t =
          *profile->linear_time_s({r.dtype, r.n, r.k}, static_cast<double>(r.m_tokens));
      const double e = std::fabs(t / r.time_s - 1);
      ++points;
      if (e > 1e-9) ++moved;
      worst = std::max(worst, e);
    }
    int bf16 = 0, fp8 = 0;
    for (const auto& [shape, curve] : profile->linear()) (shape.dtype == "fp8" ? fp8 : bf16)++;
    cal.fit_info["kernel_tables"] = {
        {"method", "per-shape isotonic regression of log time, hardware/kernel_profile.h"},
        {"rows", rows.size()},
        {"linear_shapes_bf16", bf16},
        {"linear_shapes_fp8", fp8},
        {"prefill_attention_shapes", profile->prefill_attention().size()},
        {"linear_rows_moved_by_monotone_fit", moved},
        {"max_abs_relative_change", worst}};
    if (!profile->elementwise().empty()) {
      cal.fit_info["kernel_tables"]["elementwise_shapes"] = profile->elementwise().size();
    }
    if (!profile->moe().empty()) {
      cal.fit_info["kernel_tables"]["moe_shapes"] = profile->moe().size();
    }
    out << "Kernel tables: " << rows.size() << " rows from " << kernel_files_.size()
        << " files: " << bf16 << " bf16 and " << fp8 << " fp8 GEMM shapes, "
        << profile->prefill_attention().size() << " prefill-attention shapes"
        << (profile->elementwise().empty()
                ? std::string()
                : ", " + std::to_string(profile->elementwise().size()) + " elementwise shapes")
        << (profile->moe().empty()
                ? std::string()
                : ", " + std::to_string(profile->moe().size()) + " MoE expert shapes")
        << "; the monotone fit moved " << moved << " of " << points << " GEMM rows, by at most "
        << std::fixed << std::setprecision(1) << 100 * worst << "%\n";
    cal.kernels = std::move(profile);
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
