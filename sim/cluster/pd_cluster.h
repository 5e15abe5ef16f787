// PdCluster: the P/D proxy, router and KV connector of one disaggregated prefill/decode run
// (pd_simulation.h says what a request goes through). It sends each request to a prefill
// instance (or, conditionally, straight to its decode instance), hands it to its decode instance
// when the prefill ends, carries its KV over the decode instance's link, and tells the client
// when the decode instance is done. run_pd_simulation builds one per run.
#ifndef SERVESIM_SIM_CLUSTER_PD_CLUSTER_H_
#define SERVESIM_SIM_CLUSTER_PD_CLUSTER_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/benchmark_client.h"
#include "sim/cluster/kv_link.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/request_record.h"
#include "sim/replica/replica.h"

namespace servesim::sim {

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

class PdCluster : public RequestSink, public RemoteKvSource, public engine::EventHandler {
 public:
  // `records` are the client's (the decode pool's), `prefill_records` the prefill pool's, both
  // indexed by request id; `threshold` is --pd-local-prefill-threshold. Nothing is owned; all
  // must outlive the cluster.
  PdCluster(const PdDeployment& pd, std::vector<Replica*> prefill, std::vector<Replica*> decode,
            std::vector<metrics::RequestRecord>* records,
            std::vector<metrics::RequestRecord>* prefill_records, int threshold);

  RequestObserver* client = nullptr;

  void send(engine::Simulator& sim, const workloads::RequestSpec& spec) override;
  // The prefill instance is done with request `id`: on to its decode instance.
  void prefill_done(engine::Simulator& sim, int64_t id);
  void start_remote_kv_load(engine::Simulator& sim, int32_t replica, int64_t id,
                            int64_t tokens) override;
  void on_event(engine::Simulator& sim, int64_t tag) override;

  // The "disaggregation" object of the result (pd_simulation.h).
  nlohmann::json summary(const PreparedDeployment& decode,
                         const std::vector<ReplicaStats>& prefill_stats,
                         const std::vector<ReplicaStats>& decode_stats, double simulated_s,
                         const std::vector<metrics::RequestRecord>& records) const;

 private:
  struct Assignment {
    workloads::RequestSpec spec;
    int32_t decode = 0;
  };

  static int32_t least_loaded(const std::vector<Replica*>& pool);
  int32_t least_loaded_decode() const;
  void retime(engine::Simulator& sim, size_t d);
  void deliver(engine::Simulator& sim, int64_t id);

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

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_PD_CLUSTER_H_
