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
      costs_(cost, ideal_cost),
      kv_(num_blocks, config.block_size, config.enable_prefix_caching),
      out_{records, observer},
      policy_(make_scheduler_policy(config.scheduling_policy)),
      waiting_(*policy_),
      decoders_(config.block_size, /*implicit_progress=*/!config.spec.enabled()),
      async_{config.async_scheduling, {}},
      spec_{config.spec.enabled(),
            config.spec.lookahead(),
            AcceptanceSampler(config.spec.acceptance_rates, config.spec.acceptance_seed),
            {}} {
  // vLLM V0 BlockSpaceManager: watermark_blocks = int(watermark * num_gpu_blocks), 0.01.
  v0_.watermark_blocks = !config.enable_chunked_prefill ? num_blocks / 100 : 0;
  if (config.kv_offload_blocks > 0) offload_ = std::make_unique<KvOffload>(config);
  if (config.lora.enable_lora) lora_.adapters = std::make_unique<LoraAdapters>(config.lora);
}

ReplicaStats Replica::stats() const {
  ReplicaStats s = stats_;
  s.prefix_queried_tokens = kv_.queried_tokens();
  s.prefix_hit_tokens = kv_.hit_tokens();
  s.prefix_evicted_blocks = kv_.evicted_blocks();
  s.used_blocks_now = kv_.num_used_blocks();
  if (offload_ != nullptr) s.offload = offload_->stats();
  if (lora_.adapters) s.lora = lora_.adapters->stats();
  return s;
}

// ---------------------------------------------------------------------------------------------
// Arrivals and events

void Replica::set_virtual_engines(std::vector<Replica*> others, PipelineStages* stages) {
  SERVESIM_CHECK(stages != nullptr, "virtual engines need their pipeline stages");
  links_.virtual_engines = std::move(others);
  links_.pipeline = stages;
  for (Replica* e : links_.virtual_engines) e->links_.pipeline = stages;
}

void Replica::set_dp_group(DpGroup* group, bool front, bool lockstep) {
  SERVESIM_CHECK(group != nullptr && links_.virtual_engines.empty() && links_.pipeline == nullptr,
                 "a DP rank needs its group and no pipeline stages");
  links_.dp = group;
  links_.dp_front = front;
  links_.dp_lockstep = lockstep;
}

void Replica::end_dp_step(engine::Simulator& sim, SimTime end) {
  step_.end = end;
  stats_.busy_ns += (end - sim.now()).ns();
  sim.schedule_at(end, this, kStepEnd);
}

int64_t Replica::num_running() const {
  if (links_.dp_front) {
    int64_t n = 0;
    for (const Replica* r : links_.dp->members()) n += r->local_num_running();
    return n;
  }
  int64_t n = static_cast<int64_t>(running_.size());
  for (const Replica* e : links_.virtual_engines) n += static_cast<int64_t>(e->running_.size());
  return n;
}

int64_t Replica::num_waiting() const {
  if (links_.dp_front) {
    int64_t n = 0;
    for (const Replica* r : links_.dp->members()) n += r->local_num_waiting();
    return n;
  }
  int64_t n = static_cast<int64_t>(waiting_size()) + remote_waiting();
  for (const Replica* e : links_.virtual_engines) n += static_cast<int64_t>(e->waiting_size());
  return n;
}

void Replica::add_request(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  SERVESIM_CHECK(remote_.role != Role::kPrefill || spec.output_tokens == 1,
                 "prefill instance " + std::to_string(id_) + " given request " +
                     std::to_string(spec.id) + " with " + std::to_string(spec.output_tokens) +
                     " output tokens; it runs the proxy's max_tokens=1 requests");
  if (faults_.down) {  // a crashed engine: the request fails where it meets it (set_down)
    metrics::RequestRecord& rec = (*out_.records)[spec.id];
    rec.replica = id_;
    rec.failed = true;
    rec.error = kReplicaDownError;
    out_.observer->on_request_done(sim, spec.id);
    return;
  }
  // vLLM V0 LLMEngine._add_processed_request: "Add the sequence group to the scheduler with least
  // unfinished seqs": costs.index(min(costs)), the first engine among equals.
  if (links_.dp_front) {
    links_.dp->route()->add_local_request(sim, spec);
    return;
  }
  Replica* target = this;
  int64_t least = local_outstanding();
  for (Replica* e : links_.virtual_engines) {
    if (e->local_outstanding() < least) {
      least = e->local_outstanding();
      target = e;
    }
  }
  target->add_local_request(sim, spec);
}

void Replica::add_local_request(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  metrics::RequestRecord& rec = (*out_.records)[spec.id];
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
    out_.observer->on_request_done(sim, spec.id);
    return;
  }
  if (spec.lora_adapter >= 0 && !lora_.adapters) {
    // A trace's lora_adapter column on an engine without --enable-lora: vLLM's server answers
    // 404, the model (the adapter's name) does not exist.
    rec.failed = true;
    rec.error = "The model `lora-" + std::to_string(spec.lora_adapter) +
                "` does not exist (LoRA adapters need --enable-lora).";
    out_.observer->on_request_done(sim, spec.id);
    return;
  }
  if (lora_.adapters && spec.lora_adapter >= 0) lora_.adapters->count_request();
  if (waiting_.arrival_needs_slot()) {
    const int32_t slot = take_slot(spec, sim.now().ns());
    waiting_.push_back(slot, slots_[slot]);
  } else {
    // A request that was never admitted waits as its id, without a slot (waiting_front() gives
    // it one when it gets to the head); its spec too when its record does not tell all of it.
    const bool plain = spec.prefix_group < 0 && spec.prefix_chain == nullptr &&
                       spec.priority == 0 && spec.lora_adapter < 0 &&
                       rec.prompt_tokens == spec.prompt_tokens &&
                       rec.output_tokens == spec.output_tokens;
    waiting_.push_arrival(WaitingQueue::Arrival{spec.id, sim.now().ns()}, plain ? nullptr : &spec);
  }
  if (!step_.in_flight && !step_.kick_pending) {
    // A kick event at the same time (after every arrival already queued for this instant) lets
    // all simultaneous arrivals join the first step, as they would in a real engine's queue.
    step_.kick_pending = true;
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
  r.lora = spec.lora_adapter;
  // vLLM's block hashes include the adapter (kv_cache_utils.py, the LoRA extra key): a prefix is
  // shared only between requests of the same adapter. The KV cache keys a group's blocks by
  // (group << 24 | index), 40 bits of group: bit 39 marks an adapter's group, bits 20-38 the
  // prefix group, bits 0-19 the adapter + 1 (lora_workload.h bounds adapter ids below 2^20 - 1).
  if (r.lora >= 0 && r.group >= 0) {
    SERVESIM_CHECK(r.group < (int64_t{1} << 19) && r.lora < (1 << 20) - 1,
                   "prefix group or LoRA adapter id too large for the KV cache's keys");
    r.group = (int64_t{1} << 39) | (r.group << 20) | (int64_t{r.lora} + 1);
  }
  r.shared_blocks = spec.prefix_group >= 0 ? spec.prefix_tokens / config_.block_size : 0;
  r.chain_keys.clear();
  if (spec.prefix_chain != nullptr) set_chain_keys(r, spec);
  r.kv.reset(r.shared_blocks);
  r.priority = spec.priority;
  r.arrival_ns = arrival_ns;
  if (!remote_.arriving.empty()) {  // disaggregated prefill/decode (replica_remote.cpp)
    auto it = std::find(remote_.arriving.begin(), remote_.arriving.end(), spec.id);
    if (it != remote_.arriving.end()) {
      remote_.arriving.erase(it);
      r.remote = true;
    }
  }
  return slot;
}

void Replica::on_event(engine::Simulator& sim, int64_t tag) {
  if (tag == kKick) {
    step_.kick_pending = false;
    if (links_.dp_lockstep && !step_.in_flight &&
        links_.dp->wait_for_round(sim.now()) > sim.now()) {
      // A DP rank joins the next round of its group: at the end of the one in flight.
      step_.kick_pending = true;
      sim.schedule_at(links_.dp->wait_for_round(sim.now()), this, kKick);
      return;
    }
    if (!step_.in_flight) start_step(sim, false);
  } else if (tag == kLoadDone) {
    if (!step_.in_flight) start_step(sim, false);  // a load from the CPU tier has ended
  } else {
    end_step(sim);
  }
  // A step started above ends at step_.end. While nothing else is due before it, its end is
  // handled here (Simulator::advance_inline: the same order as through the queue); otherwise it
  // is scheduled. start_step() is only ever called from here (directly or through end_step), so
  // this is the last thing the event does, where the step's event used to be pushed.
  while (step_.in_flight && !step_.end_queued) {
    if (sim.advance_inline(step_.end)) {
      end_step(sim);
    } else {
      sim.schedule_at(step_.end, this, kStepEnd);
      step_.end_queued = true;
    }
  }
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
  const int64_t full =
      std::min<int64_t>(tokens / bs, static_cast<int64_t>(chain.size()) * cbt / bs);
  for (int64_t i = 0; i < full; ++i) {
    uint64_t h = chain[static_cast<size_t>(((i + 1) * bs - 1) / cbt)] ^
                 (static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull);
    // The adapter is part of the block's key (see take_slot).
    if (spec.lora_adapter >= 0) h ^= (static_cast<uint64_t>(spec.lora_adapter) + 1) << 48;
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;  // spread i into every bit
    r.chain_keys.push_back(KvCacheManager::chain_key(h ^ (h >> 29)));
  }
  r.group = 0;  // marks "has shared blocks" for after_allocation; the keys come from chain_keys
  r.shared_blocks = static_cast<int32_t>(full);
}

// ---------------------------------------------------------------------------------------------
// Request state changes

void Replica::add_decoder(int32_t slot, int64_t base_step) {
  Req& r = slots_[slot];
  r.phase = Phase::kDecode;
  r.base_step = base_step;
  decoders_.add(slot, r);
  if (r.lora >= 0) ++lora_.decoders;
}

// Takes a decoder out of the running sums (its index entries go stale with an epoch bump).
void Replica::remove_decoder(Req& r) {
  decoders_.remove(r);
  if (r.lora >= 0) --lora_.decoders;
}

void Replica::close_segment(Req& r, int64_t last_step) {
  if (r.seg_start >= 0 && r.seg_start <= last_step) {
    (*out_.records)[r.id].segments.push_back(metrics::TokenSegment{r.seg_start, last_step});
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
  if (offload_ != nullptr) offload_->store(offload_->now(), r, r.num_computed / config_.block_size);
  kv_.free(r.id, r.kv, r.num_computed / config_.block_size, /*preempted=*/true);
  r.num_computed = 0;
  r.scheduled = 0;
  r.phase = Phase::kWaiting;
  ++r.epoch;
  if (lora_.adapters) lora_.adapters->remove_running(r.lora);
  ++(*out_.records)[r.id].preemptions;
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
  if (async_.on) {
    // Already scheduled into the next step with an output placeholder (async_scheduler.py).
    ++async_.ghosts.seqs;
    async_.ghosts.ctx += num_tokens(r);
  }
  if (in_decode_block(step + 1)) {
    // Multi-step: its row rides to the end of the block (file comment).
    ++v0_.dead.seqs;
    v0_.dead.ctx += num_tokens(r);
  }
  metrics::RequestRecord& rec = (*out_.records)[r.id];
  rec.last_token = sim.now();
  rec.completed = true;
  close_segment(r, step);
  if (spec_.on) count_chunks(rec);
  register_computed(r);
  release_sliding(r);
  if (offload_ != nullptr) offload_->store(sim.now(), r, r.num_computed / config_.block_size);
  kv_.free(r.id, r.kv, r.num_computed / config_.block_size, /*preempted=*/false);
  remove_running(slot);
  if (r.phase == Phase::kDecode) remove_decoder(r);
  if (lora_.adapters) lora_.adapters->remove_running(r.lora);
  r.phase = Phase::kWaiting;
  ++r.epoch;
  free_slots_.push_back(slot);
  out_.observer->on_request_done(sim, r.id);
}

void Replica::fail(engine::Simulator& sim, int32_t slot, const std::string& why) {
  account_outstanding(sim.now());
  Req& r = slots_[slot];
  metrics::RequestRecord& rec = (*out_.records)[r.id];
  rec.failed = true;
  rec.error = why;
  waiting_.pop_front();
  ++r.epoch;
  r.kv.reset(0);
  free_slots_.push_back(slot);
  out_.observer->on_request_done(sim, r.id);
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
    const metrics::RequestRecord& rec = (*out_.records)[a.id];
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
