#include "sim/metrics/result_writer.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "sim/base/error.h"
#include "tests/unit/metrics/metrics_fixture.h"

namespace servesim::metrics {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::WithinRel;
using testing::ms;
using testing::tiny_scenario;

std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

ResultContext context() {
  ResultContext ctx;
  ctx.date = "20250101-000000";
  ctx.model_id = "meta-llama/Llama-3.1-8B";
  ctx.num_prompts = 3;
  ctx.request_rate = "inf";
  ctx.max_concurrency = nullptr;
  ctx.servesim = {{"kv_blocks", 1234}, {"mean_batch_size", 2.5}};
  return ctx;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh empty directory for file tests.
fs::path scratch_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("servesim_metrics_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST_CASE("percentile_word spells P like vLLM's p_word", "[metrics]") {
  // Expectations: str(int(p)) if integral, else Python's str(float).
  CHECK(percentile_word(99) == "99");
  CHECK(percentile_word(50.0) == "50");
  CHECK(percentile_word(0) == "0");
  CHECK(percentile_word(100) == "100");
  CHECK(percentile_word(99.9) == "99.9");
  CHECK(percentile_word(12.5) == "12.5");
  CHECK(percentile_word(99.99) == "99.99");
  CHECK(percentile_word(0.0001) == "0.0001");
  CHECK(percentile_word(0.00001) == "1e-05");
  CHECK(percentile_word(100.0 / 3) == "33.333333333333336");
}

TEST_CASE("result JSON: vLLM's keys in vLLM's order", "[metrics]") {
  auto t = tiny_scenario();
  MetricsOptions o;
  // Given out of order: vLLM writes ttft, tpot, itl, e2el in that fixed order regardless.
  o.percentile_metrics = {"e2el", "ttft", "tpot", "itl"};
  o.metric_percentiles = {50, 99, 99.9};
  const auto m = compute_metrics(t.records, t.logs, o);
  auto ctx = context();

  const std::vector<std::string> head = {"date",
                                         "endpoint_type",
                                         "backend",
                                         "label",
                                         "model_id",
                                         "tokenizer_id",
                                         "num_prompts",
                                         "request_rate",
                                         "burstiness",
                                         "max_concurrency",
                                         "duration",
                                         "completed",
                                         "failed",
                                         "total_input_tokens",
                                         "total_output_tokens",
                                         "request_throughput",
                                         "request_goodput",
                                         "output_throughput",
                                         "total_token_throughput"};
  const std::vector<std::string> tail_before_metrics = {"max_output_tokens_per_s",
                                                        "max_concurrent_requests", "rtfx"};
  std::vector<std::string> metric_keys;
  for (const std::string k : {"ttft", "tpot", "itl", "e2el"}) {
    for (const std::string s : {"mean_", "median_", "std_", "p50_", "p99_", "p99.9_"}) {
      metric_keys.push_back(s + k + "_ms");
    }
  }

  SECTION(
      "without --save-detailed: no per-request arrays at all (servesim drops vLLM's "
      "latencies and queue_times too)") {
    const auto j = build_result_json(m, o, ctx, t.records, t.logs);
    std::vector<std::string> expected = head;
    expected.insert(expected.end(), tail_before_metrics.begin(), tail_before_metrics.end());
    expected.insert(expected.end(), metric_keys.begin(), metric_keys.end());
    expected.push_back("servesim");
    CHECK(keys_of(j) == expected);
  }
  SECTION("with --save-detailed: the per-request arrays, in vLLM's order") {
    ctx.save_detailed = true;
    const auto j = build_result_json(m, o, ctx, t.records, t.logs);
    std::vector<std::string> expected = head;
    expected.insert(expected.end(), {"input_lens", "output_lens", "ttfts", "itls", "latencies",
                                     "start_times", "queue_times", "generated_texts", "errors"});
    expected.insert(expected.end(), tail_before_metrics.begin(), tail_before_metrics.end());
    expected.insert(expected.end(), metric_keys.begin(), metric_keys.end());
    expected.push_back("servesim");
    CHECK(keys_of(j) == expected);
  }
  SECTION("client-queue metrics only with --max-concurrency (queue-inclusive E2EL: finite rate)") {
    o.percentile_metrics = {"ttft", "client_queue_time", "e2el_including_client_queue"};
    o.metric_percentiles = {99};
    const auto m2 = compute_metrics(t.records, t.logs, o);
    auto j = build_result_json(m2, o, ctx, t.records, t.logs);
    CHECK_FALSE(j.contains("mean_client_queue_time_ms"));
    ctx.max_concurrency = 4;
    j = build_result_json(m2, o, ctx, t.records, t.logs);
    CHECK(j.contains("p99_client_queue_time_ms"));
    CHECK_FALSE(j.contains("p99_e2el_including_client_queue_ms"));
    ctx.request_rate = 10;
    j = build_result_json(m2, o, ctx, t.records, t.logs);
    CHECK(j.contains("p99_e2el_including_client_queue_ms"));
    CHECK(j["max_concurrency"] == 4);
  }
}

TEST_CASE("result JSON: values and units", "[metrics]") {
  // Expectations: arrays in seconds, summaries in ms; request_goodput null without --goodput;
  // request_rate a float or "inf"; label null; tokenizer_id defaults to model_id.
  auto t = tiny_scenario();
  RequestRecord f;
  f.id = 3;
  f.arrival = testing::ms(200);
  f.prompt_tokens = 7;
  f.output_tokens = 4;
  f.failed = true;
  f.error = "prompt too long";
  t.records.push_back(f);
  MetricsOptions o;
  o.metric_percentiles = {99.9};
  const auto m = compute_metrics(t.records, t.logs, o);
  auto ctx = context();
  ctx.save_detailed = true;
  auto j = build_result_json(m, o, ctx, t.records, t.logs);

  CHECK(j["label"].is_null());
  CHECK(j["endpoint_type"] == "vllm");
  CHECK(j["tokenizer_id"] == "meta-llama/Llama-3.1-8B");
  CHECK(j["request_rate"] == "inf");
  CHECK(j["request_goodput"].is_null());
  CHECK(j["completed"] == 3);
  CHECK(j["failed"] == 1);
  CHECK(j["rtfx"] == 0.0);
  CHECK_THAT(j["duration"].get<double>(), WithinRel(0.33, 1e-12));
  CHECK_THAT(j["ttfts"][0].get<double>(), WithinRel(0.1, 1e-12));            // seconds
  CHECK(j["ttfts"][3] == 0.0);                                               // failed: vLLM default
  CHECK_THAT(j["mean_ttft_ms"].get<double>(), WithinRel(280.0 / 3, 1e-12));  // ms
  CHECK(j.contains("p99.9_ttft_ms"));
  CHECK(j.contains("p99.9_itl_ms"));
  CHECK_FALSE(j.contains("mean_e2el_ms"));  // not selected by default
  REQUIRE(j["itls"][1].size() == 2);
  CHECK_THAT(j["itls"][1][0].get<double>(), WithinRel(0.11, 1e-12));  // preemption gap
  CHECK_THAT(j["itls"][1][1].get<double>(), WithinRel(0.07, 1e-12));
  CHECK(j["itls"][2].empty());  // one output token
  CHECK(j["itls"][3].empty());  // failed
  CHECK_THAT(j["latencies"][1].get<double>(), WithinRel(0.28, 1e-12));
  CHECK_THAT(j["start_times"][1].get<double>(), WithinRel(0.05, 1e-12));
  CHECK(j["output_lens"] == nlohmann::ordered_json({4, 3, 1, 0}));
  CHECK(j["input_lens"] == nlohmann::ordered_json({10, 20, 30, 7}));
  CHECK(j["errors"] == nlohmann::ordered_json({"", "", "", "prompt too long"}));
  CHECK(j["servesim"]["kv_blocks"] == 1234);

  SECTION("finite request rate is written as a float; goodput as a number") {
    ctx.request_rate = 10;
    o.goodput_slo_ms = {{"ttft", 500}};
    const auto m2 = compute_metrics(t.records, t.logs, o);
    j = build_result_json(m2, o, ctx, t.records, t.logs);
    CHECK(j["request_rate"].is_number_float());
    CHECK(j.dump().find("\"request_rate\":10.0") != std::string::npos);
    CHECK_THAT(j["request_goodput"].get<double>(), WithinRel(3 / 0.33, 1e-12));
  }
  SECTION("warm-ups are left out of the arrays") {
    t.records[0].warmup = true;
    const auto m3 = compute_metrics(t.records, t.logs, o);
    j = build_result_json(m3, o, ctx, t.records, t.logs);
    CHECK(j["ttfts"].size() == 3);
    CHECK(j["latencies"].size() == 3);
  }
}

TEST_CASE("identical input gives byte-identical output", "[metrics]") {
  auto t = tiny_scenario();
  MetricsOptions o;
  o.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  o.metric_percentiles = {25, 50, 99, 99.9};
  auto ctx = context();
  ctx.save_detailed = true;
  const auto j1 =
      build_result_json(compute_metrics(t.records, t.logs, o), o, ctx, t.records, t.logs);
  const auto t2 = tiny_scenario();
  const auto j2 =
      build_result_json(compute_metrics(t2.records, t2.logs, o), o, ctx, t2.records, t2.logs);
  CHECK(j1.dump(2) == j2.dump(2));

  const auto dir = scratch_dir("bytes");
  write_json_atomically((dir / "a.json").string(), j1);
  write_json_atomically((dir / "b.json").string(), j2);
  const auto a = read_file(dir / "a.json");
  CHECK(a == read_file(dir / "b.json"));
  CHECK(a.rfind("{\n  \"date\": \"20250101-000000\",\n", 0) == 0);  // 2-space indent
  CHECK(a.back() == '\n');
  CHECK(nlohmann::ordered_json::parse(a) == j1);
  fs::remove_all(dir);
}

TEST_CASE("write_result_atomically streams the same bytes as the built JSON", "[metrics]") {
  // Success with one and two segments (a preemption gap), a single-token request (empty ITL
  // list), a failure with an error text (its arrays hold vLLM's defaults), a warm-up request
  // (left out), and with no measured request at all (every array "[]").
  auto t = tiny_scenario();
  RequestRecord single;
  single.id = 3;
  single.arrival = ms(60);
  single.prompt_tokens = 7;
  single.output_tokens = 1;
  single.completed = true;
  single.segments.push_back(TokenSegment{2, 2});
  single.first_token = single.last_token = t.logs[0].step_end[2];
  t.records.push_back(single);
  RequestRecord failed;
  failed.id = 4;
  failed.arrival = ms(70);
  failed.prompt_tokens = 9000;
  failed.output_tokens = 5;
  failed.failed = true;
  failed.error = "too long: \"quoted\" and non-ASCII \xc3\xa9";
  t.records.push_back(failed);
  t.records[0].warmup = true;
  MetricsOptions o;
  o.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  o.metric_percentiles = {50, 99};
  o.ttft_offset_s = 0.0125;
  const auto dir = scratch_dir("stream");
  for (const bool detailed : {true, false}) {
    for (const bool any_measured : {true, false}) {
      auto records = t.records;
      if (!any_measured) {
        for (auto& r : records) r.warmup = true;
      }
      auto ctx = context();
      ctx.save_detailed = detailed;
      const auto m = compute_metrics(records, t.logs, o);
      write_json_atomically((dir / "built.json").string(),
                            build_result_json(m, o, ctx, records, t.logs));
      write_result_atomically((dir / "streamed.json").string(), m, o, ctx, records, t.logs);
      const std::string built = read_file(dir / "built.json");
      CHECK(built == read_file(dir / "streamed.json"));
      CHECK((built.find("\"itls\": [") != std::string::npos) == detailed);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("write_json_atomically: all or nothing", "[metrics]") {
  const auto dir = scratch_dir("atomic");
  const nlohmann::ordered_json j = {{"x", 1}};

  SECTION("missing directory: ConfigError naming the path, nothing written") {
    const auto path = (dir / "no_such_dir" / "out.json").string();
    CHECK_THROWS_AS(write_json_atomically(path, j), ConfigError);
    CHECK_THROWS_WITH(write_json_atomically(path, j), Catch::Contains(path));
    CHECK(fs::is_empty(dir));
  }
  SECTION("target cannot be replaced: no file, no temp file left behind") {
    fs::create_directories(dir / "taken.json" / "sub");  // a non-empty directory in the way
    const auto path = (dir / "taken.json").string();
    CHECK_THROWS_AS(write_json_atomically(path, j), ConfigError);
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    CHECK(names == std::vector<std::string>{"taken.json"});
  }
  SECTION("success replaces an existing file and leaves no temp file") {
    const auto path = dir / "out.json";
    std::ofstream(path) << "old";
    write_json_atomically(path.string(), j);
    CHECK(read_file(path) == "{\n  \"x\": 1\n}\n");
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
    CHECK(files == 1);
  }
  fs::remove_all(dir);
}

TEST_CASE("summary table: vLLM's Serving Benchmark Result layout", "[metrics]") {
  // Expectations: the lines vLLM's benchmark() prints for the tiny scenario, with its
  // "{:<40} {:<10}" / "{:<40} {:<10.2f}" formats (trailing padding included).
  auto t = tiny_scenario();
  const MetricsOptions o;  // ttft, tpot, itl; p99
  const auto m = compute_metrics(t.records, t.logs, o);
  std::ostringstream os;
  print_summary_table(os, m, o);
  const std::string expected =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     3         \n"
      "Failed requests:                         0         \n"
      "Benchmark duration (s):                  0.33      \n"
      "Total input tokens:                      60        \n"
      "Total generated tokens:                  8         \n"
      "Request throughput (req/s):              9.09      \n"
      "Output token throughput (tok/s):         24.24     \n"
      "Peak output token throughput (tok/s):    8.00      \n"
      "Peak concurrent requests:                3.00      \n"
      "Total token throughput (tok/s):          206.06    \n"
      "---------------Time to First Token----------------\n"
      "Mean TTFT (ms):                          93.33     \n"
      "Median TTFT (ms):                        100.00    \n"
      "P99 TTFT (ms):                           100.00    \n"
      "-----Time per Output Token (excl. 1st token)------\n"
      "Mean TPOT (ms):                          71.67     \n"
      "Median TPOT (ms):                        71.67     \n"
      "P99 TPOT (ms):                           89.63     \n"
      "---------------Inter-token Latency----------------\n"
      "Mean ITL (ms):                           68.00     \n"
      "Median ITL (ms):                         60.00     \n"
      "P99 ITL (ms):                            108.40    \n"
      "==================================================\n";
  CHECK(os.str() == expected);

  SECTION("with context: concurrency, configured rate and goodput lines") {
    MetricsOptions g = o;
    g.goodput_slo_ms = {{"ttft", 90}};
    const auto mg = compute_metrics(t.records, t.logs, g);
    auto ctx = context();
    ctx.max_concurrency = 8;
    ctx.request_rate = 2.5;
    std::ostringstream os2;
    print_summary_table(os2, mg, g, ctx);
    const auto s = os2.str();
    CHECK(s.find("Failed requests:                         0         \n"
                 "Maximum request concurrency:             8         \n"
                 "Request rate configured (RPS):           2.50      \n"
                 "Benchmark duration (s):") != std::string::npos);
    CHECK(s.find("Request throughput (req/s):              9.09      \n"
                 "Request goodput (req/s):                 3.03      \n") != std::string::npos);
  }
}

}  // namespace
}  // namespace servesim::metrics
