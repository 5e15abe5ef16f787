// LiveEngine: the simulated deployment driven from outside, one slice of simulated time at a
// time. The caller is the client: it submits each request when it comes (it reaches the
// deployment at the engine's clock), advances the clock, and reads each request's tokens as the
// steps that produce them end. `servesim serve` (sim/app/serve_*) runs one behind HTTP.
//
// The deployment is run_simulation's (sim/cluster/simulation.h): --num-replicas replicas (each
// with its data-parallel ranks or pipeline virtual engines) behind the router, with the
// calibration's API-server front ends. The same arrivals give the same token times as
// run_simulation, to the nanosecond (tests/unit/cluster/live_engine_test.cpp): the events are the
// same; only the client is outside. (Two events due at the same nanosecond may run in another
// order than in a batch run, whose event sequence numbers differ.)
//
// Token times are step ends (RequestRecord's segments over the replica's StepLog), without the
// calibration's client TTFT overhead: client_offset() is that overhead, which a client sees on
// every token (a batch run adds it to TTFT and E2E; ITL is unchanged).
//
// Memory: a request holds a 96-byte record (and its token segments) from submit() until the
// caller release()s it; a released record's slot is reused by a later request. A replica's step
// log (~4.5 bytes a step) is freed, 2 Mi steps at a time, before the first step that a request
// not released still reads. So a server that releases each request once it has sent its last
// token holds memory for the requests in flight and the steps since the oldest of them, not for
// every request served. Not thread-safe: the caller serialises every call.
#ifndef SERVESIM_SIM_CLUSTER_LIVE_ENGINE_H_
#define SERVESIM_SIM_CLUSTER_LIVE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/cluster/front_end.h"
#include "sim/cluster/replica_outages.h"
#include "sim/cluster/router.h"
#include "sim/cluster/simulation.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/request_record.h"
#include "sim/replica/latency_spikes.h"
#include "sim/replica/replica.h"

namespace servesim::sim {

class LiveEngine : private RequestObserver, private engine::EventHandler {
 public:
  // `prepared` must come from `config` (prepare_deployment) and outlive the engine. Throws
  // ConfigError for --num-replicas < 1 or an unknown --router, as run_simulation does.
  LiveEngine(const SimulationConfig& config, const PreparedDeployment& prepared);
  ~LiveEngine() override;

  // The engine's clock: the last advance_to() target (0 at start).
  SimTime now() const { return now_; }
  // When the next simulated event is due (SimTime::max() when idle): nothing changes before.
  SimTime next_event_time() const { return sim_.next_event_time(); }
  // The calibration's client TTFT overhead (see the file comment).
  SimTime client_offset() const { return client_offset_; }

  // A request of `prompt_tokens` tokens that generates exactly `output_tokens` tokens reaches the
  // deployment at `at` (it enters when the clock reaches `at`). Returns its id: 0, 1, 2, ...
  // REQUIRES: at >= now(), prompt_tokens >= 1, output_tokens >= 1.
  int64_t submit(SimTime at, int32_t prompt_tokens, int32_t output_tokens);
  // Runs every event due at or before t; now() becomes t. REQUIRES: t >= now().
  void advance_to(SimTime t);
  // The client of request `id` went away: the request is aborted at now() as vLLM aborts it
  // (Replica::abort_request: it leaves its engine at the next step boundary, its KV blocks freed).
  // Takes effect in the next advance_to(). One that has not reached the deployment yet never
  // does; one in an API server's queue is aborted once it reaches its engine (the end of the
  // advance_to() slice in which it gets there). Its record becomes failed ("aborted"). A finished
  // request is left alone. REQUIRES: id submitted and not released.
  void abort(int64_t id);

  // Fault injection (`servesim serve`). Steps that start inside a window of `spikes` last longer
  // (sim/replica/latency_spikes.h). Replica `outage.replica` (0..num_replicas−1) crashes at
  // outage.down and comes back empty at outage.up (sim/cluster/replica_outages.h); a request
  // that arrives while every replica is down fails at once with the error kNoReplicaUp. Both
  // throw ConfigError with data or pipeline parallelism (one engine per replica is modelled).
  // REQUIRES: before any advance_to(); outage.down >= now().
  static constexpr const char* kNoReplicaUp = "no replica up";
  void set_latency_spikes(const LatencySpikes& spikes);
  void schedule_outage(const ReplicaOutages::Outage& outage);
  bool replica_up(int32_t replica) const { return outages_->up(replica); }
  bool any_replica_up() const { return outages_->any_up(); }
  int32_t num_replicas() const { return static_cast<int32_t>(router_->sent_per_replica().size()); }
  // When request `id`'s replica crashed under it (SimTime::max(): it did not): its tokens after
  // that time never reach its client.
  SimTime cut_time(int64_t id) const { return outages_->cut_time(slot_of(id)); }
  // KV blocks in use on replica `replica` (its engine; 0..num_replicas−1).
  int64_t replica_used_kv_blocks(int32_t replica) const {
    return replicas_[static_cast<size_t>(replica)]->kv().num_used_blocks();
  }

  // The caller is done with finished request `id`: its record and token segments are dropped,
  // and id is no longer valid for record(), finished(), token_times() or abort(). Its slot is
  // reused once an advance_to() called after this ends past its arrival (so that no event of it
  // is still due). REQUIRES: finished(id), id not released before.
  void release(int64_t id);
  // Records held now (requests submitted and not released, and released ones whose slot is not
  // reused yet), and the slots allocated for them (the most held at once).
  int64_t retained_records() const {
    return static_cast<int64_t>(records_.size() - free_slots_.size());
  }
  int64_t record_slots() const { return static_cast<int64_t>(records_.size()); }
  // Steps run and steps whose end time is still stored, summed over the engines.
  int64_t steps_run() const;
  int64_t retained_steps() const;

  // Appends to `out` the times of request `id`'s tokens number `from` (0-based) onwards that were
  // produced by now(), in order.
  void token_times(int64_t id, int64_t from, std::vector<SimTime>* out) const;
  // Its record: lengths, arrival, replica, completed / failed (error), preemptions. The token
  // segments are complete only once it completed (token_times() is the live view). replica is
  // kNotArrived before its arrival, kAtFrontEnd while it waits in an API server's queue.
  static constexpr int32_t kNotArrived = -2;
  static constexpr int32_t kAtFrontEnd = -1;
  const metrics::RequestRecord& record(int64_t id) const {
    return records_[static_cast<size_t>(slot_of(id))];
  }
  bool finished(int64_t id) const { return record(id).completed || record(id).failed; }
  // Requests submitted so far (released ones included).
  int64_t num_requests() const { return next_id_; }

  // The deployment now, summed over its replicas (vLLM's gauges): requests running, requests
  // waiting (in the engines' queues and the API servers'), KV blocks used and in all.
  int64_t num_running() const;
  int64_t num_waiting() const;
  int64_t used_kv_blocks() const;
  int64_t total_kv_blocks() const;
  // Prefix-cache lookups so far, in tokens: queried and hit.
  int64_t prefix_queried_tokens() const;
  int64_t prefix_hit_tokens() const;
  // Preemptions so far, over every engine.
  int64_t preemptions() const;

 private:
  void on_request_done(engine::Simulator& sim, int64_t request_id) override;
  // A submitted request arrives (tag = its id), or is aborted (tag = −1 − id).
  void on_event(engine::Simulator& sim, int64_t tag) override;
  // Refreshes open_start_ from every engine (after a slice).
  void collect_open_segments();
  // The slot of request `id` (its index in records_ and its id inside the deployment).
  int64_t slot_of(int64_t id) const;
  // Returns the released slots whose arrival has passed to free_slots_ (after a slice).
  void recycle_released();
  // Frees each engine's step log before the first step a held record or open segment reads.
  void trim_step_logs();

  engine::Simulator sim_;
  std::vector<metrics::RequestRecord> records_;  // by slot
  // Request id → slot, for the requests not released. Ids are handed out in order (next_id_);
  // slots are reused: free_slots_ are free now, released_ once their arrival has passed.
  std::unordered_map<int64_t, int64_t> slots_;
  std::vector<int64_t> free_slots_;
  std::vector<int64_t> released_;
  int64_t next_id_ = 0;
  // steps_run() at the last trim_step_logs().
  int64_t steps_at_trim_ = 0;
  std::vector<std::unique_ptr<Replica>> replicas_;  // replica i's DP ranks, then PP engines
  std::vector<std::unique_ptr<DpGroup>> dp_groups_;
  std::vector<std::unique_ptr<PipelineStages>> stages_;
  std::vector<std::unique_ptr<FrontEnd>> front_ends_;
  std::unique_ptr<Router> router_;
  // Slot → first step of its open token segment, for the running requests that have one.
  std::unordered_map<int64_t, int64_t> open_start_;
  // Slots aborted while in an API server's queue: aborted in their engine once they get there.
  std::vector<int64_t> front_end_aborts_;
  SimTime now_;
  SimTime client_offset_;
  bool single_engine_replicas_ = true;  // no DP, no PP: what fault injection models
  std::unique_ptr<LatencySpikes> spikes_;
  std::unique_ptr<ReplicaOutages> outages_;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_LIVE_ENGINE_H_
