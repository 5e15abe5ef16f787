// Replica: one vLLM V1 engine instance — scheduler, paged KV cache and step loop.
//
// Scheduling follows vllm/v1/core/sched/scheduler.py::schedule (REFERENCE.md §1.1, DESIGN.md §3):
// each step has a token budget (max_num_batched_tokens); running requests are served first, in
// order, each getting min(remaining, long-prefill threshold, budget) tokens (1 when decoding); a
// failed KV allocation preempts the victim its SchedulerPolicy picks — FCFS: the last running
// request; priority: the lowest-priority one (recompute: its blocks are freed, its progress
// reset, and it goes back to the waiting queue, at the front under FCFS); waiting requests are
// admitted, in the policy's order, only in steps without preemption, while running <
// max_num_seqs and budget remains, with prefix-cache hits counted as computed and the last prompt
// chunked to fit. The step's duration comes from the CostModel for the exact batch shape. At the
// end of the step every request that completed its prompt or is decoding emits one token.
//
// Speed. A step costs O(1) plus the requests whose state changes in it. Decoding requests advance
// by one token per step, so their progress is kept implicit — (base step, tokens at base) — and
// settled only when something happens to them: they need a new KV block (every block_size
// steps, found through block_size buckets), they finish (a min-heap of finish steps), or they are
// preempted or skipped. When the budget or the free blocks cannot cover the whole running set at
// once, the step falls back to vLLM's exact ordered walk over the running list (O(batch)).
//
// Async scheduling (EngineConfig::async_scheduling; vllm/v1/core/sched/async_scheduler.py and
// EngineCore.step_with_batch_queue in vllm/v1/engine/core.py). vLLM schedules step k+1 and
// prepares its inputs while the GPU runs step k, and learns step k's sampled tokens only after
// it has scheduled step k+1 (AsyncScheduler gives every request that will sample an "output
// placeholder"). servesim models the two consequences:
//   * timing: a step that starts as the previous one ends takes max(device, host) instead of
//     device + host (StepCost::host_s is the host part). A step that starts from idle takes the
//     sum: nothing was there to overlap. Constant device time G and host time H give a step
//     period of exactly max(G, H) (sync: G + H);
//   * a request that finishes in step k (its last token, known at the end of step k) was already
//     scheduled into step k+1 with a placeholder: it takes one token of step k+1's budget, one
//     of its max_num_seqs seats and one decode row of its batch shape ("ghost"), and vLLM discards
//     that token. Its KV blocks are freed at the end of step k (vLLM frees them when it processes
//     step k's output, during step k+1), and a ghost-only step runs even when nothing else is left,
//     as vLLM's already-issued step does.
// With async off (or no host time and no finishing requests) the step loop is exactly the
// synchronous one.
//
// Decode runs. At low load most steps are alike: only decoders run, nothing waits, nothing
// finishes, no placeholder rides along; such a step allocates the blocks its bucket asks for,
// costs DecodeSeries::total_s(context) and emits one token per decoder. run_decode_steps() runs
// these steps back to back, start and end, without the general scheduler, for as long as the
// next one is still of that kind and its end would be the next event anyway
// (Simulator::advance_inline) — the operations of start_step()/end_step() for such a step, in
// their order, so every time, counter and sum is the same bit for bit. It stops before a step
// whose bucket does not fit the free blocks (the general path preempts) and leaves in flight the
// step in which the next request finishes, or whose end is not the next event.
//
// Sliding-window layers (EngineConfig::kv_sliding_groups > 0: vLLM's hybrid KV cache manager,
// vllm/v1/core/single_type_kv_cache_manager.py). Every block of the pool holds block_size tokens
// of one group of layers. A request's table (KvTable) is its full-attention group; each sliding
// group allocates the same block indices but frees those wholly before token c − W + 1 whenever
// the request is scheduled with c computed tokens (SlidingWindowManager.remove_skipped_blocks), so
// it holds blocks [sw_lo, count). Those are taken from and returned to the same pool
// (KvCacheManager::take_detached / release_detached) where vLLM frees and allocates them: at each
// scheduled prefill chunk, when a prompt completes (vLLM: at the next step) and, for decoders, at
// each block boundary — between boundaries a decoder may hold one block more than vLLM, which
// frees the oldest block one token before the boundary.
//
// V0 scheduler (EngineConfig::enable_chunked_prefill == 0, V0 rows only; vllm/core/scheduler.py
// _schedule_default of vLLM 0.6-0.7, docs/semantics.md "V0 scheduler"). A step is either a prefill
// step or a decode step: waiting requests are admitted first, FCFS, each with its whole prompt
// within the token budget, while running < max_num_seqs and the free blocks stay above the block
// manager's watermark (int(0.01 × blocks)); if any was admitted, the step runs only their
// prefills and every decoder waits. Otherwise every running request decodes one token (with
// V1's preemption of the last running request when a block is missing, as V0's recompute mode).
// Multi-step scheduling (num_scheduler_steps = n > 1, vllm/engine/llm_engine.py with
// multi_step_model_runner.py): a decode step begins a block of n steps during which nothing is
// admitted (the scheduler runs only at block boundaries; a prefill step is a single step). A
// request that finishes inside a block is returned and its blocks freed at once, as vLLM's
// output processor does, but its row stays in the block's batch to the end (a "dead row": the
// GPU runs the batch it was given; its tokens are discarded), charged at its final context.
//
// Speculative decoding (EngineConfig::spec, sim/replica/spec_decode.h; V1 rows, async scheduling
// off). Decoders advance by a drawn number of tokens per step, so their progress is explicit: every
// step takes the exact walk (schedule_running_slow), a decoder is scheduled 1 + K tokens (capped
// by the budget and max_model_len), its KV allocation reserves K lookahead slots (0 for n-gram),
// it runs as a verify row of 1 + K query tokens (a chunk row of the BatchShape: q tokens after c
// computed, all q sampled), and at the step's end it is settled (replica_spec.cpp): accepted
// drafts A drawn, A + 1 tokens emitted as one chunk (capped by its output), the rejected drafts
// rolled back. A request's token segments then count chunks (RequestRecord::output_chunks). The
// drafter's GPU time (StepCosts::drafter_s) adds to every step. Decode runs are not used.
// LoRA (EngineConfig::lora.enable_lora; sim/replica/lora_adapters.h). schedule_waiting skips a
// waiting request whose adapter would make the running requests' distinct adapters exceed
// max_loras; skipped requests go back to the head of the queue in their order, as vLLM's
// skipped_waiting_requests do. Each general step first makes its adapters resident (loads add to
// the step's device time), then adds the Punica kernels' roofline for the step's adapter tokens
// and distinct adapters; a decode run adds the same kernel time to each of its steps (its
// adapters do not change). Requests of different adapters never share prefix-cache blocks.
//
// Parts (docs/design.md, "The replica's parts"): the SchedulerPolicy orders the WaitingQueue and
// picks preemption victims; the DecoderIndex keeps the decoders' implicit progress (below); the
// KvCacheManager holds the blocks; StepCosts asks the cost models. This class keeps the running
// list and the step loop, in three files: replica.cpp (arrivals, events, request state changes),
// replica_schedule.cpp (the scheduler) and replica_step.cpp (starting, running, ending a step).
//
// Ownership: the Replica keeps its in-flight request state; per-request results go to the
// RequestRecord vector owned by the caller (indexed by request id), and the caller is told of each
// finished or failed request through RequestObserver.
#ifndef SERVESIM_SIM_REPLICA_REPLICA_H_
#define SERVESIM_SIM_REPLICA_REPLICA_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "models/batch_shape.h"
#include "models/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/request_record.h"
#include "sim/replica/decoder_index.h"
#include "sim/replica/dp_group.h"
#include "sim/replica/engine_config.h"
#include "sim/replica/kv_cache_manager.h"
#include "sim/replica/kv_offload.h"
#include "sim/replica/latency_spikes.h"
#include "sim/replica/lora_adapters.h"
#include "sim/replica/pipeline.h"
#include "sim/replica/request_state.h"
#include "sim/replica/scheduler_policy.h"
#include "sim/replica/spec_decode.h"
#include "sim/replica/step_costs.h"
#include "sim/replica/waiting_queue.h"
#include "workloads/request_spec.h"

namespace servesim::sim {

// Told when a request leaves a replica (completed or failed), at the simulated time it happens.
class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  virtual void on_request_done(engine::Simulator& sim, int64_t request_id) = 0;
};

// A decode instance's source of remote KV (disaggregated prefill/decode, sim/cluster/
// pd_simulation.h; vLLM's KV connector on the decode side). Told when the replica has reserved
// the blocks of a request whose prompt was computed elsewhere and wants `tokens` prompt tokens
// (those its prefix cache lacks) pulled now; it answers with Replica::remote_kv_loaded().
class RemoteKvSource {
 public:
  virtual ~RemoteKvSource() = default;
  virtual void start_remote_kv_load(engine::Simulator& sim, int32_t replica, int64_t request_id,
                                    int64_t tokens) = 0;
};

// Aggregate counters of one replica over a run.
struct ReplicaStats {
  int64_t steps = 0;
  int64_t busy_ns = 0;           // Σ step durations
  int64_t scheduled_seqs = 0;    // Σ sequences per step (for the mean batch size)
  int64_t scheduled_tokens = 0;  // Σ tokens per step
  int64_t preemptions = 0;
  int64_t slow_path_steps = 0;  // steps that needed the exact ordered walk
  int64_t peak_used_blocks = 0;
  int64_t peak_running = 0;
  int64_t peak_step_tokens = 0;  // most tokens scheduled in one step
  int64_t outstanding_ns = 0;    // ∫ (running + waiting) dt: for Little's law checks
  int64_t prefix_queried_tokens = 0;
  int64_t prefix_hit_tokens = 0;
  int64_t prefix_evicted_blocks = 0;  // cached KV blocks evicted (KvCacheManager::evicted_blocks)
  double ideal_busy_s = 0;            // Σ ideal step times, when an ideal model is attached
  // Steps shorter than their ideal step (by more than the clock's 1 ns), when an ideal model is
  // attached (DP rounds aside: their rank steps end with the group's). The cost model's physics
  // floor (docs/cost_model.md) keeps it 0; a result reports it only when it is not.
  int64_t steps_below_ideal = 0;
  // Speculative decoding: verify rows (a decoder with drafts in a step), the drafts they held,
  // the drafts accepted and the tokens they emitted; Σ drafter time. All 0 without it.
  int64_t spec_verify_rows = 0;
  int64_t spec_draft_tokens = 0;
  int64_t spec_accepted_tokens = 0;
  int64_t spec_emitted_tokens = 0;
  double spec_drafter_s = 0;
  int64_t used_blocks_now = 0;  // KV blocks held when stats() was called (0 after a drained run)
  KvOffloadStats offload;       // the CPU tier's counters (zero without KV offloading)
  LoraStats lora;               // --enable-lora only (sim/replica/lora_adapters.h)
};

class Replica : public engine::EventHandler {
 public:
  // `config` must be resolved (resolve_engine_config). `records` is indexed by request id and must
  // outlive the replica; `ideal_cost` may be null (then ideal_busy_s stays 0).
  Replica(int32_t id, const EngineConfig& config, const models::CostModel& cost,
          const models::CostModel* ideal_cost, int64_t num_blocks,
          std::vector<metrics::RequestRecord>* records, RequestObserver* observer);

  // A request reaches the engine now. Requests longer than max_model_len fail at once, as vLLM's
  // server rejects them. REQUIRES: records[spec.id] exists and holds the send time.
  // With virtual engines (below), it goes to the engine with the fewest unfinished requests.
  void add_request(engine::Simulator& sim, const workloads::RequestSpec& spec);

  // Pipeline parallelism (vLLM V0 virtual engines, sim/replica/pipeline.h): this replica becomes
  // virtual engine 0 of a group; `others` are virtual engines 1..PP−1 (Replicas built with their
  // own ids, KV blocks and step logs, never given requests directly). Every engine's steps run
  // through `stages` instead of taking estimate().total_s. add_request() picks the engine with
  // the fewest unfinished (waiting + running) requests, ties to the lowest engine (this first);
  // outstanding(), num_running() and num_waiting() count the whole group.
  // REQUIRES: called before any request arrives; every pointer outlives this replica.
  void set_virtual_engines(std::vector<Replica*> others, PipelineStages* stages);

  // Data parallelism (sim/replica/dp_group.h): this replica is one rank of `group`. `front`
  // makes it the rank the router sends the group's requests to (add_request() then picks the
  // rank, and outstanding(), num_running() and num_waiting() count the whole group); `lockstep`
  // (an MoE model) lets the group's rounds time its steps. REQUIRES: before any request arrives;
  // no virtual engines; `group` outlives this replica.
  void set_dp_group(DpGroup* group, bool front, bool lockstep);
  // The group's round that this replica's step joined ends at `end`.
  void end_dp_step(engine::Simulator& sim, SimTime end);
  // This engine's own counts (a DP group's front counts the group in num_running/num_waiting).
  int64_t local_num_running() const { return static_cast<int64_t>(running_.size()); }
  int64_t local_num_waiting() const { return waiting_size(); }

  // The replica's part in disaggregated prefill/decode, as vLLM's --kv-transfer-config
  // "kv_role" names an instance's: a prefill instance (kv_producer) runs only the proxy's
  // max_tokens=1 requests (PdCluster::send) and takes no remote KV; a decode instance
  // (kv_consumer, set_remote_kv_source) takes requests whose KV another instance computed, and
  // local ones (conditional disaggregation); an aggregated engine (no connector) takes neither.
  // vLLM itself decides per request (kv_transfer_params from the proxy); the role states which
  // requests a pool's replicas may be given and is checked when one arrives.
  enum class Role { kAggregated, kPrefill, kDecode };
  Role role() const { return remote_.role; }
  // REQUIRES: before any request arrives; no remote KV source.
  void set_prefill_role() { remote_.role = Role::kPrefill; }

  // Disaggregated prefill/decode (sim/replica/replica_remote.cpp), as vLLM V1's scheduler runs a
  // request with do_remote_prefill through its KV connector (NixlConnector): the request waits
  // in the queue like any other; at its admission (running < max_num_seqs, budget left) the
  // replica allocates blocks for the whole prompt — its local prefix-cache hits taken, the rest
  // fresh — and asks `source` to pull the missing tokens (get_num_new_matched_tokens,
  // update_state_after_alloc); it takes no seat and no budget while it loads
  // (WAITING_FOR_REMOTE_KVS). Once remote_kv_loaded() is called it is admitted ahead of the
  // waiting queue with all prompt tokens but the last computed (_update_waiting_for_remote_kv:
  // the last one is recomputed to sample the first token). A later preemption recomputes it
  // locally. Loading requests count as waiting (num_waiting). REQUIRES: one engine (no virtual
  // engines, no DP group), chunked prefill on (V1), no sliding-window groups; `source` outlives
  // the replica.
  // It also makes this replica a decode instance (role() kDecode).
  void set_remote_kv_source(RemoteKvSource* source) {
    remote_.source = source;
    remote_.role = Role::kDecode;
  }
  void add_remote_request(engine::Simulator& sim, const workloads::RequestSpec& spec);
  void remote_kv_loaded(engine::Simulator& sim, int64_t request_id);
  // Prompt tokens of `spec` this replica's prefix cache holds now (full blocks, at most all but
  // the last token, as admission would find them). Changes nothing.
  int64_t cached_prompt_tokens(const workloads::RequestSpec& spec) const;
  // Speculative decoding's drafter cost model (null: none on the GPU, as n-gram's); not owned.
  // REQUIRES: before any request arrives.
  void set_drafter(const models::CostModel* drafter) {
    costs_.set_drafter(drafter, config_.spec.num_speculative_tokens);
  }

  // Aborts request `request_id` held by this engine (its record's replica), as vLLM's
  // EngineCore.abort_requests → Scheduler.finish_requests(ids, FINISHED_ABORTED) when the API
  // server's client goes away. The engine core takes aborts between steps, so the request leaves
  // at the next step boundary: at once when no step is in flight, else at the end of the step in
  // flight (after that step's tokens, before the next step is scheduled). Waiting, it leaves the
  // queue; running, it leaves as a finished request does at that boundary (its KV blocks freed,
  // the same placeholder row with async scheduling, the same dead row inside a multi-step block)
  // without its remaining tokens. Its record becomes failed with the error "aborted"; its token
  // segments hold the tokens it got. A request already finished is left alone. replica_abort.cpp.
  // REQUIRES: no KV offloading, remote KV (P/D) or speculative decoding (not modelled).
  void abort_request(engine::Simulator& sim, int64_t request_id);

  // Fault injection for `servesim serve` (sim/cluster/replica_outages.h). Steps that start inside
  // a window of `spikes` last longer (sim/replica/latency_spikes.h); null: none; not owned. While
  // down (a crashed engine), every request that reaches it fails at once with the error
  // kReplicaDownError. REQUIRES: one engine (no DP group, no virtual engines).
  static constexpr const char* kReplicaDownError = "replica down";
  void set_latency_spikes(const LatencySpikes* spikes) { faults_.spikes = spikes; }
  void set_down(bool down) { faults_.down = down; }
  bool down() const { return faults_.down; }

  void on_event(engine::Simulator& sim, int64_t tag) override;

  int32_t id() const { return id_; }
  // Requests queued or running here (what a least-outstanding router compares).
  int64_t outstanding() const { return num_running() + num_waiting(); }
  int64_t num_running() const;
  int64_t num_waiting() const;
  const KvCacheManager& kv() const { return kv_; }
  const metrics::StepLog& step_log() const { return step_log_; }
  // Moves the step log out (for the caller's result once the run is over); leaves it empty.
  metrics::StepLog take_step_log() { return std::move(step_log_); }
  // Frees the step log's storage before step `step` (StepEnds::discard_before), for a live engine
  // whose readers no longer need it; returns the steps freed so far.
  std::size_t discard_steps_before(int64_t step) {
    return step_log_.step_end.discard_before(static_cast<std::size_t>(step));
  }
  ReplicaStats stats() const;
  // The open token segment of every running request: f(request id, first step of the segment).
  // The segment runs to the last step ended (step_log()); a first step past it means no token of
  // this segment yet. For a caller that follows tokens while they are produced
  // (sim/cluster/live_engine.h): decoders' progress is implicit, so their records hold only the
  // segments closed so far. Requests without an open segment (prefilling) are not listed.
  template <typename F>
  void for_each_open_segment(F&& f) const {
    for (int32_t s : running_) {
      if (slots_[s].seg_start >= 0) f(slots_[s].id, slots_[s].seg_start);
    }
  }

 private:
  using Phase = RequestPhase;
  using Req = RequestState;
  enum EventTag : int64_t { kKick = 0, kStepEnd = 1, kLoadDone = 2 };

  // Fills r.chain_keys / r.shared_blocks from a request's trace hash chain.
  void set_chain_keys(Req& r, const workloads::RequestSpec& spec) const;
  static const uint64_t* chain_keys_of(const Req& r) {
    return r.chain_keys.empty() ? nullptr : r.chain_keys.data();
  }

  int32_t num_tokens(const Req& r) const { return r.prompt + r.generated; }
  int64_t local_outstanding() const {
    return static_cast<int64_t>(running_.size() + waiting_size());
  }
  void add_local_request(engine::Simulator& sim, const workloads::RequestSpec& spec);
  // `chained`: the step starts as the previous one ends (so async scheduling overlaps them).
  void start_step(engine::Simulator& sim, bool chained);
  // Decode runs (see the file comment). Returns true when it leaves a step in flight, false when
  // start_step() must schedule the next step (with `chained` set if it ran steps already).
  bool run_decode_steps(engine::Simulator& sim, bool& chained);
  void end_step(engine::Simulator& sim);
  // The step's counters and times, for both paths (run_decode_steps and start_step). Inline,
  // defined in replica_step.cpp, the only file that calls them: decode runs call them every step.
  inline void record_step(const engine::Simulator& sim, SimTime duration, int64_t seqs,
                          int64_t tokens, int64_t running, double ideal_s);
  inline void close_step(SimTime end);
  bool schedule_running_fast();
  // vLLM's ordered walk over the running list. A caller that has done the walk's operations for
  // running_[0, start) itself (schedule_verify_rows) hands it on at `start` with its counts.
  void schedule_running_slow(bool& preempted, size_t start = 0, int64_t decoders = 0,
                             int64_t decoder_ctx = 0, int64_t lora_decoders = 0);
  void schedule_waiting();
  // V0's prefill-first step (vllm/core/scheduler.py _schedule_default; see the file comment).
  void schedule_v0_step(bool& preempted);
  // A running decoder gets no token in step k: its progress, block and finish steps move by one.
  void skip_decoder(int32_t slot, int64_t k);
  // Multi-step scheduling: step k continues the decode block begun at v0_.block_start.
  bool in_decode_block(int64_t k) const {
    return v0_.block_start >= 0 && (k - v0_.block_start) % config_.num_scheduler_steps != 0;
  }
  void settle_decoder(Req& r, int64_t step);
  void add_decoder(int32_t slot, int64_t base_step);
  void remove_decoder(Req& r);
  void after_allocation(int32_t slot, int32_t q);
  // KV offloading (sim/replica/kv_offload.h; replica_offload.cpp): loads that have ended go to
  // the front of the waiting queue; a wake-up is queued for the next one to end; the head of the
  // waiting queue is admitted with a load from the CPU tier, or (loaded) with its loaded tokens
  // computed — kNone: neither applies, the usual admission follows; kBlocked: no room, stop.
  enum class OffloadAdmit { kNone, kDone, kBlocked };
  void collect_loads(engine::Simulator& sim);
  void arm_load_wake(engine::Simulator& sim);
  OffloadAdmit admit_offloaded(int32_t slot);
  // Registers the request's computed full blocks of its shared range not yet registered.
  void register_computed(Req& r);
  int64_t new_blocks_for(const Req& r, int32_t q) const;
  // The LoRA kernels' tokens and the adapter loads of the step being started (0 without LoRA).
  double lora_step_s(int64_t prefill_lora_tokens);
  // A request joins the running set: its adapter counts for max_loras; a wait for it ends.
  void admit_lora(Req& r);
  // Sliding-window groups (file comment); no-ops without them. vLLM's order for a scheduled
  // request: free the blocks before token c − W + 1 (trim_sliding), then allocate the new ones
  // for every group (allocate_with_sliding). sliding_lo: the first block still needed with c
  // tokens computed, for a table of `count` blocks. sliding_delta: what a request's trim and
  // growth by `new_full` blocks take from the pool (> 0) or give back (< 0), asked before either
  // (vLLM's per-request check). The fast paths check the growth alone (any order then fits).
  int64_t sliding_groups() const { return config_.kv_sliding_groups; }  // 0: none
  // V0 without chunked prefill (EngineConfig::enable_chunked_prefill == 0): prefill-first steps,
  // whole prompts, admission above the watermark (schedule_v0_step).
  bool prefill_first() const { return !config_.enable_chunked_prefill; }
  int64_t sliding_lo(int64_t count, int64_t c) const {
    return std::min<int64_t>(
        std::max<int64_t>(0, c - config_.kv_sliding_window + 1) / config_.block_size, count);
  }
  int64_t sliding_delta(const Req& r, int64_t new_full, int64_t c) const {
    if (sliding_groups() == 0) return 0;
    return sliding_groups() * (new_full - (sliding_lo(r.kv.count + new_full, c) - r.sw_lo));
  }
  void trim_sliding(Req& r, int64_t c) {
    if (sliding_groups() != 0) trim_sliding_groups(r, c);
  }
  void trim_sliding_groups(Req& r, int64_t c);
  // trim_sliding, then the table's `new_full` new blocks and the sliding groups' (vLLM's order).
  // REQUIRES: sliding groups.
  void allocate_with_sliding(Req& r, int64_t new_full, int64_t c);
  // One block for each decoder of `bucket` (live entries: their next token starts a block at
  // step k), and its sliding groups' (trims first). REQUIRES: the free blocks cover the growth.
  void allocate_boundary_blocks(const std::vector<DecoderIndex::Entry>& bucket, int64_t k);
  // A request admitted with c tokens computed (cached) and a table of r.kv.count blocks: its
  // sliding groups hold the blocks from c − W + 1 on; with linear-attention layers it also
  // takes its kv_mamba_groups state blocks.
  void admit_sliding(Req& r, int64_t c);
  // A decoder's computed tokens at step k (its progress is implicit between settlements).
  static int64_t decoder_context(const Req& r, int64_t k) {
    return int64_t{r.num_computed} + (k - r.base_step);
  }
  // Returns the sliding groups' blocks (and the state blocks) of a request whose table is about
  // to be freed.
  void release_sliding(Req& r);
  // Speculative decoding (replica_spec.cpp). The tokens a decoder is scheduled: 1 + K, capped
  // by max_model_len − 1 − computed (vLLM's cap; the budget caps it afterwards).
  int32_t spec_tokens_for(const Req& r) const;
  // The decoders scheduled in the step become verify rows of `shape` (q > 1: chunk rows) and are
  // listed in step_.verify; `rows` and `rows_ctx` get the requests that sample and their context
  // sum after the step's tokens (the drafter's later passes).
  void add_verify_rows(models::BatchShape& shape, int64_t& rows, int64_t& rows_ctx);
  // What the verify rows add to a step's BatchShape: the chunk rows (q > 1) and their sums, the
  // sampled drafts, and the drafter's rows and their context. The two attention works are
  // running sums that start at the shape's own (its prefills'; 0.0 without prefills), so a row
  // adds to the same double whichever pass sums it: the same bits.
  struct VerifySums {
    int64_t chunk_rows = 0;
    int64_t chunk_tokens = 0;
    int64_t chunk_ctx = 0;  // Σ computed tokens of the chunk rows
    int64_t drafts = 0;     // Σ (q − 1): the draft positions sampled
    double attn_work = 0.0;
    double window_attn_work = 0.0;
    int64_t window_ctx = 0;
    int64_t rows = 0;
    int64_t rows_ctx = 0;
  };
  // One verify row: decoder `r` scheduled q = 1 + drafts tokens, summed into `sums`. Both passes
  // (add_verify_rows, schedule_verify_rows) sum their rows with it.
  void add_verify_row(const Req& r, int64_t q, VerifySums& sums) const;
  // The walk over running_ and add_verify_rows' pass in one (replica_spec.cpp) where the step
  // runs only decoders: each gets its 1 + K tokens and blocks in running order, becomes a verify
  // row and is summed into `sums` — the walk's operations and add_verify_rows' sums in their
  // order. True when every decoder fit; at the first that does not (budget or blocks short), the
  // walk goes on from it (schedule_running_slow) and it returns false: `sums` are then not used.
  bool schedule_verify_rows(bool& preempted, VerifySums& sums);
  // `sums` added to `shape`, their attention works stored (running sums from the shape's).
  // REQUIRES: sums' attention works started at shape's (0.0 in a step without prefills).
  void add_verify_sums(const VerifySums& sums, models::BatchShape& shape, int64_t& rows,
                       int64_t& rows_ctx) const;
  // The end of step k for the verify rows: acceptance drawn, chunk emitted, rollback, finish.
  void end_verify_rows(engine::Simulator& sim, int64_t k);
  // A finished request's streamed chunks: the steps of its token segments.
  static void count_chunks(metrics::RequestRecord& rec);
  void preempt(int32_t slot, int64_t step);
  void finish(engine::Simulator& sim, int32_t slot, int64_t step);
  void fail(engine::Simulator& sim, int32_t slot, const std::string& why);
  // Aborts (abort_request) take effect: every pending one, at the boundary after step `last_step`.
  void apply_aborts(engine::Simulator& sim, int64_t last_step);
  void abort_now(engine::Simulator& sim, int64_t id, int64_t last_step);
  void close_segment(Req& r, int64_t last_step);
  void account_outstanding(SimTime now);
  int32_t new_slot();
  // A fresh slot holding a request that reached the engine at `arrival_ns`, phase kWaiting.
  int32_t take_slot(const workloads::RequestSpec& spec, int64_t arrival_ns);
  void remove_running(int32_t slot);
  // Requests whose KV blocks are being loaded from the CPU tier wait too (vLLM's
  // WAITING_FOR_REMOTE_KVS), outside waiting_.
  size_t waiting_size() const {
    return waiting_.size() + (offload_ != nullptr ? offload_->num_loading() : 0);
  }
  bool waiting_empty() const { return waiting_.empty(); }
  // The head of the waiting queue, given a slot if it has none yet (FCFS: an arrival never
  // admitted). May grow slots_: take no Req reference across it.
  int32_t waiting_front() {
    const int32_t s = waiting_.front_slot();
    return s >= 0 ? s : waiting_front_slow();
  }
  int32_t waiting_front_slow();

  int32_t id_;
  EngineConfig config_;
  StepCosts costs_;
  KvCacheManager kv_;
  std::unique_ptr<KvOffload> offload_;  // the CPU tier; null without KV offloading
  // Where results go: the caller's records (indexed by request id) and who is told of each end.
  struct Outputs {
    std::vector<metrics::RequestRecord>* records = nullptr;
    RequestObserver* observer = nullptr;
  };
  Outputs out_;
  std::unique_ptr<SchedulerPolicy> policy_;  // orders waiting_ and picks preemption victims
  WaitingQueue waiting_;
  // How this engine is linked to others (pipeline parallelism's virtual engines, a DP group).
  struct Links {
    std::vector<Replica*> virtual_engines;  // engines 1..PP−1 when this is engine 0 of a group
    PipelineStages* pipeline = nullptr;     // the group's stages (every engine of a group)
    DpGroup* dp = nullptr;                  // the DP group of this rank, if any
    bool dp_front = false;                  // requests to the group arrive here
    bool dp_lockstep = false;               // the group's rounds time this rank's steps
  };
  Links links_;
  // Disaggregated prefill/decode (set_remote_kv_source): requests whose KV comes from elsewhere.
  struct Remote {
    Role role = Role::kAggregated;
    RemoteKvSource* source = nullptr;
    std::vector<int64_t> arriving;  // ids added by add_remote_request, not yet given a slot
    std::vector<int32_t> loading;   // slots with blocks reserved, KV in transit
    std::vector<int32_t> ready;     // slots whose KV has arrived, in arrival order
    std::vector<std::pair<int64_t, int64_t>> to_start;  // (id, tokens) reserved this step
  };
  Remote remote_;
  // replica_remote.cpp: the remote steps of schedule_waiting() and start_step().
  bool reserve_remote(int32_t slot);
  void admit_remote_ready();
  void start_remote_loads(engine::Simulator& sim);
  int64_t remote_waiting() const {
    return static_cast<int64_t>(remote_.loading.size() + remote_.ready.size());
  }

  std::vector<Req> slots_;
  std::vector<int32_t> free_slots_;
  std::vector<int32_t> running_;     // vLLM's self.running, in order
  std::vector<int32_t> prefilling_;  // the running requests still computing their prompt, in order
  DecoderIndex decoders_;            // the decoding requests of running_, progress implicit

  // The step being scheduled or in flight.
  struct Step {
    int64_t index = 0;  // index of the next step to start (= steps run so far)
    bool in_flight = false;
    bool end_queued = false;        // the step in flight has its kStepEnd event in the queue
    SimTime end;                    // when the step in flight ends
    bool kick_pending = false;      // a kick event is queued (add_local_request)
    std::vector<int32_t> prefills;  // slots with prefill tokens in the step in flight
    int64_t decoders = 0;
    int64_t decoder_ctx = 0;      // Σ context of the decoders in the step
    int64_t budget = 0;           // token budget left while scheduling
    std::vector<int32_t> verify;  // speculative decoding: the decoders in the step
    int64_t now_ns = 0;           // when the step being scheduled starts
    int64_t lora_decoders = 0;    // decoders in the step with a LoRA adapter
    std::vector<int32_t> hits;    // scratch: a request's prefix-cache hits while it is admitted
    std::vector<int64_t> aborts;  // requests to abort at the end of the step in flight
  };
  Step step_;
  // Rows of a step's batch that emit no token: their count and Σ context tokens.
  struct Rows {
    int64_t seqs = 0;
    int64_t ctx = 0;
  };
  // Async scheduling: on, and the requests that finished in the step just ended and ride along
  // in the next one as discarded placeholder decodes (see the file comment).
  struct Async {
    bool on = false;
    Rows ghosts;
  };
  Async async_;
  // Speculative decoding (EngineConfig::spec): on, its KV lookahead slots per request, the
  // acceptance draws and the step being scheduled's verify sums (schedule_verify_rows).
  struct Spec {
    bool on = false;
    int lookahead = 0;
    AcceptanceSampler acceptance;
    VerifySums sums;
  };
  Spec spec_;
  // The V0 engine's modes. Without chunked prefill (prefill_first()): admission above the block
  // manager's watermark, 1 % of the blocks (0 otherwise). Multi-step scheduling
  // (num_scheduler_steps > 1): the first step of the decode block in progress (-1: none), and the
  // rows of requests that finished inside the block.
  struct V0 {
    int64_t watermark_blocks = 0;
    int64_t block_start = -1;
    Rows dead;
  };
  V0 v0_;
  metrics::StepLog step_log_;
  SimTime last_change_;  // when outstanding() last changed (for outstanding_ns)
  ReplicaStats stats_;
  // --enable-lora: the max_loras rule, the adapters' residency and load costs (adapters null
  // without), the running decoders with an adapter (LoRA kernel tokens) and the waiting requests
  // skipped for max_loras in this step.
  struct Lora {
    std::unique_ptr<LoraAdapters> adapters;
    int64_t decoders = 0;
    std::vector<int32_t> skipped;
  };
  Lora lora_;
  // Fault injection: set_latency_spikes(), set_down().
  struct Faults {
    const LatencySpikes* spikes = nullptr;
    bool down = false;
  };
  Faults faults_;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_REPLICA_H_
