// CostFastPath: an optional, faster way to a cost model's own numbers (CostModel::fast_path()).
//
// Contract: every answer is the model's estimate() bit for bit — the same operations on the same
// values in the same order; the fast path only keeps values already computed that way, or splits
// a step's time into the parts that do and do not change between steps. A step loop (sim/replica/
// step_costs.h) uses it where the model offers one and calls estimate() otherwise, so a new cost
// model needs none. The roofline model implements it (models/roofline_cost_model.h).
#ifndef SERVESIM_MODELS_COST_FAST_PATH_H_
#define SERVESIM_MODELS_COST_FAST_PATH_H_

#include <algorithm>
#include <cstdint>
#include <memory>

#include "models/batch_shape.h"
#include "models/cost_model.h"

namespace servesim::models {

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
// fills one (CostFastPath::decode_series), and total_s(C) is then estimate(shape).total_s bit for
// bit: the same operations on the same values in the same order, the C-independent parts taken
// from an estimate of the same shape. host_s is the step's host part (StepCost::host_s),
// independent of C.
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

class CostFastPath {
 public:
  virtual ~CostFastPath() = default;
  // A memo for estimate_memo() and decode_series(); null when the model keeps none.
  virtual std::unique_ptr<CostMemo> make_memo() const = 0;
  // Exactly estimate(shape), bit for bit. `memo` is null or made by this fast path's make_memo().
  virtual StepCost estimate_memo(const BatchShape& shape, CostMemo* memo) const = 0;
  // The decode-only steps of `rows` sequences (DecodeSeries); invalid when the model's step time
  // has no such form. `memo` as for estimate_memo(). REQUIRES: rows >= 1.
  virtual DecodeSeries decode_series(int64_t rows, CostMemo* memo) const = 0;
};

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_COST_FAST_PATH_H_
