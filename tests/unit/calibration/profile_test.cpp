// Calibration profiles: the term table, the JSON round trip, refusals by name, the shipped
// profiles, and the basis (calibrated / transferred / datasheet-only) of a prediction.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "sim/base/error.h"
#include "sim/calibration/calibration_terms.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/calibration/profile.h"
#include "tests/test_paths.h"

namespace servesim::calibration {
namespace {

TEST_CASE("the term table lists every CalibrationTerms member once, with a valid range",
          "[calibration]") {
  std::set<std::string_view> names;
  for (const TermField& f : term_fields()) {
    INFO(f.name);
    CHECK(names.insert(f.name).second);
    CHECK(find_term(f.name) == &f);
    CHECK(term_name(f.member) == f.name);
    CHECK(f.lo < f.hi);
    if (f.fit) {
      // The fit's range lies inside the accepted one, and starts inside it.
      CHECK(f.fit->scale > 0);
      CHECK((f.lo <= f.fit->lo && f.fit->hi <= f.hi));
      CHECK((f.fit->lo <= f.fit->start && f.fit->start <= f.fit->hi));
    }
  }
  // Distinct members: setting one term through the table sets exactly one.
  for (const TermField& f : term_fields()) {
    CalibrationTerms t;
    t.*f.member = FittedValue{1, 0};
    int set = 0;
    for (const TermField& g : term_fields()) set += (t.*g.member).has_value();
    CHECK(set == 1);
  }
  CHECK(term_fields().size() == 18);
  CHECK(find_term("step_overhead") == nullptr);
  // A misspelt term in code (`terms.step_overhead`) does not compile: terms are members.
}

TEST_CASE("write then read is the identity for every term", "[calibration]") {
  // Each term at both ends of its range and in the middle, with a standard error; also all
  // terms at once.
  Calibration all;
  all.gpu = "h100-sxm";
  for (const TermField& f : term_fields()) {
    for (double v : {f.lo, 0.5 * (f.lo + f.hi), f.hi}) {
      Calibration c;
      c.terms.*f.member = FittedValue{v, 0.25 * v};
      const Calibration back = calibration_from_json(nlohmann::json::parse(to_json(c).dump()), "m");
      INFO(f.name << " = " << v);
      for (const TermField& g : term_fields()) {
        const auto& in = c.terms.*g.member;
        const auto& out = back.terms.*g.member;
        REQUIRE(in.has_value() == out.has_value());
        if (in) {
          CHECK(out->value == in->value);  // exact: JSON doubles round-trip (shortest repr)
          CHECK(out->std_error == in->std_error);
        }
      }
    }
    all.terms.*f.member = FittedValue{f.hi, 0};
  }
  const auto j = to_json(all);
  CHECK(j.at("parameters").size() == term_fields().size());
  CHECK(to_json(calibration_from_json(nlohmann::json::parse(j.dump()), "m")).dump() == j.dump());
}

TEST_CASE("a term outside its range is refused with the file, key and range", "[calibration]") {
  for (const TermField& f : term_fields()) {
    nlohmann::json j = {{"servesim_calibration", 1},
                        {"parameters", {{std::string(f.name), {{"value", f.hi * 2 + 1}}}}}};
    INFO(f.name);
    CHECK_THROWS_WITH(calibration_from_json(j, "p.json"),
                      Catch::StartsWith("p.json: parameters." + std::string(f.name) + " = ") &&
                          Catch::Contains("is outside ["));
  }
}

TEST_CASE("a calibration profile round-trips through JSON", "[calibration]") {
  Calibration c;
  c.gpu = "h100-sxm";
  c.description = "test";
  c.terms.compute_efficiency = FittedValue{0.75, 0.01};
  c.terms.step_overhead_s = FittedValue{2e-4, 1e-5};
  c.fit_set = {"a.json", "b.json"};
  c.residuals = nlohmann::json::array({{{"run", "a.json"}, {"error", 0.01}}});
  const auto j = to_json(c);
  const Calibration back = calibration_from_json(nlohmann::json::parse(j.dump()), "mem");
  REQUIRE(back.gpu == c.gpu);
  REQUIRE(back.terms.compute_efficiency->value == 0.75);
  REQUIRE(back.terms.step_overhead_s->std_error == 1e-5);
  REQUIRE(!back.terms.memory_efficiency);
  REQUIRE(back.fit_set == c.fit_set);
  REQUIRE(to_json(back).dump() == j.dump());
}

TEST_CASE("bad calibration files are rejected with the field named", "[calibration]") {
  REQUIRE_THROWS_WITH(calibration_from_json(nlohmann::json::parse(R"({"gpu": "x"})"), "f.json"),
                      Catch::Contains("not a servesim calibration"));
  REQUIRE_THROWS_WITH(
      calibration_from_json(
          nlohmann::json::parse(R"({"servesim_calibration": 1, "parameters": {"speed": 1}})"),
          "f.json"),
      Catch::Contains("f.json: unknown parameter 'speed' in 'parameters'; expected some of "
                      "compute_efficiency, memory_efficiency,"));
  REQUIRE_THROWS_WITH(calibration_from_json(nlohmann::json::parse(
                                                R"({"servesim_calibration": 1,
                                    "parameters": {"compute_efficiency": {"value": 1.5}}})"),
                                            "f.json"),
                      Catch::Contains("compute_efficiency"));
}

TEST_CASE(
    "calibration profiles carry a format_version, and another version or no parameters is "
    "refused by name",
    "[calibration]") {
  const std::string params = R"("parameters": {"step_overhead_s": {"value": 1e-4}})";
  // Written since the field exists: format_version 1, read back as version 1.
  Calibration c;
  c.terms.step_overhead_s = FittedValue{1e-4, 0};
  const auto j = to_json(c);
  REQUIRE(j.at("format_version") == kCalibrationFormatVersion);
  REQUIRE(kCalibrationFormatVersion == 1);
  REQUIRE(calibration_from_json(nlohmann::json::parse(j.dump()), "f.json").terms.step_overhead_s);
  // Written before it: only the marker "servesim_calibration": 1, version 1.
  CHECK(calibration_from_json(
            nlohmann::json::parse(R"({"servesim_calibration": 1, )" + params + "}"), "old.json")
            .terms.step_overhead_s->value == 1e-4);
  CHECK_THROWS_WITH(calibration_from_json(
                        nlohmann::json::parse(
                            R"({"servesim_calibration": 1, "format_version": 2, )" + params + "}"),
                        "f.json"),
                    Catch::StartsWith("f.json: field 'format_version' has value 2; expected 1"));
  CHECK_THROWS_WITH(
      calibration_from_json(
          nlohmann::json::parse(R"({"servesim_calibration": 1, "format_version": "1", )" + params +
                                "}"),
          "f.json"),
      Catch::Contains("field 'format_version' has value \"1\""));
  CHECK_THROWS_WITH(
      calibration_from_json(nlohmann::json::parse(R"({"servesim_calibration": 2, )" + params + "}"),
                            "f.json"),
      Catch::Contains("field 'servesim_calibration' has value 2"));
  CHECK_THROWS_WITH(
      calibration_from_json(nlohmann::json::parse(R"({"servesim_calibration": 1})"), "f.json"),
      Catch::Contains("f.json: no fitted 'parameters'"));
  CHECK_THROWS_WITH(
      calibration_from_json(
          nlohmann::json::parse(R"({"servesim_calibration": 1, "parameters": {}})"), "f.json"),
      Catch::Contains("no fitted 'parameters'"));
  CHECK_THROWS_WITH(
      calibration_from_json(
          nlohmann::json::parse(R"({"servesim_calibration": 1, "parameters": [1]})"), "f.json"),
      Catch::Contains("no fitted 'parameters'"));
}

TEST_CASE("every shipped profile and kernel table is format version 1 and loads", "[calibration]") {
  // They were written before format_version existed: read as version 1, not regenerated.
  int n = 0;
  for (const char* folder : {"hardware/calibration", "hardware/kernels"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(
             std::filesystem::path(SERVESIM_TEST_DATA_DIR).parent_path().parent_path() / folder)) {
      if (e.path().extension() != ".json") continue;
      INFO(e.path());
      CHECK_NOTHROW(load_calibration(e.path().string()));
      ++n;
    }
  }
  CHECK(n >= 11);
}

TEST_CASE("a prediction is calibrated inside the profile's domain, transferred outside it",
          "[calibration]") {
  Calibration c;
  c.gpu = "h100-sxm";
  c.terms.step_overhead_s = FittedValue{1e-3, 0};
  c.domain.models = {"llama-3.1-70b-fp8"};
  c.domain.tensor_parallel_sizes = {2, 4};
  c.domain.pipeline_parallel_sizes = {1};
  c.domain.engine_versions = {"0.11.0"};
  c.domain.dtypes = {"fp8"};
  c.domain.max_concurrency = 64;
  c.domain.max_request_rate = 8;
  PredictionQuery q;
  q.gpu = "h100-sxm";
  q.model = "llama-3.1-70b-fp8";
  q.tensor_parallel_size = 4;
  q.dtype = "fp8";
  q.engine_version = "0.11.0";
  q.max_concurrency = 64;  // the boundary: the highest fitted concurrency is inside
  CHECK(classify_prediction(&c, "p.json", q).label == "calibrated");
  CHECK(classify_prediction(nullptr, "", q).label == "datasheet-only");

  auto outside = [&](PredictionQuery changed, const std::string& what) {
    const PredictionBasis b = classify_prediction(&c, "p.json", changed);
    INFO(b.reason);
    CHECK(b.label == "transferred");
    CHECK(b.reason.find(what) != std::string::npos);
  };
  PredictionQuery m = q;
  m.model = "llama-3.1-8b";
  outside(m, "model llama-3.1-8b");
  PredictionQuery t = q;
  t.tensor_parallel_size = 8;
  outside(t, "TP 8");
  PredictionQuery v = q;
  v.engine_version = "0.15.0";
  outside(v, "vLLM 0.15.0");
  PredictionQuery d = q;
  d.dtype = "bf16";
  outside(d, "weights bf16");
  PredictionQuery n = q;
  n.max_concurrency = 65;  // one above the fitted range
  outside(n, "concurrency 65 > 64");
  PredictionQuery r = q;
  r.max_concurrency = 0;
  r.request_rate = 8;  // at the highest fitted rate: inside
  CHECK(classify_prediction(&c, "p.json", r).label == "calibrated");
  r.request_rate = 8.5;
  outside(r, "rate 8.5 req/s > 8");
  // A profile fitted on closed-loop runs alone has no fitted rate: any open loop lies outside it.
  Calibration closed = c;
  closed.domain.max_request_rate = 0;
  r.request_rate = 3.554036;
  const PredictionBasis open_loop = classify_prediction(&closed, "p.json", r);
  CHECK(open_loop.label == "transferred");
  CHECK_THAT(open_loop.reason,
             Catch::Contains("an open loop at 3.554 req/s (fitted on closed-loop runs only)"));
  r.request_rate = std::numeric_limits<double>::infinity();  // a burst, no client cap
  CHECK_THAT(classify_prediction(&closed, "p.json", r).reason,
             Catch::Contains("all requests at once (fitted on closed-loop runs only)"));
  CHECK_THAT(classify_prediction(&c, "p.json", r).reason,
             Catch::Contains("all requests at once (fitted rates up to 8 req/s)"));
  // And the other way: fitted on bounded open-loop rates only, a closed loop lies outside; a
  // fitted burst covers it.
  Calibration open = c;
  open.domain.max_concurrency = 0;
  PredictionQuery cl = q;
  cl.max_concurrency = 16;
  CHECK_THAT(classify_prediction(&open, "p.json", cl).reason,
             Catch::Contains("a closed loop at concurrency 16 (fitted on open-loop runs only)"));
  open.domain.has_unbounded_load = true;
  CHECK(classify_prediction(&open, "p.json", cl).label == "calibrated");
  PredictionQuery g = q;
  g.gpu = "h200";  // a sibling GPU's profile
  outside(g, "fitted on h100-sxm, applied to h200");
  // An unstated engine version is not held against the profile.
  PredictionQuery u = q;
  u.engine_version = "";
  CHECK(classify_prediction(&c, "p.json", u).label == "calibrated");
  // A profile without a domain (kernel terms only) never calibrates a serving prediction.
  Calibration k;
  k.gpu = "h100-sxm";
  k.terms.compute_efficiency = FittedValue{0.75, 0};
  CHECK(classify_prediction(&k, "k.json", q).label == "transferred");
  // A profile fitted on offline batches only (LLM.generate) calibrates offline runs, not an
  // online server: those add a client and an API server it never saw.
  Calibration off = c;
  off.domain.offline_only = true;
  PredictionQuery offline_q = q;
  offline_q.offline = true;
  CHECK(classify_prediction(&off, "o.json", offline_q).label == "calibrated");
  const PredictionBasis online = classify_prediction(&off, "o.json", q);
  CHECK(online.label == "transferred");
  CHECK(online.reason.find("an online server") != std::string::npos);
}

// A serving profile of `gpu` fitted on model "a" at TP 1 (bf16, any load), and a query for it:
// the starting point the domain tests below change one field of.
Calibration model_a_profile(const std::string& gpu) {
  Calibration c;
  c.gpu = gpu;
  c.terms.step_overhead_s = FittedValue{1e-3, 0};
  c.domain.models = {"a"};
  c.domain.tensor_parallel_sizes = {1};
  c.domain.pipeline_parallel_sizes = {1};
  c.domain.dtypes = {"bf16"};
  c.domain.has_unbounded_load = true;
  return c;
}

PredictionQuery model_a_query(const std::string& gpu) {
  PredictionQuery q;
  q.gpu = gpu;
  q.model = "a";
  return q;
}

// A domain list recorded since 2026-11-26 (`list`, JSON key `key`) of profile `c`: it survives a
// JSON round trip, is not written when empty, and a profile without it (an older one) labels `q`
// — outside that list only — calibrated: the list is then not checked.
void check_optional_domain_list(const Calibration& c,
                                std::vector<std::string> CalibrationDomain::*list, const char* key,
                                const PredictionQuery& q) {
  Calibration old = c;
  (old.domain.*list).clear();
  CHECK(classify_prediction(&old, "p.json", q).label == "calibrated");
  CHECK(calibration_from_json(to_json(c), "test").domain.*list == c.domain.*list);
  CHECK_FALSE(to_json(old)["domain"].contains(key));
}

TEST_CASE("a profile that records its fitted deployments calibrates only those combinations",
          "[calibration]") {
  // Fitted: model a at TP 4, model b at TP 2. Every field of "a at TP 2" lies in the field-wise
  // lists, but no run had that combination: transferred, naming it. A profile without the list
  // (written before 2026-11-26) keeps the field-wise answer.
  Calibration c = model_a_profile("a100-40gb");
  c.domain.models = {"a", "b"};
  c.domain.tensor_parallel_sizes = {2, 4};
  c.domain.deployments = {deployment_key("a", 4, 1, "bf16"), deployment_key("b", 2, 1, "bf16")};
  CHECK(c.domain.deployments[0] == "a TP 4 PP 1 bf16");
  PredictionQuery q = model_a_query("a100-40gb");
  q.tensor_parallel_size = 4;
  CHECK(classify_prediction(&c, "p.json", q).label == "calibrated");
  q.tensor_parallel_size = 2;
  const PredictionBasis b = classify_prediction(&c, "p.json", q);
  CHECK(b.label == "transferred");
  CHECK(b.reason.find("a TP 2 PP 1 bf16 (each part fitted, not this combination)") !=
        std::string::npos);
  // A field outside is reported as that field, not again as a combination.
  q.tensor_parallel_size = 8;
  const PredictionBasis t = classify_prediction(&c, "p.json", q);
  CHECK(t.reason.find("TP 8") != std::string::npos);
  CHECK(t.reason.find("combination") == std::string::npos);
  q.tensor_parallel_size = 2;
  check_optional_domain_list(c, &CalibrationDomain::deployments, "deployments", q);
}

TEST_CASE("a profile's host lines: another engine release path is transferred", "[calibration]") {
  // Host terms belong to the release line × engine path they were fitted on: a profile fitted on
  // "0.6 V0" runs labels a "0.19 async" prediction transferred; an unstated line (a query
  // without one) or a profile without host_lines is not checked.
  Calibration c = model_a_profile("a100-40gb");
  c.domain.host_lines = {"0.6 V0"};
  PredictionQuery q = model_a_query("a100-40gb");
  q.host_line = "0.6 V0";
  CHECK(classify_prediction(&c, "p.json", q).label == "calibrated");
  q.host_line = "0.19 async";
  const PredictionBasis b = classify_prediction(&c, "p.json", q);
  CHECK(b.label == "transferred");
  CHECK(b.reason.find("host line vLLM 0.19 async (fitted on 0.6 V0)") != std::string::npos);
  q.host_line = "";
  CHECK(classify_prediction(&c, "p.json", q).label == "calibrated");
  q.host_line = "0.19 async";
  check_optional_domain_list(c, &CalibrationDomain::host_lines, "host_lines", q);
}

TEST_CASE("a profile whose serving terms came from another GPU's runs is transferred",
          "[calibration]") {
  // The A100-80GB profile: its own kernel terms, the A100-40GB runs' host terms (calibrate
  // --base). Its gpu is a100-80gb, its domain's GPUs a100-40gb: an 80GB prediction inside every
  // other field is transferred, naming both; a profile without the list is not checked.
  Calibration c = model_a_profile("a100-80gb");
  c.domain.gpus = {"a100-40gb"};
  const PredictionBasis b = classify_prediction(&c, "p.json", model_a_query("a100-80gb"));
  CHECK(b.label == "transferred");
  CHECK(b.reason ==
        "p.json: its serving terms were fitted on runs on a100-40gb, applied to a100-80gb");
  // Anything else outside the domain is listed after it.
  PredictionQuery tp2 = model_a_query("a100-80gb");
  tp2.tensor_parallel_size = 2;
  CHECK(classify_prediction(&c, "p.json", tp2).reason ==
        "p.json: its serving terms were fitted on runs on a100-40gb, applied to a100-80gb; also "
        "outside its domain: TP 2");
  c.domain.gpus = {"a100-40gb", "a100-80gb"};
  CHECK(classify_prediction(&c, "p.json", model_a_query("a100-80gb")).label == "calibrated");
  c.domain.gpus = {"a100-40gb"};
  check_optional_domain_list(c, &CalibrationDomain::gpus, "gpus", model_a_query("a100-80gb"));
}

TEST_CASE("a profile without host lines: the query's release line against its stated versions",
          "[calibration]") {
  // Profiles written before host lines were recorded state the runs' versions ("0.11.0"): a
  // simulate query on release line 0.19 is transferred, one on 0.11 (sync or async: the old
  // profile cannot tell) is not; a version that names no release line ("nightly-2025-10") leaves
  // the line unchecked; a query that states its version (validate) is checked by version instead.
  Calibration c = model_a_profile("h100-sxm");
  c.domain.engine_versions = {"0.11.0"};
  PredictionQuery q = model_a_query("h100-sxm");
  q.host_line = "0.19 async";
  const PredictionBasis b = classify_prediction(&c, "p.json", q);
  CHECK(b.label == "transferred");
  CHECK(b.reason.find("vLLM 0.19 (fitted on 0.11.0)") != std::string::npos);
  q.host_line = "0.11 sync";
  CHECK(classify_prediction(&c, "p.json", q).label == "calibrated");
  q.host_line = "0.1 sync";  // 0.1 is not 0.11
  CHECK(classify_prediction(&c, "p.json", q).label == "transferred");
  c.domain.engine_versions = {"0.8.3 (V0 engine)"};
  q.host_line = "0.8 V0";
  CHECK(classify_prediction(&c, "p.json", q).label == "calibrated");
  c.domain.engine_versions = {"0.11.0", "nightly-2025-10"};
  q.host_line = "0.19 async";
  CHECK(classify_prediction(&c, "p.json", q).label == "calibrated");
  c.domain.engine_versions = {"0.11.0"};
  q.engine_version = "0.11.0";  // validate: the stated version decides
  CHECK(classify_prediction(&c, "p.json", q).label == "calibrated");
}

TEST_CASE("a profile's domain round-trips through JSON", "[calibration]") {
  Calibration c;
  c.gpu = "h200";
  c.terms.step_overhead_s = FittedValue{2e-3, 1e-4};
  c.domain.models = {"a", "b"};
  c.domain.tensor_parallel_sizes = {1, 8};
  c.domain.pipeline_parallel_sizes = {1};
  c.domain.engine_versions = {"unrecorded"};
  c.domain.dtypes = {"fp8"};
  c.domain.max_concurrency = 64;
  c.domain.has_unbounded_load = true;
  const Calibration back = calibration_from_json(to_json(c), "test");
  CHECK(back.domain.models == c.domain.models);
  CHECK(back.domain.tensor_parallel_sizes == c.domain.tensor_parallel_sizes);
  CHECK(back.domain.engine_versions == c.domain.engine_versions);
  CHECK(back.domain.dtypes == c.domain.dtypes);
  CHECK(back.domain.max_concurrency == 64);
  CHECK(back.domain.has_unbounded_load);
  CHECK_FALSE(back.domain.offline_only);
  CHECK_FALSE(to_json(c)["domain"].contains("offline_only"));  // written only when true
  c.domain.offline_only = true;
  CHECK(calibration_from_json(to_json(c), "test").domain.offline_only);
  nlohmann::json bad = to_json(c);
  bad["domain"]["tensor_parallel_sizes"] = "eight";
  CHECK_THROWS_AS(calibration_from_json(bad, "bad.json"), ConfigError);
}

}  // namespace
}  // namespace servesim::calibration
