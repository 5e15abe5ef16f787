#include "sim/replica/lora_config.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "models/lora_shapes.h"
#include "sim/base/error.h"

namespace servesim::sim {

namespace {
// vllm/config/lora.py MaxLoRARanks.
constexpr std::array<int, 9> kRanks = {1, 8, 16, 32, 64, 128, 256, 320, 512};
// Bounds that keep the slot and cache bookkeeping small; far above any deployment.
constexpr int kMaxLoras = 1024;
constexpr int kMaxCpuLoras = 1 << 20;

std::string num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}
}  // namespace

LoraConfig resolve_lora_config(const LoraConfig& config, const models::Deployment& d) {
  const models::ModelSpec& model = d.model;
  const int pipeline_parallel_size = d.pipeline_parallel_size;
  LoraConfig c = config;
  const LoraConfig defaults;
  if (!c.enable_lora) {
    const char* flag = c.max_loras != defaults.max_loras           ? "--max-loras"
                       : c.max_lora_rank != defaults.max_lora_rank ? "--max-lora-rank"
                       : c.max_cpu_loras != defaults.max_cpu_loras ? "--max-cpu-loras"
                       : c.load_gbps != defaults.load_gbps         ? "--lora-load-bandwidth"
                       : c.h2d_gbps != defaults.h2d_gbps           ? "--lora-h2d-bandwidth"
                                                                   : nullptr;
    if (flag != nullptr) {
      throw ConfigError(std::string(flag) + " is set but --enable-lora is not; expected " +
                        "--enable-lora with it (vLLM ignores LoRA flags without it)");
    }
    return c;
  }
  if (c.max_loras < 1 || c.max_loras > kMaxLoras) {
    throw ConfigError("--max-loras: " + std::to_string(c.max_loras) +
                      " is out of range; expected an integer from 1 to " +
                      std::to_string(kMaxLoras));
  }
  if (std::find(kRanks.begin(), kRanks.end(), c.max_lora_rank) == kRanks.end()) {
    throw ConfigError("--max-lora-rank: " + std::to_string(c.max_lora_rank) +
                      " is not a rank vLLM accepts; expected one of 1, 8, 16, 32, 64, 128, 256, "
                      "320, 512");
  }
  if (c.max_cpu_loras == 0) c.max_cpu_loras = c.max_loras;  // vLLM: None -> max_loras
  if (c.max_cpu_loras < c.max_loras || c.max_cpu_loras > kMaxCpuLoras) {
    throw ConfigError("--max-cpu-loras: " + std::to_string(c.max_cpu_loras) +
                      " is out of range; expected an integer from --max-loras (" +
                      std::to_string(c.max_loras) + ") to " + std::to_string(kMaxCpuLoras) +
                      " (vLLM: max_cpu_loras must be >= max_loras)");
  }
  for (const auto& [flag, v] : {std::pair{"--lora-load-bandwidth", c.load_gbps},
                                std::pair{"--lora-h2d-bandwidth", c.h2d_gbps}}) {
    if (!(std::isfinite(v) && v > 0)) {
      throw ConfigError(std::string(flag) + ": " + num(v) +
                        " is out of range; expected a bandwidth in GB/s > 0");
    }
  }
  const std::string why = models::LoraShapes::unsupported_reason(model);
  if (!why.empty()) {
    throw ConfigError("--enable-lora: " + why + " (model " + model.name + ")");
  }
  if (pipeline_parallel_size > 1) {
    throw ConfigError("--enable-lora: LoRA with --pipeline-parallel-size " +
                      std::to_string(pipeline_parallel_size) +
                      " is not modelled; expected --pipeline-parallel-size 1");
  }
  const models::LoraShapes shapes(model, d.tensor_parallel_size, model.num_layers,
                                  model.dtype_bytes);
  c.storage_load_s = shapes.adapter_file_bytes(c.max_lora_rank) / (c.load_gbps * 1e9);
  c.slot_copy_s = shapes.slot_copy_bytes(c.max_lora_rank) / (c.h2d_gbps * 1e9);
  c.step = shapes.step_cost(c.max_lora_rank, d.gpu);
  return c;
}

}  // namespace servesim::sim
