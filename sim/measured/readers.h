// Readers of measured benchmark runs. Each returns the runs in one file with what the file says
// about load, per-request data, measured metrics and deployment; the deployment is completed later
// by resolve_deployment (measured_run.h). Every reader throws ConfigError naming the file (and the
// line or field) on a missing file, malformed content or a missing required field.
//
// Formats (REFERENCE.md §2; the realdata README for the last three):
//   vllm-bench     `vllm bench serve` / benchmarks/benchmark_serving.py --save-result JSON. Old and
//                  new key spellings ("request_goodput:" with a colon), arrays in s, summaries in
//                  ms, E2E = ttft + Σ itls when "latencies" is absent. A "<stem>.commands" file
//                  beside it (the llm-k8s repo's layout: {"client_command", "gpu_type"}) supplies
//                  the client flags and hardware the JSON lacks.
//   sglang-bench   python -m sglang.bench_serving JSONL: one run per line (appended), Python's
//                  bare Infinity/NaN accepted; --output-details arrays when present.
//   genai-perf     profile_export_genai_perf.json: one {unit, avg, p50, p90, p99, ...} object per
//                  metric, optional "input_config". Its inter_token_latency is per request
//                  (latency − TTFT)/(output − 1), i.e. vLLM's TPOT, and is reported as TPOT.
//   llmservingsim  LLMServingSim bench_examples/<gpu>/<model>/vllm/{requests.jsonl, meta.json}
//                  plus ../validation/summary.txt (the vLLM column). Latencies from the engine's
//                  *_ts only: TTFT = first_token_ts − queued_ts, E2E = last_token_ts − queued_ts,
//                  TPOT = (last − first)/(output − 1); send times from arrival_time deltas.
//   inferencex     InferenceX summary CSV (header
//   "model,gpu,precision,framework,tp,isl_osl_label,...") argonne        Argonne
//   LLM-Inference-Bench's All_results.csv (header "Hardware,Num of
//                  Hardware,Framework,Model,..."): static batches run offline with vLLM's LLM
//                  class.
//   guidellm       inference-sim's guidellm_per_request_DERIVED.csv (CRLF) with exp-config.yaml,
//                  profile.yaml and vllm.log beside it: one run per guidellm benchmark
//                  (synchronous, throughput, constant-rate stages). Its per-request itl_ms is
//                  vLLM's TPOT.
//   public-vllm-runs  one row per public vllm bench serve result (read_public_runs_csv).
#ifndef SERVESIM_SIM_MEASURED_READERS_H_
#define SERVESIM_SIM_MEASURED_READERS_H_

#include <string>
#include <vector>

#include "sim/measured/measured_run.h"

namespace servesim::measured {

// The format of `path` ("vllm-bench", ...): by name first (*.jsonl with a requests.jsonl name ->
// llmservingsim, other *.jsonl -> sglang-bench, *genai_perf.json -> genai-perf, *.csv ->
// inferencex or argonne when its header is theirs, else guidellm; a folder holding
// vllm/requests.jsonl or requests.jsonl -> llmservingsim), else a
// *.json whose object has "time_to_first_token" -> genai-perf, "ttfts"/"mean_ttft_ms" ->
// vllm-bench. Throws ConfigError when none fits.
std::string detect_format(const std::string& path);

std::vector<MeasuredRun> read_vllm_bench_json(const std::string& path);
std::vector<MeasuredRun> read_sglang_jsonl(const std::string& path);
std::vector<MeasuredRun> read_genai_perf_json(const std::string& path);
// `path`: requests.jsonl, its vllm/ folder, or the example folder above it.
std::vector<MeasuredRun> read_llmservingsim(const std::string& path);
std::vector<MeasuredRun> read_guidellm_csv(const std::string& path);
// InferenceX's derived summary CSV (data/realdata/inferencex_subset): one closed-loop run per row
// (model, gpu, precision, tp, isl_osl_label, concurrency): 10×CONC prompts at max concurrency
// CONC, rate inf, measured mean TPOT and mean TTFT only. The file has no per-request data, so the
// request lengths are drawn (fixed seed) from the client's rule [int(0.8·L), L]; the deployment
// keys it implies (model, gpu, TP, fp8 weights, max_num_seqs = CONC, max_model_len = ISL + OSL)
// are set; the engine flags of the recipe come from a sidecar.
std::vector<MeasuredRun> read_inferencex_csv(const std::string& path);

// Argonne LLM-Inference-Bench's All_results.csv (data/realdata/argonne_llm_inference_bench): one
// static batch per row — `Batch Size` random prompts of `Input Output Length` tokens generating as
// many (ignore_eos) in one offline LLM.generate call, `Latency` seconds from call to return. Only
// vLLM rows on the A100 (a100-40gb) and H100 (h100-sxm) with a model the catalog has (Llama 2
// 7B/70B, Llama 3 8B/70B as Llama 3.1 with an 8,192-token context, Mistral-7B v0.1,
// Mixtral-8x7B, Qwen2 7B/72B as Qwen2.5) become runs; other rows are not runs of what servesim
// simulates and are passed over. Each run is offline (no client or API-server costs), simulated
// with the vLLM 0.6 row; measured: p100_e2el_ms (the latency: the last request's E2E) and
// request_throughput (batch / latency). Engine flags of the scripts come from a sidecar.
std::vector<MeasuredRun> read_argonne_csv(const std::string& path);

// A table of public `vllm bench serve` results transcribed one row per run (header "row_id,
// source_id,source_url,...": data/realdata/public_vllm_runs, whose README describes the columns).
// Each row becomes a run: the serve command's flags and the engine columns (TP, PP, expert
// parallel, max-num-seqs, max-num-batched-tokens, max-model-len, gpu-memory-utilization, async
// scheduling, enforce-eager; the server log's KV size as num_gpu_blocks_override), the vLLM
// version's defaults for what the row leaves blank, FP8 / MXFP4 checkpoints as their
// quantization, and the client's load: rate (inf = all at t = 0), max concurrency, prompts.
// Request lengths: ShareGPT rows sample the shipped first-turn set (seed 0) scaled to the row's
// token totals; random rows split the totals evenly. Measured: mean / median / P99 of TTFT,
// TPOT, ITL (E2E where given) and request_throughput = requests / duration. A row whose model,
// checkpoint, serve flag, dataset or completion servesim does not model is returned with
// MeasuredRun::refused saying why (each reason, by name).
std::vector<MeasuredRun> read_public_runs_csv(const std::string& path);

// Dispatches on detect_format(path).
std::vector<MeasuredRun> read_runs(const std::string& path);

// Parses JSON that Python's json.dumps may have written with bare Infinity, -Infinity or NaN
// (SGLang's request_rate = inf): those tokens outside strings become "inf", "-inf" and null.
// Throws ConfigError "<where>: malformed JSON: ..." on bad input.
nlohmann::json parse_python_json(const std::string& text, const std::string& where);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_READERS_H_
