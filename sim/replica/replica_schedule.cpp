// Replica's scheduler: which requests get how many tokens in a step (vLLM's
// Scheduler.schedule(); replica.h's file comment), the KV blocks they take, and V0's
// prefill-first step. The step loop that calls it is in replica_step.cpp.
#include "sim/replica/replica.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "sim/base/error.h"

namespace servesim::sim {

// ---------------------------------------------------------------------------------------------
// Scheduling one step

int64_t Replica::new_blocks_for(const Req& r, int32_t q) const {
  const int64_t bs = config_.block_size;
  int64_t tokens = static_cast<int64_t>(r.num_computed) + q;
  // Speculative decoding: allocate_slots' num_lookahead_tokens, within max_model_len.
  if (spec_.on) tokens = std::min<int64_t>(tokens + spec_.lookahead, config_.max_model_len);
  const int64_t need = (tokens + bs - 1) / bs;
  return std::max<int64_t>(0, need - r.kv.count);
}

void Replica::trim_sliding_groups(Req& r, int64_t c) {
  const int64_t lo = sliding_lo(r.kv.count, c);
  if (lo > r.sw_lo) {  // skipped blocks are full and computed
    kv_.release_detached(sliding_groups() * (lo - r.sw_lo), /*full=*/true);
    r.sw_lo = static_cast<int32_t>(lo);
  }
}

void Replica::allocate_with_sliding(Req& r, int64_t new_full, int64_t c) {
  trim_sliding_groups(r, c);
  kv_.allocate(new_full, r.kv);
  kv_.take_detached(sliding_groups() * new_full);
}

void Replica::admit_sliding(Req& r, int64_t c) {
  // Linear-attention layers: one state page per group for the request's lifetime.
  if (config_.kv_mamba_groups > 0) kv_.take_detached(config_.kv_mamba_groups);
  if (sliding_groups() == 0) return;
  r.sw_lo = static_cast<int32_t>(sliding_lo(r.kv.count, c));
  kv_.take_detached(sliding_groups() * (r.kv.count - r.sw_lo));
}

void Replica::release_sliding(Req& r) {
  if (config_.kv_mamba_groups > 0) kv_.release_detached(config_.kv_mamba_groups, false);
  if (sliding_groups() == 0) return;
  kv_.release_detached(sliding_groups() * (r.kv.count - r.sw_lo), /*full=*/false);
  r.sw_lo = 0;
}

void Replica::after_allocation(int32_t slot, int32_t q) {
  Req& r = slots_[slot];
  if (offload_ != nullptr) {  // write-through of the blocks full at the step's end
    offload_->store(offload_->now(), r, (int64_t{r.num_computed} + q) / config_.block_size);
  }
  if (r.group < 0 || r.shared_registered >= r.shared_blocks) return;
  // vLLM caches a block as soon as the tokens that fill it are scheduled (allocate_slots).
  const int64_t covered = std::min<int64_t>(
      (static_cast<int64_t>(r.num_computed) + q) / config_.block_size, r.shared_blocks);
  if (covered > r.shared_registered) {
    kv_.register_shared(r.group, r.kv, r.shared_registered, covered, chain_keys_of(r));
    r.shared_registered = static_cast<int32_t>(covered);
  }
}

void Replica::register_computed(Req& r) {
  // Blocks filled by generated tokens inside the shared range (a session's answer): decoders
  // advance implicitly, so their full blocks are registered here, once computed, before the
  // blocks are freed. For every other request the shared range ends inside the prompt and
  // after_allocation has registered all of it already (a no-op here).
  if (r.group < 0 || r.shared_registered >= r.shared_blocks) return;
  const int64_t covered =
      std::min<int64_t>({static_cast<int64_t>(r.num_computed) / config_.block_size,
                         int64_t{r.shared_blocks}, static_cast<int64_t>(r.kv.ids.size())});
  if (covered > r.shared_registered) {
    kv_.register_shared(r.group, r.kv, r.shared_registered, covered, chain_keys_of(r));
    r.shared_registered = static_cast<int32_t>(covered);
  }
}

bool Replica::schedule_running_fast() {
  const int64_t k = step_.index;
  const int32_t threshold = config_.long_prefill_token_threshold > 0
                                ? config_.long_prefill_token_threshold
                                : std::numeric_limits<int32_t>::max();
  int64_t want = decoders_.count();
  int64_t blocks = 0;
  for (int32_t s : prefilling_) {
    const Req& r = slots_[s];
    const int32_t q = std::min(num_tokens(r) - r.num_computed, threshold);
    want += q;
    // With sliding groups, their growth without the trims: whatever the order, each request
    // then finds its blocks free (the trims only add to them).
    blocks += new_blocks_for(r, q) * (1 + sliding_groups());
  }
  if (want > step_.budget) return false;
  // Decoders whose next token starts a new block this step; drop stale entries on the way.
  const std::vector<DecoderIndex::Entry>& bucket =
      decoders_.live_bucket(static_cast<size_t>(k % config_.block_size), slots_);
  const size_t live = bucket.size();
  blocks += static_cast<int64_t>(live) * (1 + sliding_groups());
  if (blocks > kv_.num_free_blocks()) return false;

  // Everyone in `running` gets exactly what it wants: the order no longer matters.
  allocate_boundary_blocks(bucket, k);
  for (int32_t s : prefilling_) {
    Req& r = slots_[s];
    r.scheduled = std::min(num_tokens(r) - r.num_computed, threshold);
    const int64_t full = new_blocks_for(r, r.scheduled);
    if (sliding_groups() == 0) {
      kv_.allocate(full, r.kv);
    } else {
      allocate_with_sliding(r, full, r.num_computed);
    }
    after_allocation(s, r.scheduled);
    step_.prefills.push_back(s);
  }
  step_.decoders = decoders_.count();
  step_.decoder_ctx = decoders_.context_at(k);
  step_.lora_decoders = lora_.decoders;
  step_.budget -= want;
  return true;
}

void Replica::settle_decoder(Req& r, int64_t step) {
  const int64_t delta = step - r.base_step;
  r.generated += static_cast<int32_t>(delta);
  r.num_computed += static_cast<int32_t>(delta);
  r.base_step = step;
}

void Replica::schedule_running_slow(bool& preempted, size_t start, int64_t decoders,
                                    int64_t decoder_ctx, int64_t lora_decoders) {
  const int64_t k = step_.index;
  const int32_t threshold = config_.long_prefill_token_threshold > 0
                                ? config_.long_prefill_token_threshold
                                : std::numeric_limits<int32_t>::max();
  // One pass over the running list where there used to be three (clear and settle everyone; the
  // walk; collect the batch): a request is made ready (its stale `scheduled` cleared, a decoder
  // settled at step k) when the walk reaches it, or when it is picked as a victim before that;
  // the batch is summed as the walk schedules it; only the requests the walk never reached
  // (budget exhausted) are visited again. Same operations on each request, in the same order.
  const auto make_ready = [this, k](Req& r) {
    r.scheduled = 0;
    if (r.phase == Phase::kDecode) settle_decoder(r, k);
  };
  // vLLM's ordered walk over self.running (scheduler.py, "First, schedule the RUNNING requests").
  size_t i = start;
  while (i < running_.size() && step_.budget > 0) {
    const int32_t s = running_[i];
    Req& r = slots_[s];
    make_ready(r);
    int64_t q = std::min<int64_t>(num_tokens(r) - r.num_computed, threshold);
    if (spec_.on && r.phase == Phase::kDecode) q = std::min<int64_t>(spec_tokens_for(r), threshold);
    q = std::min<int64_t>(q, step_.budget);
    if (q <= 0) {
      ++i;
      continue;
    }
    bool scheduled = false;
    for (;;) {
      const int64_t need = new_blocks_for(r, static_cast<int32_t>(q));
      if (sliding_groups() == 0
              ? need <= kv_.num_free_blocks()
              : need + sliding_delta(r, need, r.num_computed) <= kv_.num_free_blocks()) {
        if (sliding_groups() == 0) {
          kv_.allocate(need, r.kv);
        } else {
          allocate_with_sliding(r, need, r.num_computed);
        }
        scheduled = true;
        break;
      }
      // The policy's victim (FCFS: the last; it may be r itself, at i).
      const size_t vi = policy_->victim(running_, slots_);
      const int32_t victim = running_[vi];
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(vi));
      Req& v = slots_[victim];
      if (vi > i) {
        make_ready(v);               // not reached by the walk yet
      } else if (v.scheduled > 0) {  // already scheduled this step: give its tokens back
        step_.budget += v.scheduled;
        if (v.phase == Phase::kDecode) {
          --decoders;
          decoder_ctx -= v.num_computed;
          if (v.lora >= 0) --lora_decoders;
        } else {
          step_.prefills.erase(std::find(step_.prefills.begin(), step_.prefills.end(), victim));
        }
        v.scheduled = 0;
      }
      if (vi < i) --i;
      preempt(victim, k);
      preempted = true;
      if (victim == s) break;
    }
    if (!scheduled) break;
    r.scheduled = static_cast<int32_t>(q);
    step_.budget -= q;
    if (r.phase == Phase::kPrefill) {
      after_allocation(s, r.scheduled);
      step_.prefills.push_back(s);
    } else {
      ++decoders;
      decoder_ctx += r.num_computed;
      if (r.lora >= 0) ++lora_decoders;
    }
    ++i;
  }
  // Decoders the walk did not reach (budget exhausted) skip a token this step.
  for (size_t j = i; j < running_.size(); ++j) {
    const int32_t s = running_[j];
    Req& r = slots_[s];
    make_ready(r);
    if (r.phase == Phase::kDecode) skip_decoder(s, k);
  }
  step_.decoders = decoders;
  step_.decoder_ctx = decoder_ctx;
  step_.lora_decoders = lora_decoders;
  // Decoders that ran keep their index entries: settling does not move their block or finish
  // steps. Drop this step's stale bucket entries so that slow steps do not let them pile up.
  decoders_.live_bucket(static_cast<size_t>(k % config_.block_size), slots_);
}

void Replica::skip_decoder(int32_t slot, int64_t k) {
  Req& r = slots_[slot];
  settle_decoder(r, k);
  close_segment(r, k - 1);
  r.seg_start = k + 1;  // tentative: the next token comes at the next step it runs
  // Its block and finish steps move by one: re-index it (old entries go stale).
  remove_decoder(r);
  ++r.epoch;
  add_decoder(slot, k + 1);
}

void Replica::schedule_v0_step(bool& preempted) {
  const int64_t k = step_.index;
  if (!in_decode_block(k)) {
    v0_.block_start = -1;
    schedule_waiting();  // whole prompts above the watermark (prefill_first)
    if (!step_.prefills.empty()) {
      // "Don't schedule decodes if prefills are scheduled" (_schedule_default).
      for (int32_t s : running_) {
        if (slots_[s].phase == Phase::kDecode) skip_decoder(s, k);
      }
      return;
    }
  }
  if (running_.empty()) return;
  if (!schedule_running_fast()) {
    ++stats_.slow_path_steps;
    schedule_running_slow(preempted);
  }
  if (config_.num_scheduler_steps > 1 && v0_.block_start < 0 && step_.decoders > 0)
    v0_.block_start = k;
}

void Replica::schedule_waiting() {
  const int64_t bs = config_.block_size;
  const int32_t threshold = config_.long_prefill_token_threshold > 0
                                ? config_.long_prefill_token_threshold
                                : std::numeric_limits<int32_t>::max();
  if (!remote_.ready.empty()) admit_remote_ready();  // KV arrived from a prefill instance
  while (!waiting_empty() &&
         static_cast<int64_t>(running_.size()) + async_.ghosts.seqs < config_.max_num_seqs &&
         step_.budget > 0) {
    const int32_t s = waiting_front();
    if (slots_[s].remote) {  // blocks reserved, KV pulled: no seat, no budget yet
      if (!reserve_remote(s)) break;
      continue;
    }
    if (offload_ != nullptr) {
      const OffloadAdmit a = admit_offloaded(s);
      if (a == OffloadAdmit::kBlocked) break;
      if (a == OffloadAdmit::kDone) continue;
    }
    Req& r = slots_[s];
    if (lora_.adapters && !lora_.adapters->admits(r.lora)) {
      // max_loras distinct adapters already run and this one is not among them: vLLM skips the
      // request (it keeps its place in the queue) and goes on with the next one.
      if (r.lora_skipped_ns < 0) r.lora_skipped_ns = step_.now_ns;
      waiting_.pop_front();
      lora_.skipped.push_back(s);
      continue;
    }
    const int64_t nt = num_tokens(r);
    // vLLM never serves the whole prompt from cache: at least the last token is recomputed.
    const int64_t max_hit_blocks = (nt - 1) / bs;
    const int64_t hits =
        kv_.find_cached(r.id, r.group, r.kv, max_hit_blocks, step_.hits, chain_keys_of(r));
    const int64_t cached = hits * bs;
    int64_t q = std::min<int64_t>(nt - cached, threshold);
    q = std::min<int64_t>(q, step_.budget);
    if (prefill_first() && q < nt - cached) break;  // V0: the whole prompt or nothing
    // Speculative decoding: the lookahead slots too, once some tokens are computed (vLLM's
    // effective_lookahead_tokens).
    const int64_t fresh =
        (spec_.on && cached > 0
             ? (std::min<int64_t>(cached + q + spec_.lookahead, config_.max_model_len) + bs - 1) /
                   bs
             : (cached + q + bs - 1) / bs) -
        hits;
    // Sliding groups: blocks for the window of the cached part and the new tokens (a waiting
    // request holds no table: after take_hits it holds `hits` blocks).
    const int64_t sliding = sliding_delta(r, hits + fresh, cached);
    if (kv_.blocks_needed(fresh, hits, step_.hits) + sliding + config_.kv_mamba_groups +
            v0_.watermark_blocks >
        kv_.num_free_blocks()) {
      break;
    }

    waiting_.pop_front();
    kv_.take_hits(r.id, hits, step_.hits, r.kv);
    kv_.allocate(fresh, r.kv);
    admit_sliding(r, cached);
    kv_.record_query(nt, cached);
    if (offload_ != nullptr) offload_->record_query((nt / bs - hits) * bs, 0);
    if (!r.admitted_before) {
      (*out_.records)[r.id].cached_prompt_tokens = static_cast<int32_t>(cached);
      r.admitted_before = true;
    }
    r.num_computed = static_cast<int32_t>(cached);
    r.phase = Phase::kPrefill;
    r.shared_registered = static_cast<int32_t>(std::min<int64_t>(hits, r.shared_blocks));
    r.scheduled = static_cast<int32_t>(q);
    after_allocation(s, r.scheduled);
    if (lora_.adapters) admit_lora(r);
    running_.push_back(s);
    prefilling_.push_back(s);
    step_.prefills.push_back(s);
    step_.budget -= q;
  }
  if (!lora_.skipped.empty()) {
    // The skipped requests go back to the head of the queue, in their order.
    for (auto it = lora_.skipped.rbegin(); it != lora_.skipped.rend(); ++it) {
      waiting_.push_front(*it, slots_[*it]);
    }
    lora_.skipped.clear();
  }
}

void Replica::admit_lora(Req& r) {
  lora_.adapters->add_running(r.lora);
  if (r.lora_skipped_ns >= 0) {
    lora_.adapters->record_wait(step_.now_ns - r.lora_skipped_ns);
    r.lora_skipped_ns = -1;
  }
}

}  // namespace servesim::sim
