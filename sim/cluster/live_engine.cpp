#include "sim/cluster/live_engine.h"

#include <algorithm>

#include "sim/base/append_log.h"
#include "sim/base/error.h"

namespace servesim::sim {

LiveEngine::LiveEngine(const SimulationConfig& config, const PreparedDeployment& prepared) {
  if (config.num_replicas < 1) {
    throw ConfigError("--num-replicas: " + std::to_string(config.num_replicas) +
                      " is invalid; expected an integer >= 1");
  }
  const RouterPolicy policy = parse_router_policy(config.router);
  const models::CostModel& cost = *prepared.cost;
  const models::CostModel* ideal = config.track_ideal_busy ? prepared.ideal_cost.get() : nullptr;
  // The deployment as run_simulation builds it (simulation.cpp): replica i is DP ranks
  // i·DP … i·DP + DP − 1, the first its front; with PP, engine v >= 1 of replica i has id
  // num_replicas + i·(PP−1) + v − 1.
  const int dp = prepared.deployment.data_parallel_size;
  const int pp = prepared.deployment.pipeline_parallel_size;
  const int64_t engine_blocks = prepared.memory.num_blocks / pp;
  const auto* roofline = dynamic_cast<const models::RooflineCostModel*>(&cost);
  std::vector<Replica*> fronts;
  RequestObserver* observer = this;
  for (int i = 0; i < config.num_replicas * dp; ++i) {
    replicas_.push_back(std::make_unique<Replica>(i, prepared.engine, cost, ideal, engine_blocks,
                                                  &records_, observer));
    if (dp == 1) {
      fronts.push_back(replicas_.back().get());
      continue;
    }
    if (i % dp == 0) {
      dp_groups_.push_back(std::make_unique<DpGroup>(
          roofline != nullptr && roofline->dp_coupled() ? roofline : nullptr));
      fronts.push_back(replicas_.back().get());
    }
    dp_groups_.back()->add_member(replicas_.back().get());
    replicas_.back()->set_dp_group(dp_groups_.back().get(), i % dp == 0,
                                   prepared.deployment.dp_coupled());
  }
  for (int i = 0; pp > 1 && i < config.num_replicas; ++i) {
    std::vector<Replica*> others;
    for (int v = 1; v < pp; ++v) {
      const int32_t id = config.num_replicas + i * (pp - 1) + v - 1;
      replicas_.push_back(std::make_unique<Replica>(id, prepared.engine, cost, ideal, engine_blocks,
                                                    &records_, observer));
      others.push_back(replicas_.back().get());
    }
    stages_.push_back(std::make_unique<PipelineStages>(cost, pp));
    replicas_[static_cast<size_t>(i)]->set_virtual_engines(std::move(others), stages_.back().get());
  }
  router_ = std::make_unique<Router>(policy, fronts);
  outages_ =
      std::make_unique<ReplicaOutages>(&replicas_, config.num_replicas, router_.get(), &records_);
  single_engine_replicas_ = dp == 1 && pp == 1;
  const FrontEndCosts& fe_costs = config.offline ? FrontEndCosts{} : prepared.frontend;
  if (!fe_costs.empty()) {
    std::vector<FrontEnd*> fe;
    for (Replica* r : fronts) {
      front_ends_.push_back(std::make_unique<FrontEnd>(fe_costs, r));
      fe.push_back(front_ends_.back().get());
    }
    router_->set_front_ends(std::move(fe));
  }
  client_offset_ = SimTime::from_seconds_ceil(
      config.metrics.ttft_offset_s + (config.offline ? 0.0 : prepared.client_ttft_overhead_s));
}

LiveEngine::~LiveEngine() = default;

int64_t LiveEngine::submit(SimTime at, int32_t prompt_tokens, int32_t output_tokens) {
  SERVESIM_CHECK(at >= now_, "request submitted in the past");
  SERVESIM_CHECK(prompt_tokens >= 1 && output_tokens >= 1, "request without tokens");
  const int64_t id = next_id_++;
  int64_t slot = static_cast<int64_t>(records_.size());
  if (free_slots_.empty()) {
    records_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_.emplace(id, slot);
  metrics::RequestRecord& rec = records_[static_cast<size_t>(slot)];
  rec = metrics::RequestRecord{};
  rec.id = id;
  rec.arrival = at;
  rec.prompt_tokens = prompt_tokens;
  rec.output_tokens = output_tokens;
  rec.replica = kNotArrived;
  sim_.schedule_at(at, this, slot);
  return id;
}

void LiveEngine::set_latency_spikes(const LatencySpikes& spikes) {
  if (!single_engine_replicas_) {
    throw ConfigError(
        "--latency-spike: not modelled with --data-parallel-size or --pipeline-parallel-size > 1 "
        "(their steps are timed by a group); expected one engine per replica");
  }
  spikes_ = std::make_unique<LatencySpikes>(spikes);
  for (const auto& r : replicas_) r->set_latency_spikes(spikes_.get());
}

void LiveEngine::schedule_outage(const ReplicaOutages::Outage& outage) {
  if (!single_engine_replicas_) {
    throw ConfigError(
        "--replica-outage: not modelled with --data-parallel-size or --pipeline-parallel-size > 1; "
        "expected one engine per replica");
  }
  outages_->schedule(sim_, outage);
}

int64_t LiveEngine::slot_of(int64_t id) const {
  const auto it = slots_.find(id);
  SERVESIM_CHECK(it != slots_.end(), "an unknown or released request");
  return it->second;
}

void LiveEngine::abort(int64_t id) { sim_.schedule_at(now_, this, -1 - slot_of(id)); }

void LiveEngine::release(int64_t id) {
  SERVESIM_CHECK(finished(id), "releasing a request that has not finished");
  const int64_t slot = slot_of(id);
  slots_.erase(id);
  outages_->forget(slot);
  // The segments go now; the flags stay until the slot is reused, so that an event of the
  // request still due (its arrival, an abort) finds it finished and does nothing.
  records_[static_cast<size_t>(slot)].segments = metrics::SegmentList{};
  released_.push_back(slot);
}

void LiveEngine::recycle_released() {
  size_t kept = 0;
  for (int64_t slot : released_) {
    if (records_[static_cast<size_t>(slot)].arrival <= now_) {
      free_slots_.push_back(slot);
    } else {
      released_[kept++] = slot;
    }
  }
  released_.resize(kept);
}

void LiveEngine::trim_step_logs() {
  // The first step each engine's readers need: the first token segment of every held record,
  // every open segment, and from the last step on whatever comes next.
  std::vector<int64_t> keep(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {
    keep[i] = static_cast<int64_t>(replicas_[i]->step_log().step_end.size());
  }
  for (const metrics::RequestRecord& rec : records_) {
    if (rec.replica >= 0 && !rec.segments.empty()) {
      int64_t& k = keep[static_cast<size_t>(rec.replica)];
      k = std::min(k, rec.segments.front().first_step);
    }
  }
  for (const auto& [slot, first] : open_start_) {
    int64_t& k = keep[static_cast<size_t>(records_[static_cast<size_t>(slot)].replica)];
    k = std::min(k, first);
  }
  for (size_t i = 0; i < replicas_.size(); ++i) replicas_[i]->discard_steps_before(keep[i]);
}

int64_t LiveEngine::steps_run() const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += static_cast<int64_t>(r->step_log().step_end.size());
  return n;
}

int64_t LiveEngine::retained_steps() const {
  int64_t n = 0;
  for (const auto& r : replicas_) {
    n += static_cast<int64_t>(r->step_log().step_end.size() - r->step_log().step_end.discarded());
  }
  return n;
}

void LiveEngine::on_event(engine::Simulator& sim, int64_t tag) {
  if (tag < 0) {
    const int64_t id = -1 - tag;
    metrics::RequestRecord& rec = records_[static_cast<size_t>(id)];
    if (rec.completed || rec.failed) return;
    if (rec.replica == kNotArrived) {
      rec.failed = true;  // its arrival event drops it
      rec.error = "aborted";
    } else if (rec.replica == kAtFrontEnd) {
      front_end_aborts_.push_back(id);
    } else {
      replicas_[static_cast<size_t>(rec.replica)]->abort_request(sim, id);
    }
    return;
  }
  // A submitted request arrives: what BenchmarkClient::send_now hands the router.
  metrics::RequestRecord& rec = records_[static_cast<size_t>(tag)];
  if (rec.failed) return;    // aborted before it arrived
  if (!router_->any_up()) {  // every replica crashed (schedule_outage): nowhere to go
    rec.failed = true;
    rec.error = kNoReplicaUp;
    return;
  }
  rec.replica = kAtFrontEnd;  // the engine that takes it sets its own id
  workloads::RequestSpec spec;
  spec.id = tag;
  spec.arrival = rec.arrival;
  spec.prompt_tokens = rec.prompt_tokens;
  spec.output_tokens = rec.output_tokens;
  router_->send(sim, spec);
}

void LiveEngine::on_request_done(engine::Simulator& /*sim*/, int64_t /*request_id*/) {
  // Nothing to release: the record says it is done, and the caller reads it.
}

void LiveEngine::advance_to(SimTime t) {
  SERVESIM_CHECK(t >= now_, "the engine's clock cannot go back");
  sim_.run(t);
  now_ = t;
  if (!front_end_aborts_.empty()) {
    size_t kept = 0;
    for (int64_t id : front_end_aborts_) {
      const metrics::RequestRecord& rec = records_[static_cast<size_t>(id)];
      if (rec.replica >= 0) {
        replicas_[static_cast<size_t>(rec.replica)]->abort_request(sim_, id);
      } else {
        front_end_aborts_[kept++] = id;
      }
    }
    front_end_aborts_.resize(kept);
  }
  collect_open_segments();
  recycle_released();
  // A trim costs a pass over the held records: once per chunk of steps run, when there can be a
  // chunk to free.
  if (steps_run() - steps_at_trim_ >= static_cast<int64_t>(AppendLog<uint32_t>::kChunk)) {
    trim_step_logs();
    steps_at_trim_ = steps_run();
  }
}

void LiveEngine::collect_open_segments() {
  open_start_.clear();
  for (const auto& r : replicas_) {
    r->for_each_open_segment([&](int64_t id, int64_t first) { open_start_[id] = first; });
  }
}

void LiveEngine::token_times(int64_t id, int64_t from, std::vector<SimTime>* out) const {
  const int64_t slot = slot_of(id);
  const metrics::RequestRecord& rec = records_[static_cast<size_t>(slot)];
  if (rec.replica < 0) return;  // not at an engine yet
  const metrics::StepEnds& ends = replicas_[static_cast<size_t>(rec.replica)]->step_log().step_end;
  int64_t index = 0;  // token number of the next step visited
  auto emit = [&](int64_t first, int64_t last) {
    const int64_t n = last - first + 1;
    if (n <= 0) return;
    for (int64_t k = std::max<int64_t>(from - index, 0); k < n; ++k) {
      out->push_back(ends[static_cast<size_t>(first + k)]);
    }
    index += n;
  };
  for (const metrics::TokenSegment& s : rec.segments) emit(s.first_step, s.last_step);
  const auto open = open_start_.find(slot);
  if (!rec.completed && open != open_start_.end()) {
    emit(open->second, static_cast<int64_t>(ends.size()) - 1);
  }
}

int64_t LiveEngine::num_running() const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += r->local_num_running();
  return n;
}

int64_t LiveEngine::num_waiting() const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += r->local_num_waiting();
  for (const auto& f : front_ends_) n += f->queued();
  // Submitted requests whose arrival is still ahead are not in the deployment yet.
  return n;
}

int64_t LiveEngine::used_kv_blocks() const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += r->kv().num_used_blocks();
  return n;
}

int64_t LiveEngine::total_kv_blocks() const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += r->kv().num_blocks();
  return n;
}

int64_t LiveEngine::prefix_queried_tokens() const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += r->kv().queried_tokens();
  return n;
}

int64_t LiveEngine::prefix_hit_tokens() const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += r->kv().hit_tokens();
  return n;
}

int64_t LiveEngine::preemptions() const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += r->stats().preemptions;
  return n;
}

}  // namespace servesim::sim
