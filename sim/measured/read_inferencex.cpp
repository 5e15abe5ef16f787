// InferenceX's derived summary CSV: one closed-loop run per row (readers.h).
#include "sim/measured/readers.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "models/model_name.h"
#include "sim/base/error.h"
#include "sim/base/resource_limits.h"
#include "sim/base/rng.h"
#include "sim/measured/reader_helpers.h"
#include "sim/replica/vllm_version.h"

namespace servesim::measured {

using namespace detail;  // the parsing helpers every reader shares

std::vector<MeasuredRun> read_inferencex_csv(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  if (lines.empty()) throw ConfigError(path + ": empty file");
  const std::map<std::string, size_t> col =
      csv_columns(lines[0], path,
                  {"model", "gpu", "precision", "framework", "tp", "isl_osl_label",
                   "source_run_date", "concurrency", "mean_tpot_us", "mean_ttft_us"});
  // "1k" = 1024, "8k" = 8192 (the data set's README).
  auto tokens_of = [&](const std::string& label, const std::string& at) -> int32_t {
    if (label == "1k") return 1024;
    if (label == "8k") return 8192;
    throw ConfigError(at + ": isl_osl_label part '" + label + "' is not 1k or 8k");
  };
  std::vector<MeasuredRun> runs;
  for (size_t li = 1; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = path + ":" + std::to_string(li + 1);
    const std::vector<std::string> cells = csv_row(lines[li], col, at);
    auto cell = [&](const char* key) { return cells[col.at(key)]; };
    if (cell("framework") != "vllm") {
      throw ConfigError(at + ": framework '" + cell("framework") + "'; expected vllm");
    }
    const std::string label = cell("isl_osl_label");
    const auto k = label.find('k');
    if (k == std::string::npos || k + 1 >= label.size()) {
      throw ConfigError(at + ": isl_osl_label '" + label + "'; expected e.g. 1k8k");
    }
    const int32_t isl = tokens_of(label.substr(0, k + 1), at);
    const int32_t osl = tokens_of(label.substr(k + 1), at);
    // 10 x concurrency requests are replayed: concurrency is bounded so that they fit in memory
    // (replay_requests' guard would refuse them only after this loop had drawn them).
    const int64_t conc =
        whole_number(to_double(cell("concurrency"), at + ": concurrency"), 1,
                     std::numeric_limits<int32_t>::max() / 10, at + ": concurrency");
    check_fits_in_memory(at + ": concurrency", 10 * conc, "requests", 1024);
    const int64_t tp = whole_number(to_double(cell("tp"), at + ": tp"), 1,
                                    std::numeric_limits<int32_t>::max(), at + ": tp");

    MeasuredRun run;
    run.id = join_index(path, static_cast<int64_t>(li));
    run.path = path;
    run.format = "inferencex";
    const std::string precision = cell("precision");
    const std::string model_id = cell("model");
    run.label = model_id + " " + precision + " " + cell("gpu") + " TP" + cell("tp") + " " + label +
                " conc " + cell("concurrency");
    MeasuredDeployment& dep = run.deployment;
    dep.model_id = model_id;
    dep.hardware = cell("gpu");
    // The file records no vLLM version; runs of one month used one recipe revision, so the month
    // of the nightly stands for the version (grouping, calibration domains), never a release.
    const std::string month = cell("source_run_date").substr(0, 7);
    dep.engine_version = "nightly-" + month;
    dep.source["engine_version"] = at + " (source_run_date: the version itself is not recorded)";
    // The behaviour the nightly is simulated with: the release line it was built from. v0.11.0 was
    // tagged on 2025-10-02 and v0.11.1 in mid-November 2025, so October 2025 nightlies are the
    // 0.11 line; a later nightly gets the newest line servesim models (it is at least that new).
    // An earlier month is left to the sidecar (or the default version).
    if (month >= "2025-10") {
      const std::string line =
          month == "2025-10" ? std::string("0.11") : sim::vllm_version_table().back().version;
      dep.set("vllm_version", line,
              at + " (source_run_date " + month + " -> the vLLM " + line + " release line)");
    }
    // The catalog holds the FP8 checkpoint of Llama under its own name (its config.json differs by
    // the quantization_config); other models under their base name.
    std::string model = models::catalog_name_for_id(model_id);
    if (precision == "fp8" && !model.empty()) {
      const std::string fp8 = models::catalog_name_for_id(model + "-fp8");
      if (!fp8.empty()) model = fp8;
    }
    if (!model.empty()) dep.set("model", model, at + " (model)");
    const std::string gpu = cell("gpu") == "h100"   ? "h100-sxm"
                            : cell("gpu") == "h200" ? "h200"
                                                    : "";
    if (!gpu.empty()) dep.set("gpu", gpu, at + " (gpu)");
    dep.set("tensor_parallel_size", tp, at + " (tp)");
    // FP8 weights; "fp4" is gpt-oss's own checkpoint format, MXFP4 experts (its config.json
    // quantization_config, models/catalog/gpt-oss-120b.json), which vLLM detects by itself.
    if (precision == "fp8") dep.set("quantization", "fp8", at + " (precision)");
    if (precision == "fp4") dep.set("quantization", "mxfp4", at + " (precision: MXFP4 checkpoint)");
    // The recipe's "≈ --max-num-seqs = CONC" and max-model-len (README): the client never has
    // more than CONC requests outstanding, so a larger value would not change the schedule.
    dep.set("max_num_seqs", conc, path + " README (max-num-seqs = CONC)");
    dep.set("max_model_len", static_cast<int64_t>(isl) + osl, path + " README (ISL + OSL)");

    // Load: benchmark_serving.py --request-rate inf --max-concurrency CONC, 10×CONC prompts,
    // --ignore-eos, lengths uniform on [int(0.8·L), L] (the older client's range rule). The file
    // has no per-request data: the lengths are drawn here from a fixed stream (seed 0), so every
    // read gives the same requests.
    run.request_rate = kInf;
    run.max_concurrency = conc;
    run.num_prompts = 10 * conc;
    run.has_start_times = false;
    RngStream rng(0, "inferencex-lengths:" + label + ":" + cell("concurrency"));
    const int32_t in_lo = static_cast<int32_t>(0.8 * isl), out_lo = static_cast<int32_t>(0.8 * osl);
    for (int64_t i = 0; i < run.num_prompts; ++i) {
      MeasuredRequest r;
      r.input_tokens = static_cast<int32_t>(rng.uniform_int(in_lo, isl));
      r.output_tokens = static_cast<int32_t>(rng.uniform_int(out_lo, osl));
      run.requests.push_back(r);
    }
    run.metrics["mean_tpot_ms"] = to_double(cell("mean_tpot_us"), at + ": mean_tpot_us") * 1e-3;
    run.metrics["mean_ttft_ms"] = to_double(cell("mean_ttft_us"), at + ": mean_ttft_us") * 1e-3;
    run.notes.push_back(
        "summary only (mean TPOT and TTFT); request lengths drawn from the client's "
        "rule [int(0.8 L), L], L = " +
        std::to_string(isl) + " in / " + std::to_string(osl) +
        " out; vLLM version not recorded: 'nightly-" + cell("source_run_date").substr(0, 7) +
        "' is the run's month");
    runs.push_back(std::move(run));
  }
  if (runs.empty()) throw ConfigError(path + ": no rows");
  return runs;
}

}  // namespace servesim::measured
