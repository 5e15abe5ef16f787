// Replica's hooks for KV offloading to the CPU tier (sim/replica/kv_offload.h): admitting a
// waiting request with a load of its blocks, and again once they are loaded.
#include <algorithm>
#include <limits>
#include <vector>

#include "sim/replica/replica.h"

namespace servesim::sim {

void Replica::collect_loads(engine::Simulator& sim) {
  offload_->set_now(sim.now());
  // vLLM re-queues the requests whose loads ended at the front of the waiting queue, in order
  // (Scheduler.schedule: skipped_waiting_requests are prepended).
  std::vector<int32_t> ready;
  for (int32_t s = offload_->pop_ready(sim.now()); s >= 0; s = offload_->pop_ready(sim.now())) {
    ready.push_back(s);
  }
  for (auto it = ready.rbegin(); it != ready.rend(); ++it) waiting_.push_front(*it, slots_[*it]);
}

void Replica::arm_load_wake(engine::Simulator& sim) {
  if (offload_->take_wake()) sim.schedule_at(offload_->next_ready(), this, kLoadDone);
}

Replica::OffloadAdmit Replica::admit_offloaded(int32_t s) {
  Req& r = slots_[s];
  const int64_t bs = config_.block_size;
  const int64_t nt = num_tokens(r);
  const int32_t threshold = config_.long_prefill_token_threshold > 0
                                ? config_.long_prefill_token_threshold
                                : std::numeric_limits<int32_t>::max();
  const int64_t prompt_blocks = (nt + bs - 1) / bs;
  if (r.kv_loaded) {
    // vLLM _update_waiting_for_remote_kv: the loaded blocks count as computed, at most nt − 1
    // tokens (the last one is recomputed to sample).
    const int64_t computed = std::min<int64_t>(r.kv.count * bs, nt - 1);
    int64_t q = std::min<int64_t>(nt - computed, threshold);
    q = std::min<int64_t>(q, step_.budget);
    const int64_t fresh = std::max<int64_t>(0, (computed + q + bs - 1) / bs - r.kv.count);
    if (fresh > kv_.num_free_blocks()) return OffloadAdmit::kBlocked;
    waiting_.pop_front();
    offload_->reserve(-(prompt_blocks - r.kv.count));
    kv_.allocate(fresh, r.kv);
    r.kv_loaded = false;
    r.num_computed = static_cast<int32_t>(computed);
    r.phase = Phase::kPrefill;
    r.shared_registered = 0;  // the loaded shared blocks are cached now (GPU hits are skipped)
    r.scheduled = static_cast<int32_t>(q);
    after_allocation(s, r.scheduled);
    running_.push_back(s);
    prefilling_.push_back(s);
    step_.prefills.push_back(s);
    step_.budget -= q;
    return OffloadAdmit::kDone;
  }
  // vLLM get_num_new_matched_tokens: the tier's blocks after the GPU hit, of nt / bs full blocks.
  const int64_t hits =
      kv_.find_cached(r.id, r.group, r.kv, (nt - 1) / bs, step_.hits, chain_keys_of(r));
  const int64_t full = nt / bs;
  const int64_t cpu = offload_->match(r, hits, full);
  if (cpu == 0) return OffloadAdmit::kNone;
  // The request takes GPU blocks for its hits and the loaded part now (allocate_slots with the
  // external tokens), then waits for the copy (WAITING_FOR_REMOTE_KVS). vLLM checks only those
  // blocks; servesim also keeps free the blocks the rest of this prompt and of the prompts being
  // loaded will need, so that loaded requests never wait on each other's blocks with nothing
  // running (vLLM could stall there).
  const int64_t rest = prompt_blocks - hits - cpu;
  if (kv_.blocks_needed(cpu, hits, step_.hits) + rest + offload_->reserved_blocks() >
      kv_.num_free_blocks()) {
    return OffloadAdmit::kBlocked;
  }
  waiting_.pop_front();
  offload_->reserve(rest);
  kv_.take_hits(r.id, hits, step_.hits, r.kv);
  kv_.allocate(cpu, r.kv);
  kv_.record_query(nt, hits * bs);
  offload_->record_query((full - hits) * bs, cpu * bs);
  if (!r.admitted_before) {
    (*out_.records)[r.id].cached_prompt_tokens =
        static_cast<int32_t>(std::min<int64_t>((hits + cpu) * bs, nt - 1));
    r.admitted_before = true;
  }
  r.kv_loaded = true;
  // vLLM: _next_stored_block_idx = the loaded blocks' end (they are in the tier already).
  r.offload_stored = static_cast<int32_t>(std::max<int64_t>(r.offload_stored, hits + cpu));
  offload_->start_load(offload_->now(), cpu, s);
  return OffloadAdmit::kDone;
}

}  // namespace servesim::sim
