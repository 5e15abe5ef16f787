// Readers for measured op, layer and step profiles in data/realdata (their formats, units and
// sources are in that folder's README):
//   - Vidur operator profiles  profiling/compute/<gpu>/<model>/mlp.csv (times in ms)
//   - Vidur collectives        profiling/network/<topology>/{all_reduce,send_recv}.csv (ms, bytes)
//   - LLMServingSim layers     perf_models/<GPU>/<model>/tp<N>/layers.csv (ns)
//   - Splitwise perf model     perf_model.csv (ms)
//   - kernel tables            gpu_kernels_h100_h200/kernels_<gpu>.csv, scripts/profile_gpu.py (µs)
// Every reader returns samples in seconds and bytes. Errors name the file, the line and the column.
#ifndef SERVESIM_HARDWARE_PROFILES_H_
#define SERVESIM_HARDWARE_PROFILES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace servesim::hardware {

// One GEMM of a transformer layer on one TP rank: [tokens × in_dim] · [in_dim × out_dim].
struct GemmSample {
  std::string op;  // qkv, o, gate_up, down
  int64_t tokens = 0;
  int tp = 1;
  double in_dim = 0;   // per rank
  double out_dim = 0;  // per rank
  double time_s = 0;   // median
  double flops() const { return 2.0 * static_cast<double>(tokens) * in_dim * out_dim; }
  double weight_bytes(double dtype_bytes = 2) const { return in_dim * out_dim * dtype_bytes; }
};

// Vidur mlp.csv: the four GEMMs of each row (attn_pre_proj = QKV, attn_post_proj = O,
// mlp_up_proj = gate+up, mlp_down_proj = down), with dimensions from the row's n_head, n_kv_head,
// n_embd, n_expanded_embd, use_gated_mlp and num_tensor_parallel_workers.
std::vector<GemmSample> read_vidur_mlp(const std::string& path);

struct CollectiveSample {
  std::string collective;  // all_reduce, send_recv
  int num_workers = 0;
  int devices_per_node = 0;  // 1 in send_recv = the transfer crosses nodes
  double bytes = 0;
  double time_s = 0;  // median
};
std::vector<CollectiveSample> read_vidur_collective(const std::string& path);

struct LayerSample {
  std::string layer;  // embedding, q_proj, ..., lm_head
  int64_t tokens = 0;
  int64_t kv_cache = 0;
  int tp = 1;
  double time_s = 0;
};
std::vector<LayerSample> read_llmservingsim_layers(const std::string& path);

// Dimensions of a dense decoder layer, for mapping per-layer tables onto GEMMs.
struct LayerDims {
  double hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
};

// The GEMMs among LLMServingSim's layers (q/k/v/o_proj, gate/up/down_proj, lm_head) as
// GemmSamples on one TP rank (column-parallel outputs and row-parallel inputs divided by tp);
// the other layers (norms, rope, attention, embedding) are left out.
std::vector<GemmSample> gemm_samples_from_layers(const std::vector<LayerSample>& layers,
                                                 const LayerDims& dims);

struct SplitwiseSample {
  std::string model, hardware;
  int64_t prompt_size = 0, batch_size = 0, token_size = 0;
  int tp = 1;
  double prompt_time_s = 0;  // prefill of batch × prompt_size tokens
  double token_time_s = 0;   // one decode step
};
std::vector<SplitwiseSample> read_splitwise(const std::string& path);

// One row of a kernel table (kernels_<gpu>.csv). Times in seconds; empty numeric cells are 0.
struct KernelRow {
  // kind: linear | attn_prefill | attn_decode | elementwise (one layer's chain of small kernels:
  // n = hidden size, k = SwiGLU width per token per rank, heads per rank; op layer_compiled is
  // what vLLM V1 runs, layer_eager the unfused reference) | moe (one projection of an MoE layer's
  // routed experts as a grouped GEMM, bf16 or fp8: n, k per rank, batch = experts, q_len = top-k,
  // kv_len = routed rows, q_heads = experts hit)
  std::string gpu, kind, dtype, model, op;
  int tp = 0;
  long long m_tokens = 0, n = 0, k = 0;  // linear: [m × k] · [k × n]
  long long batch = 0, q_len = 0, kv_len = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  double time_s = 0;
};

// Reads a kernel table CSV (header names as kernels_h100.csv; column order free). Throws
// ConfigError naming the file, line and column on a missing column, a bad number, an unknown
// kind or a non-positive time.
std::vector<KernelRow> read_kernel_csv(const std::string& path);

}  // namespace servesim::hardware

#endif  // SERVESIM_HARDWARE_PROFILES_H_
