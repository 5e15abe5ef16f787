// Pipeline parallelism's arithmetic: how vLLM splits the layers over stages, one step split into
// stages and hand-offs, and the steady state of micro-batches in the pipeline
// (RooflineCostModel::estimate_pipeline fills PipelineStepTimes; sim/replica/pipeline.h runs the
// timeline event by event).
#ifndef SERVESIM_MODELS_PIPELINE_TIMING_H_
#define SERVESIM_MODELS_PIPELINE_TIMING_H_

#include <cstdint>
#include <vector>

namespace servesim::models {

// Layers per pipeline stage as vLLM splits them (vllm/distributed/utils.py get_pp_indices, no
// VLLM_PP_LAYER_PARTITION): L // PP each, and the L % PP left over go one each to the stages
// just before the last (partitions[-2], partitions[-3], …). Sums to num_layers.
std::vector<int64_t> pipeline_stage_layers(int64_t num_layers, int pp);

// Tensors a stage hands to the next per token: hidden_states and residual
// (IntermediateTensors of vLLM's Llama-family models), each [T, hidden] in the model dtype.
inline constexpr int kPipelineTensors = 2;

// One step of one micro-batch split along the pipeline: overhead (CPU, before stage 0), then
// stage 0, hop 0, stage 1, …, stage PP−1. overhead_s + Σ stage_s + Σ hop_s = estimate().total_s.
struct PipelineStepTimes {
  double overhead_s = 0;
  std::vector<double> stage_s;  // PP entries: the stage's layers (+ LM head on the last)
  std::vector<double> hop_s;    // PP − 1 entries: send/recv from stage s to s + 1
};

// Steady state of m identical micro-batches in the pipeline (vLLM V0 virtual engines, each
// issuing its next step when its previous one ends; sim/replica/pipeline.h runs the same timeline
// event by event). A hand-off holds both its stages, so stage s is held for
//   occ_s = hop_{s−1} + stage_s + hop_s   per micro-batch, and the host for overhead_s; then
//   round = max(overhead + Σ stage + Σ hop,  m · max(overhead, max_s occ_s))
// (one micro-batch's own loop vs. the busiest resource serving all m). Every request advances one
// token per round. REQUIRES: micro_batches >= 1.
double pipeline_round_s(const PipelineStepTimes& t, int micro_batches);
// The bubble: fraction of a steady-state round that stage `stage` is idle, 1 − m·occ_s / round.
// m = 1 with PP equal stages and no hand-offs or overhead: (PP − 1) / PP.
double pipeline_bubble_fraction(const PipelineStepTimes& t, int micro_batches, int stage);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_PIPELINE_TIMING_H_
