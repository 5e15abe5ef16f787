// Simulation: one benchmark run end to end — build the deployment, plan memory, replay the
// workload through the benchmark client and the router into the replicas, and compute vLLM's
// metrics.
//
// A cluster is `num_replicas` identical replicas (same PreparedDeployment: each has its own KV
// cache of memory.num_blocks blocks and its own step loop) sharing one simulated clock, one
// benchmark client and one router. Metrics are cluster-wide (the vLLM keys: the client does not
// see replicas); per-replica figures are in servesim_summary()'s "replicas" array.
//
// SimulationConfig is the whole description of a run (every CLI flag maps to one field; a JSON
// config file uses the same names with underscores). run_simulation() is a pure function of it:
// same config ⇒ identical result, on any thread, with no global state.
#ifndef SERVESIM_SIM_CLUSTER_SIMULATION_H_
#define SERVESIM_SIM_CLUSTER_SIMULATION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/deployment.h"
#include "models/memory_planner.h"
#include "models/model_name.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/cluster/front_end.h"
#include "sim/metrics/benchmark_metrics.h"
#include "sim/metrics/request_record.h"
#include "sim/replica/engine_config.h"
#include "sim/replica/engine_request.h"
#include "sim/replica/replica.h"
#include "workloads/workload.h"

namespace servesim::sim {

struct SimulationConfig {
  // --- deployment (vllm serve) ---
  std::string model = "llama-3.1-8b";   // --model: catalog name or path to an HF config.json
  std::string gpu = "h100-sxm";         // --gpu: catalog name or path to a GPU JSON file
  int tensor_parallel_size = 1;         // --tensor-parallel-size / -tp
  int pipeline_parallel_size = 1;       // --pipeline-parallel-size / -pp
  int data_parallel_size = 1;           // --data-parallel-size / -dp (models/deployment.h)
  bool enable_expert_parallel = false;  // --enable-expert-parallel
  double moe_routing_skew = 0;          // --moe-routing-skew (models/deployment.h)
  int gpus_per_node = 8;                // --gpus-per-node: GPUs per node for the placement
  std::string inter_node_link;          // --inter-node-link: network catalog name or JSON path
                                        //   ("" = the GPU's usual network, hardware/topology.h)
  std::string quantization;             // --quantization: "", "fp8" or "mxfp4"
  std::string kv_cache_dtype = "auto";  // --kv-cache-dtype: auto | fp8
  // --mamba-cache-dtype, --mamba-ssm-cache-dtype (vLLM's CacheConfig): the dtypes of the Gated
  // DeltaNet states. Only "auto" (the model dtype) is modelled; anything else is refused.
  std::string mamba_cache_dtype = "auto";
  std::string mamba_ssm_cache_dtype = "auto";
  std::string dtype = "auto";  // --dtype: auto | bfloat16 | float16 | float32
                               //   (models::apply_dtype)
  bool enforce_eager = false;  // --enforce-eager
  EngineRequest engine;        // scheduler and cache flags, as given
  bool ideal = false;          // --ideal: 100% efficiency, zero overhead (lower bound)
  // --calibration: a calibration profile (sim/calibration/profile.h) applied to the cost model.
  // "" = the profile shipped for the GPU (hardware/calibration/<gpu>.json) when there is one,
  // "none" = datasheet + catalog defaults only, else a path.
  std::string calibration;
  // --kernel-table: measured kernel times for the linear ops and prefill attention
  // (models/kernel_timer.h). "" = the calibration profile's kernels if it has some, else the
  // table shipped for the GPU (hardware/kernels/<gpu>.json), else one transferred from the
  // nearest GPU of the same architecture; "none" = the roofline; else a profile with "kernels".
  std::string kernel_table;

  // --- cluster: identical replicas behind a router (router.h) ---
  int num_replicas = 1;                // --num-replicas: replicas of the deployment
  std::string router = "round-robin";  // --router: round-robin | least-outstanding |
                                       //   prefix-aware (router.h says why this default)

  // --- disaggregated prefill/decode (pd_simulation.h): on when either pool count is set ---
  int prefill_replicas = 0;                         // --prefill-replicas: prefill instances
  int decode_replicas = 0;                          // --decode-replicas: decode instances
  std::optional<int> prefill_tensor_parallel_size;  // --prefill-tensor-parallel-size (unset: -tp)
  std::optional<int> decode_tensor_parallel_size;   // --decode-tensor-parallel-size (unset: -tp)
  // Each pool's TP: its flag's, or -tp when that is unset.
  int prefill_tp() const { return prefill_tensor_parallel_size.value_or(tensor_parallel_size); }
  int decode_tp() const { return decode_tensor_parallel_size.value_or(tensor_parallel_size); }
  std::string prefill_gpu;             // --prefill-gpu ("" = --gpu)
  std::string decode_gpu;              // --decode-gpu ("" = --gpu)
  std::string kv_transfer_link;        // --kv-transfer-link: nvlink | network name | JSON file
  int pd_local_prefill_threshold = 0;  // --pd-local-prefill-threshold: 0 = always remote

  // --- load (vllm bench serve) ---
  workloads::WorkloadConfig workload;
  int64_t max_concurrency = 0;  // --max-concurrency: client-side cap (0 = none)
  int64_t warmup_requests = 0;  // --warmup-requests: first N excluded from metrics
  metrics::MetricsOptions metrics;

  // Not a flag: whether each step is also costed on the ideal model, for the summary's
  // ideal_busy_fraction_of_busy (`simulate` reports it). It doubles the cost-model calls, so
  // sweep, plan and compare, which never read it, turn it off; the simulation is the same.
  bool track_ideal_busy = true;
  // Not a flag: the run has no HTTP client and no API server (vLLM's LLM class, a static batch;
  // measured::MeasuredRun::offline): the calibration's client TTFT overhead and front-end costs
  // do not apply.
  bool offline = false;
};

struct PdDeployment;  // pd_simulation.h

// The deployment built from a config: catalogs loaded, defaults resolved, memory planned.
// Building it is the expensive, failure-prone part (files, fit checks); sweeps reuse it.
struct PreparedDeployment {
  models::ModelSource model;  // what --model names (catalog entry or file)
  models::Deployment deployment;
  EngineConfig engine;  // resolve_engine_config(config.engine, deployment), then KV offload
  models::MemoryPlan memory;
  std::unique_ptr<models::CostModel> cost;
  std::unique_ptr<models::CostModel> ideal_cost;
  // Speculative decoding's drafter (sim/cluster/drafter.h); null without one.
  std::unique_ptr<models::CostModel> drafter;
  std::string calibration_source;          // the profile applied ("" = none)
  std::string kernel_source = "roofline";  // models::KernelSource::label() of the tables used
  std::string physics_floor;               // RooflineCostModel::physics_floor(); "" = nowhere
  double client_ttft_overhead_s = 0;       // from the calibration: added to every TTFT
  FrontEndCosts frontend;                  // from the calibration: each replica's API-server queue
  // Whether this prediction is calibrated, transferred or datasheet-only, and why
  // (calibration::classify_prediction on the deployment and the config's load).
  calibration::PredictionBasis basis;
  // Disaggregated prefill/decode: this is the decode pool and `pd` the rest (null otherwise).
  std::shared_ptr<const PdDeployment> pd;
};

// Loads, resolves and checks everything about the deployment. Throws ConfigError with a one-line
// message on unknown names, bad values, a model that does not fit, or a max-model-len whose KV
// does not fit in the cache (vLLM refuses to start in that case too).
PreparedDeployment prepare_deployment(const SimulationConfig& config);
// One deployment, ignoring the P/D fields (prepare_deployment's case without P/D; each P/D pool).
PreparedDeployment prepare_single_deployment(const SimulationConfig& config);

// The deployment and load of a prediction made with `prepared` for `config` (the load: its
// request rate and max concurrency), as classify_prediction takes them.
calibration::PredictionQuery prediction_query(const SimulationConfig& config,
                                              const PreparedDeployment& prepared);

// Whether a prediction made with `prepared` for `q` is calibrated, transferred or datasheet-only
// (calibration::classify_prediction on its profile); when nothing was fitted on serving runs, the
// reason says whether the step's kernels are still timed from a measured or transferred table.
calibration::PredictionBasis prediction_basis(const PreparedDeployment& prepared,
                                              const calibration::PredictionQuery& q);

struct SimulationResult {
  std::vector<metrics::RequestRecord> records;  // indexed by request id; .replica says where
  std::vector<metrics::StepLog> step_logs;      // [r] = replica r's steps
  std::vector<ReplicaStats> replica_stats;      // [r] = replica r's counters
  metrics::BenchmarkMetrics metrics;
  double simulated_s = 0;  // simulated time at the end of the run
  uint64_t events = 0;     // events processed
  // P/D runs: prefill pool, KV links and per-phase times (pd_simulation.h); null otherwise.
  nlohmann::json disaggregation;
};

// Runs the benchmark on a prepared deployment. The deployment must come from the same config.
// Throws ConfigError for --num-replicas < 1, an unknown --router, a bad --max-concurrency or
// --warmup-requests.
SimulationResult run_simulation(const SimulationConfig& config, const PreparedDeployment& prepared);

// The same with a caller-provided workload (e.g. a replayed trace: config.workload is then not
// used) and, when `cost` is not null, another step cost model than prepared.cost (a calibration
// fit's trial parameters), and when `frontend` is not null, other API-server costs than
// prepared.frontend. --warmup-requests is checked against workload.size().
SimulationResult run_simulation(const SimulationConfig& config, const PreparedDeployment& prepared,
                                workloads::Workload& workload,
                                const models::CostModel* cost = nullptr,
                                const FrontEndCosts* frontend = nullptr);

// The engine's host line: its vLLM release line, then "V0" for a V0 release, else async scheduling
// "async" / "sync" (the flag, else the release's default): "0.11 async", "0.8 V0"; "" when the
// version is not X.Y. Host terms are fitted per host line (sim/calibration/cross_validation.h),
// and a profile shipped for one (calibration::default_calibration_path) applies to it.
std::string host_line(const EngineRequest& engine);

// config.workload with the benchmark-client rules of config.engine.vllm_version filled where the
// user left them unset (random_range_rule "", arrival_rescale ""; vllm_version.h), and on
// --endpoint /v1/chat/completions the model's chat template tokens
// (models/chat_template_tokens.h). Throws ConfigError for the chat endpoint with a model whose
// template count is not known.
workloads::WorkloadConfig resolved_workload(const SimulationConfig& config);

// The calibration's client TTFT overhead, which an offline run (no client) does not have.
double client_overhead_s(const SimulationConfig& config, const PreparedDeployment& prepared);

// Blocks one request of max_model_len tokens needs with sliding-window groups: its full-attention
// blocks plus, per sliding group, cdiv(min(W − 1 + max_num_batched_tokens, max_model_len),
// block_size) + 1 (SlidingWindowSpec.max_memory_usage_bytes), plus one state block per Gated
// DeltaNet group (MambaSpec.max_memory_usage_bytes).
int64_t blocks_for_longest_request(const EngineConfig& e);

// The "servesim" object of the result file: resolved config echo, KV capacity, preemptions,
// prefix-cache hit rate, mean batch size, busy fraction, ideal-roofline TPOT bound. With more
// than one replica it also echoes num_replicas and router in "config" and adds "replicas": per
// replica {replica, requests, completed, mean/median/p99 TTFT and TPOT (ms), busy_fraction,
// preemptions, mean_batch_size, prefix_cache_hit_rate}. (A one-replica object is unchanged, so
// files written before clusters existed still compare equal.)
// The "prediction" object of the result file: {"basis", "reason"} (PreparedDeployment::basis).
nlohmann::json prediction_basis_json(const PreparedDeployment& prepared);
// "catalog_model" of result files, next to "model" as given: the catalog entry --model named
// (an HF id resolved), or null when --model was a config.json or a snapshot folder.
nlohmann::json catalog_model_json(const PreparedDeployment& prepared);

nlohmann::json servesim_summary(const SimulationConfig& config, const PreparedDeployment& prepared,
                                const SimulationResult& result);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_SIMULATION_H_
