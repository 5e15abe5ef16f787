// Result files and the summary table in `vllm bench serve` form.
//
// Reference: vllm-project/vllm `vllm/benchmarks/serve.py` (read at commit 009e6d4a):
//   main_async()          — the setup keys (date … max_concurrency) and the --save-detailed
//   pruning; benchmark()           — the result dict, process_one_metric() (summary keys, p_word,
//   table).
#include "sim/metrics/result_writer.h"

#include <atomic>

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <system_error>

#include "sim/base/error.h"
#include "sim/base/output_file.h"

namespace servesim::metrics {
namespace {

using ordered_json = nlohmann::ordered_json;

// One metric section as vLLM's process_one_metric() names and prints it.
struct MetricInfo {
  const char* key;     // metric_attribute_name
  const char* name;    // metric_name
  const char* header;  // metric_header
};
// The order in which benchmark() calls process_one_metric(): fixed, whatever the order of
// --percentile-metrics.
constexpr MetricInfo kMetrics[] = {
    {"ttft", "TTFT", "Time to First Token"},
    {"tpot", "TPOT", "Time per Output Token (excl. 1st token)"},
    {"itl", "ITL", "Inter-token Latency"},
    {"e2el", "E2EL", "End-to-end Latency"},
    {"client_queue_time", "Client Queue Time", "Client-side Queueing"},
    {"e2el_including_client_queue", "E2EL incl. Client Queue",
     "Queue-inclusive End-to-end Latency"},
};

bool rate_is_finite(const nlohmann::json& rate) {
  if (rate.is_number()) return std::isfinite(rate.get<double>());
  return false;  // null or "inf"
}

// benchmark(): the client-queue metrics exist only with --max-concurrency, and the queue-inclusive
// E2EL only when the request rate is also finite.
bool metric_available(const std::string& key, const ResultContext& ctx) {
  const bool capped = !ctx.max_concurrency.is_null();
  if (key == "client_queue_time") return capped;
  if (key == "e2el_including_client_queue") return capped && rate_is_finite(ctx.request_rate);
  return true;
}

bool selected(const MetricsOptions& options, const std::string& key) {
  for (const auto& m : options.percentile_metrics) {
    if (m == key) return true;
  }
  return false;
}

// "{:<40} {:<10}" and "{:<40} {:<10.2f}" of Python's str.format.
std::string line_int(const std::string& label, int64_t v) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-40s %-10lld", label.c_str(), static_cast<long long>(v));
  return buf;
}
std::string line_f2(const std::string& label, double v) {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%-40s %-10.2f", label.c_str(), v);
  return buf;
}
// "{s:{c}^{n}}": centred, the odd fill character going to the right.
std::string centered(const std::string& s, std::size_t n, char fill) {
  if (s.size() >= n) return s;
  const std::size_t pad = n - s.size();
  return std::string(pad / 2, fill) + s + std::string(pad - pad / 2, fill);
}

// request_rate as main_async() writes it: a float, or the string "inf".
ordered_json request_rate_json(const nlohmann::json& rate) {
  if (rate_is_finite(rate)) return rate.get<double>();
  return "inf";
}

}  // namespace

std::string percentile_word(double p) {
  // Python: str(int(p)) if int(p) == p else str(p).
  if (std::isfinite(p) && std::trunc(p) == p && std::fabs(p) < 9.2e18) {
    return std::to_string(static_cast<long long>(p));
  }
  // str(float) = repr: shortest round-trip digits; exponent form when decpt <= -4 or decpt > 16
  // (CPython format_float_short, mode 'r'), exponent with sign and at least two digits.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, p, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // e.g. "9.99e+01", "-1.5e-05"
  std::string sign;
  if (!sci.empty() && sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const auto epos = sci.find('e');
  if (epos == std::string::npos) return sign + sci;  // inf / nan
  std::string digits;
  for (std::size_t i = 0; i < epos; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exp10 = std::stoi(sci.substr(epos + 1));
  const int decpt = exp10 + 1;
  const int nd = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    std::string mant = digits.substr(0, 1);
    if (nd > 1) mant += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    return sign + mant + ebuf;
  }
  if (decpt <= 0) return sign + "0." + std::string(static_cast<std::size_t>(-decpt), '0') + digits;
  if (decpt >= nd) {
    return sign + digits + std::string(static_cast<std::size_t>(decpt - nd), '0') + ".0";
  }
  return sign + digits.substr(0, static_cast<std::size_t>(decpt)) + "." +
         digits.substr(static_cast<std::size_t>(decpt));
}

namespace {

// The per-request arrays of --save-detailed, in the order main_async() leaves them in the file.
constexpr const char* kDetailedArrays[] = {"input_lens",  "output_lens",     "ttfts",
                                           "itls",        "latencies",       "start_times",
                                           "queue_times", "generated_texts", "errors"};

// Marks where write_result_atomically() streams a per-request array instead of building it.
constexpr const char* kArrayMarker = "\x01servesim-array:";

// One measured request's entries in the per-request arrays (vLLM's RequestFuncOutput; requests
// that did not succeed keep its defaults: ttft 0, itl [], latency 0, output_len 0).
struct DetailedRow {
  bool ok = false;
  double latency = 0, queue = 0, ttft = 0, start = 0;
  int32_t input_len = 0, output_len = 0;
};

DetailedRow detailed_row(const RequestRecord& r, double offset_s) {
  DetailedRow d;
  d.ok = r.completed && !r.failed;
  d.latency = d.ok ? (r.last_token - r.arrival).seconds() + offset_s : 0.0;
  d.queue = r.client_queue_time.seconds();
  d.input_len = r.prompt_tokens;
  d.output_len = d.ok ? r.output_tokens : 0;
  d.ttft = d.ok ? (r.first_token - r.arrival).seconds() + offset_s : 0.0;
  d.start = r.arrival.seconds();
  return d;
}

// Calls f(gap_seconds) for every inter-token gap of a successful request, in order.
template <typename F>
void for_each_itl(const RequestRecord& r, const std::vector<StepLog>& step_logs, const F& f) {
  SERVESIM_CHECK(r.replica >= 0 && static_cast<std::size_t>(r.replica) < step_logs.size(),
                 "request " + std::to_string(r.id) + ": replica index outside step_logs");
  const auto& ends = step_logs[static_cast<std::size_t>(r.replica)].step_end;
  bool first = true;
  SimTime prev;
  for (const auto& seg : r.segments) {
    SERVESIM_CHECK(seg.first_step >= 0 && seg.first_step <= seg.last_step &&
                       seg.last_step < static_cast<int64_t>(ends.size()),
                   "request " + std::to_string(r.id) + ": segment outside the StepLog");
    for (int64_t s = seg.first_step; s <= seg.last_step; ++s) {
      const SimTime t = ends[static_cast<std::size_t>(s)];
      if (!first) f((t - prev).seconds());
      prev = t;
      first = false;
    }
  }
}

ordered_json build_result(const BenchmarkMetrics& m, const MetricsOptions& options,
                          const ResultContext& ctx, const std::vector<RequestRecord>& records,
                          const std::vector<StepLog>& step_logs, bool stream_arrays) {
  ordered_json j;
  // main_async(): setup and traffic keys, in this order.
  j["date"] = ctx.date;
  j["endpoint_type"] = ctx.backend;  // "for backward compatibility" = backend
  j["backend"] = ctx.backend;
  j["label"] = nullptr;
  j["model_id"] = ctx.model_id;
  // tokenizer_id = args.tokenizer if given, else model_id.
  j["tokenizer_id"] = ctx.tokenizer_id.empty() ? ctx.model_id : ctx.tokenizer_id;
  j["num_prompts"] = ctx.num_prompts;
  j["request_rate"] = request_rate_json(ctx.request_rate);
  j["burstiness"] = ctx.burstiness;
  if (ctx.max_concurrency.is_number()) {
    j["max_concurrency"] = ctx.max_concurrency.get<int64_t>();
  } else {
    j["max_concurrency"] = nullptr;
  }

  // benchmark(): the result dict.
  j["duration"] = m.duration_s;
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["total_input_tokens"] = m.total_input_tokens;
  j["total_output_tokens"] = m.total_output_tokens;
  j["request_throughput"] = m.request_throughput;
  if (m.request_goodput) {
    j["request_goodput"] = *m.request_goodput;
  } else {
    j["request_goodput"] = nullptr;
  }
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_token_throughput;

  // Per-request arrays over every measured request, in the order given (vLLM: `outputs`, one per
  // input request; warm-ups are not among them). Requests that did not succeed have vLLM's
  // RequestFuncOutput defaults: ttft 0, itl [], latency 0, output_len 0.
  // Without --save-detailed, main_async() deletes input_lens, output_lens, start_times, ttfts,
  // itls, generated_texts and errors, but keeps latencies and queue_times. We drop those two as
  // well: servesim writes per-request arrays only with --save-detailed, so that result files stay
  // small in sweeps (a documented difference, docs/cli.md).
  const double offset_s = options.ttft_offset_s;
  if (ctx.save_detailed && stream_arrays) {
    for (const char* name : kDetailedArrays) j[name] = std::string(kArrayMarker) + name;
  } else if (ctx.save_detailed) {
    ordered_json input_lens = ordered_json::array(), output_lens = ordered_json::array(),
                 ttfts = ordered_json::array(), itls = ordered_json::array(),
                 latencies = ordered_json::array(), start_times = ordered_json::array(),
                 queue_times = ordered_json::array(), texts = ordered_json::array(),
                 errors = ordered_json::array();
    for (const auto& r : records) {
      if (r.warmup) continue;
      const DetailedRow d = detailed_row(r, offset_s);
      latencies.push_back(d.latency);
      queue_times.push_back(d.queue);
      input_lens.push_back(d.input_len);
      output_lens.push_back(d.output_len);
      ttfts.push_back(d.ttft);
      ordered_json gaps = ordered_json::array();
      if (d.ok) for_each_itl(r, step_logs, [&gaps](double g) { gaps.push_back(g); });
      itls.push_back(std::move(gaps));
      start_times.push_back(d.start);
      texts.push_back("");
      errors.push_back(d.ok ? std::string() : r.error);
    }
    j["input_lens"] = std::move(input_lens);
    j["output_lens"] = std::move(output_lens);
    j["ttfts"] = std::move(ttfts);
    j["itls"] = std::move(itls);
    j["latencies"] = std::move(latencies);
    j["start_times"] = std::move(start_times);
    j["queue_times"] = std::move(queue_times);
    j["generated_texts"] = std::move(texts);
    j["errors"] = std::move(errors);
  }
  j["max_output_tokens_per_s"] = m.max_output_tokens_per_s;
  j["max_concurrent_requests"] = m.max_concurrent_requests;
  j["rtfx"] = 0.0;  // inverse real-time factor of audio benchmarks; 0 for text

  // process_one_metric(): mean, median, std, then p{P} for each percentile, in ms.
  for (const auto& info : kMetrics) {
    const std::string key = info.key;
    if (!selected(options, key) || !metric_available(key, ctx)) continue;
    const auto it = m.summaries.find(key);
    const MetricSummary empty;
    const MetricSummary& s = it == m.summaries.end() ? empty : it->second;
    j["mean_" + key + "_ms"] = s.mean_ms;
    j["median_" + key + "_ms"] = s.median_ms;
    j["std_" + key + "_ms"] = s.std_ms;
    for (const auto& [p, value] : s.percentiles_ms) {
      std::string name = "p";  // built by append: GCC 12 warns (-Wrestrict) on "lit" + string&&
      name.append(percentile_word(p)).append("_").append(key).append("_ms");
      j[name] = value;
    }
  }

  j["servesim"] = ctx.servesim.is_null() ? ordered_json::object() : ordered_json(ctx.servesim);
  return j;
}

// Writes one per-request array exactly as ordered_json::dump(2) lays out the value of a
// top-level key: "[]" when empty, else one element per line at indent 4 and "  ]"; an ITL
// list is itself such an array one level deeper. Scalars go through nlohmann's own serializer,
// so every number and string is spelled as dump() spells it.
void stream_array(std::ostream& out, const std::string& name, const MetricsOptions& options,
                  const std::vector<RequestRecord>& records,
                  const std::vector<StepLog>& step_logs) {
  nlohmann::detail::serializer<ordered_json> scalar(nlohmann::detail::output_adapter<char>(out),
                                                    ' ', ordered_json::error_handler_t::replace);
  const auto put = [&scalar](const ordered_json& v) { scalar.dump(v, false, false, 0); };
  const double offset_s = options.ttft_offset_s;
  bool any = false;
  for (const auto& r : records) {
    if (r.warmup) continue;
    out << (any ? ",\n    " : "[\n    ");
    any = true;
    const DetailedRow d = detailed_row(r, offset_s);
    if (name == "input_lens") {
      put(d.input_len);
    } else if (name == "output_lens") {
      put(d.output_len);
    } else if (name == "ttfts") {
      put(d.ttft);
    } else if (name == "latencies") {
      put(d.latency);
    } else if (name == "start_times") {
      put(d.start);
    } else if (name == "queue_times") {
      put(d.queue);
    } else if (name == "generated_texts") {
      put("");
    } else if (name == "errors") {
      put(d.ok ? std::string() : r.error);
    } else {  // itls
      bool gap = false;
      if (d.ok) {
        for_each_itl(r, step_logs, [&](double g) {
          out << (gap ? ",\n      " : "[\n      ");
          gap = true;
          put(g);
        });
      }
      out << (gap ? "\n    ]" : "[]");
    }
  }
  out << (any ? "\n  ]" : "[]");
}

}  // namespace

nlohmann::ordered_json metrics_summary_json(const BenchmarkMetrics& m,
                                            const MetricsOptions& options) {
  ordered_json j;
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["total_input_tokens"] = m.total_input_tokens;
  j["total_output_tokens"] = m.total_output_tokens;
  j["request_throughput"] = m.request_throughput;
  j["request_goodput"] =
      m.request_goodput ? ordered_json(*m.request_goodput) : ordered_json(nullptr);
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_token_throughput;
  for (const char* key : {"ttft", "tpot", "itl", "e2el"}) {
    if (!selected(options, key)) continue;
    const auto it = m.summaries.find(key);
    const MetricSummary empty;
    const MetricSummary& s = it == m.summaries.end() ? empty : it->second;
    const std::string k = key;
    j["mean_" + k + "_ms"] = s.mean_ms;
    j["median_" + k + "_ms"] = s.median_ms;
    j["std_" + k + "_ms"] = s.std_ms;
    for (const auto& [p, value] : s.percentiles_ms) {
      std::string name = "p";
      name.append(percentile_word(p)).append("_").append(k).append("_ms");
      j[name] = value;
    }
  }
  return j;
}

nlohmann::ordered_json build_result_json(const BenchmarkMetrics& m, const MetricsOptions& options,
                                         const ResultContext& ctx,
                                         const std::vector<RequestRecord>& records,
                                         const std::vector<StepLog>& step_logs) {
  return build_result(m, options, ctx, records, step_logs, /*stream_arrays=*/false);
}

void write_result_atomically(const std::string& path, const BenchmarkMetrics& m,
                             const MetricsOptions& options, const ResultContext& ctx,
                             const std::vector<RequestRecord>& records,
                             const std::vector<StepLog>& step_logs, bool replace) {
  const std::string text = build_result(m, options, ctx, records, step_logs, /*stream_arrays=*/true)
                               .dump(2, ' ', false, ordered_json::error_handler_t::replace) +
                           "\n";
  // The markers were dumped as strings: "\u0001servesim-array:NAME".
  const std::string marker = "\"\\u0001servesim-array:";
  write_atomically(
      path,
      [&](std::ostream& out) {
        std::size_t from = 0;
        for (;;) {
          const std::size_t at = text.find(marker, from);
          if (at == std::string::npos) break;
          out.write(text.data() + from, static_cast<std::streamsize>(at - from));
          const std::size_t name_begin = at + marker.size();
          const std::size_t name_end = text.find('"', name_begin);
          stream_array(out, text.substr(name_begin, name_end - name_begin), options, records,
                       step_logs);
          from = name_end + 1;
        }
        out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
      },
      replace);
}

std::string json_file_text(const nlohmann::ordered_json& j) {
  // Invalid UTF-8 (e.g. in an error string) is replaced rather than thrown half-way.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void write_json_atomically(const std::string& path, const nlohmann::ordered_json& j) {
  write_text_atomically(path, json_file_text(j));
}

void set_file_writes_enabled(bool enabled) { output_files_enabled().store(enabled); }

void write_text_atomically(const std::string& path, const std::string& text) {
  write_files_atomically({{path, text}});
}

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill,
                      bool replace) {
  if (!output_files_enabled().load()) return;
  refuse_output_at_write(path);
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ConfigError(path + ": cannot write result file: directory '" + dir.string() +
                      "' does not exist");
  }
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
  const TempFileRegistration removed_if_killed(tmp);  // by SIGINT/SIGTERM mid-write
  auto fail = [&](const std::string& why) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw ConfigError(path + ": cannot write result file (" + why + ")");
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw ConfigError(path + ": cannot write result file (cannot create '" + tmp + "')");
    try {
      fill(out);
    } catch (...) {
      out.close();
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw;
    }
    out.flush();
    if (!out) {
      out.close();
      fail("write to '" + tmp + "' failed");
    }
  }
  if (replace) {
    fs::rename(tmp, target, ec);
    if (ec) fail("rename failed: " + ec.message());
    return;
  }
  if (const int e = rename_no_replace(tmp, path); e != 0) {
    if (e == EEXIST) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw ConfigError(path +
                        ": not written: it already exists (written while this run was "
                        "simulating); expected a new file (--overwrite replaces it)");
    }
    fail("rename failed: " + std::generic_category().message(e));
  }
}

void print_summary_table(std::ostream& os, const BenchmarkMetrics& m,
                         const MetricsOptions& options) {
  ResultContext ctx;
  ctx.request_rate = "inf";
  ctx.max_concurrency = nullptr;
  print_summary_table(os, m, options, ctx);
}

void print_summary_table(std::ostream& os, const BenchmarkMetrics& m, const MetricsOptions& options,
                         const ResultContext& ctx) {
  // benchmark(): the lines it prints for a generative backend with a tokenizer.
  os << centered(" Serving Benchmark Result ", 50, '=') << '\n';
  os << line_int("Successful requests:", m.completed) << '\n';
  os << line_int("Failed requests:", m.failed) << '\n';
  if (ctx.max_concurrency.is_number()) {
    os << line_int("Maximum request concurrency:", ctx.max_concurrency.get<int64_t>()) << '\n';
  }
  if (rate_is_finite(ctx.request_rate)) {
    os << line_f2("Request rate configured (RPS):", ctx.request_rate.get<double>()) << '\n';
  }
  os << line_f2("Benchmark duration (s):", m.duration_s) << '\n';
  os << line_int("Total input tokens:", m.total_input_tokens) << '\n';
  os << line_int("Total generated tokens:", m.total_output_tokens) << '\n';
  os << line_f2("Request throughput (req/s):", m.request_throughput) << '\n';
  if (m.request_goodput) {
    os << line_f2("Request goodput (req/s):", *m.request_goodput) << '\n';
  }
  os << line_f2("Output token throughput (tok/s):", m.output_throughput) << '\n';
  os << line_f2("Peak output token throughput (tok/s):", m.max_output_tokens_per_s) << '\n';
  os << line_f2("Peak concurrent requests:", static_cast<double>(m.max_concurrent_requests))
     << '\n';
  os << line_f2("Total token throughput (tok/s):", m.total_token_throughput) << '\n';
  for (const auto& info : kMetrics) {
    const std::string key = info.key;
    if (!selected(options, key) || !metric_available(key, ctx)) continue;
    const auto it = m.summaries.find(key);
    const MetricSummary empty;
    const MetricSummary& s = it == m.summaries.end() ? empty : it->second;
    const std::string name = info.name;
    os << centered(info.header, 50, '-') << '\n';
    os << line_f2("Mean " + name + " (ms):", s.mean_ms) << '\n';
    os << line_f2("Median " + name + " (ms):", s.median_ms) << '\n';
    for (const auto& [p, value] : s.percentiles_ms) {
      std::string label = "P";
      label.append(percentile_word(p)).append(" ").append(name).append(" (ms):");
      os << line_f2(label, value) << '\n';
    }
  }
  os << std::string(50, '=') << '\n';
}

}  // namespace servesim::metrics
