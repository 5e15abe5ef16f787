// Fidelity tests: the simulator against closed forms computed from the cost model itself.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "hardware/gpu_spec.h"
#include "models/model_spec.h"
#include "sim/base/error.h"
#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

SimTime step(const models::CostModel& cost, const models::BatchShape& s) {
  return SimTime::from_seconds_ceil(cost.estimate(s).total_s);
}

TEST_CASE("one request on an idle replica finishes at the sum of its roofline step times",
          "[fidelity]") {
  // In details: request of P = 1024 prompt tokens and O = 64 output tokens alone on an H100.
  // Step 0 prefills P tokens (attention work P·P/2) and samples token 1; decode step j (1..O-1)
  // computes one token attending to P + j - 1 cached tokens.
  // Expectations: TTFT = t(prefill), E2E = t(prefill) + Σ_j t(decode_j), to the nanosecond.
  SimulationConfig c;
  c.workload.num_prompts = 1;
  c.workload.random_input_len = 1024;
  c.workload.random_output_len = 64;
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  const auto& rec = r.records[0];

  models::BatchShape prefill;
  prefill.prefill_seqs = 1;
  prefill.prefill_tokens = 1024;
  prefill.prefill_attn_work = 1024.0 * (0 + 1024.0 / 2);
  prefill.sampled_seqs = 1;
  SimTime expected = rec.arrival + step(*p.cost, prefill);
  REQUIRE(rec.first_token == expected);
  for (int j = 1; j < 64; ++j) {
    models::BatchShape d;
    d.decode_seqs = 1;
    d.decode_context_tokens = 1024 + j - 1;
    d.sampled_seqs = 1;
    expected += step(*p.cost, d);
  }
  REQUIRE(rec.last_token == expected);
}

TEST_CASE("a decode step at batch 1 is never faster than reading the weights", "[fidelity]") {
  // Expectations: t(decode, batch 1) >= weight bytes per GPU / HBM bandwidth, for every model in
  // the catalog on every GPU it fits on with TP 1 or the smallest TP that fits, and also for the
  // ideal (100%) variant.
  int checked = 0;
  for (const std::string& model : models::model_catalog_names()) {
    for (const std::string gpu : {"h100-sxm", "a100-80gb", "l40s", "mi300x"}) {
      for (int tp : {1, 2, 4, 8}) {
        SimulationConfig c;
        c.model = model;
        c.gpu = gpu;
        c.tensor_parallel_size = tp;
        c.engine.max_model_len = 4096;
        PreparedDeployment p;
        try {
          p = prepare_deployment(c);
        } catch (const ConfigError&) {
          continue;  // does not fit, or TP does not divide the heads
        }
        models::BatchShape d;
        d.decode_seqs = 1;
        d.decode_context_tokens = 1;
        d.sampled_seqs = 1;
        // Bytes a decode step must stream: every weight but the input embedding table (a lookup
        // reads one row); an untied LM head is read in full. Norm weights (< 0.1% of the
        // parameters) may be left out of the cost model, hence the 0.999. An MoE token reads its
        // top-k experts only: E·(1 − (1 − k/E)^1) = k. A multimodal checkpoint's vision encoder
        // (Gemma-3) does not run for text: active_param_count() leaves it out.
        const models::ModelSpec& m = p.deployment.model;
        const double unread = m.tie_word_embeddings ? 0.0 : double(m.vocab_size * m.hidden_size);
        const double params = m.active_param_count();
        // MXFP4 (gpt-oss): the top-k routed experts' weights at 0.53125 bytes, the rest at w.
        const double moe_i =
            double(m.moe_intermediate_size > 0 ? m.moe_intermediate_size : m.intermediate_size);
        const double routed = m.is_moe() ? double(m.num_layers * m.experts_per_token) * 3.0 *
                                               double(m.hidden_size) * moe_i
                                         : 0.0;
        const double bytes = ((params - unread - routed) * p.deployment.weight_bytes_per_param() +
                              routed * p.deployment.expert_weight_bytes_per_param()) /
                             tp;
        const double bound = 0.999 * bytes / p.deployment.gpu.hbm_bandwidth_bytes_per_s;
        INFO(model << " on " << gpu << " tp " << tp);
        REQUIRE(p.ideal_cost->estimate(d).total_s >= bound);
        REQUIRE(p.cost->estimate(d).total_s >= p.ideal_cost->estimate(d).total_s);
        ++checked;
        break;  // smallest TP that fits
      }
    }
  }
  REQUIRE(checked >= 30);
}

// Mean TTFT of a run with batching disabled (max_num_seqs 1): a single server. A request of
// prompt P and output O is served in one prefill step A(P) and O − 1 decode steps B(P).
struct QueueRun {
  double mean_ttft_s;
  double mean_s;        // E[S], S = service time
  double mean_s2;       // E[S²]
  double mean_prefill;  // E[A]: TTFT = wait + A
};
QueueRun run_single_server(double utilisation, double range_ratio, int64_t n) {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.engine.max_num_seqs = 1;
  c.engine.enable_prefix_caching = false;
  // Synchronous scheduling: with async scheduling a finished request keeps its one seat for one
  // more step (its output placeholder), so the service time would be that step longer.
  c.engine.async_scheduling = 0;
  c.workload.random_input_len = 1024;
  c.workload.random_output_len = 1;
  c.workload.random_range_ratio = range_ratio;
  c.workload.num_prompts = n;
  c.workload.seed = 11;
  PreparedDeployment p = prepare_deployment(c);
  // P is uniform on vLLM's integer range [floor(1024(1-r)), ceil(1024(1+r))]; O likewise on
  // [max(1, floor(1-r)), ceil(1+r)]: {1} at r = 0, {1, 2} at r = 0.5 (one decode step half the
  // time). S = A(P) + (O − 1)·B(P) with O independent of P.
  const int lo = static_cast<int>(std::floor(1024 * (1 - range_ratio)));
  const int hi = static_cast<int>(std::ceil(1024 * (1 + range_ratio)));
  const double p_decode = range_ratio > 0 ? 0.5 : 0.0;  // P(O = 2)
  double es = 0, es2 = 0, ea = 0;
  for (int len = lo; len <= hi; ++len) {
    models::BatchShape s;
    s.prefill_seqs = 1;
    s.prefill_tokens = len;
    s.prefill_attn_work = len * (len / 2.0);
    s.sampled_seqs = 1;
    const double a = step(*p.cost, s).seconds();
    models::BatchShape d;
    d.decode_seqs = 1;
    d.decode_context_tokens = len;
    d.sampled_seqs = 1;
    const double b = step(*p.cost, d).seconds();
    ea += a;
    es += a + p_decode * b;
    es2 += (1 - p_decode) * a * a + p_decode * (a + b) * (a + b);
  }
  const double count = hi - lo + 1;
  es /= count;
  es2 /= count;
  ea /= count;
  c.workload.request_rate = utilisation / es;
  const SimulationResult r = run_simulation(c, p);
  double sum = 0;
  for (const auto& rec : r.records) sum += (rec.first_token - rec.arrival).seconds();
  return {sum / static_cast<double>(n), es, es2, ea};
}

TEST_CASE("batching disabled: M/D/1 and M/G/1 waiting times (Pollaczek-Khinchine)",
          "[fidelity][slow]") {
  // In details: max_num_seqs = 1 and one output token make the replica a single server whose
  // service time is one prefill step S(P). With Poisson arrivals at rate λ, the P-K formula gives
  // the mean wait W = λ·E[S²] / (2(1 − ρ)), ρ = λ·E[S]; mean TTFT = W + E[A] (the prefill).
  // Tolerances: 200k requests; the sample mean of an M/G/1 wait at ρ = 0.5 has a relative
  // standard error below 1%, at ρ = 0.7 below 2% (batch-means estimates on this run length), so
  // 3% and 6% are 3-sigma bounds.
  for (auto [rho, ratio, tol] :
       {std::tuple{0.5, 0.0, 0.03}, std::tuple{0.7, 0.0, 0.06}, std::tuple{0.5, 0.5, 0.03}}) {
    const QueueRun q = run_single_server(rho, ratio, 200000);
    const double lambda = rho / q.mean_s;
    const double wait = lambda * q.mean_s2 / (2 * (1 - rho));
    INFO("rho " << rho << " range ratio " << ratio << " E[S] " << q.mean_s);
    REQUIRE(q.mean_ttft_s == Approx(wait + q.mean_prefill).epsilon(tol));
  }
}

}  // namespace
}  // namespace servesim::sim
