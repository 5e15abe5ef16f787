// Replica's speculative decoding (replica.h's file comment, sim/replica/spec_decode.h): the verify
// rows a step's decoders become, and their settlement at the step's end.
#include <algorithm>

#include "sim/replica/replica.h"

namespace servesim::sim {

int32_t Replica::spec_tokens_for(const Req& r) const {
  // scheduler.py: num_new_tokens = num_tokens_with_spec − num_computed_tokens, then
  // min(num_new_tokens, max_model_len − 1 − num_computed_tokens).
  const int64_t want = 1 + int64_t{config_.spec.num_speculative_tokens};
  const int64_t room = int64_t{config_.max_model_len} - 1 - r.num_computed;
  return static_cast<int32_t>(std::max<int64_t>(1, std::min(want, room)));
}

void Replica::add_verify_rows(models::BatchShape& shape, int64_t& rows, int64_t& rows_ctx) {
  const int64_t window = config_.attention_window;
  for (int32_t s : running_) {
    const Req& r = slots_[s];
    if (r.phase != Phase::kDecode || r.scheduled == 0) continue;
    step_.verify.push_back(s);
    ++rows;
    rows_ctx += int64_t{r.num_computed} + r.scheduled;
    if (r.scheduled == 1) continue;  // no draft scheduled: a plain decode row
    // A row of q = 1 + k query tokens after c computed ones, all q sampled (the target's logits
    // at every draft position feed the rejection sampler): as a prefill chunk of q tokens.
    const double q = r.scheduled;
    const double c = r.num_computed;
    --shape.decode_seqs;
    shape.decode_context_tokens -= r.num_computed;
    shape.sampled_seqs += r.scheduled - 1;
    ++shape.prefill_seqs;
    shape.prefill_tokens += r.scheduled;
    shape.prefill_attn_work += q * (c + q / 2.0);
    shape.prefill_context_tokens += r.num_computed;
    if (window > 0) {
      shape.prefill_window_attn_work +=
          models::windowed_attn_work(c, q, static_cast<double>(window));
      shape.prefill_window_context_tokens += std::min<int64_t>(r.num_computed, window);
    }
  }
  // Prefills that complete their prompt sample too: the drafter proposes for them.
  for (int32_t s : step_.prefills) {
    const Req& r = slots_[s];
    if (r.num_computed + r.scheduled == num_tokens(r)) {
      ++rows;
      rows_ctx += int64_t{r.num_computed} + r.scheduled;
    }
  }
}

void Replica::end_verify_rows(engine::Simulator& sim, int64_t k) {
  for (int32_t s : step_.verify) {
    Req& r = slots_[s];
    const int drafts = r.scheduled - 1;
    const int accepted = acceptance_.accepted(r.id, r.generated, drafts);
    const int emitted = std::min(accepted + 1, r.output - r.generated);
    if (drafts > 0) {  // vLLM's num_drafts counts the requests that had drafts to verify
      stats_.spec_verify_rows += 1;
      stats_.spec_draft_tokens += drafts;
      stats_.spec_accepted_tokens += accepted;
      stats_.spec_emitted_tokens += emitted;
    }
    // update_from_output: num_computed_tokens += scheduled, then −= the rejected drafts.
    decoders_.remove(r);
    r.num_computed += accepted + 1;
    r.generated += emitted;
    r.scheduled = 0;
    r.base_step = k + 1;
    decoders_.add(s, r);
    if (r.seg_start < 0) r.seg_start = k;
    if (r.generated >= r.output) finish(sim, s, k);
  }
  step_.verify.clear();
}

void Replica::count_chunks(metrics::RequestRecord& rec) {
  int64_t chunks = 0;
  for (const metrics::TokenSegment& seg : rec.segments) chunks += seg.tokens();
  rec.output_chunks = static_cast<int32_t>(chunks);
}

}  // namespace servesim::sim
