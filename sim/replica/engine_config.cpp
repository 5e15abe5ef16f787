#include "sim/replica/engine_config.h"

#include <sstream>
#include <string>

#include "sim/base/error.h"

namespace servesim::sim {
namespace {

void require(bool ok, const std::string& flag, const std::string& value, const std::string& what) {
  if (!ok) throw ConfigError(flag + ": " + value + " is invalid; expected " + what);
}

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

EngineConfig resolve_engine_config(const EngineConfig& config, const hardware::GpuSpec& gpu,
                                   const models::ModelSpec& model) {
  EngineConfig c = config;
  // vllm/engine/arg_utils.py get_batch_defaults: device memory >= 70 GiB and not an A100 gets the
  // larger defaults (H100/H200/MI300X/B200).
  const bool big_gpu = gpu.memory_bytes >= 70.0 * (1ull << 30) &&
                       gpu.name.find("a100") == std::string::npos;
  if (c.max_num_seqs == 0) c.max_num_seqs = big_gpu ? 1024 : 256;
  if (c.max_num_batched_tokens == 0) c.max_num_batched_tokens = big_gpu ? 8192 : 2048;
  if (c.max_model_len == 0) c.max_model_len = static_cast<int>(model.max_position_embeddings);

  require(c.max_num_seqs >= 1, "--max-num-seqs", std::to_string(c.max_num_seqs), "an integer >= 1");
  require(c.max_num_batched_tokens >= 1, "--max-num-batched-tokens",
          std::to_string(c.max_num_batched_tokens), "an integer >= 1");
  // vLLM SchedulerConfig._verify_args: the budget must cover one token per running sequence.
  require(c.max_num_batched_tokens >= c.max_num_seqs, "--max-num-batched-tokens",
          std::to_string(c.max_num_batched_tokens),
          "a value >= --max-num-seqs (" + std::to_string(c.max_num_seqs) + ")");
  require(c.block_size >= 1 && c.block_size <= 1024, "--block-size", std::to_string(c.block_size),
          "a block size in [1, 1024] (vLLM uses 8, 16, 32, ...)");
  require(c.gpu_memory_utilization > 0 && c.gpu_memory_utilization <= 1,
          "--gpu-memory-utilization", num(c.gpu_memory_utilization),
          "a fraction in (0, 1]");
  require(c.long_prefill_token_threshold >= 0, "--long-prefill-token-threshold",
          std::to_string(c.long_prefill_token_threshold), "an integer >= 0");
  require(c.max_model_len >= 2, "--max-model-len", std::to_string(c.max_model_len),
          "an integer >= 2");
  require(c.scheduling_policy == "fcfs" || c.scheduling_policy == "priority",
          "--scheduling-policy", "'" + c.scheduling_policy + "'", "'fcfs' or 'priority'");
  require(c.num_gpu_blocks_override >= 0, "--num-gpu-blocks-override",
          std::to_string(c.num_gpu_blocks_override), "an integer >= 0");
  return c;
}

}  // namespace servesim::sim
