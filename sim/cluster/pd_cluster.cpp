#include "sim/cluster/pd_cluster.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "sim/base/error.h"
#include "sim/metrics/benchmark_metrics.h"

namespace servesim::sim {
namespace {

using nlohmann::json;

// Percentile summary (ms) of `v` (seconds): mean, p50, p90, p99; nulls when empty.
json ms_summary(std::vector<double> v) {
  if (v.empty()) {
    return json{{"mean", nullptr}, {"p50", nullptr}, {"p90", nullptr}, {"p99", nullptr}};
  }
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  return json{{"mean", sum / double(v.size()) * 1e3},
              {"p50", metrics::percentile_linear(v, 50) * 1e3},
              {"p90", metrics::percentile_linear(v, 90) * 1e3},
              {"p99", metrics::percentile_linear(v, 99) * 1e3}};
}

}  // namespace

PdCluster::PdCluster(const PdDeployment& pd, std::vector<Replica*> prefill,
                     std::vector<Replica*> decode, std::vector<metrics::RequestRecord>* records,
                     std::vector<metrics::RequestRecord>* prefill_records, int threshold)
    : pd_(pd),
      prefill_(std::move(prefill)),
      decode_(std::move(decode)),
      records_(records),
      prefill_records_(prefill_records),
      threshold_(threshold),
      pending_(decode_.size(), 0),
      generation_(decode_.size(), 0) {
  for (size_t d = 0; d < decode_.size(); ++d) {
    links_.emplace_back(pd.instance_bandwidth, pd.link.latency_s);
  }
  const size_t n = records_->size();
  prefill_done_.assign(n, -1);
  transfer_start_.assign(n, -1);
  transfer_end_.assign(n, -1);
  latency_ = SimTime::from_seconds_ceil(pd.link.latency_s);
}

void PdCluster::send(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  const int32_t d = least_loaded_decode();
  Replica* dec = decode_[static_cast<size_t>(d)];
  if (threshold_ > 0 && spec.prompt_tokens - dec->cached_prompt_tokens(spec) <= threshold_) {
    ++local_prefills_;
    dec->add_request(sim, spec);  // an aggregated request on the decode instance
    return;
  }
  ++remote_prefills_;
  const int32_t p = least_loaded(prefill_);
  assigned_[spec.id] = Assignment{spec, d};
  ++pending_[static_cast<size_t>(d)];
  // The proxy's prefill request: the same prompt with max_tokens=1.
  metrics::RequestRecord& pr = (*prefill_records_)[spec.id];
  pr = (*records_)[spec.id];
  pr.output_tokens = 1;
  workloads::RequestSpec ps = spec;
  ps.output_tokens = 1;
  ps.chain_covers_output = false;
  prefill_[static_cast<size_t>(p)]->add_request(sim, ps);
}

void PdCluster::prefill_done(engine::Simulator& sim, int64_t id) {
  auto it = assigned_.find(id);
  SERVESIM_CHECK(it != assigned_.end(), "prefill finished for an unassigned request");
  const size_t d = static_cast<size_t>(it->second.decode);
  --pending_[d];
  const metrics::RequestRecord& pr = (*prefill_records_)[id];
  if (pr.failed) {  // e.g. longer than max_model_len: the proxy returns the prefill's error
    metrics::RequestRecord& rec = (*records_)[id];
    rec.failed = true;
    rec.error = pr.error;
    rec.replica = static_cast<int32_t>(d);
    assigned_.erase(it);
    client->on_request_done(sim, id);
    return;
  }
  prefill_done_[static_cast<size_t>(id)] = sim.now().ns();
  const workloads::RequestSpec spec = it->second.spec;
  assigned_.erase(it);
  decode_[d]->add_remote_request(sim, spec);
}

void PdCluster::start_remote_kv_load(engine::Simulator& sim, int32_t replica, int64_t id,
                                     int64_t tokens) {
  const size_t d = static_cast<size_t>(replica);
  transfer_start_[static_cast<size_t>(id)] = sim.now().ns();
  links_[d].start(sim.now(), id, static_cast<double>(tokens) * pd_.kv_bytes_per_token);
  retime(sim, d);
}

void PdCluster::on_event(engine::Simulator& sim, int64_t tag) {
  if (tag < 0) {  // a transfer's completion reaches its decode instance
    deliver(sim, -tag - 1);
    return;
  }
  const size_t n = links_.size();
  const size_t d = static_cast<size_t>(tag) % n;
  if (static_cast<uint64_t>(tag) / n != generation_[d]) return;  // re-timed since
  for (int64_t id : links_[d].drain(sim.now())) {
    if (latency_.ns() == 0) {
      deliver(sim, id);
    } else {
      sim.schedule_at(sim.now() + latency_, this, -id - 1);
    }
  }
  retime(sim, d);
}

json PdCluster::summary(const PreparedDeployment& decode,
                        const std::vector<ReplicaStats>& prefill_stats,
                        const std::vector<ReplicaStats>& decode_stats, double simulated_s,
                        const std::vector<metrics::RequestRecord>& records) const {
  const PreparedDeployment& pre = *pd_.prefill;
  auto busy = [&](const std::vector<ReplicaStats>& s) {
    double b = 0;
    for (const ReplicaStats& x : s) b += double(x.busy_ns) * 1e-9;
    return simulated_s > 0 && !s.empty() ? b / (simulated_s * double(s.size())) : 0.0;
  };
  auto pool = [&](const PreparedDeployment& p, const std::vector<ReplicaStats>& s) {
    int64_t pre_empt = 0, tokens = 0;
    for (const ReplicaStats& x : s) {
      pre_empt += x.preemptions;
      tokens += x.scheduled_tokens;
    }
    return json{{"gpu", p.deployment.gpu.name},
                {"tensor_parallel_size", p.deployment.tensor_parallel_size},
                {"replicas", s.size()},
                {"gpus", int64_t(s.size()) * p.deployment.tensor_parallel_size},
                {"num_gpu_blocks", p.memory.num_blocks},
                {"max_num_seqs", p.engine.max_num_seqs},
                {"max_num_batched_tokens", p.engine.max_num_batched_tokens},
                {"busy_fraction", busy(s)},
                {"preemptions", pre_empt},
                {"scheduled_tokens", tokens}};
  };
  // Per-phase times of the remote-prefilled, completed, measured requests.
  std::vector<double> prefill_s, wait_s, transfer_s, first_step_s;
  for (size_t i = 0; i < records.size(); ++i) {
    const metrics::RequestRecord& r = records[i];
    if (r.warmup || !r.completed || prefill_done_[i] < 0 || transfer_end_[i] < 0) continue;
    prefill_s.push_back(double(prefill_done_[i]) * 1e-9 - r.arrival.seconds());
    wait_s.push_back(double(transfer_start_[i] - prefill_done_[i]) * 1e-9);
    transfer_s.push_back(double(transfer_end_[i] - transfer_start_[i]) * 1e-9);
    first_step_s.push_back(r.first_token.seconds() - double(transfer_end_[i]) * 1e-9);
  }
  double bytes = 0, link_busy = 0, link_busy_max = 0;
  int64_t transfers = 0;
  for (const KvLink& l : links_) {
    bytes += l.bytes_started();
    transfers += l.transfers_started();
    const double u = simulated_s > 0 ? l.busy().seconds() / simulated_s : 0.0;
    link_busy += u;
    link_busy_max = std::max(link_busy_max, u);
  }
  return json{
      {"prefill", pool(pre, prefill_stats)},
      {"decode", pool(decode, decode_stats)},
      {"remote_prefills", remote_prefills_},
      {"local_prefills", local_prefills_},
      {"kv_transfer",
       {{"link", pd_.link_name},
        {"kind", pd_.link.kind},
        {"bandwidth_bytes_per_s_per_decode_instance", pd_.instance_bandwidth},
        {"latency_s", pd_.link.latency_s},
        {"kv_bytes_per_token", pd_.kv_bytes_per_token},
        {"transfers", transfers},
        {"bytes", bytes},
        {"link_utilization_mean", links_.empty() ? 0.0 : link_busy / double(links_.size())},
        {"link_utilization_max", link_busy_max},
        {"link_source", pd_.link_source}}},
      // The mode's own parameters (issue: measured, public or assumed) and its validation.
      {"basis",
       "step times as the aggregated engine's (see prediction); KV link bandwidth and latency "
       "from the link catalog (link_source); the handoff follows vLLM's NixlConnector; no "
       "validation against measured P/D runs"},
      {"phases_ms",
       {{"prefill", ms_summary(prefill_s)},
        {"decode_admission_wait", ms_summary(wait_s)},
        {"transfer", ms_summary(transfer_s)},
        {"first_decode_step", ms_summary(first_step_s)}}},
  };
}

int32_t PdCluster::least_loaded(const std::vector<Replica*>& pool) {
  int32_t best = 0;
  int64_t least = pool[0]->outstanding();
  for (size_t i = 1; i < pool.size(); ++i) {
    const int64_t load = pool[i]->outstanding();
    if (load < least) {  // strict: ties keep the first
      least = load;
      best = static_cast<int32_t>(i);
    }
  }
  return best;
}

int32_t PdCluster::least_loaded_decode() const {
  int32_t best = 0;
  int64_t least = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < decode_.size(); ++i) {
    const int64_t load = decode_[i]->outstanding() + pending_[i];
    if (load < least) {
      least = load;
      best = static_cast<int32_t>(i);
    }
  }
  return best;
}

void PdCluster::retime(engine::Simulator& sim, size_t d) {
  const std::optional<SimTime> t = links_[d].next_drain();
  ++generation_[d];
  if (t) {
    const uint64_t tag = generation_[d] * links_.size() + d;
    SERVESIM_CHECK(tag < uint64_t{1} << 62, "KV link event tag overflow");
    sim.schedule_at(std::max(*t, sim.now()), this, static_cast<int64_t>(tag));
  }
}

void PdCluster::deliver(engine::Simulator& sim, int64_t id) {
  transfer_end_[static_cast<size_t>(id)] = sim.now().ns();
  decode_[static_cast<size_t>((*records_)[id].replica)]->remote_kv_loaded(sim, id);
}

void DecodeObserver::on_request_done(engine::Simulator& sim, int64_t id) {
  cluster->client->on_request_done(sim, id);
}
void PrefillObserver::on_request_done(engine::Simulator& sim, int64_t id) {
  cluster->prefill_done(sim, id);
}

}  // namespace servesim::sim
