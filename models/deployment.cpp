#include "models/deployment.h"

#include <algorithm>

#include "models/calibrated_model.h"
#include "models/roofline_cost_model.h"

namespace servesim::models {

std::string Deployment::weight_format() const {
  return quantization.empty() ? model.checkpoint_quantization : quantization;
}

double Deployment::weight_bytes_per_param() const {
  // --quantization fp8: linear weights are stored in 1 byte (embeddings and LM head stay 16-bit;
  // the memory planner accounts for that separately). MXFP4 quantizes the experts only.
  if (weight_format() == "fp8") {
    return 1;
  }
  if (integer_weights()) return model.checkpoint_weight_bits / 8.0;
  return model.dtype_bytes;
}

bool Deployment::integer_weights() const {
  const std::string f = weight_format();
  return (f == "w4a16" || f == "w8a16") && model.checkpoint_weight_bits > 0;
}

double Deployment::expert_weight_bytes_per_param() const {
  const std::string f = weight_format();
  if (f == "fp8") return 1;
  if (f == "mxfp4") return kMxfp4BytesPerWeight;
  if (integer_weights()) return model.checkpoint_weight_bits / 8.0;
  return model.dtype_bytes;
}

bool Deployment::weight_only_fp8() const { return weight_format() == "fp8" && gpu.fp8_flops <= 0; }

namespace {
// Compute capability below 9.0 in the catalog's architectures (sm80 Ampere, sm89 Ada).
bool below_sm90(const hardware::GpuSpec& gpu) {
  return gpu.architecture == "ampere" || gpu.architecture == "ada";
}
}  // namespace

bool Deployment::mxfp4_marlin() const { return weight_format() == "mxfp4" && below_sm90(gpu); }

bool Deployment::triton_sink_attention() const {
  return model.architecture == "GptOssForCausalLM" && below_sm90(gpu);
}

std::string Deployment::linear_compute_dtype() const {
  return weight_format() == "fp8" && !weight_only_fp8() ? "fp8" : "bf16";
}

int Deployment::kv_dtype_bytes() const {
  // vLLM --kv-cache-dtype: fp8 is an alias of fp8_e4m3; both e4m3 and e5m2 store one byte.
  if (kv_cache_dtype == "fp8" || kv_cache_dtype == "fp8_e4m3" || kv_cache_dtype == "fp8_e5m2") {
    return 1;
  }
  return model.dtype_bytes;  // "auto" (and anything else the config loader let through)
}

std::vector<int> default_cuda_graph_sizes(int max_num_seqs, int max_num_batched_tokens,
                                          CudaGraphSizesRule rule) {
  std::vector<int> sizes;
  auto add = [&](int s, int max_size) {
    if (s <= max_size && s <= max_num_batched_tokens) {
      sizes.push_back(s);
    }
  };
  if (rule == CudaGraphSizesRule::kV0) {
    // V0 captures every size up to the first one >= max_num_seqs (max_batchsize_to_capture =
    // _get_graph_batch_size(min(max_num_seqs, 256))).
    std::vector<int> all = {1, 2, 4};
    for (int s = 8; s <= 256; s += 8) all.push_back(s);
    const int want = std::min(max_num_seqs, 256);
    const int max_size = *std::lower_bound(all.begin(), all.end(), want);
    for (int s : {1, 2, 4}) add(s, max_size);
    for (int s = 8; s <= 256; s += 8) add(s, max_size);
    return sizes;
  }
  if (rule == CudaGraphSizesRule::kV1Dense512) {
    for (int s : {1, 2, 4}) add(s, 512);
    for (int s = 8; s <= 512; s += 8) add(s, 512);
    return sizes;
  }
  // v0.10+: max = min(2 * max_num_seqs, 512).
  const int max_size = std::min(2 * max_num_seqs, 512);
  for (int s : {1, 2, 4}) add(s, max_size);
  if (rule == CudaGraphSizesRule::kV1Dense2x) {
    for (int s = 8; s <= max_size; s += 8) add(s, max_size);
    return sizes;
  }
  // vLLM v0.11+ (CompilationConfig / SchedulerConfig):
  //   sizes = [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16), every size <= max.
  for (int s = 8; s < 256; s += 8) add(s, max_size);
  for (int s = 256; s <= max_size; s += 16) add(s, max_size);
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
  const calibration::CalibrationTerms& t = d.calibration.terms;
  if (t.link_latency_s) out.gpu.scale_up.latency_s = t.link_latency_s->value;
  if (t.link_bandwidth_bytes_per_s) {
    out.gpu.scale_up.bandwidth_bytes_per_s = t.link_bandwidth_bytes_per_s->value;
  }
  return out;
}

RooflineOptions calibrated_options(const Deployment& d) {
  RooflineOptions o = RooflineOptions::from_gpu(d.gpu);
  o.cuda_graph_padding = !d.enforce_eager;
  // A term the profile does not set keeps the GPU catalog's default.
  using calibration::value_or;
  const calibration::CalibrationTerms& t = d.calibration.terms;
  o.compute_efficiency = value_or(t.compute_efficiency, o.compute_efficiency);
  o.memory_efficiency = value_or(t.memory_efficiency, o.memory_efficiency);
  o.compute_ramp_tokens = value_or(t.compute_ramp_tokens, o.compute_ramp_tokens);
  o.op_latency_s = value_or(t.op_latency_s, o.op_latency_s);
  o.step_overhead_s = value_or(t.step_overhead_s, o.step_overhead_s);
  o.per_seq_overhead_s = value_or(t.per_seq_overhead_s, o.per_seq_overhead_s);
  o.per_prefill_token_overhead_s =
      value_or(t.per_prefill_token_overhead_s, o.per_prefill_token_overhead_s);
  o.tp_broadcast_overhead_s = value_or(t.tp_broadcast_overhead_s, o.tp_broadcast_overhead_s);
  o.host_step_s = value_or(t.host_step_s, o.host_step_s);
  o.host_per_seq_s = value_or(t.host_per_seq_s, o.host_per_seq_s);
  o.host_per_prefill_token_s = value_or(t.host_per_prefill_token_s, o.host_per_prefill_token_s);
  o.host_per_sampled_token_s = value_or(t.host_per_sampled_token_s, o.host_per_sampled_token_s);
  return o;
}

}  // namespace servesim::models
