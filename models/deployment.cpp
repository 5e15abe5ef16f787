#include "models/deployment.h"

#include <algorithm>

#include "models/calibrated_model.h"
#include "models/roofline_cost_model.h"

namespace servesim::models {

int Deployment::weight_bytes_per_param() const {
  // --quantization fp8: linear weights are stored in 1 byte (embeddings and LM head stay 16-bit;
  // the memory planner accounts for that separately).
  if (quantization == "fp8") {
    return 1;
  }
  return model.dtype_bytes;
}

int Deployment::kv_dtype_bytes() const {
  // vLLM --kv-cache-dtype: fp8 is an alias of fp8_e4m3; both e4m3 and e5m2 store one byte.
  if (kv_cache_dtype == "fp8" || kv_cache_dtype == "fp8_e4m3" || kv_cache_dtype == "fp8_e5m2") {
    return 1;
  }
  return model.dtype_bytes;  // "auto" (and anything else the config loader let through)
}

std::vector<int> default_cuda_graph_sizes(int max_num_seqs, int max_num_batched_tokens) {
  // vLLM v0.11+ (CompilationConfig / SchedulerConfig):
  //   max = min(2 * max_num_seqs, 512)
  //   sizes = [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16), every size <= max,
  // then sizes larger than max_num_batched_tokens are dropped.
  const int max_size = std::min(2 * max_num_seqs, 512);
  std::vector<int> sizes;
  auto add = [&](int s) {
    if (s <= max_size && s <= max_num_batched_tokens) {
      sizes.push_back(s);
    }
  };
  for (int s : {1, 2, 4}) {
    add(s);
  }
  for (int s = 8; s < 256; s += 8) {
    add(s);
  }
  for (int s = 256; s <= max_size; s += 16) {
    add(s);
  }
  return sizes;
}

std::unique_ptr<CostModel> make_cost_model(const Deployment& d) {
  if (d.ideal) {
    return std::make_unique<IdealCostModel>(d);
  }
  if (d.calibration.empty()) {
    return std::make_unique<RooflineCostModel>(d);
  }
  return std::make_unique<RooflineCostModel>(calibrated_deployment(d), calibrated_options(d));
}

Deployment calibrated_deployment(const Deployment& d) {
  Deployment out = d;
  if (auto v = d.calibration.get("link_latency_s")) out.gpu.scale_up.latency_s = *v;
  if (auto v = d.calibration.get("link_bandwidth_bytes_per_s")) {
    out.gpu.scale_up.bandwidth_bytes_per_s = *v;
  }
  return out;
}

RooflineOptions calibrated_options(const Deployment& d) {
  RooflineOptions o = RooflineOptions::from_gpu(d.gpu);
  o.cuda_graph_padding = !d.enforce_eager;
  const hardware::Calibration& c = d.calibration;
  if (auto v = c.get("compute_efficiency")) o.compute_efficiency = *v;
  if (auto v = c.get("memory_efficiency")) o.memory_efficiency = *v;
  if (auto v = c.get("compute_ramp_tokens")) o.compute_ramp_tokens = *v;
  if (auto v = c.get("op_latency_s")) o.op_latency_s = *v;
  if (auto v = c.get("step_overhead_s")) o.step_overhead_s = *v;
  if (auto v = c.get("per_seq_overhead_s")) o.per_seq_overhead_s = *v;
  return o;
}

}  // namespace servesim::models
