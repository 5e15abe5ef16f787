// Tests of sliding-window attention in the step cost model (docs/cost_model.md §3.3.1):
// models::windowed_attn_work, the windowed BatchShape sums, RooflineCostModel::attention_s with
// sliding layers, and DecodeSeries. gpt-oss-120b: 18 of 36 layers see the last 128 tokens.
// Each test states the closed form it expects.
#include "models/roofline_cost_model.h"
#include "tests/test_paths.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hardware/gpu_spec.h"
#include "hardware/kernel_profile.h"
#include "hardware/profiles.h"
#include "models/deployment.h"
#include "models/kernel_timer.h"
#include "models/model_spec.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

Deployment deploy(const ModelSpec& m, int tp) {
  Deployment d;
  d.model = m;
  d.gpu = testing::h100_sxm();
  d.tensor_parallel_size = tp;
  return d;
}

ModelSpec gpt_oss() {
  ModelSpec m = load_model("gpt-oss-120b");
  REQUIRE(m.num_layers == 36);
  REQUIRE(m.num_sliding_layers == 18);
  REQUIRE(m.sliding_window == 128);
  return m;
}

// The same model with every layer full (what servesim charged before the window was modelled).
ModelSpec without_window(ModelSpec m) {
  m.sliding_window = 0;
  m.num_sliding_layers = 0;
  return m;
}

// A step of prefill chunks (c cached, q new) and `decodes` decoding sequences of `ctx_each`
// context, built the way Replica::start_step builds it for a model of window w (0: none).
BatchShape step(const std::vector<std::pair<int64_t, int64_t>>& chunks, int64_t decodes,
                int64_t ctx_each, int64_t w) {
  BatchShape s;
  s.decode_seqs = decodes;
  s.decode_context_tokens = decodes * ctx_each;
  s.sampled_seqs = decodes;
  for (const auto& [c, q] : chunks) {
    const double cd = static_cast<double>(c), qd = static_cast<double>(q);
    ++s.prefill_seqs;
    s.prefill_tokens += q;
    s.prefill_attn_work += qd * (cd + qd / 2.0);
    s.prefill_context_tokens += c;
    if (w > 0) {
      s.prefill_window_attn_work += windowed_attn_work(cd, qd, static_cast<double>(w));
      s.prefill_window_context_tokens += std::min(c, w);
    }
    ++s.sampled_seqs;
  }
  return s;
}

std::vector<BatchShape> shape_grid(int64_t w) {
  std::vector<BatchShape> shapes;
  for (int64_t b : {1, 9, 64, 512}) {
    for (int64_t ctx : {1, 100, 127, 128, 129, 8000}) shapes.push_back(step({}, b, ctx, w));
  }
  for (int64_t q : {1, 100, 128, 2048, 8192}) {
    for (int64_t c : {0, 28, 127, 128, 1000, 30000}) {
      shapes.push_back(step({{c, q}}, 0, 0, w));
      shapes.push_back(step({{c, q}, {0, 17}}, 40, 700, w));
    }
  }
  return shapes;
}

TEST_CASE("windowed_attn_work: the three cases and the boundaries", "[models][cost][swa]") {
  // Expectations (W = 128): ∫_c^{c+q} min(x, W) dx.
  //   window never binds (c + q <= W): q·(c + q/2), bit for bit the full formula;
  //   window binds throughout (c >= W): q·W;
  //   in between: (W² − c²)/2 + (c + q − W)·W, e.g. c = q = 100: 3,192 + 9,216 = 12,408.
  const double w = 128;
  CHECK(windowed_attn_work(0, 100, w) == 100 * (0 + 100 / 2.0));
  CHECK(windowed_attn_work(20, 7, w) == 7 * (20 + 7 / 2.0));
  CHECK(windowed_attn_work(200, 50, w) == 50 * w);
  CHECK(windowed_attn_work(100, 100, w) == 12408);
  // c + q = W: both the first and the third form give q·(c + q/2) = 7,800 at c = 28, q = 100;
  // one token more adds ∫_W^{W+1} W dx = W.
  CHECK(windowed_attn_work(28, 100, w) == 7800);
  CHECK((w * w - 28.0 * 28.0) / 2 == 7800);
  CHECK(windowed_attn_work(28, 101, w) == 7800 + w);
  // c = W: q·W; just below, c = W − δ: the third form gives q·W − δ²/2.
  const double delta = 1.0 / 1024;
  CHECK(windowed_attn_work(w, 10, w) == 10 * w);
  CHECK_THAT(windowed_attn_work(w - delta, 10, w), WithinAbs(10 * w - delta * delta / 2, 1e-12));
  // W >= c + q anywhere: the full formula exactly; the window never adds work.
  for (double c : {0.0, 1.0, 27.0, 127.0, 128.0, 1000.0, 30000.0}) {
    for (double q : {0.0, 1.0, 100.0, 128.0, 8192.0}) {
      INFO("c " << c << " q " << q);
      CHECK(windowed_attn_work(c, q, c + q) == q * (c + q / 2.0));
      CHECK(windowed_attn_work(c, q, 1e9) == q * (c + q / 2.0));
      CHECK(windowed_attn_work(c, q, w) <= q * (c + q / 2.0));
      CHECK(windowed_attn_work(c, q, w) <= q * w);
      // Monotone in the context and the new tokens.
      CHECK(windowed_attn_work(c + 1, q, w) >= windowed_attn_work(c, q, w));
      CHECK(windowed_attn_work(c, q + 1, w) >= windowed_attn_work(c, q, w));
    }
  }
  // Additive over chunks (an integral): a 1,000-token prompt in chunks of 100, 300 and 600 does
  // the work of one chunk, (128² − 0)/2 + 872·128 = 119,808.
  const double chunked = windowed_attn_work(0, 100, w) + windowed_attn_work(100, 300, w) +
                         windowed_attn_work(400, 600, w);
  CHECK(chunked == windowed_attn_work(0, 1000, w));
  CHECK(chunked == 119808);
}

TEST_CASE("sliding window: a window wider than every context costs exactly the full model",
          "[models][cost][swa]") {
  // In details: gpt-oss-120b with its window set to 2^20 tokens, wider than any context in the
  // grid: the windowed sums equal the full ones and min(C, n·W) = C, so the 18 sliding layers
  // cost what the 18 full ones do. Expectations: estimate() equals that of the same model with
  // no sliding layers, bit for bit (18·x + 18·x = 36·x exactly: doubling commutes with
  // rounding), for the roofline and the ideal variant, TP 2.
  ModelSpec wide = gpt_oss();
  wide.sliding_window = int64_t{1} << 20;
  const RooflineCostModel swa(deploy(wide, 2));
  const RooflineCostModel full(deploy(without_window(wide), 2));
  const IdealCostModel swa_ideal(deploy(wide, 2));
  const IdealCostModel full_ideal(deploy(without_window(wide), 2));
  CHECK(swa.sliding_window() == int64_t{1} << 20);
  CHECK(full.sliding_window() == 0);
  for (const BatchShape& s : shape_grid(wide.sliding_window)) {
    CHECK(s.prefill_window_attn_work == s.prefill_attn_work);
    CHECK(s.prefill_window_context_tokens == s.prefill_context_tokens);
    CHECK(swa.estimate(s).attention_s == full.estimate(s).attention_s);
    CHECK(swa.estimate(s).total_s == full.estimate(s).total_s);
    CHECK(swa_ideal.estimate(s).total_s == full_ideal.estimate(s).total_s);
  }
}

TEST_CASE("sliding window: gpt-oss-120b decode reads n·W tokens in its sliding layers",
          "[models][cost][swa]") {
  // In details: gpt-oss-120b TP2 on H100: 64 q heads and 8 KV heads of 64 → 32 q / 4 KV heads
  // per rank; bf16 KV: kv_tok = 2·4·64·2 = 1,024 B per token per layer, Q read + O write
  // 2·32·64·2 = 8,192 B per token. n = 64 sequences of 4,096 context: C = 262,144 ≥ n·W = 8,192.
  // Decode attention is memory-bound (intensity H/K = 8 FLOP/B), so one layer takes
  //   full:    (kv_tok·(C + n)   + qo·n) / (bw·η_m) + t0
  //   sliding: (kv_tok·(n·W + n) + qo·n) / (bw·η_m) + t0
  // Expectations: attention_s = 18·full + 18·sliding for the ideal (η = 1, t0 = 0) and the
  // roofline options; the sliding layers' bytes are kv_tok·(n·W + n) + qo·n; against the
  // all-full model the time drops to (full + sliding) / (2·full) ≈ 0.52 (ideal). At context
  // below W per sequence (C = 6,400 < n·W) the window does not bind: the same time as all-full.
  const ModelSpec m = gpt_oss();
  const double n = 64, ctx = 4096, w = 128;
  const double kv_tok = 2.0 * (8 / 2) * 64 * 2;
  const double qo_tok = 2.0 * (64 / 2) * 64 * 2;
  const double full_bytes = kv_tok * (n * ctx + n) + qo_tok * n;
  const double sliding_bytes = kv_tok * (n * w + n) + qo_tok * n;
  CHECK(sliding_bytes == 1024.0 * (8192 + 64) + 8192.0 * 64);
  const BatchShape s = testing::decode(64, 4096);
  const double bw = testing::h100_sxm().hbm_bandwidth_bytes_per_s;

  const IdealCostModel ideal(deploy(m, 2));
  const IdealCostModel ideal_full(deploy(without_window(m), 2));
  const double expect_ideal = 18 * (full_bytes / bw) + 18 * (sliding_bytes / bw);
  CHECK_THAT(ideal.estimate(s).attention_s, WithinRel(expect_ideal, 1e-12));
  CHECK_THAT(ideal_full.estimate(s).attention_s, WithinRel(36 * full_bytes / bw, 1e-12));
  CHECK_THAT(ideal.estimate(s).attention_s / ideal_full.estimate(s).attention_s,
             WithinRel((full_bytes + sliding_bytes) / (2 * full_bytes), 1e-12));
  CHECK(ideal.estimate(s).attention_s / ideal_full.estimate(s).attention_s < 0.52);
  // Everything but attention is unchanged.
  CHECK(ideal.estimate(s).linear_s == ideal_full.estimate(s).linear_s);
  CHECK(ideal.estimate(s).lm_head_s == ideal_full.estimate(s).lm_head_s);
  CHECK(ideal.estimate(s).comm_s == ideal_full.estimate(s).comm_s);

  const RooflineCostModel roof(deploy(m, 2));
  const RooflineOptions& o = roof.options();
  REQUIRE(o.op_latency_s > 0);
  const double bw_eff = bw * o.memory_efficiency;
  const double expect_roof =
      18 * (full_bytes / bw_eff + o.op_latency_s) + 18 * (sliding_bytes / bw_eff + o.op_latency_s);
  CHECK_THAT(roof.estimate(s).attention_s, WithinRel(expect_roof, 1e-12));

  // Below the window: 64 sequences of 100 tokens.
  const BatchShape short_ctx = testing::decode(64, 100);
  CHECK(ideal.estimate(short_ctx).attention_s == ideal_full.estimate(short_ctx).attention_s);
  CHECK(roof.estimate(short_ctx).total_s ==
        RooflineCostModel(deploy(without_window(m), 2)).estimate(short_ctx).total_s);
}

TEST_CASE("sliding window: a long prefill's sliding layers do q·W work", "[models][cost][swa]") {
  // In details: one 8,192-token prompt, ideal gpt-oss-120b TP2. Full layer: FLOPs =
  // 4·32·64·q²/2 = 2.7e11 → compute-bound (0.28 ms at 989 TFLOP/s against 25 µs of KV and Q/O
  // traffic (kv_tok·(0 + q + q) + qo·q) / bw); sliding layer: FLOPs = 4·32·64·(W²/2 + (q − W)·W)
  // = 8,192·1,040,384 = 8.5e9 (8.6 µs) → memory-bound on the same 25 µs of traffic.
  // Expectations: attention_s = 18·full + 18·max(those two), by hand.
  const ModelSpec m = gpt_oss();
  const double q = 8192, w = 128;
  const double kv_tok = 1024, qo_tok = 8192, per_work = 4.0 * 32 * 64;
  const hardware::GpuSpec g = testing::h100_sxm();
  const double full = std::max(per_work * q * q / 2 / g.bf16_flops,
                               (kv_tok * (q + q) + qo_tok * q) / g.hbm_bandwidth_bytes_per_s);
  const double work_w = w * w / 2 + (q - w) * w;
  CHECK(work_w == windowed_attn_work(0, q, w));
  const double sliding = std::max(per_work * work_w / g.bf16_flops,
                                  (kv_tok * (q + q) + qo_tok * q) / g.hbm_bandwidth_bytes_per_s);
  const BatchShape s = step({{0, 8192}}, 0, 0, 128);
  CHECK_THAT(IdealCostModel(deploy(m, 2)).estimate(s).attention_s,
             WithinRel(18 * full + 18 * sliding, 1e-12));
  // A later chunk (c = 8,192) reads min(c, W) = 128 cached tokens in its sliding layers.
  const BatchShape later = step({{8192, 2048}}, 0, 0, 128);
  CHECK(later.prefill_window_context_tokens == 128);
  CHECK(later.prefill_window_attn_work == 2048 * w);
}

TEST_CASE("sliding window: monotone, ideal below roofline, parts sum to the total",
          "[models][cost][swa]") {
  // Expectations: for gpt-oss-120b (TP 2 and 8, with serial overheads), raising any BatchShape
  // field keeps total_s the same or larger; so does adding context to a chunk (c → c + add,
  // through the replica's sums) or to every decoding sequence; the ideal model stays below the
  // roofline; the sliding model never costs more than the all-full one.
  const ModelSpec m = gpt_oss();
  for (int tp : {2, 8}) {
    Deployment d = deploy(m, tp);
    d.gpu.step_overhead_s = 1e-3;
    d.gpu.per_seq_overhead_s = 1e-5;
    const RooflineCostModel model(d);
    const IdealCostModel ideal(d);
    Deployment df = d;
    df.model = without_window(m);
    const RooflineCostModel full(df);
    for (const BatchShape& base : shape_grid(128)) {
      const StepCost c0 = model.estimate(base);
      const double t0 = c0.total_s;
      CHECK(t0 > 0);
      CHECK_THAT(
          c0.linear_s + c0.attention_s + c0.lm_head_s + c0.comm_s + c0.overhead_s + c0.host_s,
          WithinRel(t0, 1e-12));
      CHECK(ideal.estimate(base).total_s <= t0);
      CHECK(t0 <= full.estimate(base).total_s);
      // One field raised at a time.
      const std::function<void(BatchShape&, int64_t)> raise[] = {
          [](BatchShape& s, int64_t a) { s.prefill_window_attn_work += a * 100.0; },
          [](BatchShape& s, int64_t a) { s.prefill_window_context_tokens += a; },
          [](BatchShape& s, int64_t a) { s.prefill_attn_work += a * 1000.0; },
          [](BatchShape& s, int64_t a) { s.prefill_tokens += a; },
          [](BatchShape& s, int64_t a) { s.decode_seqs += a; },
          [](BatchShape& s, int64_t a) { s.decode_context_tokens += a; },
      };
      for (int64_t add : {1, 7, 100, 5000}) {
        for (const auto& f : raise) {
          BatchShape s = base;
          f(s, add);
          CHECK(model.estimate(s).total_s >= t0);
        }
      }
    }
    for (int64_t q : {1, 100, 2048}) {
      double prev = 0;
      for (int64_t c : {0, 27, 28, 100, 127, 128, 129, 1000, 30000}) {
        const double t = model.estimate(step({{c, q}}, 3, 50, 128)).total_s;
        CHECK(t >= prev);
        prev = t;
      }
    }
    double prev = 0;
    for (int64_t ctx : {1, 50, 127, 128, 129, 1000, 100000}) {
      const double t = model.estimate(step({}, 32, ctx, 128)).total_s;
      CHECK(t >= prev);
      prev = t;
    }
  }
}

TEST_CASE("sliding window: pipeline stages share the windowed attention", "[models][cost][swa]") {
  // Expectations: gpt-oss-120b TP2 PP2 (16 GPUs per node): the stages and hand-offs still add up
  // to estimate().total_s, and each stage of 18 layers carries half of the attention.
  Deployment d = deploy(gpt_oss(), 2);
  d.pipeline_parallel_size = 2;
  d.gpus_per_node = 16;
  const RooflineCostModel model(d);
  for (const BatchShape& s : {testing::decode(64, 4096), step({{1000, 2048}}, 10, 300, 128)}) {
    const PipelineStepTimes t = model.estimate_pipeline(s);
    double sum = t.overhead_s;
    for (double x : t.stage_s) sum += x;
    for (double x : t.hop_s) sum += x;
    CHECK_THAT(sum, WithinRel(model.estimate(s).total_s, 1e-12));
  }
}

TEST_CASE("sliding window: the measured prefill table takes the windowed work",
          "[models][cost][swa][kernels][realdata]") {
  // In details: with the H100 kernel table, causal prefill attention comes from the measured
  // curve at the equivalent length sqrt(2·work). Expectations: a window wider than the prompt
  // gives exactly the all-full cost; gpt-oss's window makes a long prompt's step cheaper, and
  // never more expensive than the all-full model.
  const std::string csv =
      std::string(SERVESIM_REALDATA_DIR) + "/gpu_kernels_h100_h200/kernels_h100.csv";
  KernelSource k;
  k.profile = std::make_shared<hardware::KernelProfile>(
      hardware::KernelProfile::from_rows(hardware::read_kernel_csv(csv), "h100-sxm"));
  k.measured_on = hardware::load_gpu("h100-sxm");
  k.path = csv;
  Deployment d = deploy(gpt_oss(), 2);
  d.gpu = hardware::load_gpu("h100-sxm");
  d.kernels = k;
  Deployment df = d;
  df.model = without_window(d.model);
  Deployment dw = d;
  dw.model.sliding_window = int64_t{1} << 20;
  const RooflineCostModel swa(d), full(df), wide(dw);
  REQUIRE(swa.kernel_source() != "roofline");
  for (int64_t q : {512, 2048, 8192}) {
    const BatchShape s = step({{0, q}}, 0, 0, 128);
    CHECK(swa.estimate(s).attention_s <= full.estimate(s).attention_s);
    const BatchShape sw = step({{0, q}}, 0, 0, dw.model.sliding_window);
    CHECK(wide.estimate(sw).total_s == full.estimate(sw).total_s);
  }
  const BatchShape big = step({{0, 8192}}, 0, 0, 128);
  CHECK(swa.estimate(big).attention_s < 0.7 * full.estimate(big).attention_s);
  // The decode series stays estimate() bit for bit with the table on (its prefill part is 0).
  for (int64_t rows : {1, 64, 300}) {
    const DecodeSeries ds = swa.decode_series(rows, nullptr);
    REQUIRE(ds.valid);
    for (int64_t ctx : {rows, rows * 128 - 1, rows * 128, rows * 128 + 1, rows * 5000}) {
      BatchShape shape;
      shape.decode_seqs = rows;
      shape.sampled_seqs = rows;
      shape.decode_context_tokens = ctx;
      CHECK(ds.total_s(ctx) == swa.estimate(shape).total_s);
    }
  }
}

}  // namespace
}  // namespace servesim::models
