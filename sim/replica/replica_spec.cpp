// Replica's speculative decoding (replica.h's file comment, sim/replica/spec_decode.h): the verify
// rows a step's decoders become, and their settlement at the step's end. In a step where only
// decoders run, schedule_verify_rows does the scheduler's walk and the rows' sums in one pass;
// both passes sum a row with add_verify_row.
#include <algorithm>
#include <limits>

#include "sim/replica/replica.h"

namespace servesim::sim {

int32_t Replica::spec_tokens_for(const Req& r) const {
  // scheduler.py: num_new_tokens = num_tokens_with_spec − num_computed_tokens, then
  // min(num_new_tokens, max_model_len − 1 − num_computed_tokens).
  const int64_t want = 1 + int64_t{config_.spec.num_speculative_tokens};
  const int64_t room = int64_t{config_.max_model_len} - 1 - r.num_computed;
  return static_cast<int32_t>(std::max<int64_t>(1, std::min(want, room)));
}

void Replica::add_verify_row(const Req& r, int64_t q, VerifySums& sums) const {
  ++sums.rows;
  sums.rows_ctx += int64_t{r.num_computed} + q;
  if (q == 1) return;  // no draft scheduled: a plain decode row
  // A row of q = 1 + k query tokens after c computed ones, all q sampled (the target's logits
  // at every draft position feed the rejection sampler): as a prefill chunk of q tokens.
  const double qd = static_cast<double>(q);
  const double c = r.num_computed;
  ++sums.chunk_rows;
  sums.chunk_tokens += q;
  sums.chunk_ctx += r.num_computed;
  sums.drafts += q - 1;
  sums.attn_work += qd * (c + qd / 2.0);
  const int64_t window = config_.attention_window;
  if (window > 0) {
    sums.window_attn_work += models::windowed_attn_work(c, qd, static_cast<double>(window));
    sums.window_ctx += std::min<int64_t>(r.num_computed, window);
  }
}

void Replica::add_verify_rows(models::BatchShape& shape, int64_t& rows, int64_t& rows_ctx) {
  // The rows' attention work goes on from the prefills' sums in the shape, row by row.
  VerifySums sums;
  sums.attn_work = shape.prefill_attn_work;
  sums.window_attn_work = shape.prefill_window_attn_work;
  for (int32_t s : running_) {
    const Req& r = slots_[s];
    if (r.phase != Phase::kDecode || r.scheduled == 0) continue;
    step_.verify.push_back(s);
    add_verify_row(r, r.scheduled, sums);
  }
  // Prefills that complete their prompt sample too: the drafter proposes for them.
  for (int32_t s : step_.prefills) {
    const Req& r = slots_[s];
    if (r.num_computed + r.scheduled == num_tokens(r)) {
      ++sums.rows;
      sums.rows_ctx += int64_t{r.num_computed} + r.scheduled;
    }
  }
  add_verify_sums(sums, shape, rows, rows_ctx);
}

bool Replica::schedule_verify_rows(bool& preempted, VerifySums& sums) {
  sums = VerifySums{};
  // Prompts in the running list or sliding groups: the walk as it is.
  if (!prefilling_.empty() || decoders_.count() != static_cast<int64_t>(running_.size()) ||
      sliding_groups() != 0) {
    schedule_running_slow(preempted);
    return false;
  }
  const int64_t k = step_.index;
  const int32_t threshold = config_.long_prefill_token_threshold > 0
                                ? config_.long_prefill_token_threshold
                                : std::numeric_limits<int32_t>::max();
  int64_t decoders = 0;
  int64_t decoder_ctx = 0;
  int64_t lora_decoders = 0;
  for (size_t i = 0; i < running_.size(); ++i) {
    const int32_t s = running_[i];
    Req& r = slots_[s];
    // The walk's make_ready (idempotent: the walk repeats it where it takes over). A row settled
    // at the last step's end has base_step == k: settling it changes nothing.
    r.scheduled = 0;
    if (r.base_step != k) settle_decoder(r, k);
    const int64_t q = std::min<int64_t>(spec_tokens_for(r), threshold);
    const int64_t need = q <= step_.budget ? new_blocks_for(r, static_cast<int32_t>(q)) : 0;
    if (q > step_.budget || need > kv_.num_free_blocks()) {
      // The walk caps this request's tokens, preempts or stops here: it goes on from i.
      step_.verify.clear();
      schedule_running_slow(preempted, i, decoders, decoder_ctx, lora_decoders);
      return false;
    }
    // Most steps need no new block (1 + K tokens, 16-token blocks): allocate(0) changes nothing.
    if (need > 0) kv_.allocate(need, r.kv);
    r.scheduled = static_cast<int32_t>(q);
    step_.budget -= q;
    ++decoders;
    decoder_ctx += r.num_computed;
    if (r.lora >= 0) ++lora_decoders;
    step_.verify.push_back(s);
    add_verify_row(r, q, sums);
  }
  step_.decoders = decoders;
  step_.decoder_ctx = decoder_ctx;
  step_.lora_decoders = lora_decoders;
  decoders_.live_bucket(static_cast<size_t>(k % config_.block_size), slots_);  // as the walk
  return true;
}

void Replica::add_verify_sums(const VerifySums& sums, models::BatchShape& shape, int64_t& rows,
                              int64_t& rows_ctx) const {
  rows += sums.rows;
  rows_ctx += sums.rows_ctx;
  shape.decode_seqs -= sums.chunk_rows;
  shape.decode_context_tokens -= sums.chunk_ctx;
  shape.sampled_seqs += sums.drafts;
  shape.prefill_seqs += sums.chunk_rows;
  shape.prefill_tokens += sums.chunk_tokens;
  shape.prefill_attn_work = sums.attn_work;
  shape.prefill_context_tokens += sums.chunk_ctx;
  if (config_.attention_window > 0) {
    shape.prefill_window_attn_work = sums.window_attn_work;
    shape.prefill_window_context_tokens += sums.window_ctx;
  }
}

void Replica::end_verify_rows(engine::Simulator& sim, int64_t k) {
  for (int32_t s : step_.verify) {
    Req& r = slots_[s];
    const int drafts = r.scheduled - 1;
    const int accepted = spec_.acceptance.accepted(r.id, r.generated, drafts);
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
