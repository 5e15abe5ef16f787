// SLO expressions in vLLM's sweep notation (sim/planning/slo.h).
#include <catch2/catch.hpp>

#include "sim/base/error.h"
#include "sim/planning/slo.h"

namespace servesim::planning {
namespace {

TEST_CASE("SLOs parse in vLLM sweep notation with result-file names", "[planning][slo]") {
  Slo s = parse_slo("p99_ttft_ms<=500");
  REQUIRE(s.key == "p99_ttft_ms");
  REQUIRE(s.op == SloOp::kLe);
  REQUIRE(s.threshold == 500);
  REQUIRE(s.text() == "p99_ttft_ms<=500");
  REQUIRE(s.holds(500));
  REQUIRE_FALSE(s.holds(500.001));

  REQUIRE(parse_slo("mean_tpot_ms < 20").op == SloOp::kLt);
  REQUIRE_FALSE(parse_slo("mean_tpot_ms<20").holds(20));
  REQUIRE(parse_slo("request_throughput>=10").op == SloOp::kGe);
  REQUIRE(parse_slo("request_throughput>=10").holds(10));
  REQUIRE(parse_slo("output_throughput>1000").op == SloOp::kGt);
  REQUIRE(parse_slo("p99.9_e2el_ms<=8000").key == "p99.9_e2el_ms");
  REQUIRE(parse_slo("median_itl_ms<=30").key == "median_itl_ms");
  REQUIRE(parse_slo("std_ttft_ms<=100").threshold == 100);
  REQUIRE(parse_slo("request_goodput:>=5").key == "request_goodput");
  REQUIRE(parse_slo("p50_ttft_ms<=0.5").text() == "p50_ttft_ms<=0.5");

  // Violation: relative distance past the threshold, > 0 when violated.
  REQUIRE(s.violation(600) == Approx(0.2));
  REQUIRE(s.violation(400) == Approx(-0.2));
  REQUIRE(parse_slo("request_throughput>=10").violation(8) == Approx(0.2));
}

TEST_CASE("bad SLO expressions are ConfigErrors naming --slo and the text", "[planning][slo]") {
  auto message = [](const std::string& text) {
    try {
      parse_slo(text);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::string bad :
       {"p99_ttft_ms", "p99_ttft_ms=500", "p99_ttft_ms<=", "<=500", "p99_ttft_ms<=abc",
        "p99_ttft_ms<=5 00", "p99_ttft_ms<=inf", "p99_ttft<=500", "p101_ttft_ms<=5",
        "p99_latency_ms<=5", "px_ttft_ms<=5", "throughput>=3", "mean_ttft_s<=1"}) {
    INFO(bad);
    const std::string m = message(bad);
    REQUIRE(m.rfind("--slo: '" + bad + "'", 0) == 0);
  }
  REQUIRE(message("p99_ttft<=500").find("unknown metric 'p99_ttft'") != std::string::npos);
  REQUIRE(message("p99_ttft_ms<=abc").find("threshold") != std::string::npos);
  REQUIRE(message("p99_ttft_ms").find("expected METRIC<=VALUE") != std::string::npos);
}

TEST_CASE("metric values come from BenchmarkMetrics by result-file name", "[planning][slo]") {
  metrics::BenchmarkMetrics m;
  m.completed = 10;
  m.request_throughput = 4.5;
  m.output_throughput = 900;
  metrics::MetricSummary ttft;
  ttft.mean_ms = 120;
  ttft.median_ms = 100;
  ttft.std_ms = 30;
  ttft.percentiles_ms = {{50, 100}, {99, 410}, {99.9, 480}};
  m.summaries["ttft"] = ttft;
  REQUIRE(metric_value(m, "mean_ttft_ms") == 120);
  REQUIRE(metric_value(m, "median_ttft_ms") == 100);
  REQUIRE(metric_value(m, "std_ttft_ms") == 30);
  REQUIRE(metric_value(m, "p99_ttft_ms") == 410);
  REQUIRE(metric_value(m, "p99.9_ttft_ms") == 480);
  REQUIRE(metric_value(m, "request_throughput") == 4.5);
  REQUIRE(metric_value(m, "output_throughput") == 900);
  REQUIRE_FALSE(metric_value(m, "p90_ttft_ms").has_value());      // not computed
  REQUIRE_FALSE(metric_value(m, "p99_tpot_ms").has_value());      // no summary
  REQUIRE_FALSE(metric_value(m, "request_goodput").has_value());  // not asked for
  m.completed = 0;
  REQUIRE_FALSE(metric_value(m, "mean_ttft_ms").has_value());

  // require_slo_metrics adds the percentiles the SLOs name; goodput takes the tightest upper
  // bound per metric (vLLM's --goodput keys ttft, tpot, e2el; itl has none).
  metrics::MetricsOptions o;
  const auto slos = parse_slos({"p90_ttft_ms<=300", "p99.9_tpot_ms<=60", "p99_ttft_ms<=500",
                                "mean_ttft_ms<=200", "p99_itl_ms<=80", "request_throughput>=1"});
  require_slo_metrics(o, slos);
  REQUIRE(o.metric_percentiles == std::vector<double>{99, 90, 99.9});
  REQUIRE(o.percentile_metrics == std::vector<std::string>{"ttft", "tpot", "itl", "e2el"});
  const auto goodput = goodput_from_slos(slos);
  REQUIRE(goodput.size() == 2);
  REQUIRE(goodput.at("ttft") == 200);
  REQUIRE(goodput.at("tpot") == 60);
  REQUIRE(slos_text({slos[0], slos[5]}) == "p90_ttft_ms<=300, request_throughput>=1");

  // leave_out_unread_metrics: ITL and the two peaks only when an SLO (a class's too) names them.
  metrics::MetricsOptions none;
  leave_out_unread_metrics(none, parse_slos({"p99_ttft_ms<=500", "p99_tpot_ms<=50"}));
  CHECK_FALSE(none.compute_itl);
  CHECK_FALSE(none.compute_max_output_tokens_per_s);
  CHECK_FALSE(none.compute_max_concurrent_requests);
  metrics::MetricsOptions named;
  leave_out_unread_metrics(named, parse_slos({"chat/mean_itl_ms<=30", "max_output_tokens_per_s>=10",
                                              "max_concurrent_requests<=64"}));
  CHECK(named.compute_itl);
  CHECK(named.compute_max_output_tokens_per_s);
  CHECK(named.compute_max_concurrent_requests);
}

}  // namespace
}  // namespace servesim::planning
