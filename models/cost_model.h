// CostModel: how long one engine step takes on one replica.
//
// Contract: estimate() is a pure function of the BatchShape (same shape ⇒ same cost, no hidden
// state), is O(1) in the batch size, never returns a negative or NaN time, and is monotone: adding
// tokens or context to a shape never makes the step faster. A non-empty shape takes > 0 s.
#ifndef SERVESIM_MODELS_COST_MODEL_H_
#define SERVESIM_MODELS_COST_MODEL_H_

#include "models/batch_shape.h"

namespace servesim::models {

// Breakdown of one step's predicted time, all in seconds. total_s is what the simulator uses; the
// parts explain it (they add up to total_s).
struct StepCost {
  double linear_s = 0;     // QKV/O projections, MLP or MoE experts, embeddings (all layers)
  double attention_s = 0;  // prefill + decode attention (all layers)
  double lm_head_s = 0;    // final norm + LM head + sampling for the sampled rows
  double comm_s = 0;       // tensor-parallel all-reduces, pipeline send/recv
  double overhead_s = 0;   // serial per-step and per-request overheads (the legacy constants)
  // Host (CPU) work of the step with a cause: scheduler per step and per scheduled sequence,
  // input preparation per prefill token, sampling and output processing per sampled token.
  // Without async scheduling it adds to the step; with it, it overlaps the previous step's GPU
  // work (sim/replica/replica.h). Included in total_s.
  double host_s = 0;
  double total_s = 0;
  // The part that is not host_s: what the GPU (and the serial overheads) take.
  double device_s() const { return total_s - host_s; }
};

class CostFastPath;  // models/cost_fast_path.h

// What every cost model implements: estimate(). A model may also offer a fast path to the same
// numbers (CostFastPath: a memo of the parts that depend on one count, and decode-only steps as a
// function of their context), which a step loop then uses instead; without one, every step is
// one estimate() call. The attention window of sliding-window layers is not the cost model's to
// say: it comes from the model (ModelSpec::attention_window(), EngineConfig::attention_window),
// and the caller fills the BatchShape's windowed sums with it.
class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual StepCost estimate(const BatchShape& shape) const = 0;
  // The model's fast path, owned by the model (lives as long as it); null when it has none.
  virtual const CostFastPath* fast_path() const { return nullptr; }
};

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_COST_MODEL_H_
