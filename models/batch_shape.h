// BatchShape: the work of one engine step, in the aggregate form the cost model needs.
//
// The scheduler keeps these sums up to date incrementally, so building a shape costs O(1) per
// step and evaluating the cost model costs O(1) whatever the batch size. Every field is a plain
// sum over the requests scheduled in the step; none depends on the order of requests.
#ifndef SERVESIM_MODELS_BATCH_SHAPE_H_
#define SERVESIM_MODELS_BATCH_SHAPE_H_

#include <cstdint>

namespace servesim::models {

// Causal attention work, in tokens², of one prefill chunk of q new tokens after c computed ones
// in a layer whose queries see at most the last w tokens (sliding-window attention): the
// continuous count ∫_c^{c+q} min(x, w) dx, the same approximation as the full layers' q·(c + q/2)
// (= ∫_c^{c+q} x dx):
//   q·(c + q/2)                       c + q <= w   (the window never binds: the full formula)
//   q·w                               c >= w       (every query sees w tokens)
//   (w² − c²)/2 + (c + q − w)·w       otherwise    (the window starts binding inside the chunk)
// Continuous at c + q = w and at c = w. The replica and every test use this one function.
// REQUIRES: c >= 0, q >= 0, w > 0.
inline double windowed_attn_work(double c, double q, double w) {
  if (c + q <= w) return q * (c + q / 2.0);
  if (c >= w) return q * w;
  return (w * w - c * c) / 2.0 + (c + q - w) * w;
}

struct BatchShape {
  // Prefill part: requests computing prompt tokens this step (first prefill, a chunk of it, or the
  // recompute of a preempted request's prompt + generated tokens).
  int64_t prefill_seqs = 0;    // number of prefill chunks in the step
  int64_t prefill_tokens = 0;  // Σ q: new tokens computed by those chunks
  double prefill_attn_work =
      0;  // Σ q·(c + q/2), tokens²: causal attention work (c = cached context)
  int64_t prefill_context_tokens = 0;  // Σ c: cached KV tokens the chunks read
  // The same two sums for the sliding-window layers of a model that has them (window W =
  // ModelSpec::attention_window(), the replica's EngineConfig::attention_window); 0, and unused,
  // for a model without.
  //   prefill_window_attn_work       Σ windowed_attn_work(c, q, W), tokens²
  //   prefill_window_context_tokens  Σ min(c, W): cached KV a sliding layer reads. vLLM's kernels
  //                                  read W − 1 earlier tokens at most (a query at position p sees
  //                                  p − W + 1 … p); min(c, W) counts one more, as the continuous
  //                                  work does.
  double prefill_window_attn_work = 0;
  int64_t prefill_window_context_tokens = 0;
  // Σ ⌈q / 64⌉ over the prefill chunks: the 64-token chunks vLLM's chunk_gated_delta_rule runs
  // them in on a model with Gated DeltaNet layers (models/linear_attention.h; the replica fills
  // it for such a model only). 0 with prefills: not counted by the caller; the cost model then
  // takes its lower bound max(prefill_seqs, ⌈prefill_tokens / 64⌉).
  int64_t prefill_linear_chunks = 0;

  // Decode part: requests generating one token each.
  int64_t decode_seqs = 0;            // number of decoding requests (each computes 1 token)
  int64_t decode_context_tokens = 0;  // Σ tokens already in KV that each decode attends to
  // No windowed decode sum: a sliding layer is charged min(decode_context_tokens, decode_seqs·W),
  // which is Σ min(c_i, W) exactly when every decoding sequence has >= W tokens of context and an
  // upper bound of it otherwise (a decode step's shape stays two numbers; DecodeSeries relies on
  // it).

  // Sequences that sample a token at the end of the step (all decodes + prefills that finish
  // their prompt this step): the LM head runs on these rows only.
  int64_t sampled_seqs = 0;

  int64_t total_tokens() const { return prefill_tokens + decode_seqs; }
  bool empty() const { return total_tokens() == 0; }
};

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_BATCH_SHAPE_H_
