#include "sim/replica/replica.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "sim/base/error.h"

namespace servesim::sim {

Replica::Replica(int32_t id, const EngineConfig& config, const models::CostModel& cost,
                 const models::CostModel* ideal_cost, int64_t num_blocks,
                 std::vector<metrics::RequestRecord>* records, RequestObserver* observer)
    : id_(id),
      config_(config),
      cost_(cost),
      ideal_cost_(ideal_cost),
      kv_(num_blocks, config.block_size, config.enable_prefix_caching),
      records_(records),
      observer_(observer),
      policy_(make_scheduler_policy(config.scheduling_policy)),
      waiting_(*policy_),
      prefill_first_(config.enable_chunked_prefill == 0),
      // vLLM V0 BlockSpaceManager: watermark_blocks = int(watermark * num_gpu_blocks), 0.01.
      watermark_blocks_(config.enable_chunked_prefill == 0 ? num_blocks / 100 : 0),
      sliding_groups_(config.kv_sliding_groups),
      decoders_(config.block_size),
      async_(config.async_scheduling == 1),
      cost_memo_(cost.make_memo()),
      ideal_memo_(ideal_cost != nullptr ? ideal_cost->make_memo() : nullptr) {}

ReplicaStats Replica::stats() const {
  ReplicaStats s = stats_;
  s.prefix_queried_tokens = kv_.queried_tokens();
  s.prefix_hit_tokens = kv_.hit_tokens();
  s.prefix_evicted_blocks = kv_.evicted_blocks();
  s.used_blocks_now = kv_.num_used_blocks();
  return s;
}

// ---------------------------------------------------------------------------------------------
// Arrivals and events

void Replica::set_virtual_engines(std::vector<Replica*> others, PipelineStages* stages) {
  SERVESIM_CHECK(stages != nullptr, "virtual engines need their pipeline stages");
  virtual_engines_ = std::move(others);
  pipeline_ = stages;
  for (Replica* e : virtual_engines_) e->pipeline_ = stages;
}

void Replica::set_dp_group(DpGroup* group, bool front, bool lockstep) {
  SERVESIM_CHECK(group != nullptr && virtual_engines_.empty() && pipeline_ == nullptr,
                 "a DP rank needs its group and no pipeline stages");
  dp_ = group;
  dp_front_ = front;
  dp_lockstep_ = lockstep;
}

void Replica::end_dp_step(engine::Simulator& sim, SimTime end) {
  step_end_ = end;
  stats_.busy_ns += (end - sim.now()).ns();
  sim.schedule_at(end, this, kStepEnd);
}

int64_t Replica::num_running() const {
  if (dp_front_) {
    int64_t n = 0;
    for (const Replica* r : dp_->members()) n += r->local_num_running();
    return n;
  }
  int64_t n = static_cast<int64_t>(running_.size());
  for (const Replica* e : virtual_engines_) n += static_cast<int64_t>(e->running_.size());
  return n;
}

int64_t Replica::num_waiting() const {
  if (dp_front_) {
    int64_t n = 0;
    for (const Replica* r : dp_->members()) n += r->local_num_waiting();
    return n;
  }
  int64_t n = static_cast<int64_t>(waiting_size());
  for (const Replica* e : virtual_engines_) n += static_cast<int64_t>(e->waiting_size());
  return n;
}

void Replica::add_request(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  // vLLM V0 LLMEngine._add_processed_request: "Add the sequence group to the scheduler with least
  // unfinished seqs": costs.index(min(costs)), the first engine among equals.
  if (dp_front_) {
    dp_->route()->add_local_request(sim, spec);
    return;
  }
  Replica* target = this;
  int64_t least = local_outstanding();
  for (Replica* e : virtual_engines_) {
    if (e->local_outstanding() < least) {
      least = e->local_outstanding();
      target = e;
    }
  }
  target->add_local_request(sim, spec);
}

void Replica::add_local_request(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  metrics::RequestRecord& rec = (*records_)[spec.id];
  rec.replica = id_;
  account_outstanding(sim.now());
  const int64_t total = static_cast<int64_t>(spec.prompt_tokens) + spec.output_tokens;
  if (total > config_.max_model_len) {
    // vLLM's OpenAI server rejects the request before it reaches the engine.
    rec.failed = true;
    rec.error = "This model's maximum context length is " + std::to_string(config_.max_model_len) +
                " tokens. However, you requested " + std::to_string(total) + " tokens (" +
                std::to_string(spec.prompt_tokens) + " in the messages, " +
                std::to_string(spec.output_tokens) + " in the completion).";
    observer_->on_request_done(sim, spec.id);
    return;
  }
  if (waiting_.arrival_needs_slot()) {
    const int32_t slot = take_slot(spec, sim.now().ns());
    waiting_.push_back(slot, slots_[slot]);
  } else {
    // A request that was never admitted waits as its id, without a slot (waiting_front() gives
    // it one when it gets to the head); its spec too when its record does not tell all of it.
    const bool plain = spec.prefix_group < 0 && spec.prefix_chain == nullptr &&
                       spec.priority == 0 && rec.prompt_tokens == spec.prompt_tokens &&
                       rec.output_tokens == spec.output_tokens;
    waiting_.push_arrival(WaitingQueue::Arrival{spec.id, sim.now().ns()}, plain ? nullptr : &spec);
  }
  if (!step_in_flight_ && !kick_pending_) {
    // A kick event at the same time (after every arrival already queued for this instant) lets
    // all simultaneous arrivals join the first step, as they would in a real engine's queue.
    kick_pending_ = true;
    sim.schedule_at(sim.now(), this, kKick);
  }
}

int32_t Replica::take_slot(const workloads::RequestSpec& spec, int64_t arrival_ns) {
  const int32_t slot = new_slot();
  Req& r = slots_[slot];
  KvTable kv = std::move(r.kv);  // keeps the table's storage
  std::vector<uint64_t> chain_keys = std::move(r.chain_keys);
  const uint32_t epoch = r.epoch + 1;
  r = Req{};
  r.kv = std::move(kv);
  r.chain_keys = std::move(chain_keys);
  r.epoch = epoch;
  r.id = spec.id;
  r.prompt = spec.prompt_tokens;
  r.output = spec.output_tokens;
  r.group = spec.prefix_group;
  r.shared_blocks = spec.prefix_group >= 0 ? spec.prefix_tokens / config_.block_size : 0;
  r.chain_keys.clear();
  if (spec.prefix_chain != nullptr) set_chain_keys(r, spec);
  r.kv.reset(r.shared_blocks);
  r.priority = spec.priority;
  r.arrival_ns = arrival_ns;
  return slot;
}

void Replica::on_event(engine::Simulator& sim, int64_t tag) {
  if (tag == kKick) {
    kick_pending_ = false;
    if (dp_lockstep_ && !step_in_flight_ && dp_->wait_for_round(sim.now()) > sim.now()) {
      // A DP rank joins the next round of its group: at the end of the one in flight.
      kick_pending_ = true;
      sim.schedule_at(dp_->wait_for_round(sim.now()), this, kKick);
      return;
    }
    if (!step_in_flight_) start_step(sim, false);
  } else {
    end_step(sim);
  }
  // A step started above ends at step_end_. While nothing else is due before it, its end is
  // handled here (Simulator::advance_inline: the same order as through the queue); otherwise it
  // is scheduled. start_step() is only ever called from here (directly or through end_step), so
  // this is the last thing the event does, where the step's event used to be pushed.
  while (step_in_flight_ && !step_end_queued_) {
    if (sim.advance_inline(step_end_)) {
      end_step(sim);
    } else {
      sim.schedule_at(step_end_, this, kStepEnd);
      step_end_queued_ = true;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Scheduling one step

int64_t Replica::new_blocks_for(const Req& r, int32_t q) const {
  const int64_t bs = config_.block_size;
  const int64_t need = (static_cast<int64_t>(r.num_computed) + q + bs - 1) / bs;
  return std::max<int64_t>(0, need - r.kv.count);
}

void Replica::trim_sliding_groups(Req& r, int64_t c) {
  const int64_t lo = sliding_lo(r.kv.count, c);
  if (lo > r.sw_lo) {  // skipped blocks are full and computed
    kv_.release_detached(sliding_groups_ * (lo - r.sw_lo), /*full=*/true);
    r.sw_lo = static_cast<int32_t>(lo);
  }
}

void Replica::allocate_with_sliding(Req& r, int64_t new_full, int64_t c) {
  trim_sliding_groups(r, c);
  kv_.allocate(new_full, r.kv);
  kv_.take_detached(sliding_groups_ * new_full);
}

void Replica::allocate_boundary_blocks(const std::vector<DecoderIndex::Entry>& bucket, int64_t k) {
  if (sliding_groups_ == 0) {
    for (const DecoderIndex::Entry& e : bucket) kv_.allocate(1, slots_[e.slot].kv);
    return;
  }
  for (const DecoderIndex::Entry& e : bucket) {
    Req& r = slots_[e.slot];
    allocate_with_sliding(r, 1, decoder_context(r, k));
  }
}

void Replica::admit_sliding(Req& r, int64_t c) {
  if (sliding_groups_ == 0) return;
  r.sw_lo = static_cast<int32_t>(sliding_lo(r.kv.count, c));
  kv_.take_detached(sliding_groups_ * (r.kv.count - r.sw_lo));
}

void Replica::release_sliding(Req& r) {
  if (sliding_groups_ == 0) return;
  kv_.release_detached(sliding_groups_ * (r.kv.count - r.sw_lo), /*full=*/false);
  r.sw_lo = 0;
}

void Replica::set_chain_keys(Req& r, const workloads::RequestSpec& spec) const {
  // Engine block i holds tokens [i*bs, (i+1)*bs): its content and its whole prefix are fixed by
  // the chain entry of the trace block holding its last token, so (that entry, i) is its key —
  // for any engine block size, whether or not it divides the trace's block size.
  const int64_t bs = config_.block_size;
  const int64_t cbt = spec.chain_block_tokens;
  const std::vector<uint64_t>& chain = *spec.prefix_chain;
  // A session's chain also covers the answer (RequestSpec::chain_covers_output).
  const int64_t tokens =
      int64_t{spec.prompt_tokens} + (spec.chain_covers_output ? spec.output_tokens : 0);
  const int64_t full = std::min<int64_t>(tokens / bs,
                                         static_cast<int64_t>(chain.size()) * cbt / bs);
  for (int64_t i = 0; i < full; ++i) {
    uint64_t h = chain[static_cast<size_t>(((i + 1) * bs - 1) / cbt)] ^
                 (static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull);
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;  // spread i into every bit
    r.chain_keys.push_back(KvCacheManager::chain_key(h ^ (h >> 29)));
  }
  r.group = 0;  // marks "has shared blocks" for after_allocation; the keys come from chain_keys
  r.shared_blocks = static_cast<int32_t>(full);
}

void Replica::after_allocation(int32_t slot, int32_t q) {
  Req& r = slots_[slot];
  if (r.group < 0 || r.shared_registered >= r.shared_blocks) return;
  // vLLM caches a block as soon as the tokens that fill it are scheduled (allocate_slots).
  const int64_t covered = std::min<int64_t>((static_cast<int64_t>(r.num_computed) + q) /
                                                config_.block_size,
                                            r.shared_blocks);
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
  const int64_t covered = std::min<int64_t>(
      {static_cast<int64_t>(r.num_computed) / config_.block_size, int64_t{r.shared_blocks},
       static_cast<int64_t>(r.kv.ids.size())});
  if (covered > r.shared_registered) {
    kv_.register_shared(r.group, r.kv, r.shared_registered, covered, chain_keys_of(r));
    r.shared_registered = static_cast<int32_t>(covered);
  }
}

bool Replica::schedule_running_fast() {
  const int64_t k = step_index_;
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
    blocks += new_blocks_for(r, q) * (1 + sliding_groups_);
  }
  if (want > budget_) return false;
  // Decoders whose next token starts a new block this step; drop stale entries on the way.
  const std::vector<DecoderIndex::Entry>& bucket =
      decoders_.live_bucket(static_cast<size_t>(k % config_.block_size), slots_);
  const size_t live = bucket.size();
  blocks += static_cast<int64_t>(live) * (1 + sliding_groups_);
  if (blocks > kv_.num_free_blocks()) return false;

  // Everyone in `running` gets exactly what it wants: the order no longer matters.
  allocate_boundary_blocks(bucket, k);
  for (int32_t s : prefilling_) {
    Req& r = slots_[s];
    r.scheduled = std::min(num_tokens(r) - r.num_computed, threshold);
    const int64_t full = new_blocks_for(r, r.scheduled);
    if (sliding_groups_ == 0) {
      kv_.allocate(full, r.kv);
    } else {
      allocate_with_sliding(r, full, r.num_computed);
    }
    after_allocation(s, r.scheduled);
    step_prefills_.push_back(s);
  }
  step_decoders_ = decoders_.count();
  step_decoder_ctx_ = decoders_.context_at(k);
  budget_ -= want;
  return true;
}

void Replica::settle_decoder(Req& r, int64_t step) {
  const int64_t delta = step - r.base_step;
  r.generated += static_cast<int32_t>(delta);
  r.num_computed += static_cast<int32_t>(delta);
  r.base_step = step;
}

void Replica::schedule_running_slow(bool& preempted) {
  const int64_t k = step_index_;
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
  int64_t decoders = 0;
  int64_t decoder_ctx = 0;
  // vLLM's ordered walk over self.running (scheduler.py, "First, schedule the RUNNING requests").
  size_t i = 0;
  while (i < running_.size() && budget_ > 0) {
    const int32_t s = running_[i];
    Req& r = slots_[s];
    make_ready(r);
    int64_t q = std::min<int64_t>(num_tokens(r) - r.num_computed, threshold);
    q = std::min<int64_t>(q, budget_);
    if (q <= 0) {
      ++i;
      continue;
    }
    bool scheduled = false;
    for (;;) {
      const int64_t need = new_blocks_for(r, static_cast<int32_t>(q));
      if (sliding_groups_ == 0 ? need <= kv_.num_free_blocks()
                               : need + sliding_delta(r, need, r.num_computed) <=
                                     kv_.num_free_blocks()) {
        if (sliding_groups_ == 0) {
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
        make_ready(v);  // not reached by the walk yet
      } else if (v.scheduled > 0) {  // already scheduled this step: give its tokens back
        budget_ += v.scheduled;
        if (v.phase == Phase::kDecode) {
          --decoders;
          decoder_ctx -= v.num_computed;
        } else {
          step_prefills_.erase(std::find(step_prefills_.begin(), step_prefills_.end(), victim));
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
    budget_ -= q;
    if (r.phase == Phase::kPrefill) {
      after_allocation(s, r.scheduled);
      step_prefills_.push_back(s);
    } else {
      ++decoders;
      decoder_ctx += r.num_computed;
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
  step_decoders_ = decoders;
  step_decoder_ctx_ = decoder_ctx;
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
  const int64_t k = step_index_;
  if (!in_decode_block(k)) {
    block_start_ = -1;
    schedule_waiting();  // whole prompts above the watermark (prefill_first_)
    if (!step_prefills_.empty()) {
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
  if (config_.num_scheduler_steps > 1 && block_start_ < 0 && step_decoders_ > 0) block_start_ = k;
}

void Replica::schedule_waiting() {
  const int64_t bs = config_.block_size;
  const int32_t threshold = config_.long_prefill_token_threshold > 0
                                ? config_.long_prefill_token_threshold
                                : std::numeric_limits<int32_t>::max();
  while (!waiting_empty() &&
         static_cast<int64_t>(running_.size()) + ghost_seqs_ < config_.max_num_seqs &&
         budget_ > 0) {
    const int32_t s = waiting_front();
    Req& r = slots_[s];
    const int64_t nt = num_tokens(r);
    // vLLM never serves the whole prompt from cache: at least the last token is recomputed.
    const int64_t max_hit_blocks = (nt - 1) / bs;
    const int64_t hits =
        kv_.find_cached(r.id, r.group, r.kv, max_hit_blocks, hits_scratch_, chain_keys_of(r));
    const int64_t cached = hits * bs;
    int64_t q = std::min<int64_t>(nt - cached, threshold);
    q = std::min<int64_t>(q, budget_);
    if (prefill_first_ && q < nt - cached) break;  // V0: the whole prompt or nothing
    const int64_t fresh = (cached + q + bs - 1) / bs - hits;
    // Sliding groups: blocks for the window of the cached part and the new tokens (a waiting
    // request holds no table: after take_hits it holds `hits` blocks).
    const int64_t sliding = sliding_delta(r, hits + fresh, cached);
    if (kv_.blocks_needed(fresh, hits, hits_scratch_) + sliding + watermark_blocks_ >
        kv_.num_free_blocks()) {
      break;
    }

    waiting_.pop_front();
    kv_.take_hits(r.id, hits, hits_scratch_, r.kv);
    kv_.allocate(fresh, r.kv);
    admit_sliding(r, cached);
    kv_.record_query(nt, cached);
    if (!r.admitted_before) {
      (*records_)[r.id].cached_prompt_tokens = static_cast<int32_t>(cached);
      r.admitted_before = true;
    }
    r.num_computed = static_cast<int32_t>(cached);
    r.phase = Phase::kPrefill;
    r.shared_registered = static_cast<int32_t>(std::min<int64_t>(hits, r.shared_blocks));
    r.scheduled = static_cast<int32_t>(q);
    after_allocation(s, r.scheduled);
    running_.push_back(s);
    prefilling_.push_back(s);
    step_prefills_.push_back(s);
    budget_ -= q;
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
void Replica::record_step(const engine::Simulator& sim, SimTime duration, int64_t seqs,
                          int64_t tokens, int64_t running, double ideal_s) {
  step_in_flight_ = true;
  step_end_ = sim.now() + duration;
  step_end_queued_ = dp_lockstep_;  // a DP round schedules the end itself
  ++stats_.steps;
  stats_.busy_ns += duration.ns();
  stats_.scheduled_seqs += seqs;
  stats_.scheduled_tokens += tokens;
  stats_.peak_used_blocks = std::max(stats_.peak_used_blocks, kv_.num_used_blocks());
  stats_.peak_running = std::max(stats_.peak_running, running);
  stats_.peak_step_tokens = std::max(stats_.peak_step_tokens, tokens);
  if (ideal_cost_ != nullptr) stats_.ideal_busy_s += ideal_s;
}

// The step in flight ends at `end`: logged, and the next step's index comes up.
void Replica::close_step(SimTime end) {
  step_in_flight_ = false;
  step_log_.step_end.push_back(end);
  ++step_index_;
}

bool Replica::run_decode_steps(engine::Simulator& sim, bool& chained) {
  const int64_t n = decoders_.count();
  // Only decoders (all of running), nothing to admit, no placeholders, one engine, and the whole
  // batch within the budget: schedule_running_fast() gives everyone one token, schedule_waiting()
  // has nothing to do.
  if (n == 0 || static_cast<int64_t>(running_.size()) != n || !prefilling_.empty() ||
      !waiting_empty() || ghost_seqs_ != 0 || dead_seqs_ != 0 || pipeline_ != nullptr ||
      dp_lockstep_ ||
      n > config_.max_num_batched_tokens) {
    return false;
  }
  // Multi-step: with nothing waiting, a decode block begins here (schedule_v0_step).
  if (config_.num_scheduler_steps > 1 && block_start_ < 0) block_start_ = step_index_;
  const auto ni = static_cast<size_t>(n);
  if (ni >= decode_cost_.size()) {
    decode_cost_.resize(ni + 1);
    decode_ideal_.resize(ni + 1);
  }
  const models::DecodeSeries& cost = decode_cost_[ni];
  const models::DecodeSeries& ideal = decode_ideal_[ni];
  if (cost.rows == 0) {
    decode_cost_[ni] = cost_.decode_series(n, cost_memo_.get());
    if (ideal_cost_ != nullptr) decode_ideal_[ni] = ideal_cost_->decode_series(n, ideal_memo_.get());
  }
  if (!cost.valid || (ideal_cost_ != nullptr && !ideal.valid)) return false;
  SERVESIM_CHECK(n <= config_.max_num_seqs, "max_num_seqs exceeded");
  const int64_t bs = config_.block_size;
  int64_t k = step_index_;
  auto bi = static_cast<size_t>(k % bs);
  // No request finishes before this step's end (the finish heap does not change during the run).
  const int64_t next_finish = decoders_.next_finish();
  const double host = cost.host_s;
  step_prefills_.clear();
  step_decoders_ = n;
  budget_ = config_.max_num_batched_tokens - n;
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
      if (ideal_cost_ != nullptr) {
        for (int64_t j = 0; j < ahead; ++j) ideals[j] = ideal.total_s(ctx0 + n * j);
      }
    }
    // schedule_running_fast(): the decoders whose next token starts a new block.
    const std::vector<DecoderIndex::Entry>& bucket = decoders_.live_bucket(bi, slots_);
    const size_t live = bucket.size();
    // With sliding groups, their growth without the trims (as in schedule_running_fast).
    if (static_cast<int64_t>(live) * (1 + sliding_groups_) > kv_.num_free_blocks()) {
      return false;  // the slow path
    }
    allocate_boundary_blocks(bucket, k);
    step_decoder_ctx_ = decoders_.context_offset() + n * k;

    // start_step(): the step's cost and counters.
    const double total = totals[used];
    const double s = async_ && chained ? std::max(total - host, host) : total;
    const SimTime duration = std::max(SimTime::from_ns(1), duration_ceil(s));
    record_step(sim, duration, n, n, n, ideal_cost_ != nullptr ? ideals[used] : 0.0);
    ++used;

    // end_step(): a token for every decoder and nothing else, when nobody finishes in this step
    // and its end is the next event.
    if (k >= next_finish || !sim.advance_inline(step_end_)) return true;
    close_step(step_end_);
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
    budget_ = config_.max_num_batched_tokens - ghost_seqs_;
    step_prefills_.clear();
    step_decoders_ = 0;
    step_decoder_ctx_ = 0;
    bool preempted = false;
    if (prefill_first_) {
      schedule_v0_step(preempted);
    } else {
      if (!running_.empty() && !schedule_running_fast()) {
        ++stats_.slow_path_steps;
        schedule_running_slow(preempted);
      }
      if (!preempted) schedule_waiting();
    }

    models::BatchShape shape;
    shape.decode_seqs = step_decoders_ + ghost_seqs_ + dead_seqs_;
    shape.decode_context_tokens = step_decoder_ctx_ + ghost_ctx_ + dead_ctx_;
    shape.sampled_seqs = step_decoders_ + ghost_seqs_ + dead_seqs_;
    const int64_t window = cost_.sliding_window();  // 0: no sliding-window layers
    for (int32_t s : step_prefills_) {
      const Req& r = slots_[s];
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
      if (r.num_computed + r.scheduled == num_tokens(r)) ++shape.sampled_seqs;
    }

    if (shape.empty()) {
      if (running_.empty() && waiting_empty()) return;  // idle until the next arrival
      if (preempted) continue;  // everything was preempted: admit again from the waiting queue
      if (running_.empty()) {
        // The head of the queue does not fit even in an empty cache: it can never run.
        const Req& r = slots_[waiting_front()];
        fail(sim, waiting_front(),
             "needs " + std::to_string((num_tokens(r) + config_.block_size - 1) /
                                       config_.block_size) +
                 " KV blocks but the cache holds " + std::to_string(kv_.num_blocks()) +
                 (watermark_blocks_ > 0 ? " (V0 keeps " + std::to_string(watermark_blocks_) +
                                              " of them free: its block manager's watermark)"
                                        : std::string()));
        continue;
      }
      SERVESIM_CHECK(false, "running requests but nothing scheduled");
    }

    // With pipeline stages the step's micro-batch queues for the shared stage GPUs; a DP rank's
    // step is timed by its group's round (end_dp_step).
    SimTime duration;
    if (dp_lockstep_) {
      const models::StepCost c = cost_.estimate_memo(shape, cost_memo_.get());
      dp_->join(sim, this, c, static_cast<double>(shape.total_tokens()), async_ && chained);
      duration = SimTime::from_ns(0);
      step_end_queued_ = true;  // the round schedules the end
    } else if (pipeline_ != nullptr) {
      duration = pipeline_->run(sim.now(), shape) - sim.now();
    } else {
      const models::StepCost c = cost_.estimate_memo(shape, cost_memo_.get());
      // Async scheduling overlaps this step's host work with the previous step's GPU work.
      const double s = async_ && chained ? std::max(c.device_s(), c.host_s) : c.total_s;
      duration = std::max(SimTime::from_ns(1), SimTime::from_seconds_ceil(s));
    }
    ghost_seqs_ = 0;
    ghost_ctx_ = 0;
    const double ideal_s =
        ideal_cost_ != nullptr ? ideal_cost_->estimate_memo(shape, ideal_memo_.get()).total_s : 0.0;
    // The step's end is queued or handled in place by on_event().
    record_step(sim, duration, shape.prefill_seqs + shape.decode_seqs, shape.total_tokens(),
                static_cast<int64_t>(running_.size()), ideal_s);
    SERVESIM_CHECK(static_cast<int64_t>(running_.size()) <= config_.max_num_seqs,
                   "max_num_seqs exceeded");
    SERVESIM_CHECK(shape.total_tokens() <= config_.max_num_batched_tokens,
                   "token budget exceeded");
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// End of a step

void Replica::end_step(engine::Simulator& sim) {
  const int64_t k = step_index_;
  close_step(sim.now());

  for (int32_t s : step_prefills_) {
    Req& r = slots_[s];
    r.num_computed += r.scheduled;
    r.scheduled = 0;
    if (r.num_computed < num_tokens(r)) continue;  // a chunk of a longer prompt
    // The prompt (or the recompute of prompt + generated tokens) is complete: sample a token.
    ++r.generated;
    metrics::RequestRecord& rec = (*records_)[r.id];
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
  while (decoders_.next_finish() <= k) {
    const DecoderIndex::FinishEntry e = decoders_.pop_finish();
    Req& r = slots_[e.slot];
    if (r.epoch != e.epoch || r.phase != Phase::kDecode) continue;  // stale
    SERVESIM_CHECK(e.step == k, "missed a finish step");
    settle_decoder(r, k + 1);
    finish(sim, e.slot, k);
  }
  // Multi-step: a block whose requests have all finished (or been preempted) ends here; its
  // remaining steps are not run.
  if (running_.empty()) block_start_ = -1;
  if (!in_decode_block(k + 1)) {
    dead_seqs_ = 0;
    dead_ctx_ = 0;
  }
  if (!step_in_flight_ && (!running_.empty() || !waiting_empty() || ghost_seqs_ > 0)) {
    start_step(sim, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Request state changes

void Replica::add_decoder(int32_t slot, int64_t base_step) {
  Req& r = slots_[slot];
  r.phase = Phase::kDecode;
  r.base_step = base_step;
  decoders_.add(slot, r);
}

// Takes a decoder out of the running sums (its index entries go stale with an epoch bump).
void Replica::remove_decoder(Req& r) {
  decoders_.remove(r);
}

void Replica::close_segment(Req& r, int64_t last_step) {
  if (r.seg_start >= 0 && r.seg_start <= last_step) {
    (*records_)[r.id].segments.push_back(metrics::TokenSegment{r.seg_start, last_step});
  }
  r.seg_start = -1;
}

void Replica::preempt(int32_t slot, int64_t step) {
  Req& r = slots_[slot];
  if (r.phase == Phase::kDecode) {
    close_segment(r, step - 1);  // its last token came at the end of the previous step
    remove_decoder(r);
  } else {
    prefilling_.erase(std::find(prefilling_.begin(), prefilling_.end(), slot));
  }
  r.seg_start = -1;
  register_computed(r);
  release_sliding(r);
  kv_.free(r.id, r.kv, r.num_computed / config_.block_size, /*preempted=*/true);
  r.num_computed = 0;
  r.scheduled = 0;
  r.phase = Phase::kWaiting;
  ++r.epoch;
  ++(*records_)[r.id].preemptions;
  ++stats_.preemptions;
  waiting_.push_front(slot, r);
}

void Replica::account_outstanding(SimTime now) {
  stats_.outstanding_ns += (now - last_change_).ns() * outstanding();
  last_change_ = now;
}

void Replica::finish(engine::Simulator& sim, int32_t slot, int64_t step) {
  account_outstanding(sim.now());
  Req& r = slots_[slot];
  if (async_) {
    // Already scheduled into the next step with an output placeholder (async_scheduler.py).
    ++ghost_seqs_;
    ghost_ctx_ += num_tokens(r);
  }
  if (in_decode_block(step + 1)) {
    // Multi-step: its row rides to the end of the block (file comment).
    ++dead_seqs_;
    dead_ctx_ += num_tokens(r);
  }
  metrics::RequestRecord& rec = (*records_)[r.id];
  rec.last_token = sim.now();
  rec.completed = true;
  close_segment(r, step);
  register_computed(r);
  release_sliding(r);
  kv_.free(r.id, r.kv, r.num_computed / config_.block_size, /*preempted=*/false);
  remove_running(slot);
  if (r.phase == Phase::kDecode) remove_decoder(r);
  r.phase = Phase::kWaiting;
  ++r.epoch;
  free_slots_.push_back(slot);
  observer_->on_request_done(sim, r.id);
}

void Replica::fail(engine::Simulator& sim, int32_t slot, const std::string& why) {
  account_outstanding(sim.now());
  Req& r = slots_[slot];
  metrics::RequestRecord& rec = (*records_)[r.id];
  rec.failed = true;
  rec.error = why;
  waiting_.pop_front();
  ++r.epoch;
  r.kv.reset(0);
  free_slots_.push_back(slot);
  observer_->on_request_done(sim, r.id);
}

int32_t Replica::new_slot() {
  if (!free_slots_.empty()) {
    const int32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  slots_.emplace_back();
  return static_cast<int32_t>(slots_.size() - 1);
}

void Replica::remove_running(int32_t slot) {
  auto it = std::find(running_.begin(), running_.end(), slot);
  SERVESIM_CHECK(it != running_.end(), "finishing a request that is not running");
  running_.erase(it);
}

// ---------------------------------------------------------------------------------------------
// Waiting queue

int32_t Replica::waiting_front_slow() {
  // The head is the oldest arrival never admitted: it takes a slot now.
  const WaitingQueue::Arrival a = waiting_.head_arrival();
  int32_t slot;
  if (const workloads::RequestSpec* rich = waiting_.head_rich()) {
    slot = take_slot(*rich, a.arrival_ns);
  } else {
    const metrics::RequestRecord& rec = (*records_)[a.id];
    workloads::RequestSpec spec;
    spec.id = a.id;
    spec.prompt_tokens = rec.prompt_tokens;
    spec.output_tokens = rec.output_tokens;
    slot = take_slot(spec, a.arrival_ns);
  }
  waiting_.give_head_slot(slot);
  return slot;
}

}  // namespace servesim::sim
