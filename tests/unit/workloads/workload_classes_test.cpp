// Workload classes (workloads/workload_classes.h): the file format, its errors, and the class mix.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "workloads/workload.h"
#include "workloads/workload_classes.h"

namespace servesim::workloads {
namespace {

namespace fs = std::filesystem;

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path d = fs::temp_directory_path() / ("servesim_classes_" + std::to_string(::getpid()));
  fs::create_directories(d);
  const fs::path p = d / name;
  std::ofstream(p) << text;
  return p.string();
}

const char* kTwoClasses = R"({"classes": [
  {"name": "chat", "share": 0.7, "priority": 0,
   "prompt": {"dist": "lognormal", "mean": 800, "sigma": 0.8, "max": 8192},
   "output": {"dist": "fixed", "tokens": 200},
   "slo": ["p99_ttft_ms<=500"]},
  {"name": "rag", "share": 0.3, "priority": 1,
   "prompt": {"dist": "fixed", "tokens": 6000},
   "output": {"dist": "lognormal", "mean": 300, "sigma": 0.5}}]})";

std::string error_of(const std::string& text) {
  const std::string path = write_file("bad.json", text);
  try {
    load_workload_classes(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("workload file: parsed fields", "[workloads][classes]") {
  const WorkloadClasses w = load_workload_classes(write_file("two.json", kTwoClasses));
  REQUIRE(w.classes.size() == 2);
  CHECK(w.names() == std::vector<std::string>{"chat", "rag"});
  const WorkloadClass& chat = w.classes[0];
  CHECK(chat.share == 0.7);
  CHECK(chat.priority == 0);
  CHECK(chat.prompt.kind == LengthDistribution::Kind::kLognormal);
  CHECK(chat.prompt.mean == 800);
  CHECK(chat.prompt.max == 8192);
  CHECK(chat.prompt.min == 1);  // default
  CHECK(chat.output.kind == LengthDistribution::Kind::kFixed);
  CHECK(chat.output.tokens == 200);
  CHECK(chat.slo == std::vector<std::string>{"p99_ttft_ms<=500"});
  CHECK(w.classes[1].priority == 1);
  CHECK(w.classes[1].slo.empty());
}

TEST_CASE("workload file: errors name file, JSON path, value and what was expected",
          "[workloads][classes][errors]") {
  struct Case {
    std::string text;
    std::string path_and_value;  // what the message must contain
  };
  const std::vector<Case> cases = {
      {R"({"classes": []})", "classes: value []; expected a non-empty list"},
      {R"({"classez": []})", "classez: value []; expected one of the keys classes"},
      {R"({"classes": [{"name": "a", "share": 1.5, "prompt": {"dist": "fixed", "tokens": 1},
          "output": {"dist": "fixed", "tokens": 1}}]})",
       "classes[0].share: value 1.5; expected a fraction of the requests in (0, 1]"},
      {R"({"classes": [{"name": "a", "share": 0.5, "prompt": {"dist": "fixed", "tokens": 1},
          "output": {"dist": "fixed", "tokens": 1}}]})",
       "classes: value 0.5; expected shares that sum to 1"},
      {R"({"classes": [{"name": "a", "share": 1, "prompt": {"dist": "lognormal", "mean": -3},
          "output": {"dist": "fixed", "tokens": 1}}]})",
       "classes[0].prompt.mean: value -3; expected a mean length in tokens > 0"},
      {R"({"classes": [{"name": "a", "share": 1, "prompt": {"dist": "zipf", "mean": 3},
          "output": {"dist": "fixed", "tokens": 1}}]})",
       "classes[0].prompt.dist: value \"zipf\"; expected \"fixed\" or \"lognormal\""},
      {R"({"classes": [{"name": "a", "share": 1, "prompt": {"dist": "fixed", "tokens": 0},
          "output": {"dist": "fixed", "tokens": 1}}]})",
       "classes[0].prompt.tokens: value 0; expected an integer number of tokens >= 1"},
      {R"({"classes": [{"name": "a", "share": 1, "prompt": {"dist": "fixed", "tokens": 5}}]})",
       "classes[0].output: missing; expected a length distribution"},
      {R"({"classes": [{"name": "a b", "share": 1, "prompt": {"dist": "fixed", "tokens": 5},
          "output": {"dist": "fixed", "tokens": 1}}]})",
       "classes[0].name: value \"a b\"; expected a class name"},
      {R"({"classes": [{"name": "a", "share": 0.5, "prompt": {"dist": "fixed", "tokens": 5},
          "output": {"dist": "fixed", "tokens": 1}},
          {"name": "a", "share": 0.5, "prompt": {"dist": "fixed", "tokens": 5},
          "output": {"dist": "fixed", "tokens": 1}}]})",
       "classes[1].name: value \"a\"; expected a name no other class has"},
      {R"({"classes": [{"name": "a", "share": 1, "priority": 1.5,
          "prompt": {"dist": "fixed", "tokens": 5}, "output": {"dist": "fixed", "tokens": 1}}]})",
       "classes[0].priority: value 1.5; expected an integer"},
      {R"({"classes": [{"name": "a", "share": 1, "prompt": {"dist": "fixed", "tokens": 5},
          "output": {"dist": "fixed", "tokens": 1}, "slo": "p99_ttft_ms<=5"}]})",
       "classes[0].slo: value \"p99_ttft_ms<=5\"; expected a list of SLOs"},
      {R"({"classes": [{"name": "a", "share": 1,
          "lengths": {"dist": "empirical", "source": "trace", "path": "/nonexistent.csv",
                      "format": "azure"}}]})",
       "/nonexistent.csv"},
      {R"({"classes": [{"name": "a", "share": 1, "prompt": {"dist": "fixed", "tokens": 5},
          "output": {"dist": "lognormal", "mean": 5, "min": 10, "max": 3}}]})",
       "classes[0].output.max: value 3; expected an integer >= min (10)"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const std::string e = error_of(c.text);
    CHECK_THAT(e, Catch::Contains("bad.json"));
    CHECK_THAT(e, Catch::Contains(c.path_and_value));
  }
}

TEST_CASE("empirical lengths: \"sharegpt\" is the first-turn set, \"sharegpt-multiturn\" the other",
          "[workloads][classes]") {
  // Without a path, "sharegpt" reads the shipped first-turn set (3,200 measured requests) and
  // "sharegpt-multiturn" Sarathi's multi-turn set (30,731 rows), as --dataset-name does.
  const WorkloadClasses w = load_workload_classes(write_file("sg.json", R"({"classes": [
      {"name": "first", "share": 0.5, "lengths": {"dist": "empirical", "source": "sharegpt"}},
      {"name": "multi", "share": 0.5,
       "lengths": {"dist": "empirical", "source": "sharegpt-multiturn"}}]})"));
  REQUIRE(w.classes.size() == 2);
  CHECK(w.classes[0].empirical.size() == 3200);
  CHECK(w.classes[0].empirical_source == "data/sharegpt_first_turn/sharegpt_first_turn_llama3.csv");
  CHECK(w.classes[1].empirical.size() == 30731);
  CHECK(w.classes[1].empirical_source ==
        "data/realdata/sharegpt_lengths/sharegpt_8k_filtered_stats_llama2_tokenizer.csv");
  const std::string e = error_of(R"({"classes": [{"name": "a", "share": 1,
      "lengths": {"dist": "empirical", "source": "sharegpt-multiturn", "path": "x.csv"}}]})");
  CHECK_THAT(e, Catch::Contains("classes[0].lengths.path: value \"x.csv\"; expected no \"path\""));
}

TEST_CASE("class mix: shares within a binomial tolerance, lengths per class",
          "[workloads][classes]") {
  // In details: 20,000 requests of the two-class file (shares 0.7 / 0.3), seed 1.
  // Expectations: each class's count is Binomial(n = 20000, p); its standard deviation is
  // sqrt(n p (1 − p)) = sqrt(20000 · 0.21) = 64.8, and a draw lands within 5 standard deviations
  // (324 requests) with probability 1 − 5.7e-7 — a failure is a bug, not bad luck. The fixed
  // lengths are exact; the lognormal prompt's sample mean lies within 5 standard errors of its
  // mean (with max 8192 the clamp moves the mean by under 0.1%: P(X > 8192) for σ = 0.8 is 1.7e-3).
  const auto classes =
      std::make_shared<WorkloadClasses>(load_workload_classes(write_file("two.json", kTwoClasses)));
  const int64_t n = 20000;
  ClassMixDataset mix(classes, n, 1);
  int64_t count[2] = {0, 0};
  double sum = 0, sum2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const RequestSpec s = mix.next();
    REQUIRE((s.class_id == 0 || s.class_id == 1));
    ++count[s.class_id];
    if (s.class_id == 0) {
      CHECK(s.output_tokens == 200);
      CHECK(s.priority == 0);
      CHECK(s.prompt_tokens >= 1);
      CHECK(s.prompt_tokens <= 8192);
      sum += s.prompt_tokens;
      sum2 += double(s.prompt_tokens) * s.prompt_tokens;
    } else {
      CHECK(s.prompt_tokens == 6000);
      CHECK(s.priority == 1);
    }
  }
  const double sd = std::sqrt(n * 0.7 * 0.3);
  CHECK(std::fabs(double(count[0]) - 0.7 * n) <= 5 * sd);
  CHECK(std::fabs(double(count[1]) - 0.3 * n) <= 5 * sd);
  const double k = double(count[0]);
  const double mean = sum / k;
  const double var = sum2 / k - mean * mean;
  CHECK(std::fabs(mean - 800) <= 5 * std::sqrt(var / k));

  SECTION("deterministic per seed") {
    ClassMixDataset a(classes, 50, 7), b(classes, 50, 7);
    for (int i = 0; i < 50; ++i) {
      const RequestSpec x = a.next(), y = b.next();
      CHECK(x.class_id == y.class_id);
      CHECK(x.prompt_tokens == y.prompt_tokens);
      CHECK(x.output_tokens == y.output_tokens);
    }
  }
}

TEST_CASE("lognormal lengths: mean, clamp and rounding", "[workloads][classes]") {
  // Expectations: with σ = 0 every draw is round(mean); min and max bound every draw.
  LengthDistribution d;
  d.kind = LengthDistribution::Kind::kLognormal;
  d.mean = 123.4;
  d.sigma = 0;
  RngStream rng(1, "t");
  CHECK(d.sample(rng) == 123);
  d.sigma = 3;
  d.min = 50;
  d.max = 60;
  for (int i = 0; i < 1000; ++i) {
    const int32_t x = d.sample(rng);
    CHECK(x >= 50);
    CHECK(x <= 60);
  }
}

TEST_CASE("workload config: --workload with a trace or another dataset is refused",
          "[workloads][classes][errors]") {
  WorkloadConfig c;
  c.workload_file = write_file("two.json", kTwoClasses);
  c.dataset_name = "sharegpt";
  CHECK_THROWS_WITH(validate(c), Catch::Contains("--workload: set with --dataset-name sharegpt"));
  c.dataset_name = "random";
  CHECK_NOTHROW(validate(c));
  const auto w = make_workload(c);
  CHECK(w->class_names() == std::vector<std::string>{"chat", "rag"});
  CHECK(w->size() == c.num_prompts);
}

}  // namespace
}  // namespace servesim::workloads
