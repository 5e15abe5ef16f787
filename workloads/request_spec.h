// RequestSpec: one request as the client sends it.
#ifndef SERVESIM_WORKLOADS_REQUEST_SPEC_H_
#define SERVESIM_WORKLOADS_REQUEST_SPEC_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "sim/base/time.h"

namespace servesim::workloads {

// The most tokens a prompt or an output can have: RequestSpec holds them in int32_t.
inline constexpr int64_t kMaxTokens = std::numeric_limits<int32_t>::max();

struct RequestSpec {
  int64_t id = 0;   // 0, 1, 2, ... in arrival order
  SimTime arrival;  // when the client would send it (before any --max-concurrency wait)
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;  // generated exactly (ignore_eos), as vLLM's random dataset asks
  // Prefix identity for prefix caching: the first `prefix_tokens` tokens of the prompt are
  // identical for every request with the same prefix_group (-1 = no shared prefix). The rest of
  // the prompt is unique to the request.
  int64_t prefix_group = -1;
  int32_t prefix_tokens = 0;
  int32_t priority = 0;  // --scheduling-policy priority: lower value is served first
  // Prefix identity from a trace (Mooncake hash_ids), or null: chain[j] identifies the prompt's
  // first (j + 1) * chain_block_tokens tokens (a key of the whole prefix, not of block j alone),
  // so two requests share their first t tokens iff their chains agree up to block
  // ceil(t / chain_block_tokens) - 1. When set, it replaces prefix_group/prefix_tokens for the KV
  // cache and the prefix-aware router. Shared (not copied) so that a RequestSpec stays cheap.
  std::shared_ptr<const std::vector<uint64_t>> prefix_chain;
  int32_t chain_block_tokens = 0;  // tokens per chain block (512 for Mooncake)
  // The chain also identifies the generated tokens: the request's whole sequence (prompt, then
  // output) is a prefix of a longer token stream, as a multi-turn session's history is, so the
  // blocks its answer fills are cached under the chain's keys too (session_workload.h). False for
  // a trace, whose chain covers the prompt only.
  bool chain_covers_output = false;
  // Workload class (index into the workload file's classes, workload_classes.h); -1 = none.
  int32_t class_id = -1;
  // LoRA adapter the request names (0, 1, ...; lora_workload.h or a trace's lora_adapter
  // column); -1 = the base model.
  int32_t lora_adapter = -1;
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_REQUEST_SPEC_H_
