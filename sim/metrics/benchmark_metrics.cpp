// vLLM benchmark metrics from simulated request records.
//
// Reference: vllm-project/vllm `vllm/benchmarks/serve.py` (read at commit 009e6d4a):
//   calculate_metrics()   — per-request TTFT/TPOT/ITL/E2EL, goodput, max_output_tokens_per_s,
//                           max_concurrent_requests, the summaries;
//   benchmark()           — duration (benchmark_start_time → all requests gathered);
//   check_goodput_args(), parse_goodput() — --goodput validation.
// Where servesim differs it is said below, at the place it happens.
#include "sim/metrics/benchmark_metrics.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/base/error.h"
#include "sim/base/huge_pages.h"
#include "sim/metrics/radix_sort.h"
#include "sim/metrics/sample_stats.h"

namespace servesim::metrics {
namespace {

// Per-step difference array of the tokens that end a within-segment gap (compute_metrics, pass 3),
// one per replica. An entry counts the segments that start or end at one step — at most the
// batch — so entries are 16-bit, zeroed by calloc (fresh pages are written once, by the counts),
// half the memory of 32-bit entries: for a low-load run of 26 million steps, 52 MB of page faults
// fewer. The first entry that would leave the 16-bit range widens the array to 32 bits.
class StepDiff {
 public:
  explicit StepDiff(std::size_t n) : n_(n) {
    narrow_ = static_cast<int16_t*>(std::calloc(n, sizeof(int16_t)));
    if (narrow_ == nullptr) throw std::bad_alloc();
    advise_huge_pages(narrow_, n * sizeof(int16_t));
  }
  StepDiff(const StepDiff&) = delete;
  StepDiff& operator=(const StepDiff&) = delete;
  ~StepDiff() {
    std::free(narrow_);
    std::free(wide_);
  }
  void add(std::size_t i, int v) {
    if (wide_ == nullptr) {
      const int next = narrow_[i] + v;
      if (next >= std::numeric_limits<int16_t>::min() &&
          next <= std::numeric_limits<int16_t>::max()) {
        narrow_[i] = static_cast<int16_t>(next);
        return;
      }
      widen();
    }
    wide_[i] += v;
  }
  // Calls f(entries) with the int16_t* or int32_t* array, whichever holds the counts.
  template <typename F>
  void visit(F&& f) const {
    if (wide_ != nullptr) {
      f(static_cast<const int32_t*>(wide_));
    } else {
      f(static_cast<const int16_t*>(narrow_));
    }
  }

 private:
  [[gnu::noinline]] void widen() {
    wide_ = static_cast<int32_t*>(std::malloc(n_ * sizeof(int32_t)));
    if (wide_ == nullptr) throw std::bad_alloc();
    for (std::size_t i = 0; i < n_; ++i) wide_[i] = narrow_[i];
    std::free(narrow_);
    narrow_ = nullptr;
  }

  std::size_t n_;
  int16_t* narrow_ = nullptr;
  int32_t* wide_ = nullptr;
};

// Every name calculate_metrics()/benchmark() can summarize, in vLLM's print/save order.
const std::vector<std::string>& known_metric_names() {
  static const std::vector<std::string> kNames = {
      "ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"};
  return kNames;
}

// vLLM check_goodput_args(): VALID_NAMES = ["ttft", "tpot", "e2el"].
bool is_goodput_key(const std::string& key) {
  return key == "ttft" || key == "tpot" || key == "e2el";
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\n\r\f\v");
  return s.substr(b, e - b + 1);
}

// Python float(text) for ordinary decimal numbers and inf; NaN and C-only forms (hex, "nan(...)")
// are rejected. Returns false when `text` is not a number.
bool parse_python_float(const std::string& text, double* out) {
  const std::string t = trim(text);
  if (t.empty() || t.find_first_of("xX(") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || std::isnan(v)) return false;
  *out = v;
  return true;
}

void validate_options(const MetricsOptions& options) {
  for (double p : options.metric_percentiles) {
    if (!(p >= 0 && p <= 100)) {
      throw ConfigError("--metric-percentiles: percentile " + std::to_string(p) +
                        " is outside [0, 100]");
    }
  }
  const auto& names = known_metric_names();
  for (const auto& m : options.percentile_metrics) {
    if (std::find(names.begin(), names.end(), m) == names.end()) {
      throw ConfigError("--percentile-metrics: unknown metric '" + m +
                        "' (allowed: ttft, tpot, itl, e2el, client_queue_time, "
                        "e2el_including_client_queue)");
    }
  }
  for (const auto& [key, value] : options.goodput_slo_ms) {
    if (!is_goodput_key(key)) {
      throw ConfigError("--goodput: invalid metric name '" + key +
                        "'; the service level objective name should be one of "
                        "['ttft', 'tpot', 'e2el']");
    }
    if (!(value >= 0)) {
      throw ConfigError("--goodput: invalid value for '" + key +
                        "'; the service level objective value should be non-negative");
    }
  }
}

// The invariants of request_record.h for a completed record; a violation is a simulator bug.
void check_completed_record(const RequestRecord& r, const std::vector<StepLog>& logs) {
  // Messages are only built on failure (SERVESIM_CHECK evaluates them lazily).
  const auto who = [&r] { return "request " + std::to_string(r.id); };
  SERVESIM_CHECK(r.replica >= 0 && static_cast<std::size_t>(r.replica) < logs.size(),
                 who() + ": replica index outside step_logs");
  SERVESIM_CHECK(!r.segments.empty(), who() + ": completed without token segments");
  const auto& ends = logs[static_cast<std::size_t>(r.replica)].step_end;
  const auto steps = static_cast<int64_t>(ends.size());
  int64_t prev_last = -1;
  int64_t tokens = 0;
  for (const auto& seg : r.segments) {
    SERVESIM_CHECK(
        seg.first_step > prev_last && seg.first_step <= seg.last_step && seg.last_step < steps,
        who() + ": token segments out of order or outside the StepLog");
    tokens += seg.tokens();
    prev_last = seg.last_step;
  }
  // With several tokens per step (output_chunks > 0), a segment's steps are the streamed chunks.
  const int64_t expected = r.output_chunks > 0 ? r.output_chunks : r.output_tokens;
  SERVESIM_CHECK(tokens == expected, who() + ": segments hold " + std::to_string(tokens) +
                                         " steps, expected " + std::to_string(expected) +
                                         (r.output_chunks > 0 ? " chunks" : " tokens"));
  SERVESIM_CHECK(ends[static_cast<std::size_t>(r.segments.front().first_step)] == r.first_token &&
                     ends[static_cast<std::size_t>(r.segments.back().last_step)] == r.last_token,
                 who() + ": first_token/last_token differ from the StepLog times of its segments");
}

}  // namespace

std::map<std::string, double> parse_goodput(const std::vector<std::string>& items) {
  // vLLM parse_goodput(): `slo_name, slo_val = slo_pair.split(":")` and float(slo_val); any
  // ValueError becomes one format error. Then check_goodput_args() checks names and signs in the
  // dict's insertion order. A repeated key keeps its first position and its last value.
  std::map<std::string, double> slo;
  std::vector<std::string> order;
  for (const auto& item : items) {
    const auto colon = item.find(':');
    double value = 0;
    if (colon == std::string::npos || item.find(':', colon + 1) != std::string::npos ||
        !parse_python_float(item.substr(colon + 1), &value)) {
      throw ConfigError("--goodput: invalid format found for service level objectives ('" + item +
                        "'). Specify service level objectives for goodput as \"KEY:VALUE\" "
                        "pairs, where the key is a metric name, and the value is a number in "
                        "milliseconds.");
    }
    const std::string key = item.substr(0, colon);
    if (!slo.count(key)) order.push_back(key);
    slo[key] = value;
  }
  for (const auto& key : order) {
    if (!is_goodput_key(key)) {
      throw ConfigError("--goodput: invalid metric name found, '" + key +
                        "'. The service level objective name should be one of "
                        "['ttft', 'tpot', 'e2el'].");
    }
    if (slo[key] < 0) {
      throw ConfigError("--goodput: invalid value found, " + key + ": " + std::to_string(slo[key]) +
                        ". The service level objective value should be non-negative.");
    }
  }
  return slo;
}

std::vector<SimTime> token_times(const RequestRecord& record, const StepLog& log) {
  std::vector<SimTime> times;
  times.reserve(static_cast<std::size_t>(std::max<int32_t>(record.output_tokens, 0)));
  for (const auto& seg : record.segments) {
    SERVESIM_CHECK(seg.first_step >= 0 && seg.first_step <= seg.last_step &&
                       seg.last_step < static_cast<int64_t>(log.step_end.size()),
                   "request " + std::to_string(record.id) + ": segment outside the StepLog");
    for (int64_t s = seg.first_step; s <= seg.last_step; ++s) {
      times.push_back(log.step_end[static_cast<std::size_t>(s)]);
    }
  }
  return times;
}

BenchmarkMetrics compute_metrics(const std::vector<RequestRecord>& records,
                                 const std::vector<StepLog>& step_logs,
                                 const MetricsOptions& options) {
  validate_options(options);
  const double offset_s = options.ttft_offset_s;
  const auto offset_ns = static_cast<int64_t>(std::llround(offset_s * 1e9));
  const auto& percentiles = options.metric_percentiles;
  const int32_t only_class = options.only_class;
  const auto is_measured = [only_class](const RequestRecord& r) {
    return !r.warmup && (only_class < 0 || r.class_id == only_class);
  };
  const auto is_ok = [](const RequestRecord& r) { return r.completed && !r.failed; };

  // Pass 1: time origins.
  //  * first_send: earliest send of any measured request. vLLM's duration starts at
  //    benchmark_start_time, just before the first send; warm-up requests run before that in vLLM
  //    (a separate phase), here they are the first requests of the stream, so we start at the
  //    first measured send instead.
  //  * ok_start: min start_time over successful outputs (calculate_metrics, peak-throughput bins).
  SimTime first_send = SimTime::max();
  SimTime ok_start = SimTime::max();
  std::size_t num_ok = 0;  // to size the per-request vectors once
  for (const auto& r : records) {
    if (!is_measured(r)) continue;
    first_send = std::min(first_send, r.arrival);
    if (is_ok(r)) {
      ok_start = std::min(ok_start, r.arrival);
      ++num_ok;
    }
  }
  const auto wanted = [&options](const char* key) {
    return std::find(options.percentile_metrics.begin(), options.percentile_metrics.end(), key) !=
           options.percentile_metrics.end();
  };
  // The two client-queue metrics are rarely asked for: collected only when selected.
  const bool want_queue = wanted("client_queue_time");
  const bool want_e2el_queue = wanted("e2el_including_client_queue");

  BenchmarkMetrics m;
  std::vector<double> ttfts, tpots, e2els, queue_times, e2els_with_queue;
  detail::WeightedNsSamples itls;
  // Ends of the successful requests' intervals (max_concurrent_requests, below).
  std::vector<int64_t> ends_ns;
  // Written once each, one value per request: large ones advised to use huge pages first.
  for (std::vector<double>* v : {&ttfts, &tpots, &e2els}) {
    v->reserve(num_ok);
    advise_huge_pages(v->data(), v->capacity() * sizeof(double));
  }
  const bool want_itl = options.compute_itl;
  const bool want_peak_rate = options.compute_max_output_tokens_per_s;
  const bool want_concurrency = options.compute_max_concurrent_requests;
  if (want_concurrency) {
    ends_ns.reserve(num_ok);
    advise_huge_pages(ends_ns.data(), ends_ns.capacity() * sizeof(int64_t));
  }
  double end_rel_s = 0;     // latest measured completion, seconds after first_send
  double ok_end_rel_s = 0;  // latest successful end, seconds after ok_start
  int64_t good_completed = 0;
  std::size_t gaps_across_segments = 0;  // ITL gaps across a preemption (pass 3)
  const auto& slo = options.goodput_slo_ms;
  // vLLM: goodput_config_dict[k] / MILLISECONDS_TO_SECONDS_CONVERSION, compared as `slo >= value`.
  // Looked up once, not per request.
  const auto slo_s = [&slo](const char* key) -> std::optional<double> {
    const auto it = slo.find(key);
    if (it == slo.end()) return std::nullopt;
    return it->second / 1000;
  };
  const std::optional<double> slo_ttft_s = slo_s("ttft");
  const std::optional<double> slo_tpot_s = slo_s("tpot");
  const std::optional<double> slo_e2el_s = slo_s("e2el");

  // Pass 2: per-request values.
  for (const auto& r : records) {
    if (!is_measured(r)) continue;
    if (r.failed) {
      ++m.failed;
      // A failed request ends (for the benchmark's clock) no earlier than it was sent.
      end_rel_s = std::max(end_rel_s, (r.arrival - first_send).seconds());
      continue;
    }
    if (!r.completed) continue;  // still in flight at the horizon: neither completed nor failed
    check_completed_record(r, step_logs);
    gaps_across_segments += r.segments.size() - 1;

    const double ttft = (r.first_token - r.arrival).seconds() + offset_s;
    const double latency = (r.last_token - r.arrival).seconds() + offset_s;
    // calculate_metrics: TPOT only for output_len > 1; for goodput such a request has tpot 0.
    double tpot = 0.0;
    if (r.output_tokens > 1) {
      tpot = (latency - ttft) / (r.output_tokens - 1);
      tpots.push_back(tpot);
    }
    ttfts.push_back(ttft);
    e2els.push_back(latency);
    const double queue = r.client_queue_time.seconds();
    if (want_queue) queue_times.push_back(queue);
    if (want_e2el_queue) e2els_with_queue.push_back(latency + queue);
    ++m.completed;
    m.total_input_tokens += r.prompt_tokens;
    m.total_output_tokens += r.output_tokens;

    if (!slo.empty()) {
      bool good = true;
      if (slo_ttft_s) good = good && *slo_ttft_s >= ttft;
      if (slo_tpot_s) good = good && *slo_tpot_s >= tpot;
      if (slo_e2el_s) good = good && *slo_e2el_s >= latency;
      if (good) ++good_completed;
    }

    end_rel_s = std::max(end_rel_s, (r.last_token - first_send).seconds() + offset_s);
    ok_end_rel_s = std::max(ok_end_rel_s, (r.last_token - ok_start).seconds() + offset_s);
    if (want_concurrency) ends_ns.push_back(r.last_token.ns() + offset_ns);
  }

  // The per-request summaries, then the peak concurrency, each freeing its vectors at once: the
  // ITL pass below then runs with only the records and step logs beside it (peak memory).
  const auto summarize_and_free = [&percentiles](std::vector<double>& v) {
    MetricSummary s = detail::summarize_seconds(v, percentiles);
    std::vector<double>().swap(v);
    return s;
  };
  m.summaries["ttft"] = summarize_and_free(ttfts);
  m.summaries["tpot"] = summarize_and_free(tpots);
  m.summaries["e2el"] = summarize_and_free(e2els);
  if (want_queue) m.summaries["client_queue_time"] = summarize_and_free(queue_times);
  if (want_e2el_queue) {
    m.summaries["e2el_including_client_queue"] = summarize_and_free(e2els_with_queue);
  }

  // max_concurrent_requests (calculate_metrics, current vLLM): exact sweep over the half-open
  // intervals [start_time, start_time + latency) of successful requests; at equal times the
  // departure (−1) is processed before the arrival (+1). (Older vLLM reported the peak of
  // per-second counts instead.) Starts come in record order, which is send order for every
  // workload; only if they were not would they be collected and sorted too.
  if (want_concurrency) {
    std::vector<int64_t> scratch;
    detail::radix_sort(ends_ns, scratch, [](int64_t x) { return detail::int64_order_key(x); });
    std::vector<int64_t> starts_ns;
    bool in_order = true;
    int64_t last = std::numeric_limits<int64_t>::min();
    for (const auto& r : records) {
      if (!is_measured(r) || r.failed || !r.completed) continue;
      in_order = in_order && r.arrival.ns() >= last;
      last = r.arrival.ns();
    }
    if (!in_order) {
      for (const auto& r : records) {
        if (is_measured(r) && !r.failed && r.completed) starts_ns.push_back(r.arrival.ns());
      }
      detail::radix_sort(starts_ns, scratch, [](int64_t x) { return detail::int64_order_key(x); });
    }
    std::vector<int64_t>().swap(scratch);
    int64_t current = 0;
    std::size_t next_end = 0;
    const auto start = [&](int64_t t) {
      while (next_end < ends_ns.size() && ends_ns[next_end] <= t) {
        --current;
        ++next_end;
      }
      ++current;
      m.max_concurrent_requests = std::max(m.max_concurrent_requests, current);
    };
    if (in_order) {
      for (const auto& r : records) {
        if (is_measured(r) && !r.failed && r.completed) start(r.arrival.ns());
      }
    } else {
      for (const int64_t t : starts_ns) start(t);
    }
  }
  std::vector<int64_t>().swap(ends_ns);

  // Pass 3, ITL and max_output_tokens_per_s. A token at the end of step s either opens a segment
  // (a request's first token, or its first after a preemption) or ends a within-segment gap of
  // step_end[s] − step_end[s−1]. Per replica, a difference array over steps counts the latter
  // (within[s], for measured completed requests); the gaps across a preemption (end of one segment
  // → first token of the next) are added one by one, and so are the segment-opening tokens to
  // their second's count. Skipped when neither value is wanted.
  std::size_t total_steps = 0;
  for (const auto& log : step_logs) total_steps += log.step_end.size();

  // max_output_tokens_per_s (calculate_metrics): token times binned into whole seconds after the
  // earliest successful send, bucket = int(token_time − min_start_time), over
  // int(ceil(max_end_time − min_start_time)) + 1 buckets; the peak bucket count.
  // Dense (one counter per second) when there are no more seconds than steps, which are already
  // in memory; otherwise sparse, only seconds that saw a token (a dense vector took one entry per
  // simulated second, 7.8 GB for 1000 requests at 1e-6 req/s). Same peak: empty seconds are 0,
  // and a second's count is the same sum in any order.
  const int64_t num_buckets =
      m.completed > 0 && want_peak_rate ? static_cast<int64_t>(std::ceil(ok_end_rel_s)) + 1 : 0;
  const bool dense = num_buckets <= static_cast<int64_t>(total_steps) + 1;
  std::vector<int64_t> dense_tokens(dense ? static_cast<std::size_t>(num_buckets) : 0, 0);
  std::unordered_map<int64_t, int64_t> sparse_tokens;
  const auto count_tokens = [&](SimTime t, int64_t tokens) {
    // Python int() truncates toward zero; so does the cast.
    const double t_rel = (t - ok_start).seconds() + offset_s;
    const auto bucket = static_cast<int64_t>(t_rel);
    if (bucket < 0 || bucket >= num_buckets) return;
    if (dense) {
      dense_tokens[static_cast<std::size_t>(bucket)] += tokens;
    } else {
      sparse_tokens[bucket] += tokens;
    }
  };

  // Most ITL values are decode step durations within a few milliseconds of one another: they are
  // summed straight into the multiset's dense window (WeightedNsSamples::set_window), from the
  // shortest to the 95th percentile of 2,048 sampled step durations and at most total_steps ns
  // wide (4 bytes per ns); the others (steps with a prefill, preemption gaps) are kept and sorted.
  // The window moves work only: the summary is the same for any window.
  bool windowed = false;
  if (want_itl && total_steps >= 4096) {
    std::vector<int64_t> sample;
    const std::size_t stride = total_steps / 2048;
    for (const auto& log : step_logs) {
      const auto& ends = log.step_end;
      for (std::size_t s = 1; s < ends.size(); s += stride) {
        sample.push_back((ends[s] - ends[s - 1]).ns());
      }
    }
    if (!sample.empty()) {
      std::sort(sample.begin(), sample.end());
      const int64_t lo = sample.front();
      const int64_t hi = sample[sample.size() * 95 / 100];
      const auto width = std::min<int64_t>(static_cast<int64_t>(total_steps), hi - lo + 1);
      windowed = itls.set_window(lo, width, m.total_output_tokens);
    }
  }
  // Without a window: at most one sample per step plus one per preemption gap, reserved so that
  // the samples take 8 bytes each.
  if (want_itl && !windowed) itls.reserve(total_steps + gaps_across_segments);

  std::vector<std::unique_ptr<StepDiff>> within_diff(step_logs.size());  // steps + 1 entries
  for (const auto& r : records) {
    if (!want_itl && !want_peak_rate) break;
    if (!is_measured(r) || r.failed || !r.completed) continue;
    auto& diff = within_diff[static_cast<std::size_t>(r.replica)];
    const auto& ends = step_logs[static_cast<std::size_t>(r.replica)].step_end;
    if (!diff) diff = std::make_unique<StepDiff>(ends.size() + 1);
    for (std::size_t i = 0; i < r.segments.size(); ++i) {
      const auto& seg = r.segments[i];
      const auto first = static_cast<std::size_t>(seg.first_step);
      diff->add(first + 1, 1);  // the gaps end at first_step + 1 … last_step
      diff->add(static_cast<std::size_t>(seg.last_step + 1), -1);
      if (num_buckets > 0) count_tokens(ends[first], 1);
      if (want_itl && i > 0) {
        const auto& prev = r.segments[i - 1];
        itls.add((ends[first] - ends[static_cast<std::size_t>(prev.last_step)]).ns(), 1);
      }
    }
  }
  for (std::size_t rep = 0; rep < within_diff.size(); ++rep) {
    if (!within_diff[rep]) continue;
    const auto& ends = step_logs[rep].step_end;
    within_diff[rep]->visit([&](const auto* diff) {
      int64_t within = 0;  // diff[0] is 0: no gap ends at step 0
      SimTime prev_end;
      ends.for_each([&](std::size_t s, SimTime end) {
        within += diff[s];
        if (s > 0 && within != 0) {
          if (want_itl) itls.add((end - prev_end).ns(), within);
          if (num_buckets > 0) count_tokens(end, within);
        }
        prev_end = end;
      });
    });
    within_diff[rep].reset();
  }
  within_diff.clear();
  if (num_buckets > 0) {
    int64_t peak = 0;
    for (const int64_t tokens : dense_tokens) peak = std::max(peak, tokens);
    for (const auto& [second, tokens] : sparse_tokens) peak = std::max(peak, tokens);
    m.max_output_tokens_per_s = static_cast<double>(peak);
  }

  // Duration: first measured send → latest measured completion (see pass 1). vLLM would divide
  // by a zero duration and raise; we report zero throughputs instead.
  m.duration_s = first_send == SimTime::max() ? 0.0 : end_rel_s;
  const double d = m.duration_s;
  const auto per_s = [d](double x) { return d > 0 ? x / d : 0.0; };
  m.request_throughput = per_s(static_cast<double>(m.completed));
  if (!slo.empty()) m.request_goodput = per_s(static_cast<double>(good_completed));
  m.output_throughput = per_s(static_cast<double>(m.total_output_tokens));
  m.total_token_throughput =
      per_s(static_cast<double>(m.total_input_tokens + m.total_output_tokens));

  if (want_itl) m.summaries["itl"] = itls.summarize(percentiles);

  if (only_class < 0) {
    for (size_t c = 0; c < options.class_names.size(); ++c) {
      MetricsOptions o = options;
      o.class_names.clear();
      o.only_class = static_cast<int32_t>(c);
      ClassMetrics cm{options.class_names[c], compute_metrics(records, step_logs, o)};
      BenchmarkMetrics& k = cm.metrics;
      const double own = k.duration_s;
      k.duration_s = m.duration_s;
      k.request_throughput = per_s(static_cast<double>(k.completed));
      if (k.request_goodput) *k.request_goodput = per_s(std::round(*k.request_goodput * own));
      k.output_throughput = per_s(static_cast<double>(k.total_output_tokens));
      k.total_token_throughput =
          per_s(static_cast<double>(k.total_input_tokens + k.total_output_tokens));
      m.classes.push_back(std::move(cm));
    }
  }
  return m;
}

}  // namespace servesim::metrics
