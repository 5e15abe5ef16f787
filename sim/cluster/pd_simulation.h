// Disaggregated prefill/decode (P/D): a prefill pool and a decode pool, each its own deployment
// (GPU, tensor-parallel size, replica count), joined by KV-transfer links — as vLLM runs it with
// the NixlConnector behind a P/D proxy (llm-d, Dynamo, vLLM's disagg_proxy examples).
//
// One request (docs/deployment-modes.md says it with the vLLM sources):
//   1. The router picks a decode instance and a prefill instance, each the least loaded of its
//      pool (requests waiting + running, plus, for decode instances, those assigned to them still
//      in prefill or transfer; ties to the lowest id) — llm-d's and Dynamo's P/D pair selection
//      with their queue-depth scorers. Conditional disaggregation (--pd-local-prefill-threshold
//      N > 0, Dynamo's max_local_prefill_length rule): a request whose prompt, less the decode
//      instance's prefix-cache hit, is at most N tokens is prefilled on the decode instance like
//      an aggregated request.
//   2. The prefill instance runs it with max_tokens=1 (the proxy's prefill request): the prompt
//      and one sampled token, which the proxy discards.
//   3. It then reaches the decode instance (Replica::add_remote_request): it waits there like any
//      request; at admission the decode instance reserves blocks for the whole prompt, and the
//      blocks its own prefix cache lacks are pulled over the decode instance's KV link.
//   4. When the last byte is in, the decode instance computes the last prompt token, samples the
//      first token (TTFT), and decodes.
//   TTFT = prefill queue + prefill + wait for a decode seat and blocks + transfer + first step.
//
// Links. Each decode instance has one KvLink (kv_link.h) that all transfers into it share by
// processor sharing: bandwidth = the link's per-GPU bandwidth × the prefill TP size (each
// prefill rank sends its shard over its own NIC or NVLink port, and NIXL requires the decode TP
// to be a multiple of the prefill TP, so the prefill side is the narrower one), or the link's
// bandwidth once for a link shared by the node (Ethernet); latency = the link's α. Bytes = the
// pulled tokens × the decode instance's KV bytes per token per GPU × its TP size.
// --kv-transfer-link nvlink: both pools in one NVLink domain (their GPUs must fit in one node);
// a network catalog name (infiniband-ndr, infiniband-hdr, ethernet-tcp) or a link JSON file:
// pools on different nodes; default: the decode GPU's usual network
// (hardware::default_network_link_name). A prefill instance's egress shared by several decode
// instances is not modelled (each decode link is independent).
//
// Not modelled (refused or stated in docs/deployment-modes.md): pipeline or data parallelism in
// a pool, sliding-window KV groups, V0 engines, API-server costs from a calibration, layer-wise
// streaming of the KV (NixlConnector reads after the prefill ends), the prefill instance keeping
// its blocks until the decode side has read them.
//
// Results: records, step logs and replica stats are the decode pool's (the client sees tokens
// from there); the prefill pool, links and per-phase times go to SimulationResult::
// disaggregation (pd_summary_json).
#ifndef SERVESIM_SIM_CLUSTER_PD_SIMULATION_H_
#define SERVESIM_SIM_CLUSTER_PD_SIMULATION_H_

#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/gpu_spec.h"
#include "sim/cluster/simulation.h"

namespace servesim::sim {

// What P/D adds to the decode pool's PreparedDeployment (PreparedDeployment::pd).
struct PdDeployment {
  std::shared_ptr<const PreparedDeployment> prefill;
  std::string link_name;    // "nvlink" or the network catalog name / file given
  hardware::LinkSpec link;  // per GPU and direction, α
  bool link_shared_per_node = false;
  std::string link_source;        // where the link's numbers come from (the catalog's "sources")
  double instance_bandwidth = 0;  // B/s of one decode instance's KV link
  double kv_bytes_per_token = 0;  // bytes moved per pulled token (whole decode instance)
};

// Whether the config asks for P/D (either pool count set).
bool pd_enabled(const SimulationConfig& config);

// Refuses (ConfigError naming the flag) a P/D pool flag given without the pools: it would be
// ignored.
void check_pd_flags_need_pools(const SimulationConfig& config);

// The decode pool's deployment with `pd` filled: both pools prepared (prepare_deployment on the
// config with each pool's GPU and TP), the link resolved, bad combinations refused
// (ConfigError naming the flags).
PreparedDeployment prepare_pd_deployment(const SimulationConfig& config);

// Runs the benchmark on the two pools. REQUIRES: prepared.pd. Throws ConfigError for a cost or
// front-end override (calibration fits do not take P/D).
SimulationResult run_pd_simulation(const SimulationConfig& config,
                                   const PreparedDeployment& prepared,
                                   workloads::Workload& workload, const models::CostModel* cost,
                                   const FrontEndCosts* frontend);

// Adds the P/D config echo to summary["config"] (servesim_summary calls it for P/D runs).
void add_pd_config_echo(const SimulationConfig& config, const PreparedDeployment& prepared,
                        nlohmann::json& summary);

// The text block `simulate` prints for a result summary's "disaggregation" object.
void print_pd_summary(std::ostream& out, const nlohmann::json& disaggregation);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_PD_SIMULATION_H_
