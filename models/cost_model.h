// CostModel: how long one engine step takes on one replica.
//
// Contract: estimate() is a pure function of the BatchShape (same shape ⇒ same cost, no hidden
// state), is O(1) in the batch size, never returns a negative or NaN time, and is monotone: adding
// tokens or context to a shape never makes the step faster. A non-empty shape takes > 0 s.
#ifndef SERVESIM_MODELS_COST_MODEL_H_
#define SERVESIM_MODELS_COST_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <memory>

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

// What a model may keep between estimate_memo() calls of one caller: the parts of a step's cost
// that depend on one count only (tokens, sampled rows), which a step loop asks for again and
// again. Owned by the caller (one per caller and model, never shared between threads), so that a
// model shared by many simulations stays immutable.
class CostMemo {
 public:
  virtual ~CostMemo() = default;
};

// The steps of one decode-only batch as a function of their decode context C alone: `rows`
// decoding sequences, all sampled, nothing prefilled (BatchShape with decode_seqs = sampled_seqs =
// rows, decode_context_tokens = C, every other field 0). A step loop runs many such steps between
// two events, with C growing by `rows` per step; a model whose step time has the roofline form
//   layer(x)     = max(attn_flops_per_ctx · x / compute_div,
//                      (kv_bytes · (x + rows) + qo_bytes · rows) / memory_div) + latency
//   attention(C) = layers · layer(C)                                  without sliding layers
//                  layers · layer(C) + sliding_layers · layer(min(C, window_tokens))   with them
//   total(C)     = linear + attention(C) + lm_head + comm + overhead + host   (summed left to
//   right)
// fills one (CostModel::decode_series), and total_s(C) is then estimate(shape).total_s bit for bit:
// the same operations on the same values in the same order, the C-independent parts taken from an
// estimate of the same shape. host_s is the step's host part (StepCost::host_s), independent of C.
struct DecodeSeries {
  bool valid = false;  // false: the model has no such form (call estimate_memo for each step)
  double rows = 0;
  double layers = 0;          // full-attention layers (all layers when sliding_layers is 0)
  double sliding_layers = 0;  // sliding-window layers; 0: none
  int64_t window_tokens = 0;  // rows · W: the decode context a sliding layer is charged at most
  double attn_flops_per_ctx = 0;
  double compute_div = 0;  // peak FLOP/s · compute efficiency
  double kv_bytes = 0;     // per token of context or of the batch
  double qo_bytes = 0;     // per token of the batch
  double memory_div = 0;   // bandwidth · memory efficiency
  double latency = 0;
  double linear_s = 0, lm_head_s = 0, comm_s = 0, overhead_s = 0, host_s = 0;

  double attention_s(int64_t context) const {
    const double c = static_cast<double>(context);
    const double compute = attn_flops_per_ctx * c / compute_div;
    const double bytes = kv_bytes * (c + rows) + qo_bytes * rows;
    const double full = layers * (std::max(compute, bytes / memory_div) + latency);
    if (sliding_layers == 0) return full;
    const double w = static_cast<double>(std::min(context, window_tokens));
    const double compute_w = attn_flops_per_ctx * w / compute_div;
    const double bytes_w = kv_bytes * (w + rows) + qo_bytes * rows;
    return full + sliding_layers * (std::max(compute_w, bytes_w / memory_div) + latency);
  }
  double total_s(int64_t context) const {
    return linear_s + attention_s(context) + lm_head_s + comm_s + overhead_s + host_s;
  }
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual StepCost estimate(const BatchShape& shape) const = 0;
  // A memo for estimate_memo(); null when the model keeps none (then estimate_memo = estimate).
  virtual std::unique_ptr<CostMemo> make_memo() const { return nullptr; }
  // Exactly estimate(shape), bit for bit (the same operations in the same order; the memo only
  // holds values already computed that way). `memo` is null or made by this model's make_memo().
  virtual StepCost estimate_memo(const BatchShape& shape, CostMemo* memo) const {
    (void)memo;
    return estimate(shape);
  }
  // The decode-only steps of `rows` sequences (DecodeSeries); invalid when the model's step time
  // has no such form. `memo` as for estimate_memo(). REQUIRES: rows >= 1.
  virtual DecodeSeries decode_series(int64_t rows, CostMemo* memo) const {
    (void)rows;
    (void)memo;
    return {};
  }
  // The attention window W of the model's sliding-window layers (ModelSpec::sliding_window), 0
  // when it has none. The caller building a BatchShape fills prefill_window_attn_work and
  // prefill_window_context_tokens with it when it is > 0.
  virtual int64_t sliding_window() const { return 0; }
};

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_COST_MODEL_H_
