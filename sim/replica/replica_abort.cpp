// Replica's abort path (replica.h, abort_request): vLLM's Scheduler.finish_requests with
// FINISHED_ABORTED, taken between steps as EngineCore takes aborts from its input queue.
#include <algorithm>
#include <vector>

#include "sim/base/error.h"
#include "sim/replica/replica.h"

namespace servesim::sim {

void Replica::abort_request(engine::Simulator& sim, int64_t request_id) {
  SERVESIM_CHECK(offload_ == nullptr && remote_.role != Role::kDecode && !spec_.on,
                 "abort is not modelled with KV offloading, remote KV or speculative decoding");
  const metrics::RequestRecord& rec = (*out_.records)[static_cast<size_t>(request_id)];
  if (rec.completed || rec.failed) return;
  if (step_.in_flight) {
    step_.aborts.push_back(request_id);  // end_step() applies it
    return;
  }
  abort_now(sim, request_id, step_.index - 1);
}

void Replica::apply_aborts(engine::Simulator& sim, int64_t last_step) {
  std::vector<int64_t> ids;
  ids.swap(step_.aborts);
  for (int64_t id : ids) {
    const metrics::RequestRecord& rec = (*out_.records)[static_cast<size_t>(id)];
    if (!rec.completed && !rec.failed) abort_now(sim, id, last_step);
  }
}

void Replica::abort_now(engine::Simulator& sim, int64_t id, int64_t last_step) {
  account_outstanding(sim.now());
  metrics::RequestRecord& rec = (*out_.records)[static_cast<size_t>(id)];
  const auto run =
      std::find_if(running_.begin(), running_.end(), [&](int32_t s) { return slots_[s].id == id; });
  if (run == running_.end()) {
    // Waiting: it leaves the queue (a preempted request's cached blocks stay evictable).
    const int32_t slot = waiting_.remove(id, slots_);
    SERVESIM_CHECK(slot != WaitingQueue::kAbsent, "aborting a request this engine does not hold");
    if (slot >= 0) {
      Req& r = slots_[slot];
      ++r.epoch;
      r.kv.reset(0);
      free_slots_.push_back(slot);
    }
  } else {
    // Running: as finish() at the end of step last_step, without its remaining tokens.
    const int32_t slot = *run;
    Req& r = slots_[slot];
    if (r.phase == Phase::kDecode) settle_decoder(r, last_step + 1);
    if (async_.on) {
      ++async_.ghosts.seqs;
      async_.ghosts.ctx += num_tokens(r);
    }
    if (in_decode_block(last_step + 1)) {
      ++v0_.dead.seqs;
      v0_.dead.ctx += num_tokens(r);
    }
    close_segment(r, last_step);
    register_computed(r);
    release_sliding(r);
    kv_.free(r.id, r.kv, r.num_computed / config_.block_size, /*preempted=*/false);
    running_.erase(run);
    if (r.phase == Phase::kDecode) {
      remove_decoder(r);
    } else {
      prefilling_.erase(std::find(prefilling_.begin(), prefilling_.end(), slot));
    }
    if (lora_.adapters) lora_.adapters->remove_running(r.lora);
    r.phase = Phase::kWaiting;
    ++r.epoch;
    free_slots_.push_back(slot);
  }
  rec.failed = true;
  rec.error = "aborted";
  out_.observer->on_request_done(sim, id);
}

}  // namespace servesim::sim
