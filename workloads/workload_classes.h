// Workload classes: a workload file (--workload FILE) that mixes request classes, e.g. 70% chat
// and 30% long-document RAG, each with its own share, length distribution, priority and SLOs.
//
// File format (docs/workloads.md, "Workload classes"):
//   {"classes": [
//     {"name": "chat", "share": 0.7, "priority": 0,
//      "prompt": {"dist": "lognormal", "mean": 800, "sigma": 1.0, "max": 8192},
//      "output": {"dist": "fixed", "tokens": 256},
//      "slo": ["p99_ttft_ms<=500", "p99_tpot_ms<=50"]},
//     {"name": "rag", "share": 0.3, "priority": 1,
//      "lengths": {"dist": "empirical", "source": "trace", "path": "...", "format": "azure"},
//      "slo": ["p99_ttft_ms<=3000"]}]}
//
// Contract:
//  - load_workload_classes() reads and checks the whole file: unknown keys, wrong types, values
//    out of range, duplicate names, shares that do not sum to 1 all throw ConfigError
//    "FILE: classes[i].field: value V; expected E". Empirical length files are read (and their
//    rows checked) there, once, so a run never fails half-way.
//  - A class draws its prompt and output lengths independently ("prompt" + "output"), or as
//    recorded pairs ("lengths" with dist "empirical": a uniform draw, with replacement, from the
//    (prompt, output) pairs of a dataset or trace file).
//  - Lognormal lengths: ln X ~ N(mu, sigma^2) with mu = ln(mean) − sigma²/2, so E[X] = mean; a
//    draw becomes tokens = clamp(round(X), min, max). The clamp is explicit (fields "min",
//    default 1, and "max", default 2^31 − 1), never silent.
//  - SLO strings are kept as text: they are parsed by sim/planning (slo.h), which names the file
//    and path in its errors (workloads does not depend on sim).
#ifndef SERVESIM_WORKLOADS_WORKLOAD_CLASSES_H_
#define SERVESIM_WORKLOADS_WORKLOAD_CLASSES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/base/rng.h"
#include "workloads/dataset.h"
#include "workloads/length_datasets.h"

namespace servesim::workloads {

// One length (prompt or output) distribution.
struct LengthDistribution {
  enum class Kind { kFixed, kLognormal };
  Kind kind = Kind::kFixed;
  int32_t tokens = 1;        // fixed: the length
  double mean = 1;           // lognormal: E[X] before rounding and clamping (tokens)
  double sigma = 0;          // lognormal: standard deviation of ln X
  int32_t min = 1;           // lognormal: draws below are raised to it
  int32_t max = 2147483647;  // lognormal: draws above are lowered to it

  // One draw. REQUIRES: the fields passed load_workload_classes' checks.
  int32_t sample(RngStream& rng) const;
};

struct WorkloadClass {
  std::string name;           // [A-Za-z0-9_.-]+, unique in the file
  double share = 0;           // fraction of requests (or sessions) of this class; shares sum to 1
  int32_t priority = 0;       // --scheduling-policy priority: lower value is served first
  LengthDistribution prompt;  // unless `empirical`
  LengthDistribution output;  // unless `empirical`
  // Recorded (prompt, output) pairs drawn uniformly with replacement; empty = prompt/output above.
  std::vector<LengthPair> empirical;
  std::string empirical_source;  // the file they came from (for the echo)
  std::vector<std::string> slo;  // SLO texts in vLLM's sweep notation, e.g. "p99_ttft_ms<=500"
};

struct WorkloadClasses {
  std::string path;  // the file, as given
  std::vector<WorkloadClass> classes;
  std::vector<std::string> names() const;
};

// Reads and checks a workload file (see the file comment). Throws ConfigError.
WorkloadClasses load_workload_classes(const std::string& path);

// The files a workload file makes a run read: the file itself, then the "path" of every class's
// empirical lengths, resolved as load_workload_classes resolves it (the shipped ShareGPT sets are
// not listed). Reads only the workload file; throws ConfigError when it is missing or malformed.
std::vector<std::string> workload_input_paths(const std::string& path);

// The class mix as a Dataset: request i gets a class drawn by share (stream "workload-class"),
// then its lengths from that class's distribution (stream "class/<name>"), and carries the
// class's id (its index in the file) and priority. Deterministic per seed; adding a class does
// not change the lengths another class draws for its own requests, only which requests it gets.
class ClassMixDataset final : public Dataset {
 public:
  ClassMixDataset(std::shared_ptr<const WorkloadClasses> classes, int64_t size, uint64_t seed);

  int64_t size() const override { return size_; }
  RequestSpec next() override;
  // The next body of class `c` (a session's later turns keep its class). Does not count toward
  // size(). REQUIRES: 0 <= c < number of classes.
  RequestSpec next_of_class(int32_t c);

 private:
  std::shared_ptr<const WorkloadClasses> classes_;
  int64_t size_;
  RngStream class_rng_;
  std::vector<RngStream> length_rng_;  // one per class
  std::vector<double> cumulative_;     // cumulative shares, last forced to 1
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_WORKLOAD_CLASSES_H_
