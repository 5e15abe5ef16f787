// SpecDecode: speculative decoding as one replica runs it (vLLM's --speculative-config; the JSON
// is read by sim/cluster/speculative_config.h), and the acceptance model.
//
// Engine semantics (vllm/v1/core/sched/scheduler.py; docs/deployment-modes.md): a decoding
// request that holds K draft tokens is scheduled 1 + K tokens (its next token and the K drafts),
// capped by the step's token budget and by max_model_len − 1 − computed; its KV allocation asks
// for `lookahead()` more slots (num_lookahead_tokens: K for the EAGLE family and draft models, 0
// for n-gram). The target verifies the drafts; of the k drafts scheduled, A are accepted (the
// first rejection ends the run), the request emits A + 1 tokens (the accepted drafts and the
// target's own token) as one streamed chunk, capped by its remaining output, and its computed
// tokens move by A + 1: the k − A rejected ones are rolled back (update_from_output). The drafter
// then proposes K new drafts for every request of the batch.
//
// Acceptance. `acceptance_rates[j]` (j = 0 … K−1) is the conditional probability that draft j+1
// is accepted given drafts 1 … j were: a_1, …, a_K. The number accepted out of k scheduled drafts
// is A = max{ m ≤ k : the first m drafts are accepted }, so
//     P(A ≥ m) = a_1 · … · a_m,   E[A] = Σ_{m=1..k} Π_{i≤m} a_i   (mean_accepted).
// vLLM's mean acceptance length (spec_decode_num_accepted_tokens / num_drafts + 1, what papers
// call τ) is 1 + E[A] with k = K. rates_for_acceptance_length() inverts it for a constant rate a
// (a_i = a for every i): E[A] = a (1 − a^K) / (1 − a), monotone in a, solved by bisection.
//
// The draw: one uniform u per verify row, a pure function of (seed, request id, tokens generated
// so far), and A = the number of m ≤ k with u < a_1 · … · a_m (inverse transform on the survival
// function: P(A ≥ m) is the product exactly). The same request at the same point of its output
// accepts the same drafts whatever the batch, the order of requests or a preemption in between
// (deterministic, and independent across requests), and out of d scheduled drafts it accepts
// min(A_K, d).
#ifndef SERVESIM_SIM_REPLICA_SPEC_DECODE_H_
#define SERVESIM_SIM_REPLICA_SPEC_DECODE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace servesim::sim {

struct SpecDecode {
  // vLLM's method after its aliases: "" (off), ngram, eagle, eagle3, mtp, draft_model.
  std::string method;
  int num_speculative_tokens = 0;  // K
  std::string model;               // the draft model or EAGLE head ("" for ngram and mtp)
  int draft_tensor_parallel_size = 0;
  int prompt_lookup_min = 0;  // ngram only
  int prompt_lookup_max = 0;
  std::vector<double> acceptance_rates;  // per-position conditional rates a_1 … a_K
  double acceptance_length = 0;          // the mean acceptance length given (0: rates given)
  // Where the rates come from: "acceptance_rates" or "acceptance_length" (servesim-only keys the
  // user gave; docs/deployment-modes.md says none is measured here).
  std::string acceptance_source;
  uint64_t acceptance_seed = 0;

  bool enabled() const { return num_speculative_tokens > 0; }
  // KV slots reserved past the scheduled tokens (scheduler.py: num_lookahead_tokens).
  int lookahead() const { return method == "ngram" ? 0 : num_speculative_tokens; }
};

// E[A] = Σ_{m=1..k} Π_{i≤m} a_i with k = min(max_drafts, rates.size()).
double mean_accepted(const std::vector<double>& rates, int max_drafts);

// The constant per-position rate a whose mean acceptance length 1 + E[A] over K drafts is
// `length`; REQUIRES 1 ≤ length ≤ K + 1 (the ends give a = 0 and a = 1 exactly).
double constant_rate_for_acceptance_length(double length, int k);
std::vector<double> rates_for_acceptance_length(double length, int k);

// The drafts accepted out of `drafts` scheduled (0 … drafts) for request `request_id` having
// generated `generated` tokens (see the file comment).
int accepted_drafts(const std::vector<double>& rates, uint64_t seed, int64_t request_id,
                    int64_t generated, int drafts);

// accepted_drafts() for one configuration (rates and seed fixed), as a replica draws it once per
// verify row: the seed's mix is done once, and each survival product p_m = a_1 · … · a_m is an
// integer threshold on the 53-bit word: u = n·2^-53 < p  ⇔  n < ⌈p·2^53⌉ for an integer n
// (p·2^53 is exact: a scaling by a power of two), so accepted() gives accepted_drafts()'s answer
// for every input, with fewer operations.
class AcceptanceSampler {
 public:
  AcceptanceSampler() = default;
  AcceptanceSampler(const std::vector<double>& rates, uint64_t seed);
  // accepted_drafts(rates, seed, request_id, generated, drafts).
  int accepted(int64_t request_id, int64_t generated, int drafts) const;

 private:
  uint64_t seed_word_ = 0;
  std::vector<uint64_t> thresholds_;  // ⌈p_j·2^53⌉, p_j the running product of clamped rates
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_SPEC_DECODE_H_
