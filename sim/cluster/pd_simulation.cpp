#include "sim/cluster/pd_simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "hardware/topology.h"
#include "sim/base/error.h"
#include "sim/base/resource_limits.h"
#include "sim/cluster/benchmark_client.h"
#include "sim/cluster/kv_link.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/benchmark_metrics.h"

namespace servesim::sim {
namespace {

using nlohmann::json;

int pool_tp(int pool, const SimulationConfig& c) {
  return pool > 0 ? pool : c.tensor_parallel_size;
}

}  // namespace

void check_pd_flags_need_pools(const SimulationConfig& c) {
  const std::pair<const char*, bool> set[] = {
      {"--prefill-tensor-parallel-size", c.prefill_tensor_parallel_size != 0},
      {"--decode-tensor-parallel-size", c.decode_tensor_parallel_size != 0},
      {"--prefill-gpu", !c.prefill_gpu.empty()},
      {"--decode-gpu", !c.decode_gpu.empty()},
      {"--kv-transfer-link", !c.kv_transfer_link.empty()},
      {"--pd-local-prefill-threshold", c.pd_local_prefill_threshold != 0},
  };
  for (const auto& [flag, given] : set) {
    if (given) {
      throw ConfigError(std::string(flag) +
                        " applies to disaggregated prefill/decode only; expected it with "
                        "--prefill-replicas and --decode-replicas (both >= 1)");
    }
  }
}

namespace {

// A catalog "sources" entry, or "not stated" when the file has none.
std::string source_text(const json& sources, const char* field) {
  if (sources.is_object() && sources.contains(field) && sources[field].is_string()) {
    return sources[field].get<std::string>();
  }
  return "not stated in the catalog file";
}

// A pool's config: the run's, with the pool's GPU and TP, P/D fields cleared.
SimulationConfig pool_config(const SimulationConfig& c, const std::string& gpu, int tp) {
  SimulationConfig p = c;
  if (!gpu.empty()) p.gpu = gpu;
  p.tensor_parallel_size = tp;
  p.prefill_replicas = p.decode_replicas = 0;
  p.prefill_tensor_parallel_size = p.decode_tensor_parallel_size = 0;
  p.prefill_gpu.clear();
  p.decode_gpu.clear();
  p.kv_transfer_link.clear();
  p.pd_local_prefill_threshold = 0;
  return p;
}

void check_pool(const PreparedDeployment& p, const char* pool) {
  const std::string name(pool);
  if (p.engine.kv_sliding_groups > 0) {
    throw ConfigError("--" + name + "-replicas: " + p.deployment.model.name +
                      " has sliding-window KV groups, which servesim's P/D does not model");
  }
  if (p.engine.enable_chunked_prefill == 0) {
    throw ConfigError("--" + name + "-replicas with --vllm-version " + p.engine.vllm_version +
                      ": a V0 engine has no KV connector for P/D; expected a V1 release");
  }
  if (!p.frontend.empty()) {
    throw ConfigError("--" + name + "-replicas with --calibration " + p.calibration_source +
                      ": its API-server costs are not modelled with P/D; use a profile without "
                      "frontend terms");
  }
}

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

class PdCluster;
// Completions of the decode pool go to the client, those of the prefill pool to the cluster.
struct DecodeObserver : RequestObserver {
  PdCluster* cluster = nullptr;
  void on_request_done(engine::Simulator& sim, int64_t id) override;
};
struct PrefillObserver : RequestObserver {
  PdCluster* cluster = nullptr;
  void on_request_done(engine::Simulator& sim, int64_t id) override;
};

// The P/D proxy, router and KV connector of one run: sends each request to a prefill instance
// (or, conditionally, straight to its decode instance), hands it to its decode instance when
// the prefill ends, carries its KV over the decode instance's link, and tells the client when
// the decode instance is done.
class PdCluster : public RequestSink, public RemoteKvSource, public engine::EventHandler {
 public:
  PdCluster(const PdDeployment& pd, std::vector<Replica*> prefill, std::vector<Replica*> decode,
            std::vector<metrics::RequestRecord>* records,
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

  RequestObserver* client = nullptr;

  void send(engine::Simulator& sim, const workloads::RequestSpec& spec) override {
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

  void prefill_done(engine::Simulator& sim, int64_t id) {
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

  void start_remote_kv_load(engine::Simulator& sim, int32_t replica, int64_t id,
                            int64_t tokens) override {
    const size_t d = static_cast<size_t>(replica);
    transfer_start_[static_cast<size_t>(id)] = sim.now().ns();
    links_[d].start(sim.now(), id, static_cast<double>(tokens) * pd_.kv_bytes_per_token);
    retime(sim, d);
  }

  void on_event(engine::Simulator& sim, int64_t tag) override {
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

  // The "disaggregation" object of the result (pd_simulation.h).
  json summary(const PreparedDeployment& decode, const std::vector<ReplicaStats>& prefill_stats,
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

 private:
  struct Assignment {
    workloads::RequestSpec spec;
    int32_t decode = 0;
  };

  static int32_t least_loaded(const std::vector<Replica*>& pool) {
    int32_t best = 0;
    for (size_t i = 1; i < pool.size(); ++i) {
      if (pool[i]->outstanding() < pool[static_cast<size_t>(best)]->outstanding()) {
        best = static_cast<int32_t>(i);
      }
    }
    return best;
  }
  int32_t least_loaded_decode() const {
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

  void retime(engine::Simulator& sim, size_t d) {
    const std::optional<SimTime> t = links_[d].next_drain();
    ++generation_[d];
    if (t) {
      const uint64_t tag = generation_[d] * links_.size() + d;
      SERVESIM_CHECK(tag < uint64_t{1} << 62, "KV link event tag overflow");
      sim.schedule_at(std::max(*t, sim.now()), this, static_cast<int64_t>(tag));
    }
  }

  void deliver(engine::Simulator& sim, int64_t id) {
    transfer_end_[static_cast<size_t>(id)] = sim.now().ns();
    decode_[static_cast<size_t>((*records_)[id].replica)]->remote_kv_loaded(sim, id);
  }

  const PdDeployment& pd_;
  std::vector<Replica*> prefill_;
  std::vector<Replica*> decode_;
  std::vector<metrics::RequestRecord>* records_;
  std::vector<metrics::RequestRecord>* prefill_records_;
  int threshold_;
  std::vector<int64_t> pending_;  // per decode instance: assigned, still in prefill
  std::vector<uint64_t> generation_;
  std::vector<KvLink> links_;
  SimTime latency_;
  std::unordered_map<int64_t, Assignment> assigned_;
  std::vector<int64_t> prefill_done_, transfer_start_, transfer_end_;  // ns, −1 = none
  int64_t local_prefills_ = 0;
  int64_t remote_prefills_ = 0;
};

void DecodeObserver::on_request_done(engine::Simulator& sim, int64_t id) {
  cluster->client->on_request_done(sim, id);
}
void PrefillObserver::on_request_done(engine::Simulator& sim, int64_t id) {
  cluster->prefill_done(sim, id);
}

}  // namespace

bool pd_enabled(const SimulationConfig& config) {
  return config.prefill_replicas != 0 || config.decode_replicas != 0;
}

PreparedDeployment prepare_pd_deployment(const SimulationConfig& config) {
  if (config.prefill_replicas < 1 || config.decode_replicas < 1) {
    throw ConfigError("--prefill-replicas " + std::to_string(config.prefill_replicas) +
                      " / --decode-replicas " + std::to_string(config.decode_replicas) +
                      ": disaggregated prefill/decode needs both pools; expected both >= 1");
  }
  if (config.prefill_tensor_parallel_size < 0 || config.decode_tensor_parallel_size < 0) {
    throw ConfigError("--prefill-tensor-parallel-size / --decode-tensor-parallel-size: " +
                      std::to_string(std::min(config.prefill_tensor_parallel_size,
                                              config.decode_tensor_parallel_size)) +
                      " is invalid; expected an integer >= 1 (or unset for -tp)");
  }
  if (config.pd_local_prefill_threshold < 0) {
    throw ConfigError(
        "--pd-local-prefill-threshold: " + std::to_string(config.pd_local_prefill_threshold) +
        " is invalid; expected tokens >= 0 (0 = every prompt prefilled remotely)");
  }
  if (config.num_replicas != 1) {
    throw ConfigError("--num-replicas " + std::to_string(config.num_replicas) +
                      " with --prefill-replicas / --decode-replicas: the pools' counts give the "
                      "replicas; expected --num-replicas unset");
  }
  if (config.router != "round-robin") {
    throw ConfigError("--router " + config.router +
                      " with disaggregated prefill/decode: P/D runs use their own pair router "
                      "(least-loaded prefill and decode, docs/deployment-modes.md); expected "
                      "--router unset");
  }
  if (config.pipeline_parallel_size > 1 || config.data_parallel_size > 1) {
    throw ConfigError(
        "--pipeline-parallel-size / --data-parallel-size > 1 with disaggregated "
        "prefill/decode: pipeline or data parallelism inside a pool is not "
        "modelled; expected 1");
  }
  if (!config.engine.spec.method.empty()) {
    throw ConfigError(
        "--speculative-config with disaggregated prefill/decode: a drafter on the decode pool "
        "is not modelled; expected --speculative-config unset");
  }
  if (config.engine.lora.enable_lora) {
    throw ConfigError(
        "--enable-lora with disaggregated prefill/decode: adapters on the pools are not "
        "modelled; expected --enable-lora unset");
  }
  if (config.engine.kv_offloading_size > 0) {
    throw ConfigError(
        "--kv-offloading-size with disaggregated prefill/decode: a CPU tier behind a pool's "
        "KV connector is not modelled; expected --kv-offloading-size unset");
  }
  const int tp_p = pool_tp(config.prefill_tensor_parallel_size, config);
  const int tp_d = pool_tp(config.decode_tensor_parallel_size, config);
  if (tp_d % tp_p != 0) {
    throw ConfigError("--decode-tensor-parallel-size " + std::to_string(tp_d) +
                      " with --prefill-tensor-parallel-size " + std::to_string(tp_p) +
                      ": vLLM's NixlConnector needs the decode TP to be a multiple of the "
                      "prefill TP (\"Decode TP cannot be smaller than prefill TP\")");
  }
  auto prefill = std::make_shared<PreparedDeployment>(
      prepare_single_deployment(pool_config(config, config.prefill_gpu, tp_p)));
  PreparedDeployment decode =
      prepare_single_deployment(pool_config(config, config.decode_gpu, tp_d));
  check_pool(*prefill, "prefill");
  check_pool(decode, "decode");
  if (prefill->engine.block_size != decode.engine.block_size) {
    throw ConfigError("--block-size: the prefill pool's " +
                      std::to_string(prefill->engine.block_size) + " and the decode pool's " +
                      std::to_string(decode.engine.block_size) +
                      " differ; the NixlConnector needs one block size");
  }

  auto pd = std::make_shared<PdDeployment>();
  pd->prefill = prefill;
  const hardware::GpuSpec& gp = prefill->deployment.gpu;
  const hardware::GpuSpec& gd = decode.deployment.gpu;
  if (config.kv_transfer_link == "nvlink") {
    if (gp.name != gd.name || gd.scale_up.kind != "nvlink") {
      throw ConfigError("--kv-transfer-link nvlink: the pools' GPUs (" + gp.name + ", " + gd.name +
                        ") are not one NVLink domain; expected the same GPU with an "
                        "NVLink scale-up link, or a network link (" +
                        [] {
                          std::string s;
                          for (const std::string& n : hardware::network_link_catalog_names()) {
                            s += (s.empty() ? "" : ", ") + n;
                          }
                          return s;
                        }() +
                        ")");
    }
    const int64_t gpus =
        int64_t{config.prefill_replicas} * tp_p + int64_t{config.decode_replicas} * tp_d;
    if (gpus > config.gpus_per_node) {
      throw ConfigError("--kv-transfer-link nvlink: the pools hold " + std::to_string(gpus) +
                        " GPUs, more than one node's " + std::to_string(config.gpus_per_node) +
                        " (--gpus-per-node); expected a network link between nodes");
    }
    pd->link_name = "nvlink";
    pd->link = gd.scale_up;
    pd->link_source = source_text(gd.sources, "scale_up");
  } else {
    const std::string name = config.kv_transfer_link.empty()
                                 ? hardware::default_network_link_name(gd)
                                 : config.kv_transfer_link;
    hardware::NetworkLinkSpec net;
    try {
      net = hardware::load_network_link(name);
    } catch (const ConfigError& e) {  // the loader names --inter-node-link: this is ours
      std::string why = e.what();
      const std::string theirs = "--inter-node-link: ";
      if (why.rfind(theirs, 0) == 0) why = why.substr(theirs.size());
      throw ConfigError("--kv-transfer-link: " + why + " (or nvlink for pools in one node)");
    }
    pd->link_name = net.name.empty() ? name : net.name;
    pd->link = net.link;
    pd->link_shared_per_node = net.shared_per_node;
    pd->link_source = source_text(net.sources, "bandwidth_bytes_per_s");
  }
  // Each prefill rank sends its shard over its own port (the narrower side: tp_d % tp_p == 0).
  pd->instance_bandwidth = pd->link.bandwidth_bytes_per_s * (pd->link_shared_per_node ? 1 : tp_p);
  pd->kv_bytes_per_token =
      static_cast<double>(decode.memory.kv_bytes_per_token) * static_cast<double>(tp_d);
  // The mode's own parameters in the basis, as the other deployment modes' (this basis is the
  // decode pool's; the prefill pool's steps are timed by the same kind of cost model).
  decode.basis.reason += "; P/D: decode pool's basis, KV link " + pd->link_name +
                         " from the link catalog, handoff as vLLM's NixlConnector, not validated";
  decode.pd = std::move(pd);
  return decode;
}

SimulationResult run_pd_simulation(const SimulationConfig& config,
                                   const PreparedDeployment& prepared,
                                   workloads::Workload& workload, const models::CostModel* cost,
                                   const FrontEndCosts* frontend) {
  SERVESIM_CHECK(prepared.pd != nullptr, "run_pd_simulation needs a P/D deployment");
  if (cost != nullptr || frontend != nullptr) {
    throw ConfigError(
        "--prefill-replicas / --decode-replicas: calibration fits do not take "
        "disaggregated prefill/decode runs");
  }
  const PdDeployment& pd = *prepared.pd;
  const PreparedDeployment& pre = *pd.prefill;
  const int64_t gpus = int64_t{config.prefill_replicas} * pre.deployment.tensor_parallel_size +
                       int64_t{config.decode_replicas} * prepared.deployment.tensor_parallel_size;
  if (pd.link_name == "nvlink" && gpus > config.gpus_per_node) {
    throw ConfigError("--kv-transfer-link nvlink: the pools hold " + std::to_string(gpus) +
                      " GPUs, more than one node's " + std::to_string(config.gpus_per_node) +
                      " (--gpus-per-node); expected a network link between nodes");
  }
  if (config.max_concurrency < 0) {
    throw ConfigError("--max-concurrency: " + std::to_string(config.max_concurrency) +
                      " is invalid; expected an integer >= 1");
  }
  if (config.warmup_requests != 0 &&
      (config.warmup_requests < 0 || config.warmup_requests >= workload.size())) {
    throw ConfigError("--warmup-requests: " + std::to_string(config.warmup_requests) +
                      " is invalid; expected 0 <= N < the number of requests (" +
                      std::to_string(workload.size()) + ")");
  }
  check_fits_in_memory("--prefill-replicas x KV blocks per replica",
                       int64_t{config.prefill_replicas} * pre.memory.num_blocks, "KV blocks", 32);
  check_fits_in_memory("--decode-replicas x KV blocks per replica",
                       int64_t{config.decode_replicas} * prepared.memory.num_blocks, "KV blocks",
                       32);

  SimulationResult result;
  const size_t n = static_cast<size_t>(workload.size());
  result.records.resize(n);
  std::vector<metrics::RequestRecord> prefill_records(n);
  engine::Simulator sim;
  const models::CostModel* ideal_d = config.track_ideal_busy ? prepared.ideal_cost.get() : nullptr;
  const models::CostModel* ideal_p = config.track_ideal_busy ? pre.ideal_cost.get() : nullptr;

  std::vector<std::unique_ptr<Replica>> prefill, decode;
  std::vector<Replica*> prefill_ptrs, decode_ptrs;
  PrefillObserver prefill_observer;
  DecodeObserver decode_observer;
  for (int i = 0; i < config.prefill_replicas; ++i) {
    prefill.push_back(std::make_unique<Replica>(i, pre.engine, *pre.cost, ideal_p,
                                                pre.memory.num_blocks, &prefill_records,
                                                &prefill_observer));
    prefill_ptrs.push_back(prefill.back().get());
  }
  for (int i = 0; i < config.decode_replicas; ++i) {
    decode.push_back(std::make_unique<Replica>(i, prepared.engine, *prepared.cost, ideal_d,
                                               prepared.memory.num_blocks, &result.records,
                                               &decode_observer));
    decode_ptrs.push_back(decode.back().get());
  }
  PdCluster cluster(pd, prefill_ptrs, decode_ptrs, &result.records, &prefill_records,
                    config.pd_local_prefill_threshold);
  prefill_observer.cluster = &cluster;
  decode_observer.cluster = &cluster;
  for (auto& r : decode) r->set_remote_kv_source(&cluster);
  BenchmarkClient client(workload, cluster, config.max_concurrency, config.warmup_requests,
                         &result.records);
  const double client_overhead = config.offline ? 0.0 : prepared.client_ttft_overhead_s;
  client.set_completion_delay(
      SimTime::from_seconds_ceil(config.metrics.ttft_offset_s + client_overhead));
  cluster.client = &client;
  client.start(sim);
  result.events = sim.run();
  result.simulated_s = sim.now().seconds();
  SERVESIM_CHECK(client.done() == workload.size(), "requests lost: sent " +
                                                       std::to_string(client.sent()) + ", done " +
                                                       std::to_string(client.done()));
  std::vector<ReplicaStats> prefill_stats;
  for (const auto& r : prefill) prefill_stats.push_back(r->stats());
  for (const auto& r : decode) {
    result.replica_stats.push_back(r->stats());
    result.step_logs.push_back(r->take_step_log());
  }
  metrics::MetricsOptions options = config.metrics;
  options.ttft_offset_s += client_overhead;
  options.class_names = workload.class_names();
  result.metrics = metrics::compute_metrics(result.records, result.step_logs, options);
  result.disaggregation = cluster.summary(prepared, prefill_stats, result.replica_stats,
                                          result.simulated_s, result.records);
  return result;
}

void add_pd_config_echo(const SimulationConfig& config, const PreparedDeployment& prepared,
                        json& summary) {
  const PdDeployment& pd = *prepared.pd;
  json& cfg = summary["config"];
  // The cluster echo of aggregated runs (--num-replicas, --router) does not apply to the pools.
  cfg.erase("num_replicas");
  cfg.erase("router");
  cfg["prefill_replicas"] = config.prefill_replicas;
  cfg["decode_replicas"] = config.decode_replicas;
  cfg["prefill_gpu"] = pd.prefill->deployment.gpu.name;
  cfg["decode_gpu"] = prepared.deployment.gpu.name;
  cfg["prefill_tensor_parallel_size"] = pd.prefill->deployment.tensor_parallel_size;
  cfg["decode_tensor_parallel_size"] = prepared.deployment.tensor_parallel_size;
  cfg["kv_transfer_link"] = pd.link_name;
  cfg["pd_local_prefill_threshold"] = config.pd_local_prefill_threshold;
}

void print_pd_summary(std::ostream& out, const json& s) {
  char line[200];
  out << std::string(10, '-') << "disaggregated prefill/decode" << std::string(12, '-') << "\n";
  auto row = [&](const char* label, const std::string& value) {
    std::snprintf(line, sizeof line, "%-40s %s\n", label, value.c_str());
    out << line;
  };
  auto fmt = [](const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return std::string(b);
  };
  auto ms = [&](const json& v) { return v.is_number() ? fmt("%.2f", v.get<double>()) : "-"; };
  for (const char* pool : {"prefill", "decode"}) {
    const json& p = s[pool];
    row(std::string(pool) == "prefill" ? "Prefill pool (busy fraction):"
                                       : "Decode pool (busy fraction):",
        std::to_string(p["replicas"].get<int64_t>()) + " x " + p["gpu"].get<std::string>() + " TP" +
            std::to_string(p["tensor_parallel_size"].get<int>()) + " (" +
            fmt("%.3f", p["busy_fraction"].get<double>()) + ")");
  }
  const json& x = s["kv_transfer"];
  row("KV link:",
      x["link"].get<std::string>() + ", " +
          fmt("%.1f", x["bandwidth_bytes_per_s_per_decode_instance"].get<double>() / 1e9) +
          " GB/s per decode instance, latency " + fmt("%.1f", x["latency_s"].get<double>() * 1e6) +
          " us");
  row("KV transfers (local prefills):", std::to_string(x["transfers"].get<int64_t>()) + " (" +
                                            std::to_string(s["local_prefills"].get<int64_t>()) +
                                            ")");
  row("KV link utilisation mean / max:", fmt("%.3f", x["link_utilization_mean"].get<double>()) +
                                             " / " +
                                             fmt("%.3f", x["link_utilization_max"].get<double>()));
  const json& ph = s["phases_ms"];
  const std::pair<const char*, const char*> phases[] = {
      {"prefill", "Prefill, from send (ms) mean / p99:"},
      {"decode_admission_wait", "Decode admission wait (ms) mean / p99:"},
      {"transfer", "KV transfer (ms) mean / p50 / p99:"},
      {"first_decode_step", "First decode step (ms) mean / p99:"}};
  for (const auto& [key, label] : phases) {
    const json& v = ph[key];
    std::string text = ms(v["mean"]);
    if (std::string(key) == "transfer") text += " / " + ms(v["p50"]);
    row(label, text + " / " + ms(v["p99"]));
  }
}

}  // namespace servesim::sim
