#include "sim/replica/kv_offload.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/base/error.h"
#include "sim/replica/kv_cache_manager.h"
#include "sim/replica/vllm_version.h"

namespace servesim::sim {

KvOffload::KvOffload(const EngineConfig& config)
    : tier_(config.kv_offload_blocks),
      block_bytes_(config.kv_offload_block_bytes),
      link_(config.kv_offload_link) {
  SERVESIM_CHECK(block_bytes_ > 0 && link_.bandwidth_bytes_per_s > 0,
                 "KV offloading needs its block bytes and host link");
}

uint64_t KvOffload::block_key(const RequestState& r, int64_t i) {
  if (i < r.shared_blocks) {
    return r.chain_keys.empty() ? KvCacheManager::shared_key(r.group, i)
                                : r.chain_keys[static_cast<size_t>(i)];
  }
  // Bit 62 keeps it apart from shared keys (group << 24 | index) and chain keys (bit 61).
  return (1ull << 62) | (static_cast<uint64_t>(r.id) << 24) | static_cast<uint64_t>(i);
}

void KvOffload::fill_keys(const RequestState& r, int64_t from, int64_t to) {
  keys_.clear();
  for (int64_t i = from; i < to; ++i) keys_.push_back(block_key(r, i));
}

int64_t KvOffload::match(const RequestState& r, int64_t gpu_hits, int64_t full_blocks) {
  fill_keys(r, 0, full_blocks);
  tier_.touch(keys_.data(), full_blocks);
  if (full_blocks <= gpu_hits) return 0;  // vLLM: "we can load less than a block, skip"
  return tier_.lookup(keys_.data() + gpu_hits, full_blocks - gpu_hits);
}

void KvOffload::start_load(SimTime now, int64_t blocks, int32_t slot) {
  const double t = copy_s(blocks);
  const SimTime start = std::max(now, to_gpu_free_);
  const SimTime ready = start + SimTime::from_seconds_ceil(t);
  to_gpu_free_ = ready;
  loads_.push_back(Load{ready, slot});
  ++stats_.loads;
  stats_.loaded_blocks += blocks;
  stats_.load_s += t;
  stats_.load_wait_s += (ready - now).seconds();
}

int32_t KvOffload::pop_ready(SimTime now) {
  if (loads_.empty() || loads_.front().ready > now) return -1;
  const int32_t slot = loads_.front().slot;
  loads_.pop_front();
  return slot;
}

void KvOffload::store(SimTime now, RequestState& r, int64_t full_blocks) {
  if (full_blocks <= r.offload_stored) return;
  fill_keys(r, 0, full_blocks);
  const int64_t stored =
      tier_.store(keys_.data() + r.offload_stored, full_blocks - r.offload_stored);
  if (stored < 0) return;  // refused: offered again with the next blocks (vLLM: "cannot store")
  r.offload_stored = static_cast<int32_t>(full_blocks);
  if (stored == 0) return;
  tier_.touch(keys_.data(), full_blocks);
  stats_.stored_blocks += stored;
  const double t = copy_s(stored);
  to_host_free_ = std::max(now, to_host_free_) + SimTime::from_seconds_ceil(t);
  stats_.store_s += t;
  stats_.max_store_lag_s = std::max(stats_.max_store_lag_s, (to_host_free_ - now).seconds());
}

KvOffloadStats KvOffload::stats() const {
  KvOffloadStats s = stats_;
  s.evicted_blocks = tier_.evicted_blocks();
  return s;
}

namespace {

std::string number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

void resolve_kv_offload(EngineConfig& c, const hardware::GpuSpec& gpu,
                        const models::MemoryPlan& memory, int tensor_parallel_size,
                        int pipeline_parallel_size, int data_parallel_size) {
  const std::string& backend = c.kv_offloading_backend;
  if (!backend.empty() && backend != "native") {
    if (backend == "lmcache") {
      throw ConfigError(
          "--kv-offloading-backend: lmcache is not modelled yet (LMCache owns the tier's size, "
          "chunking and eviction); servesim models vLLM's native backend (native)");
    }
    throw ConfigError("--kv-offloading-backend: '" + backend +
                      "' is not one of vLLM's backends; expected native or lmcache");
  }
  const double gib = c.kv_offloading_size;
  if (!(gib >= 0) || !std::isfinite(gib)) {
    throw ConfigError("--kv-offloading-size: " + number(gib) +
                      " is invalid; expected GiB of host memory >= 0 (0 = off)");
  }
  c.kv_offload_blocks = 0;
  if (gib == 0) return;  // vLLM: no offloading unless the size is set
  const std::string line = vllm_minor_version(c.vllm_version);
  const size_t dot = line.find('.');
  const int minor = dot == std::string::npos ? 0 : std::atoi(line.c_str() + dot + 1);
  if (line.rfind("0.", 0) == 0 && minor < 12) {
    throw ConfigError(
        "--kv-offloading-size: servesim models KV offloading from the vLLM 0.12 row on "
        "(the flag came with vLLM PR #27621, merged 2025-10-28, after 0.11.0); "
        "--vllm-version is " +
        c.vllm_version + ": use 0.12 or later");
  }
  const auto refuse = [&](const std::string& why) {
    throw ConfigError("--kv-offloading-size: KV offloading " + why +
                      " is not modelled yet; servesim would simulate it wrongly (remove the flag)");
  };
  if (pipeline_parallel_size > 1) refuse("with pipeline parallelism");
  if (data_parallel_size > 1) refuse("with data parallelism");
  if (c.kv_sliding_groups > 0) {
    refuse(
        "with the hybrid KV cache manager's sliding-window groups (add "
        "--disable-hybrid-kv-cache-manager, as vLLM's offloading runs do)");
  }
  if (!c.enable_prefix_caching) refuse("without prefix caching");
  if (!c.enable_chunked_prefill) refuse("with V0's scheduler");
  if (gpu.host_link.kind.empty()) {
    throw ConfigError("--kv-offloading-size: GPU '" + gpu.name +
                      "' has no host_link (its PCIe link to host memory) in its catalog entry; "
                      "add one {kind, bandwidth_bytes_per_s, latency_s} to a GPU JSON file");
  }
  // vllm/v1/kv_offload/cpu/spec.py: num_blocks = cpu_bytes_to_use // (page bytes × layers ×
  // world_size), cpu_bytes_to_use = kv_offloading_size × 2^30.
  const double block_bytes = static_cast<double>(memory.kv_bytes_per_token) * c.block_size;
  const double all_ranks = block_bytes * tensor_parallel_size * pipeline_parallel_size;
  const double blocks = std::floor(gib * double(1ull << 30) / all_ranks);
  if (blocks < 1) {
    throw ConfigError("--kv-offloading-size: " + number(gib) + " GiB holds no KV block (" +
                      number(all_ranks) + " bytes over the TP x PP ranks); expected at least " +
                      number(all_ranks / double(1ull << 30)) + " GiB");
  }
  if (blocks > double(std::numeric_limits<int32_t>::max() - 1)) {
    throw ConfigError("--kv-offloading-size: " + number(gib) + " GiB is " + number(blocks) +
                      " KV blocks; expected at most " +
                      std::to_string(std::numeric_limits<int32_t>::max() - 1));
  }
  c.kv_offload_blocks = static_cast<int64_t>(blocks);
  c.kv_offload_block_bytes = block_bytes;
  c.kv_offload_link = gpu.host_link;
}

}  // namespace servesim::sim
