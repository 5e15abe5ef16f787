// Deployment: what runs on one replica — the model, the GPU, parallelism and precision — plus the
// cost-model options. The scheduler's knobs (max-num-seqs, budget, ...) live in EngineConfig.
#ifndef SERVESIM_MODELS_DEPLOYMENT_H_
#define SERVESIM_MODELS_DEPLOYMENT_H_

#include <memory>
#include <string>
#include <vector>

#include "hardware/gpu_spec.h"
#include "hardware/topology.h"
#include "models/cost_model.h"
#include "models/kernel_timer.h"
#include "models/model_spec.h"
#include "sim/calibration/profile.h"

namespace servesim::models {

struct Deployment {
  ModelSpec model;
  hardware::GpuSpec gpu;
  int tensor_parallel_size = 1;    // --tensor-parallel-size / -tp
  int pipeline_parallel_size = 1;  // --pipeline-parallel-size / -pp
  // --data-parallel-size / -dp: attention replicas of TP x PP GPUs each, with their own
  // scheduler and KV cache. For an MoE model they run every step together (vLLM's DP
  // coordinator: idle ranks run dummy batches) and their MoE layers form one group of
  // TP x DP GPUs (vLLM FusedMoEParallelConfig: the experts are sliced over TP x DP, or with
  // --enable-expert-parallel held whole, E / (TP x DP) per GPU). A dense model's DP ranks are
  // independent engines behind one API server.
  int data_parallel_size = 1;
  bool enable_expert_parallel = false;  // --enable-expert-parallel
  // --moe-routing-skew: the Zipf exponent of expert popularity under expert parallelism, a
  // what-if with no measured default (models/moe_routing.h); 0 = uniform routing.
  double moe_routing_skew = 0;
  // --quantization: "" (the checkpoint's own format: model dtype, or ModelSpec::
  // checkpoint_quantization), "fp8" (every linear weight in 1 byte) or "mxfp4" (MoE experts in
  // MXFP4, the rest in the model dtype; what vLLM auto-detects for gpt-oss).
  std::string quantization;
  std::string kv_cache_dtype = "auto";  // --kv-cache-dtype: auto (= model dtype) | fp8
  bool enforce_eager = false;           // --enforce-eager: no CUDA graphs (no padding)
  // Decode batch sizes with a captured CUDA graph (ascending). Empty = vLLM's default for
  // max_num_seqs (see default_cuda_graph_sizes).
  std::vector<int> cuda_graph_sizes;
  bool ideal = false;  // 100% efficiency, zero overhead: the physical lower bound
  // Fitted cost-model parameters (sim/calibration/profile.h) applied on top of the GPU spec's
  // defaults; empty = uncalibrated. The ideal variant ignores it.
  calibration::Calibration calibration;
  // Measured kernel tables for the linear ops and prefill attention (models/kernel_timer.h);
  // profile null = the roofline for every op. The ideal variant ignores them.
  KernelSource kernels;
  // Placement over nodes (hardware/topology.h): GPUs per node available to the replica
  // (--gpus-per-node), and the network between nodes (--inter-node-link). An empty
  // inter_node.link.kind means the GPU's usual network (hardware::default_network_link_name),
  // loaded from the catalog only when the replica spans nodes.
  int gpus_per_node = hardware::kDefaultGpusPerNode;
  hardware::NetworkLinkSpec inter_node;

  // The weight format in effect: quantization when set, else the checkpoint's ("" = model dtype).
  std::string weight_format() const;
  // Bytes per weight of the linear layers outside the MoE experts (attention, dense MLP, shared
  // expert): 1 under fp8, checkpoint_weight_bits / 8 for integer weights, else the model dtype
  // (MXFP4 leaves them unquantized).
  double weight_bytes_per_param() const;
  // Bytes per weight of the routed MoE experts: 1 under fp8, kMxfp4BytesPerWeight under mxfp4,
  // else the model dtype.
  double expert_weight_bytes_per_param() const;
  // Whether the checkpoint's linear weights are integers dequantized in the GEMM (w4a16, w8a16:
  // ModelSpec::checkpoint_weight_bits per weight, bf16 compute).
  bool integer_weights() const;
  // Whether fp8 weights run weight-only: on a GPU without FP8 tensor cores (gpu.fp8_flops 0,
  // Ampere) vLLM runs an fp8 checkpoint's linear layers as W8A16 in its Marlin GEMM, the weights
  // dequantised to bf16 (models/marlin_gemm.h).
  bool weight_only_fp8() const;
  // Whether MXFP4 experts run vLLM's Marlin MoE kernel: Mxfp4MoEMethod picks the Marlin backend
  // below compute capability 9.0 (get_mxfp4_backend in
  // vllm/model_executor/layers/quantization/mxfp4.py), i.e. on Ampere and Ada GPUs; Hopper and
  // Blackwell run triton_kernels or FlashInfer. The weights are padded for Marlin
  // (models/marlin_moe.h, marlin_mxfp4_padded).
  bool mxfp4_marlin() const;
  // Whether vLLM runs this model's attention with its Triton backend (TRITON_ATTN) instead of
  // FlashAttention: gpt-oss's attention sinks are supported by FlashAttention 3 (Hopper) and
  // FlashInfer, not by FlashAttention 2, so below compute capability 9.0 vLLM picks TRITON_ATTN
  // (vllm-project/recipes OpenAI/GPT-OSS.md, "A100"). servesim still times that attention as
  // FlashAttention; the prediction basis says so.
  bool triton_sink_attention() const;
  // The routed experts run vLLM's Marlin MoE kernel: weight_only_fp8() or mxfp4_marlin().
  bool marlin_experts() const { return weight_only_fp8() || mxfp4_marlin(); }
  // The dtype whose GEMM peak and kernel tables time the linear layers: "fp8" under fp8 (w8a8) on
  // a GPU with FP8 tensor cores, else "bf16" (MXFP4 experts and integer weights run as w4a16 /
  // w8a16 on Hopper, fp8 weights as w8a16 without FP8 tensor cores: dequantized to bf16 in the
  // kernel).
  std::string linear_compute_dtype() const;
  int kv_dtype_bytes() const;  // 1 for fp8, else model dtype bytes
  int num_gpus() const { return tensor_parallel_size * pipeline_parallel_size; }  // one DP rank
  // GPUs the routed experts are spread over: TP x DP for an MoE model (1 for a dense one).
  int moe_group_size() const {
    return model.is_moe() ? tensor_parallel_size * data_parallel_size : 1;
  }
  // Whether the DP ranks' steps are coupled through their MoE layers (MoE model, DP > 1).
  bool dp_coupled() const { return model.is_moe() && data_parallel_size > 1; }
};

// How a vLLM release picks its CUDA-graph capture sizes (sim/replica/vllm_version.h says which).
enum class CudaGraphSizesRule {
  kV0,          // [1,2,4] + [8·i for i in 1..32], up to the first size >= max_num_seqs
                //   (V0 _BATCH_SIZES_TO_CAPTURE, vllm/worker/model_runner.py)
  kV1Dense512,  // [1,2,4] + range(8, 513, 8)                       (v0.8, v0.9: cuda_graph_sizes
                // [512])
  kV1Dense2x,   // [1,2,4] + range(8, max+1, 8), max = min(2·max_num_seqs, 512)   (v0.10)
  kV1Sparse,    // [1,2,4] + range(8,256,8) + range(256, max+1, 16), same max      (v0.11+)
};

// The capture sizes of `rule`, ascending, with sizes above max_num_batched_tokens dropped.
std::vector<int> default_cuda_graph_sizes(int max_num_seqs, int max_num_batched_tokens,
                                          CudaGraphSizesRule rule = CudaGraphSizesRule::kV1Sparse);

// The roofline cost model of DESIGN.md §4 for this deployment (ideal variant when d.ideal).
std::unique_ptr<CostModel> make_cost_model(const Deployment& d);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_DEPLOYMENT_H_
