// MeasuredRun: one benchmark run measured on a real server, as read from its result file, with
// the deployment it ran on. The input of `servesim validate` and of `servesim calibrate`.
//
// A run has three parts:
//   * deployment: servesim config keys (model, gpu, tensor_parallel_size, max_num_seqs, ...) taken
//     from, in increasing precedence, the result file itself, sidecar JSON files and the command
//     line; each key remembers where it came from. resolve_deployment() fails with a ConfigError
//     naming the file and the missing key when model, gpu or tensor_parallel_size is unknown.
//   * load: request rate, burstiness, max concurrency, number of prompts and, when the file has
//     them, the per-request send times and lengths (what the simulator replays).
//   * measured metrics: the file's summary numbers in ms (TTFT, TPOT, ITL, E2E at mean, median,
//     p90, p99, ...) and throughputs, keyed with vLLM's result-file names ("mean_ttft_ms",
//     "median_itl_ms", "p99_e2el_ms", "request_throughput"). Stats the file lacks but its
//     per-request data determine are computed as vLLM's calculate_metrics would (np.percentile,
//     linear): see fill_metrics_from_requests().
//
// Readers (readers.h) fill one MeasuredRun per run in a file; a JSONL file or a guidellm sweep
// holds several. Everything here is a value: no global state, safe to use from many threads.
#ifndef SERVESIM_SIM_MEASURED_MEASURED_RUN_H_
#define SERVESIM_SIM_MEASURED_MEASURED_RUN_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::measured {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// One request as the benchmark client saw it. Times in seconds; NaN = not in the file.
struct MeasuredRequest {
  double start_s = kUnknown;  // send time relative to the run's first send
  int32_t input_tokens = 0;
  int32_t output_tokens = 0;
  double ttft_s = kUnknown;
  double e2e_s = kUnknown;
  double tpot_s = kUnknown;    // (e2e − ttft)/(output − 1) when the file gives it without ITLs
  std::vector<double> itls_s;  // gaps between streamed chunks (vLLM/SGLang), empty if unknown
  bool failed = false;         // errored in the benchmark: excluded from metrics and replay
};

struct MeasuredDeployment {
  // servesim config keys (the --config JSON names): model, gpu, tensor_parallel_size,
  // pipeline_parallel_size, max_num_seqs, max_num_batched_tokens, block_size,
  // gpu_memory_utilization, enable_prefix_caching, max_model_len, num_gpu_blocks_override, ...
  nlohmann::json config = nlohmann::json::object();
  std::map<std::string, std::string> source;  // key -> where its value came from
  std::string engine_version;  // e.g. "0.8.3"; informational (servesim models vLLM V1)
  std::string model_id;        // the model as the file names it (e.g. an HF id)
  std::string hardware;        // the hardware as the file names it, when it does

  // Sets `key` from `where` (overriding any earlier value).
  void set(const std::string& key, const nlohmann::json& value, const std::string& where);
};

struct MeasuredRun {
  std::string id;      // unique label: the path, plus "#<n>" for runs inside a multi-run file
  std::string path;    // the file read
  std::string format;  // "vllm-bench", "sglang-bench", "genai-perf", "llmservingsim", "guidellm",
                       // "inferencex", "argonne"
  std::string label;   // short human description (e.g. "constant 2.90 req/s"), may be empty
  MeasuredDeployment deployment;

  // --- load ---
  double request_rate = std::numeric_limits<double>::infinity();  // req/s; inf = all at t = 0
  double burstiness = 1.0;                  // gamma shape of inter-arrivals (1 = Poisson)
  std::string arrival_process = "poisson";  // "poisson" | "constant" for rate-driven runs
  int64_t max_concurrency = 0;              // client-side cap, 0 = none
  int64_t num_prompts = 0;                  // requests sent
  uint64_t seed = 0;                        // the client's --seed when known (vLLM's default 0)
  bool has_start_times = false;             // requests[i].start_s are all known
  // Shared prompt prefix (e.g. guidellm prefix_tokens): every request's first N tokens are the
  // same. 0 = none (ShareGPT runs: no shared prefixes).
  int32_t shared_prefix_tokens = 0;
  // The server had already served these exact prompts before this run (an earlier run of the
  // same sweep against the same server, prefix caching on): their full KV blocks were cached
  // when the run started. Set by the sidecar key "warm_prefix_cache"; see replay.h.
  bool warm_prefix_cache = false;
  // Run offline with vLLM's LLM class (a static batch, e.g. benchmark_latency.py): no API server
  // and no HTTP client, so the replay adds no client TTFT overhead and no front-end queue.
  bool offline = false;
  // Why this run is not simulated, when its reader refuses it (a model, checkpoint format or
  // flag servesim does not model, an incomplete run): "" = simulated. A refused run keeps its
  // id, label and what was read; its deployment is not resolved. validate lists refused runs
  // with this reason instead of scoring them (take_refused).
  std::string refused;
  // What the file records about the client, "" = not recorded: the endpoint ("completions" or
  // "chat"; vllm bench serve's "endpoint_type" or "backend", a public-runs row's endpoint column)
  // and the date it was written.
  std::string endpoint;
  std::string date;
  std::vector<MeasuredRequest> requests;  // in send order; empty when the file has none
  // Mean lengths when there are no per-request lengths (genai-perf, SGLang without details).
  double mean_input_tokens = 0;
  double mean_output_tokens = 0;

  // --- measured results ---
  std::map<std::string, double> metrics;  // "mean_ttft_ms", ..., "request_throughput"
  std::vector<std::string> notes;         // caveats met while reading (printed by validate)
};

// The latency metrics (vLLM names) and the statistics validate compares, in report order.
const std::vector<std::string>& latency_metric_names();  // ttft, tpot, itl, e2el
const std::vector<std::string>& compared_stats();        // mean, median, p90, p99
// "mean_ttft_ms" for ("mean", "ttft"); "p90_ttft_ms" for ("p90", "ttft").
std::string metric_key(const std::string& stat, const std::string& metric);

// Fills every mean/median/p90/p95/p99 (and std) of ttft/tpot/itl/e2el the per-request data
// determine and `run.metrics` lacks, as vLLM's calculate_metrics defines them over completed
// requests: TTFT per request; TPOT = (E2E − TTFT)/(output − 1) for output > 1 (or the file's
// per-request TPOT); ITL = all chunk gaps pooled; E2E = latency, or TTFT + Σ ITL when only those
// are known. Also request_throughput (completed / duration) when absent and the send times are
// known. Never overwrites a value the file gave.
void fill_metrics_from_requests(MeasuredRun& run);

// The catalog GPU for a hardware string a file gives ("NVIDIA GeForce RTX 4090" -> "rtx-4090",
// Azure "Standard_ND96asr_v4" -> "a100-40gb"); "" when unknown.
std::string catalog_gpu_for(const std::string& hardware);

// Where deployment facts the file lacks come from.
struct SidecarOptions {
  // Folders of sidecar files: every *.json in them with a "match" key (a glob, fnmatch without
  // FNM_PATHNAME, matched against the run's absolute path) applies to the runs it matches, in
  // file-name order. The shipped realdata sidecars live in tests/data/realdata_sidecars.
  std::vector<std::string> sidecar_dirs;
  // Command-line settings (servesim config keys), applied last to every run.
  nlohmann::json overrides = nlohmann::json::object();
};

// Applies, in order: <folder>/servesim.json, <file>.servesim.json (beside the file; keys are
// servesim config keys plus the measured-only "engine_version", "hardware", "notes" (text),
// "warm_prefix_cache" (bool), "endpoint", "match" and "_"-prefixed comments), the matching
// sidecars of `opts.sidecar_dirs`, then `opts.overrides`. Then checks that model, gpu and
// tensor_parallel_size are known and throws ConfigError "<file>: the deployment has no 'gpu' (the
// file does not say; give it in <file>.servesim.json, a --sidecars folder, or with --gpu)"
// otherwise. A sidecar that is not a JSON object, or has a value of the wrong JSON type for a
// measured-only key, throws ConfigError naming it. A sidecar's "endpoint" ("/v1/completions" or
// "/v1/chat/completions") declares, it does not set: it must agree with `run.endpoint` (a run
// that records none is simulated as /v1/completions, which is all it may declare), else
// ConfigError "<sidecar>: 'endpoint' is \"/v1/completions\" but <run> records
// /v1/chat/completions (its endpoint column); expected ...". Unknown config keys are left for the
// config applier (replay.h) to reject.
void resolve_deployment(MeasuredRun& run, const SidecarOptions& opts);

// Reads every run in `path` (format detected from the name and content, see readers.h), then
// resolves each run's deployment (refused runs excepted). Throws ConfigError naming the file on
// any problem. Sidecar files themselves (<run>.servesim.json, servesim.json) read as no runs.
std::vector<MeasuredRun> read_measured(const std::string& path, const SidecarOptions& opts);

// Moves the refused runs (MeasuredRun::refused) out of `runs`, keeping the order of both.
std::vector<MeasuredRun> take_refused(std::vector<MeasuredRun>& runs);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_MEASURED_RUN_H_
