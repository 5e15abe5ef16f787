// BatchShape: the work of one engine step, in the aggregate form the cost model needs.
//
// The scheduler keeps these sums up to date incrementally, so building a shape costs O(1) per
// step and evaluating the cost model costs O(1) whatever the batch size. Every field is a plain
// sum over the requests scheduled in the step; none depends on the order of requests.
#ifndef SERVESIM_MODELS_BATCH_SHAPE_H_
#define SERVESIM_MODELS_BATCH_SHAPE_H_

#include <cstdint>

namespace servesim::models {

struct BatchShape {
  // Prefill part: requests computing prompt tokens this step (first prefill, a chunk of it, or the
  // recompute of a preempted request's prompt + generated tokens).
  int64_t prefill_seqs = 0;      // number of prefill chunks in the step
  int64_t prefill_tokens = 0;    // Σ q: new tokens computed by those chunks
  double prefill_attn_work = 0;  // Σ q·(c + q/2), tokens²: causal attention work (c = cached context)
  int64_t prefill_context_tokens = 0;  // Σ c: cached KV tokens the chunks read

  // Decode part: requests generating one token each.
  int64_t decode_seqs = 0;            // number of decoding requests (each computes 1 token)
  int64_t decode_context_tokens = 0;  // Σ tokens already in KV that each decode attends to

  // Sequences that sample a token at the end of the step (all decodes + prefills that finish
  // their prompt this step): the LM head runs on these rows only.
  int64_t sampled_seqs = 0;

  int64_t total_tokens() const { return prefill_tokens + decode_seqs; }
  bool empty() const { return total_tokens() == 0; }
};

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_BATCH_SHAPE_H_
