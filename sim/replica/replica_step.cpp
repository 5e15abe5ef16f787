// Replica's step loop: starting a step (its batch shape, cost and accounting), decode runs, and
// the end of a step (tokens, finishes). Scheduling is in replica_schedule.cpp.
#include "sim/replica/replica.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "models/linear_attention.h"
#include "sim/base/error.h"

namespace servesim::sim {

// ---------------------------------------------------------------------------------------------
// Running one step

void Replica::allocate_boundary_blocks(const std::vector<DecoderIndex::Entry>& bucket, int64_t k) {
  if (sliding_groups() == 0) {
    for (const DecoderIndex::Entry& e : bucket) kv_.allocate(1, slots_[e.slot].kv);
    return;
  }
  for (const DecoderIndex::Entry& e : bucket) {
    Req& r = slots_[e.slot];
    allocate_with_sliding(r, 1, decoder_context(r, k));
  }
}

namespace {

// SimTime::from_seconds_ceil(s) without the library call: for s within the clock's range,
// x = s·1e9 − 1e-6 is below 2^63 in magnitude, so truncating it and adding 1 when that fell short
// of x is ceil(x), exactly. Outside the range, from_seconds_ceil reports the error.
SimTime duration_ceil(double s) {
  if (!(s >= -SimTime::kMaxSeconds && s <= SimTime::kMaxSeconds)) {
    return SimTime::from_seconds_ceil(s);
  }
  const double x = s * 1e9 - 1e-6;
  auto ns = static_cast<int64_t>(x);
  if (static_cast<double>(ns) < x) ++ns;
  return SimTime::from_ns(ns);
}

}  // namespace

// The accounting of a step that starts now and lasts `duration`, written once for both the
// general path (start_step) and decode runs (run_decode_steps): `seqs` and `tokens` scheduled,
// `running` requests, `ideal_s` the ideal model's time for it (0 without one).
inline void Replica::record_step(const engine::Simulator& sim, SimTime duration, int64_t seqs,
                                 int64_t tokens, int64_t running, double ideal_s) {
  if (faults_.spikes != nullptr)
    duration = faults_.spikes->apply(sim.now(), duration);  // fault injection
  step_.in_flight = true;
  step_.end = sim.now() + duration;
  step_.end_queued = links_.dp_lockstep;  // a DP round schedules the end itself
  ++stats_.steps;
  stats_.busy_ns += duration.ns();
  stats_.scheduled_seqs += seqs;
  stats_.scheduled_tokens += tokens;
  stats_.peak_used_blocks = std::max(stats_.peak_used_blocks, kv_.num_used_blocks());
  stats_.peak_running = std::max(stats_.peak_running, running);
  stats_.peak_step_tokens = std::max(stats_.peak_step_tokens, tokens);
  if (costs_.has_ideal()) {
    stats_.ideal_busy_s += ideal_s;
    if (!links_.dp_lockstep && static_cast<double>(duration.ns()) + 1.0 < ideal_s * 1e9) {
      ++stats_.steps_below_ideal;
    }
  }
}

// The step in flight ends at `end`: logged, and the next step's index comes up.
inline void Replica::close_step(SimTime end) {
  step_.in_flight = false;
  step_log_.step_end.push_back(end);
  ++step_.index;
}

bool Replica::run_decode_steps(engine::Simulator& sim, bool& chained) {
  const int64_t n = decoders_.count();
  // Only decoders (all of running), nothing to admit, no placeholders, one engine, and the whole
  // batch within the budget: schedule_running_fast() gives everyone one token, schedule_waiting()
  // has nothing to do.
  if (spec_.on || n == 0 || static_cast<int64_t>(running_.size()) != n || !prefilling_.empty() ||
      !waiting_empty() || !remote_.ready.empty() || async_.ghosts.seqs != 0 || v0_.dead.seqs != 0 ||
      links_.pipeline != nullptr || links_.dp_lockstep || n > config_.max_num_batched_tokens) {
    return false;
  }
  if (offload_ != nullptr && offload_->loading()) return false;  // a load ends: it is admitted
  // Multi-step: with nothing waiting, a decode block begins here (schedule_v0_step).
  if (config_.num_scheduler_steps > 1 && v0_.block_start < 0) v0_.block_start = step_.index;
  const models::DecodeSeries* cost_series = nullptr;
  const models::DecodeSeries* ideal_series = nullptr;
  if (!costs_.decode_series(n, cost_series, ideal_series)) return false;
  const models::DecodeSeries& cost = *cost_series;
  const models::DecodeSeries& ideal = *ideal_series;
  const bool has_ideal = costs_.has_ideal();
  SERVESIM_CHECK(n <= config_.max_num_seqs, "max_num_seqs exceeded");
  const int64_t bs = config_.block_size;
  int64_t k = step_.index;
  auto bi = static_cast<size_t>(k % bs);
  // No request finishes before this step's end (the finish heap does not change during the run).
  const int64_t next_finish = decoders_.next_finish();
  const double host = cost.host_s;
  // LoRA: the running set, and so the batch's adapters, stays the same for the whole run; an
  // adapter that left with the last step's finishes only reorders the caches (no load).
  double lora_s = 0.0;
  if (lora_.adapters) {
    lora_.adapters->prepare_step();
    lora_s = config_.lora.step.seconds(lora_.decoders, lora_.adapters->distinct());
  }
  step_.prefills.clear();
  step_.decoders = n;
  step_.budget = config_.max_num_batched_tokens - n;
  // The models' step times are computed ahead, a few steps at a time (up to the step in which
  // the next request finishes): independent of one another, they pipeline, where computed one by
  // one between the bookkeeping they would wait on each other's divisions.
  constexpr int64_t kAhead = 8;
  double totals[kAhead];
  double ideals[kAhead];
  int64_t ahead = 0;
  int64_t used = 0;
  for (;;) {
    if (used == ahead) {
      ahead = std::clamp<int64_t>(next_finish - k + 1, 1, kAhead);
      used = 0;
      const int64_t ctx0 = decoders_.context_offset() + n * k;
      for (int64_t j = 0; j < ahead; ++j) totals[j] = cost.total_s(ctx0 + n * j);
      if (lora_.adapters) {
        for (int64_t j = 0; j < ahead; ++j) totals[j] += lora_s;
      }
      if (has_ideal) {
        for (int64_t j = 0; j < ahead; ++j) ideals[j] = ideal.total_s(ctx0 + n * j);
      }
    }
    // schedule_running_fast(): the decoders whose next token starts a new block.
    const std::vector<DecoderIndex::Entry>& bucket = decoders_.live_bucket(bi, slots_);
    const size_t live = bucket.size();
    // With sliding groups, their growth without the trims (as in schedule_running_fast).
    if (static_cast<int64_t>(live) * (1 + sliding_groups()) > kv_.num_free_blocks()) {
      return false;  // the slow path
    }
    allocate_boundary_blocks(bucket, k);
    step_.decoder_ctx = decoders_.context_offset() + n * k;

    // start_step(): the step's cost and counters.
    const double total = totals[used];
    const double s = async_.on && chained ? std::max(total - host, host) : total;
    const SimTime duration = std::max(SimTime::from_ns(1), duration_ceil(s));
    record_step(sim, duration, n, n, n, has_ideal ? ideals[used] : 0.0);
    ++used;

    // end_step(): a token for every decoder and nothing else, when nobody finishes in this step
    // and its end is the next event.
    if (k >= next_finish || !sim.advance_inline(step_.end)) return true;
    close_step(step_.end);
    ++k;
    if (++bi == static_cast<size_t>(bs)) bi = 0;
    chained = true;
  }
}

void Replica::start_step(engine::Simulator& sim, bool chained) {
  if (run_decode_steps(sim, chained)) return;
  for (;;) {
    // Ghosts (async scheduling) were scheduled first, in vLLM's running list: their tokens come
    // out of the budget before anyone else's.
    step_.budget = config_.max_num_batched_tokens - async_.ghosts.seqs;
    step_.prefills.clear();
    step_.decoders = 0;
    step_.decoder_ctx = 0;
    if (offload_ != nullptr) collect_loads(sim);
    step_.verify.clear();
    step_.lora_decoders = 0;
    step_.now_ns = sim.now().ns();
    bool preempted = false;
    bool verify_summed = false;  // speculative decoding: spec_.sums hold the step's rows
    if (prefill_first()) {
      schedule_v0_step(preempted);
    } else {
      if (!running_.empty() && (spec_.on || !schedule_running_fast())) {
        ++stats_.slow_path_steps;
        if (spec_.on) {
          verify_summed = schedule_verify_rows(preempted, spec_.sums);
        } else {
          schedule_running_slow(preempted);
        }
      }
      if (!preempted) schedule_waiting();
    }
    if (!remote_.to_start.empty()) start_remote_loads(sim);

    models::BatchShape shape;
    shape.decode_seqs = step_.decoders + async_.ghosts.seqs + v0_.dead.seqs;
    shape.decode_context_tokens = step_.decoder_ctx + async_.ghosts.ctx + v0_.dead.ctx;
    shape.sampled_seqs = step_.decoders + async_.ghosts.seqs + v0_.dead.seqs;
    const int64_t window = config_.attention_window;  // 0: no sliding-window layers
    // Gated DeltaNet layers: the step's prefills counted in chunk_gated_delta_rule's chunks.
    const bool linear_layers = config_.kv_mamba_groups > 0;
    int64_t lora_prefill_tokens = 0;
    for (int32_t s : step_.prefills) {
      const Req& r = slots_[s];
      if (r.lora >= 0) lora_prefill_tokens += r.scheduled;
      const double q = r.scheduled;
      const double c = r.num_computed;
      ++shape.prefill_seqs;
      shape.prefill_tokens += r.scheduled;
      shape.prefill_attn_work += q * (c + q / 2.0);
      shape.prefill_context_tokens += r.num_computed;
      if (window > 0) {
        shape.prefill_window_attn_work +=
            models::windowed_attn_work(c, q, static_cast<double>(window));
        shape.prefill_window_context_tokens += std::min<int64_t>(r.num_computed, window);
      }
      if (linear_layers) {
        shape.prefill_linear_chunks +=
            (r.scheduled + models::kDeltaRuleChunk - 1) / models::kDeltaRuleChunk;
      }
      if (r.num_computed + r.scheduled == num_tokens(r)) ++shape.sampled_seqs;
    }
    int64_t draft_rows = 0;  // speculative decoding: the rows the drafter's later passes run
    int64_t draft_ctx = 0;
    if (spec_.on) {
      if (verify_summed && step_.prefills.empty()) {
        add_verify_sums(spec_.sums, shape, draft_rows, draft_ctx);
      } else {
        step_.verify.clear();  // the rows again, after the prefills' sums
        add_verify_rows(shape, draft_rows, draft_ctx);
      }
    }

    if (offload_ != nullptr) arm_load_wake(sim);
    if (shape.empty()) {
      if (running_.empty() && waiting_empty()) return;  // idle until the next arrival
      // Loads in flight hold blocks the head may need: it waits for them (arm_load_wake).
      if (running_.empty() && !preempted && offload_ != nullptr && offload_->loading()) return;
      if (preempted) continue;  // everything was preempted: admit again from the waiting queue
      if (running_.empty() && remote_waiting() > 0) return;  // until remote KV arrives
      if (running_.empty()) {
        // The head of the queue does not fit even in an empty cache: it can never run.
        const Req& r = slots_[waiting_front()];
        fail(sim, waiting_front(),
             "needs " +
                 std::to_string((num_tokens(r) + config_.block_size - 1) / config_.block_size) +
                 " KV blocks but the cache holds " + std::to_string(kv_.num_blocks()) +
                 (v0_.watermark_blocks > 0 ? " (V0 keeps " + std::to_string(v0_.watermark_blocks) +
                                                 " of them free: its block manager's watermark)"
                                           : std::string()));
        continue;
      }
      SERVESIM_CHECK(false, "running requests but nothing scheduled");
    }

    // With pipeline stages the step's micro-batch queues for the shared stage GPUs; a DP rank's
    // step is timed by its group's round (end_dp_step).
    // LoRA: the batch's adapters made resident, then the Punica kernels (device time).
    const double lora_s = lora_.adapters ? lora_step_s(lora_prefill_tokens) : 0.0;
    SimTime duration;
    const double drafter_s = spec_.on ? costs_.drafter_s(shape, draft_rows, draft_ctx) : 0.0;
    stats_.spec_drafter_s += drafter_s;
    if (links_.dp_lockstep) {
      models::StepCost c = costs_.estimate(shape);
      c.linear_s += drafter_s;  // the drafter runs on the GPU after the step's forward
      c.total_s += drafter_s;
      if (lora_.adapters) c.total_s += lora_s;
      links_.dp->join(sim, this, c, static_cast<double>(shape.total_tokens()),
                      async_.on && chained);
      duration = SimTime::from_ns(0);
      step_.end_queued = true;  // the round schedules the end
    } else if (links_.pipeline != nullptr) {
      duration = links_.pipeline->run(sim.now(), shape) - sim.now();
    } else {
      models::StepCost c = costs_.estimate(shape);
      if (lora_.adapters) c.total_s += lora_s;
      // Async scheduling overlaps this step's host work with the previous step's GPU work.
      const double s =
          (async_.on && chained ? std::max(c.device_s(), c.host_s) : c.total_s) + drafter_s;
      duration = std::max(SimTime::from_ns(1), SimTime::from_seconds_ceil(s));
    }
    async_.ghosts.seqs = 0;
    async_.ghosts.ctx = 0;
    const double ideal_s = costs_.ideal_s(shape);
    // The step's end is queued or handled in place by on_event().
    record_step(sim, duration, shape.prefill_seqs + shape.decode_seqs, shape.total_tokens(),
                static_cast<int64_t>(running_.size()), ideal_s);
    SERVESIM_CHECK(static_cast<int64_t>(running_.size()) <= config_.max_num_seqs,
                   "max_num_seqs exceeded");
    SERVESIM_CHECK(shape.total_tokens() <= config_.max_num_batched_tokens, "token budget exceeded");
    SERVESIM_CHECK(!lora_.adapters || lora_.adapters->distinct() <= config_.lora.max_loras,
                   "max_loras exceeded");
    return;
  }
}

double Replica::lora_step_s(int64_t prefill_lora_tokens) {
  const double load_s = lora_.adapters->prepare_step();
  return load_s + config_.lora.step.seconds(prefill_lora_tokens + step_.lora_decoders,
                                            lora_.adapters->distinct());
}

// ---------------------------------------------------------------------------------------------
// End of a step

void Replica::end_step(engine::Simulator& sim) {
  const int64_t k = step_.index;
  close_step(sim.now());

  for (int32_t s : step_.prefills) {
    Req& r = slots_[s];
    r.num_computed += r.scheduled;
    r.scheduled = 0;
    if (r.num_computed < num_tokens(r)) continue;  // a chunk of a longer prompt
    // The prompt (or the recompute of prompt + generated tokens) is complete: sample a token.
    ++r.generated;
    metrics::RequestRecord& rec = (*out_.records)[r.id];
    if (r.generated == 1) rec.first_token = sim.now();
    if (r.seg_start < 0) r.seg_start = k;
    prefilling_.erase(std::find(prefilling_.begin(), prefilling_.end(), s));
    trim_sliding(r, r.num_computed);  // vLLM frees the prompt's skipped blocks next step
    if (r.generated >= r.output) {
      finish(sim, s, k);
    } else {
      add_decoder(s, k + 1);
    }
  }
  if (spec_.on) end_verify_rows(sim, k);
  while (decoders_.next_finish() <= k) {
    const DecoderIndex::FinishEntry e = decoders_.pop_finish();
    Req& r = slots_[e.slot];
    if (r.epoch != e.epoch || r.phase != Phase::kDecode) continue;  // stale
    SERVESIM_CHECK(e.step == k, "missed a finish step");
    settle_decoder(r, k + 1);
    finish(sim, e.slot, k);
  }
  if (!step_.aborts.empty()) apply_aborts(sim, k);  // aborts wait for the step boundary
  // Multi-step: a block whose requests have all finished (or been preempted) ends here; its
  // remaining steps are not run.
  if (running_.empty()) v0_.block_start = -1;
  if (!in_decode_block(k + 1)) {
    v0_.dead.seqs = 0;
    v0_.dead.ctx = 0;
  }
  // A load from the CPU tier that ended during this step is collected by the next one.
  const bool loads = offload_ != nullptr && offload_->loading();
  if (!step_.in_flight && (!running_.empty() || !waiting_empty() || async_.ghosts.seqs > 0 ||
                           loads || !remote_.ready.empty())) {
    start_step(sim, true);
  }
}

}  // namespace servesim::sim
