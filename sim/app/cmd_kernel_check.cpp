// `servesim kernel-check`: predicted against measured for every row of a kernel table
// (kernels_<gpu>.csv, scripts/profile_gpu.py), with the kernel tables and calibration a
// simulation on that GPU would use (models/kernel_check.h), then per catalog model the linear
// time of all its layers at --layer-tokens tokens as the step cost model charges it.
//
//   servesim kernel-check --measured kernels_h200.csv --gpu h200
//   servesim kernel-check --measured kernels_h200.csv --gpu h200 --kernel-table
//   hardware/kernels/h100-sxm.json
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "hardware/gpu_spec.h"
#include "hardware/profiles.h"
#include "models/calibrated_model.h"
#include "models/kernel_check.h"
#include "models/model_spec.h"
#include "sim/app/command.h"
#include "sim/app/run_options.h"
#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/calibration/profile.h"
#include "sim/metrics/result_writer.h"

namespace servesim::app {
namespace {

double quantile_abs(const std::vector<models::KernelCheckRow>& rows, double q) {
  std::vector<double> e;
  for (const auto& r : rows) e.push_back(std::fabs(r.error()));
  if (e.empty()) return 0;
  std::sort(e.begin(), e.end());
  return e[static_cast<size_t>(
      std::min<double>(e.size() - 1, std::floor(q * (e.size() - 1) + 0.5)))];
}

double median_signed(const std::vector<models::KernelCheckRow>& rows) {
  std::vector<double> e;
  for (const auto& r : rows) e.push_back(r.error());
  if (e.empty()) return 0;
  std::sort(e.begin(), e.end());
  const size_t n = e.size();
  return n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
}

class KernelCheckCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "kernel-check",
        "predicted vs measured for every row of a kernel table (kernels_<gpu>.csv)");
    cmd_->add_option("--measured", measured_,
                     "kernel table CSV (columns of kernels_h100.csv; scripts/profile_gpu.py)")
        ->required();
    cmd_->add_option("--gpu", gpu_, "the GPU the table was measured on (catalog name or JSON)")
        ->required();
    cmd_->add_option("--kernel-table", kernel_table_,
                     "kernel tables to predict with, as for simulate: auto, none (roofline) or a "
                     "profile with kernels [auto]");
    cmd_->add_option("--calibration", calibration_,
                     "GEMM parameters for the ops without a table, as for simulate [the shipped "
                     "profile of the GPU; none = catalog]");
    cmd_->add_flag("--leave-shape-out", leave_shape_out_,
                   "predict every GEMM row with its own shape removed from the table");
    cmd_->add_option("--layer-tokens", layer_tokens_,
                     "tokens of the per-model all-layers linear time [256]");
    cmd_->add_option("--output", output_,
                     "write the per-row CSV here: measured, predicted, error, source");
    return cmd_;
  }

  int run(std::ostream& out, std::ostream&) override {
    register_kernel_check_inputs();
    const hardware::GpuSpec gpu = hardware::load_gpu(gpu_);
    const std::vector<hardware::KernelRow> rows = hardware::read_kernel_csv(measured_);
    hardware::check_rows_measured_on(rows, gpu, "--measured", measured_);
    models::Deployment d;
    d.gpu = gpu;
    std::string cal_path;
    if (calibration_ != "none") {
      cal_path = calibration_.empty() ? calibration::default_calibration_path(gpu.name).value_or("")
                                      : calibration_;
      if (!cal_path.empty()) {
        d.calibration = calibration::load_calibration(cal_path);
        calibration::check_profile_gpu(d.calibration, gpu, cal_path);
      }
      // Shown from "hardware/" on for the shipped profile, so that reports do not depend on
      // where the tree lives.
      const auto at = cal_path.rfind("hardware/calibration/");
      if (calibration_.empty() && at != std::string::npos) cal_path = cal_path.substr(at);
    }
    d.kernels = models::resolve_kernel_source(kernel_table_ == "auto" ? "" : kernel_table_, gpu,
                                              d.calibration.kernels, cal_path);
    models::KernelCheckOptions opts;
    opts.roofline = models::calibrated_options(d);
    opts.kernels = d.kernels;
    opts.leave_shape_out = leave_shape_out_;
    const std::vector<models::KernelCheckRow> checked = models::check_kernels(rows, gpu, opts);

    out << "Kernel check: " << rows.size() << " rows of " << measured_ << " on " << gpu.name
        << "\nKernel tables: " << d.kernels.label()
        << (leave_shape_out_ ? " (each GEMM shape left out of its own prediction)" : "")
        << "\nOther ops: roofline with "
        << (cal_path.empty() ? "the catalog's parameters" : "the parameters of " + cal_path)
        << "\n\n";
    print_groups(out, checked);
    print_layer_sums(out, rows, d, opts);

    if (!output_.empty()) write_rows(out, checked);
    return 0;
  }

 private:
  // Every file kernel-check reads is an input (refused as an output); --output is checked before
  // any work.
  void register_kernel_check_inputs() {
    std::vector<InputFile> inputs = {{"--measured", measured_, kMaxDataFileBytes}};
    for (InputFile& f :
         config_inputs({{"gpu", gpu_},
                        {"kernel_table", kernel_table_ == "auto" ? "" : kernel_table_},
                        {"calibration", calibration_}})) {
      inputs.push_back(std::move(f));
    }
    register_inputs(inputs);
    check_outputs("--output", output_, false);
  }

  // The error table: per kind × dtype, then all rows, then the rows the kernel table covers.
  static void print_groups(std::ostream& out, const std::vector<models::KernelCheckRow>& checked) {
    std::map<std::string, std::vector<models::KernelCheckRow>> groups;
    std::vector<models::KernelCheckRow> tabled;
    for (const auto& c : checked) {
      groups[c.row.kind + " " + c.row.dtype].push_back(c);
      if (c.source != "roofline") tabled.push_back(c);
    }
    char line[200];
    std::snprintf(line, sizeof line, "%-22s %6s %10s %10s %10s %10s  %s\n", "rows", "count",
                  "median|e|", "p90|e|", "max|e|", "median e", "predicted by");
    out << line;
    auto print = [&](const std::string& name, const std::vector<models::KernelCheckRow>& g) {
      std::set<std::string> sources;
      for (const auto& c : g) sources.insert(c.source);
      std::string src;
      for (const auto& s : sources) src += (src.empty() ? "" : " / ") + s;
      std::snprintf(line, sizeof line, "%-22s %6zu %9.1f%% %9.1f%% %9.1f%% %+9.1f%%  %s\n",
                    name.c_str(), g.size(), 100 * models::median_abs_error(g),
                    100 * quantile_abs(g, 0.9), 100 * quantile_abs(g, 1.0), 100 * median_signed(g),
                    src.c_str());
      out << line;
    };
    for (const auto& [name, g] : groups) print(name, g);
    print("all rows", checked);
    if (!tabled.empty() && tabled.size() != checked.size()) print("rows with a table", tabled);
  }

  // --output: one CSV row per measured kernel, with the prediction and its source.
  void write_rows(std::ostream& out, const std::vector<models::KernelCheckRow>& checked) const {
    std::ostringstream csv;
    csv << "kind,dtype,model,tp,op,m_tokens,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,"
           "measured_us,predicted_us,error_pct,source\n";
    for (const auto& c : checked) {
      const auto& r = c.row;
      char num[96];
      std::snprintf(num, sizeof num, "%.3f,%.3f,%.2f", r.time_s * 1e6, c.predicted_s * 1e6,
                    100 * c.error());
      csv << r.kind << "," << r.dtype << "," << r.model << "," << r.tp << "," << r.op << ","
          << r.m_tokens << "," << r.n << "," << r.k << "," << r.batch << "," << r.q_len << ","
          << r.kv_len << "," << r.q_heads << "," << r.kv_heads << "," << r.head_dim << "," << num
          << "," << c.source << "\n";
    }
    metrics::write_text_atomically(output_, csv.str());
    out << "\nPer-row predictions written to " << output_ << "\n";
  }

  // Per catalog model and TP shard in the table: measured Σ of its four GEMMs × layers against
  // the cost model's RooflineCostModel::layer_linear_time_s × layers (table curve + the
  // elementwise allowance, or the roofline), at --layer-tokens tokens.
  void print_layer_sums(std::ostream& out, const std::vector<hardware::KernelRow>& rows,
                        const models::Deployment& base, const models::KernelCheckOptions& opts) {
    std::map<std::tuple<std::string, long long, long long, long long>, double> measured;
    std::set<std::tuple<std::string, int, std::string>> deployments;  // model, tp, dtype
    for (const auto& r : rows) {
      if (r.kind != "linear") continue;
      measured[{r.dtype, r.n, r.k, r.m_tokens}] = r.time_s;
      if (!r.model.empty() && r.tp > 0) deployments.insert({r.model, r.tp, r.dtype});
    }
    const std::vector<std::string> names = models::model_catalog_names();
    bool header = false;
    char line[200];
    for (const auto& [model, tp, dtype] : deployments) {
      if (std::find(names.begin(), names.end(), model) == names.end()) continue;
      models::Deployment d = base;
      d.model = models::load_model(model);
      if (d.model.is_moe() || d.model.num_heads % tp != 0) continue;
      d.tensor_parallel_size = tp;
      d.quantization = dtype == "fp8" ? "fp8" : "";
      d.gpus_per_node = std::max(tp, 8);
      const long long h = d.model.hidden_size, ii = d.model.intermediate_size / tp;
      const long long hd = d.model.head_dim, q = d.model.num_heads / tp;
      const long long kv = std::max<long long>(1, (d.model.num_kv_heads + tp - 1) / tp);
      const std::vector<std::pair<long long, long long>> shapes = {
          {(q + 2 * kv) * hd, h}, {h, q * hd}, {2 * ii, h}, {h, ii}};
      double meas = 0;
      bool all = true;
      for (const auto& [n, k] : shapes) {
        auto it = measured.find({dtype, n, k, layer_tokens_});
        if (it == measured.end()) {
          all = false;
          break;
        }
        meas += it->second;
      }
      if (!all) continue;
      models::RooflineOptions o = opts.roofline;
      o.cuda_graph_padding = false;
      const models::RooflineCostModel cm(d, o);
      const double layers = static_cast<double>(d.model.num_layers);
      const double tokens = static_cast<double>(layer_tokens_);
      const double pred = layers * cm.layer_linear_time_s(tokens);
      // The GEMMs alone: the charge less the elementwise kernels between them (the measured
      // chain, or t0 per GEMM); under the roofline they are part of each GEMM's fitted time.
      const double gemms = pred - layers * cm.layer_elementwise_time_s(tokens);
      if (!header) {
        out << "\nAll layers' linear time at " << layer_tokens_
            << " tokens: measured = Σ of the four GEMM rows × layers; predicted = the step cost "
               "model's GEMMs; charged = what a step charges (with a table: + the elementwise "
               "kernels between the GEMMs, measured or t0 per GEMM)\n";
        std::snprintf(line, sizeof line, "%-16s %3s %5s %12s %13s %8s %11s\n", "model", "tp",
                      "dtype", "measured ms", "predicted ms", "error", "charged ms");
        out << line;
        header = true;
      }
      std::snprintf(line, sizeof line, "%-16s %3d %5s %12.2f %13.2f %+7.1f%% %11.2f\n",
                    model.c_str(), tp, dtype.c_str(), layers * meas * 1e3, gemms * 1e3,
                    100 * (gemms / (layers * meas) - 1), pred * 1e3);
      out << line;
    }
  }

  CLI::App* cmd_ = nullptr;
  std::string measured_, gpu_, kernel_table_ = "auto", calibration_, output_;
  bool leave_shape_out_ = false;
  long long layer_tokens_ = 256;
};

}  // namespace

std::unique_ptr<Command> make_kernel_check_command() {
  return std::make_unique<KernelCheckCommand>();
}

}  // namespace servesim::app
