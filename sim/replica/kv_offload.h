// KvOffload: vLLM's native KV offloading (--kv-offloading-size GiB, OffloadingConnector) for one
// replica — which blocks go to the CPU tier and when, which come back, and how long the copies
// over the GPU's host link take. docs/deployment-modes.md, "KV offload", has the vLLM sources.
//
// Semantics (vllm/distributed/kv_transfer/kv_connector/v1/offloading_connector.py, scheduler
// side):
//   store  write-through: each step, every full block a scheduled request will have computed by
//          the step's end (prompt or generated tokens, GPU prefix hits included) and has not
//          offered before is offered to the tier (_get_reqs_to_store, prepare_store), then all of
//          its blocks so far are touched. servesim offers a prefill's blocks when its chunk is
//          scheduled and a decoder's generated blocks when it finishes or is preempted (its
//          progress is implicit in between: replica.h).
//   load   when a waiting request is admitted, the blocks that follow its GPU prefix-cache hit
//          are looked up in the tier (get_num_new_matched_tokens, after touching all of its
//          blocks); with a hit the request takes GPU blocks for the hit and the loaded part,
//          waits (WAITING_FOR_REMOTE_KVS) while they are copied in, and is scheduled again at the
//          first step that starts after the copy ends, with the loaded tokens computed (at most
//          prompt − 1: vLLM recomputes the last token).
// Timing: one KV block of one GPU (its TP shard) is `block_bytes` bytes; each GPU has its own host
// link (a PCIe x16 per GPU, as on HGX/DGX boards), so a replica's TP ranks copy their shards at
// once and a copy of B blocks takes latency + B × block_bytes / bandwidth. A replica's loads
// (host to GPU) queue one after another on that link, its stores (GPU to host, the other
// direction of the full-duplex link) likewise; stores delay nothing (vLLM keeps a finished
// request's GPU blocks until its store ends; not modelled) but their backlog is reported. Not
// modelled: contention between GPUs of a node on a shared PCIe switch or on host-memory
// bandwidth, and between replicas of a node.
#ifndef SERVESIM_SIM_REPLICA_KV_OFFLOAD_H_
#define SERVESIM_SIM_REPLICA_KV_OFFLOAD_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "models/memory_planner.h"
#include "sim/base/time.h"
#include "sim/replica/engine_config.h"
#include "sim/replica/kv_offload_tier.h"
#include "sim/replica/request_state.h"

namespace servesim::sim {

// Counters of one replica's CPU tier over a run.
struct KvOffloadStats {
  int64_t queried_tokens = 0;  // full-block prompt tokens looked up beyond the GPU hit
  int64_t hit_tokens = 0;      // tokens loaded from the tier (what prefill did not compute)
  int64_t loads = 0;           // requests that loaded
  int64_t loaded_blocks = 0;
  int64_t stored_blocks = 0;
  int64_t evicted_blocks = 0;  // tier blocks evicted to make room
  double load_s = 0;           // Σ per load: its copy time (latency + bytes / bandwidth)
  double load_wait_s = 0;      // Σ per load: queue on the link + copy
  double store_s = 0;          // Σ copy time of the stores (the link's busy time, to host)
  double max_store_lag_s = 0;  // the longest a store waited behind earlier stores + its copy
};

class KvOffload {
 public:
  // REQUIRES: config.kv_offload_blocks > 0 (resolve_kv_offload).
  explicit KvOffload(const EngineConfig& config);

  // Blocks of the tier that continue a GPU hit of `gpu_hits` blocks, among the request's first
  // `full_blocks` full blocks (vLLM: len(request.block_hashes)). Touches the held ones first.
  int64_t match(const RequestState& r, int64_t gpu_hits, int64_t full_blocks);
  // Counts a lookup of `queried_tokens` beyond the GPU hit, `hit_tokens` of them found.
  void record_query(int64_t queried_tokens, int64_t hit_tokens) {
    stats_.queried_tokens += queried_tokens;
    stats_.hit_tokens += hit_tokens;
  }
  // Starts the copy of `blocks` blocks of `slot` at `now`; it joins the loads in flight.
  void start_load(SimTime now, int64_t blocks, int32_t slot);
  // Offers blocks [r.offload_stored, full_blocks) to the tier and touches [0, full_blocks).
  void store(SimTime now, RequestState& r, int64_t full_blocks);

  bool loading() const { return !loads_.empty(); }
  size_t num_loading() const { return loads_.size(); }
  // When the oldest load in flight ends. REQUIRES: loading().
  SimTime next_ready() const { return loads_.front().ready; }
  // The slot of the oldest load if it has ended by `now`, else −1 (and nothing changes).
  int32_t pop_ready(SimTime now);

  // The replica's clock while it schedules a step (stores and loads are timed from it).
  void set_now(SimTime now) { now_ = now; }
  SimTime now() const { return now_; }
  // True once per end time of the oldest load in flight: the replica then queues a wake-up.
  bool take_wake() {
    if (loads_.empty() || loads_.front().ready == wake_) return false;
    wake_ = loads_.front().ready;
    return true;
  }

  // GPU blocks that the requests being loaded (or loaded, not yet scheduled) still need for the
  // rest of their prompts (replica_offload.cpp: a load starts only when they stay free).
  int64_t reserved_blocks() const { return reserved_; }
  void reserve(int64_t blocks) { reserved_ += blocks; }

  const KvOffloadTier& tier() const { return tier_; }
  KvOffloadStats stats() const;
  // Copy time of `blocks` blocks over the host link, one direction.
  double copy_s(int64_t blocks) const {
    return link_.latency_s +
           static_cast<double>(blocks) * block_bytes_ / link_.bandwidth_bytes_per_s;
  }

  // The content key of block i of a request: its shared key inside the shared prefix (the GPU
  // cache's), else a key of its own (request id, i): only the request itself can hit it, after a
  // preemption.
  static uint64_t block_key(const RequestState& r, int64_t i);

 private:
  struct Load {
    SimTime ready;
    int32_t slot;
  };
  void fill_keys(const RequestState& r, int64_t from, int64_t to);

  KvOffloadTier tier_;
  double block_bytes_;
  hardware::LinkSpec link_;
  SimTime to_gpu_free_;     // the host-to-GPU direction is busy until then
  SimTime to_host_free_;    // the GPU-to-host direction
  std::deque<Load> loads_;  // in flight, in the order they end (one FIFO link)
  SimTime now_;
  SimTime wake_ = SimTime::max();  // the end time a wake-up was last queued for
  int64_t reserved_ = 0;
  std::vector<uint64_t> keys_;
  KvOffloadStats stats_;
};

// Fills config.kv_offload_blocks, kv_offload_block_bytes and kv_offload_link from
// --kv-offloading-size / --kv-offloading-backend, the memory plan and the GPU's host link, as
// vLLM sizes the tier (vllm/v1/kv_offload/cpu/spec.py): kv_offloading_size GiB over the KV bytes
// of one block summed over the TP × PP ranks (the size is the total of all ranks). No-op when the
// size is 0. Throws ConfigError naming the flag for what is not modelled: the lmcache backend,
// pipeline or data parallelism, sliding-window layers kept by the hybrid KV cache manager,
// prefix caching off, vLLM rows before 0.12, a GPU without a host link, a tier of 0 blocks.
void resolve_kv_offload(EngineConfig& config, const hardware::GpuSpec& gpu,
                        const models::MemoryPlan& memory, int tensor_parallel_size,
                        int pipeline_parallel_size, int data_parallel_size);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_KV_OFFLOAD_H_
