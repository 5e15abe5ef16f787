// LoraAdapters: one engine's LoRA state — which adapters its running requests use (the
// scheduler's max_loras rule), which adapters sit in its GPU slots and CPU cache (the worker's
// LRU managers), and what loading them costs a step.
//
// Scheduler (vllm/v1/core/sched/scheduler.py, "Check that adding the request still respects the
// max_loras constraint"; V0's _schedule_prefills has the same rule): a waiting request whose
// adapter is not among the adapters of the batch while the batch already holds max_loras
// distinct adapters is skipped — it stays waiting, at its place in the queue, and the requests
// behind it are still considered. Requests without an adapter are never skipped for it. The
// batch's adapters are those of the running requests (vLLM: of the running requests scheduled in
// the step; they differ only in steps where vLLM admits nobody).
//
// Worker (vllm/lora/worker_manager.py LRUCacheWorkerLoRAManager, vllm/lora/model_manager.py
// LRUCacheLoRAModelManager): before a step runs, each adapter of its batch is made resident: one
// not in the CPU cache is read from storage (adapter_file_bytes at --lora-load-bandwidth; the
// cache, max_cpu_loras adapters, then drops its least recently used one, which also frees its
// GPU slot), and one not in a GPU slot is copied into one (slot_copy_bytes at
// --lora-h2d-bandwidth; with every slot taken, the least recently used adapter leaves its slot).
// Both caches are touched for every adapter of every batch, in adapter id order (vLLM's order
// is that of a Python set: unspecified). The loads are synchronous in the worker's
// execute_model, so their time is added to the step's device time.
#ifndef SERVESIM_SIM_REPLICA_LORA_ADAPTERS_H_
#define SERVESIM_SIM_REPLICA_LORA_ADAPTERS_H_

#include <cstdint>
#include <map>

#include "sim/replica/lora_config.h"
#include "sim/replica/lru_set.h"

namespace servesim::sim {

// Counters of one engine over a run.
struct LoraStats {
  int64_t requests = 0;         // requests that named an adapter (warm-ups included)
  int64_t slot_loads = 0;       // adapters copied into a GPU slot
  int64_t storage_loads = 0;    // of those, not in the CPU cache: read from storage first
  int64_t cpu_evictions = 0;    // adapters dropped from the CPU cache
  double load_s = 0;            // Σ the time loads added to steps
  int64_t waited_requests = 0;  // admissions of requests that had been skipped for max_loras
  int64_t wait_ns = 0;          // Σ over those: from the first skip to the admission
  int64_t max_wait_ns = 0;
};

class LoraAdapters {
 public:
  // REQUIRES: config resolved (resolve_lora_config) with enable_lora set; its storage_load_s and
  // slot_copy_s time the loads.
  explicit LoraAdapters(const LoraConfig& config);

  // The scheduler's rule: may a waiting request with `adapter` (−1: none) join the batch?
  bool admits(int32_t adapter) const {
    return adapter < 0 || running_.count(adapter) > 0 ||
           static_cast<int64_t>(running_.size()) < max_loras_;
  }
  // A request with `adapter` starts or stops running (no-ops for −1).
  void add_running(int32_t adapter);
  void remove_running(int32_t adapter);
  // Distinct adapters among the running requests.
  int64_t distinct() const { return static_cast<int64_t>(running_.size()); }

  // The seconds the worker spends making the batch's adapters resident before the step.
  double prepare_step();

  // A request naming an adapter reached the engine.
  void count_request() { ++stats_.requests; }
  // A request admitted after waiting `wait_ns` for a slot.
  void record_wait(int64_t wait_ns);

  const LoraStats& stats() const { return stats_; }
  const LruSet& gpu_slots() const { return gpu_; }
  const LruSet& cpu_cache() const { return cpu_; }

 private:
  int64_t max_loras_;
  double storage_load_s_;
  double slot_copy_s_;
  std::map<int32_t, int32_t> running_;  // adapter -> running requests using it
  bool changed_ = false;                // running_'s adapters changed since the last step
  LruSet gpu_;
  LruSet cpu_;
  LoraStats stats_;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_LORA_ADAPTERS_H_
