// Collective communication times over an α–β link (hardware::LinkSpec): the all-reduce and
// all-gather that tensor parallelism, the logits gather and data-parallel MoE run
// (docs/cost_model.md §3.5).
#ifndef SERVESIM_MODELS_COLLECTIVES_H_
#define SERVESIM_MODELS_COLLECTIVES_H_

#include "hardware/gpu_spec.h"

namespace servesim::models {

// Ring all-reduce of `bytes` over `ranks` GPUs on `link` (α–β):
//   2(ranks−1)·α + 2(ranks−1)/ranks · bytes / bandwidth.   0 for ranks <= 1 or bytes <= 0.
double ring_all_reduce_s(double bytes, int ranks, const hardware::LinkSpec& link);

// The all-reduce vLLM runs for tensor parallelism. Inside an NVLink/NVSwitch (or AMD Infinity
// Fabric) domain vLLM uses its custom all-reduce (vllm/distributed/device_communicators/
// custom_all_reduce.py): a two-shot reduce-scatter + all-gather in which every rank reaches every
// peer directly, so latency is 2α whatever the rank count:
//   2α + 2(ranks−1)/ranks · bytes / bandwidth.
// Over PCIe it falls back to NCCL's ring (ring_all_reduce_s).
double all_reduce_s(double bytes, int ranks, const hardware::LinkSpec& link);
bool has_custom_all_reduce(const hardware::LinkSpec& link);

// Ring all-gather: (ranks−1)·α + (ranks−1)/ranks · bytes / bandwidth (bytes = gathered total).
double ring_all_gather_s(double bytes, int ranks, const hardware::LinkSpec& link);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_COLLECTIVES_H_
