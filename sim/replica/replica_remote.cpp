// Replica's side of disaggregated prefill/decode: a request whose prompt KV is computed by a
// prefill instance and pulled over a KV link (replica.h, set_remote_kv_source; vLLM's
// vllm/v1/core/sched/scheduler.py with the NixlConnector,
// vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/error.h"
#include "sim/replica/replica.h"

namespace servesim::sim {

void Replica::add_remote_request(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  SERVESIM_CHECK(
      remote_.role == Role::kDecode && links_.virtual_engines.empty() && links_.dp == nullptr &&
          !prefill_first() && sliding_groups() == 0 && config_.kv_mamba_groups == 0,
      "remote KV needs a decode instance (a source), one V1 engine and no sliding-window "
      "groups");
  remote_.arriving.push_back(spec.id);  // take_slot() marks its slot remote
  add_local_request(sim, spec);
  if ((*out_.records)[spec.id].failed) {  // refused at once (too long): it will never take a slot
    remote_.arriving.erase(std::find(remote_.arriving.begin(), remote_.arriving.end(), spec.id));
  }
}

int64_t Replica::cached_prompt_tokens(const workloads::RequestSpec& spec) const {
  if (!config_.enable_prefix_caching) return 0;
  Req r;
  r.id = spec.id;
  r.group = spec.prefix_group;
  r.shared_blocks = spec.prefix_group >= 0 ? spec.prefix_tokens / config_.block_size : 0;
  if (spec.prefix_chain != nullptr) set_chain_keys(r, spec);
  r.kv.reset(r.shared_blocks);
  std::vector<int32_t> scratch;
  const int64_t max_hit_blocks = (int64_t{spec.prompt_tokens} - 1) / config_.block_size;
  return kv_.find_cached(r.id, r.group, r.kv, max_hit_blocks, scratch, chain_keys_of(r)) *
         config_.block_size;
}

bool Replica::reserve_remote(int32_t slot) {
  Req& r = slots_[slot];
  const int64_t bs = config_.block_size;
  const int64_t nt = num_tokens(r);
  // get_computed_blocks: the local hits (at most all but the last token); the connector then
  // reports the rest of the prompt as external (get_num_new_matched_tokens: prompt − computed),
  // and allocate_slots reserves blocks for all of it.
  const int64_t hits =
      kv_.find_cached(r.id, r.group, r.kv, (nt - 1) / bs, step_.hits, chain_keys_of(r));
  const int64_t fresh = (nt + bs - 1) / bs - hits;
  if (kv_.blocks_needed(fresh, hits, step_.hits) > kv_.num_free_blocks()) return false;
  waiting_.pop_front();
  kv_.take_hits(r.id, hits, step_.hits, r.kv);
  kv_.allocate(fresh, r.kv);
  kv_.record_query(nt, hits * bs);
  (*out_.records)[r.id].cached_prompt_tokens = static_cast<int32_t>(hits * bs);
  r.admitted_before = true;
  r.remote = false;  // from here on it is an ordinary request (a preemption recomputes locally)
  r.num_computed = static_cast<int32_t>(hits * bs);
  r.shared_registered = static_cast<int32_t>(std::min<int64_t>(hits, r.shared_blocks));
  remote_.loading.push_back(slot);
  remote_.to_start.emplace_back(r.id, nt - hits * bs);
  return true;
}

void Replica::start_remote_loads(engine::Simulator& sim) {
  // The worker starts the reads when it runs the step that scheduled them (start_load_kv).
  std::vector<std::pair<int64_t, int64_t>> loads;
  loads.swap(remote_.to_start);
  for (const auto& [id, tokens] : loads) {
    remote_.source->start_remote_kv_load(sim, id_, id, tokens);
  }
}

void Replica::remote_kv_loaded(engine::Simulator& sim, int64_t request_id) {
  auto it = std::find_if(remote_.loading.begin(), remote_.loading.end(),
                         [&](int32_t s) { return slots_[s].id == request_id; });
  SERVESIM_CHECK(it != remote_.loading.end(),
                 "remote KV loaded for request " + std::to_string(request_id) +
                     " that is not loading on replica " + std::to_string(id_));
  remote_.ready.push_back(*it);
  remote_.loading.erase(it);
  // An idle engine keeps stepping while requests wait for remote KV (vLLM's engine core polls
  // the connector every step): it notices at once.
  if (!step_.in_flight && !step_.kick_pending) {
    step_.kick_pending = true;
    sim.schedule_at(sim.now(), this, kKick);
  }
}

void Replica::admit_remote_ready() {
  // The skipped WAITING_FOR_REMOTE_KVS requests sit at the head of vLLM's waiting queue; once
  // their KV is in, the next schedule() admits them first, in the queue's order.
  size_t taken = 0;
  while (taken < remote_.ready.size() &&
         static_cast<int64_t>(running_.size()) + async_.ghosts.seqs < config_.max_num_seqs &&
         step_.budget > 0) {
    const int32_t s = remote_.ready[taken++];
    Req& r = slots_[s];
    // _update_waiting_for_remote_kv: every prompt token is computed but the last, which is
    // recomputed to sample the first token. Its blocks are all allocated already.
    r.num_computed = static_cast<int32_t>(num_tokens(r) - 1);
    SERVESIM_CHECK(new_blocks_for(r, 1) == 0, "a remote request's blocks were not reserved");
    r.phase = Phase::kPrefill;
    r.scheduled = 1;
    after_allocation(s, r.scheduled);  // caches the received full blocks (cache_blocks)
    running_.push_back(s);
    prefilling_.push_back(s);
    step_.prefills.push_back(s);
    step_.budget -= 1;
  }
  remote_.ready.erase(remote_.ready.begin(),
                      remote_.ready.begin() + static_cast<std::ptrdiff_t>(taken));
}

}  // namespace servesim::sim
