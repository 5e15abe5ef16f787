#include "sim/replica/vllm_version.h"

#include <regex>

#include "sim/base/error.h"

namespace servesim::sim {
namespace {

using models::CudaGraphSizesRule;

VllmVersionInfo v0(const std::string& version) {
  VllmVersionInfo v;
  v.version = version;
  v.engine = EngineGeneration::kV0;
  v.batch_defaults = BatchDefaultsRule::kV0;
  v.prefix_caching_default = false;
  v.cuda_graphs = CudaGraphSizesRule::kV0;
  v.async_scheduling_available = false;
  v.legacy_random_lengths = true;
  v.rescale_arrivals = false;
  v.fused_moe_separate_caches = true;
  v.sources =
      "V0 engine (VLLM_USE_V1 unset: vllm/envs.py); EngineArgs max_num_seqs=256, "
      "enable_prefix_caching=False, chunked prefill only for max_model_len > 32K "
      "(vllm/engine/arg_utils.py); budget max(max_model_len, 2048) without chunked prefill, "
      "_DEFAULT_MAX_NUM_BATCHED_TOKENS=2048 with it (vllm/config.py SchedulerConfig); _BATCH_SIZES_TO_CAPTURE = [1,2,4]+[8i, i<=32] "
      "(vllm/worker/model_runner.py); benchmark_serving.py sample_random_requests "
      "randint(int(L*r), L+1), get_request sleeps an unrescaled gap after each request; "
      "fused-MoE intermediate caches 1, 2, 3 allocated apart (fused_moe.py fused_experts_impl; "
      "cache1 and cache3 share one buffer from PR #13625, vLLM 0.8)";
  return v;
}

VllmVersionInfo v1(const std::string& version) {
  VllmVersionInfo v;
  v.version = version;
  v.engine = EngineGeneration::kV1;
  v.batch_defaults = BatchDefaultsRule::kV1Memory;
  v.prefix_caching_default = true;
  v.sources =
      "V1 engine; EngineArgs.get_batch_defaults (OPENAI_API_SERVER: 1024/8192 on >=70 GiB "
      "non-A100, else 256/2048; PR #17885) (vllm/engine/arg_utils.py); prefix caching on "
      "(_set_default_args_v1)";
  return v;
}

std::vector<VllmVersionInfo> build_table() {
  std::vector<VllmVersionInfo> t;
  {
    VllmVersionInfo v = v0("0.6");
    v.mla_cache = false;
    v.sources +=
        "; no MLA cache before 0.7.1 (asked for in vLLM issue #4625 \"MLA Support\"; the MLA "
        "attention backends arrived in 0.7.1)";
    t.push_back(v);
  }
  {
    VllmVersionInfo v = v0("0.7");
    v.mla_entry_align_bytes = 256;
    v.mla_absorbed_weights = true;
    v.sources +=
        "; MLA cache entries aligned to 256 B (vllm/worker/cache_engine.py, "
        "VLLM_MLA_CUDA_MEM_ALIGN_KV_CACHE default 1; removed by PR #14842 in 0.8); MLA's "
        "matrix-absorbed decode weights W_Q_UK, W_UV_O (fp8 requantized) and W_QR kept beside "
        "the raw ones (vllm/attention/backends/mla/utils.py process_weights_after_loading, "
        "VLLM_MLA_PERFORM_MATRIX_ABSORPTION default 1)";
    t.push_back(v);
  }
  {
    VllmVersionInfo v = v1("0.8");
    v.batch_defaults = BatchDefaultsRule::kV1DeviceName;
    v.cuda_graphs = CudaGraphSizesRule::kV1Dense512;
    v.async_scheduling_available = false;
    v.legacy_random_lengths = true;
    v.rescale_arrivals = false;
    v.sources =
        "V1 by default (VLLM_USE_V1=1, vllm/envs.py); _set_default_args_v1: 'h100'/'h200' in the "
        "device name -> max_num_seqs 1024, OPENAI_API_SERVER budget 8192, else 256/2048 "
        "(vllm/engine/arg_utils.py); capture sizes [1,2,4]+range(8,513,8) "
        "(vllm/config.py CompilationConfig); benchmarks/benchmark_serving.py as in 0.6/0.7";
    t.push_back(v);
  }
  {
    VllmVersionInfo v = v1("0.9");
    v.cuda_graphs = CudaGraphSizesRule::kV1Dense512;
    v.hybrid_kv_cache = true;
    v.async_scheduling_available = false;
    v.rescale_arrivals = false;
    v.sources +=
        "; --cuda-graph-sizes [512] -> [1,2,4]+range(8,513,8) (SchedulerConfig); "
        "hybrid KV cache manager for sliding-window + full-attention models "
        "(vllm/v1/core/kv_cache_coordinator.py, vllm/v1/kv_cache_interface.py v0.9.0); "
        "RandomDataset lengths on [floor(L(1-r)), ceil(L(1+r))] "
        "(vllm/benchmarks/datasets.py)";
    t.push_back(v);
  }
  {
    VllmVersionInfo v = v1("0.10");
    v.cuda_graphs = CudaGraphSizesRule::kV1Dense2x;
    v.hybrid_kv_cache = true;
    v.rescale_arrivals = false;
    v.sources +=
        "; --cuda-graph-sizes [] -> [min(2*max_num_seqs,512)] -> "
        "[1,2,4]+range(8,max+1,8) (vllm/config/scheduler.py); --async-scheduling added, "
        "off (vllm/v1/core/sched/async_scheduler.py)";
    t.push_back(v);
  }
  for (int minor = 11; minor <= 19; ++minor) {
    VllmVersionInfo v = v1("0." + std::to_string(minor));
    v.cuda_graphs = CudaGraphSizesRule::kV1Sparse;
    v.hybrid_kv_cache = true;
    v.async_scheduling_default = minor >= 14;
    v.fused_moe_modular_workspace = minor >= 14;
    v.sources +=
        "; capture sizes [1,2,4]+range(8,256,8)+range(256,max+1,16), "
        "max=min(2*max_num_seqs,512) (CompilationConfig); vllm bench serve get_request "
        "rescales the cumulated delays to n/rate (vllm/benchmarks/serve.py)";
    v.sources += minor >= 14
                     ? "; async scheduling on by default (PR #27614, vllm/config/scheduler.py "
                       "async_scheduling=None -> on where supported)"
                     : "; async scheduling off by default (vllm/config/scheduler.py)";
    if (minor >= 14) {
      v.sources +=
          "; unquantized MoE experts through the modular kernel's TritonExperts, workspaces "
          "(M, topk, max(N/2, K)) and (M, topk, max(N, K)) (PR #31052 \"Use modular kernel for "
          "unquantized Triton MoE\", merged 2025-12-20, after v0.13.0)";
    }
    t.push_back(v);
  }
  return t;
}

std::string known_versions() {
  std::string s;
  for (const VllmVersionInfo& v : vllm_version_table()) s += (s.empty() ? "" : ", ") + v.version;
  return s;
}

}  // namespace

const std::vector<VllmVersionInfo>& vllm_version_table() {
  static const std::vector<VllmVersionInfo> table = build_table();
  return table;
}

std::string vllm_minor_version(const std::string& version) {
  // "0.8.3", "v0.11.0", "0.19.0+cu128", "0.8.3 (V0 engine)": the leading X.Y decides.
  static const std::regex kMinor(R"(^v?(\d+)\.(\d+)(?:[.+ ]|$))");
  std::smatch m;
  if (!std::regex_search(version, m, kMinor)) return "";
  return std::to_string(std::stoi(m[1])) + "." + std::to_string(std::stoi(m[2]));
}

const VllmVersionInfo& vllm_version(const std::string& version, const std::string& flag) {
  const std::string minor = vllm_minor_version(version);
  for (const VllmVersionInfo& v : vllm_version_table()) {
    if (v.version == minor) return v;
  }
  throw ConfigError(flag + ": '" + version +
                    "' is not a vLLM version servesim models; expected X.Y " +
                    "or X.Y.Z with X.Y one of " + known_versions());
}

BatchDefaults batch_defaults(const VllmVersionInfo& info, const hardware::GpuSpec& gpu) {
  BatchDefaults d;  // 256 / 2048
  bool big = false;
  switch (info.batch_defaults) {
    case BatchDefaultsRule::kV0:
      break;
    case BatchDefaultsRule::kV1DeviceName:
      big =
          gpu.name.find("h100") != std::string::npos || gpu.name.find("h200") != std::string::npos;
      break;
    case BatchDefaultsRule::kV1Memory:
      big = gpu.memory_bytes >= 70.0 * double(1ull << 30) &&
            gpu.name.find("a100") == std::string::npos;
      break;
  }
  if (big) {
    d.max_num_seqs = 1024;
    d.max_num_batched_tokens = 8192;
  }
  return d;
}

}  // namespace servesim::sim
