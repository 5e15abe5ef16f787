#include "sim/app/serve_keys.h"

namespace servesim::app {

const std::vector<ServeKey>& serve_keys() {
  // key, vllm_serve_flag, servesim_serve
  static const std::vector<ServeKey> kKeys = {
      {"model", false, true},
      {"gpu", false, true},
      {"tensor_parallel_size", true, true},
      {"pipeline_parallel_size", true, true},
      {"data_parallel_size", true, true},
      {"enable_expert_parallel", true, true},
      {"moe_routing_skew", false, true},
      {"gpus_per_node", false, true},
      {"inter_node_link", false, true},
      {"quantization", true, true},
      {"kv_cache_dtype", true, true},
      {"mamba_cache_dtype", true, true},
      {"mamba_ssm_cache_dtype", true, true},
      {"dtype", true, true},
      {"enforce_eager", true, true},
      {"ideal", false, true},
      {"num_replicas", false, true},
      {"router", false, true},
      {"calibration", false, true},
      {"kernel_table", false, true},
      {"vllm_version", false, true},
      {"max_num_seqs", true, true},
      {"max_num_batched_tokens", true, true},
      {"block_size", true, true},
      {"gpu_memory_utilization", true, true},
      {"enable_prefix_caching", true, true},
      {"long_prefill_token_threshold", true, true},
      {"max_model_len", true, true},
      {"scheduling_policy", true, true},
      {"num_gpu_blocks_override", true, true},
      {"disable_hybrid_kv_cache_manager", true, true},
      {"num_scheduler_steps", true, true},
      {"async_scheduling", true, true},
      {"enable_chunked_prefill", true, true},
      {"kv_offloading_size", true, false},
      {"kv_offloading_backend", true, false},
      {"speculative_config", true, false},
  };
  return kKeys;
}

bool is_vllm_serve_flag_key(const std::string& key) {
  for (const ServeKey& k : serve_keys()) {
    if (k.vllm_serve_flag && key == k.key) return true;
  }
  return false;
}

bool is_servesim_serve_key(const std::string& key) {
  for (const ServeKey& k : serve_keys()) {
    if (k.servesim_serve && key == k.key) return true;
  }
  return false;
}

}  // namespace servesim::app
