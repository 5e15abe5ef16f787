// RequestState: what a replica knows of one request it holds (waiting with a slot, prefilling
// or decoding). Replica owns a vector of them (its slots); the scheduler policies read them.
#ifndef SERVESIM_SIM_REPLICA_REQUEST_STATE_H_
#define SERVESIM_SIM_REPLICA_REQUEST_STATE_H_

#include <cstdint>
#include <vector>

#include "sim/replica/kv_cache_manager.h"

namespace servesim::sim {

enum class RequestPhase : uint8_t { kWaiting, kPrefill, kDecode };

struct RequestState {
  int64_t id = 0;
  int32_t prompt = 0;
  int32_t output = 0;
  int64_t group = -1;
  int32_t shared_blocks = 0;  // full blocks inside the shared prefix
  int32_t priority = 0;
  int64_t arrival_ns = 0;
  RequestPhase phase = RequestPhase::kWaiting;
  uint32_t epoch = 0;        // bumped whenever queued bucket/heap entries become stale
  int32_t generated = 0;     // settled value (at base_step for decoders)
  int32_t num_computed = 0;  // settled value (at base_step for decoders)
  int64_t base_step = 0;     // decoders: the step at which `generated` holds
  int32_t shared_registered = 0;
  int32_t scheduled = 0;   // tokens scheduled in the step in flight
  int64_t seg_start = -1;  // first step of the open token segment, -1 = none
  bool admitted_before = false;
  bool remote = false;  // prompt KV to come from a prefill instance (Replica::add_remote_request)
  int32_t sw_lo = 0;    // sliding-window groups: blocks [0, sw_lo) freed (replica.h)
  int32_t lora = -1;    // LoRA adapter (RequestSpec::lora_adapter; -1: the base model)
  // When the scheduler first skipped it for max_loras since it last waited (-1: not skipped).
  int64_t lora_skipped_ns = -1;
  KvTable kv;  // block table (after a preemption: its cached blocks)
  // Content keys of the prompt's full blocks when the request carries a trace hash chain
  // (RequestSpec::prefix_chain); empty otherwise. shared_blocks == chain_keys.size() then.
  std::vector<uint64_t> chain_keys;
  // KV offloading (sim/replica/kv_offload.h): blocks [0, offload_stored) were offered to the CPU
  // tier; kv_loaded: its table holds blocks copied in from the tier, to be scheduled as computed.
  int32_t offload_stored = 0;
  bool kv_loaded = false;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_REQUEST_STATE_H_
