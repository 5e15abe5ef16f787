#include "sim/measured/readers.h"

#include <filesystem>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/measured/reader_helpers.h"

namespace servesim::measured {

using namespace detail;  // the parsing helpers every reader shares

json parse_python_json(const std::string& text, const std::string& where) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (text.compare(i, 9, "-Infinity") == 0) {
      out += "\"-inf\"";
      i += 8;
    } else if (text.compare(i, 8, "Infinity") == 0) {
      out += "\"inf\"";
      i += 7;
    } else if (text.compare(i, 3, "NaN") == 0) {
      out += "null";
      i += 2;
    } else {
      out += c;
    }
  }
  return parse_json_text(out, where);  // also refuses 1e400 and duplicate keys
}

std::string detect_format(const std::string& path) {
  const fs::path p(path);
  if (fs::is_directory(p)) {
    if (fs::is_regular_file(p / "requests.jsonl") ||
        fs::is_regular_file(p / "vllm" / "requests.jsonl")) {
      return "llmservingsim";
    }
    throw ConfigError(path +
                      ": a folder without requests.jsonl or vllm/requests.jsonl; expected a "
                      "result file");
  }
  if (!fs::exists(p)) throw ConfigError(path + ": no such file");
  const std::string name = p.filename().string();
  if (name == "requests.jsonl") return "llmservingsim";
  if (p.extension() == ".jsonl") return "sglang-bench";
  if (p.extension() == ".csv") {
    // InferenceX's and Argonne's summary tables are recognised by their headers; other CSVs are
    // guidellm's.
    const std::vector<std::string> lines = read_lines(p);
    if (!lines.empty() &&
        lines[0].rfind("model,gpu,precision,framework,tp,isl_osl_label", 0) == 0) {
      return "inferencex";
    }
    if (!lines.empty() && lines[0].rfind("Hardware,Num of Hardware,Framework,Model", 0) == 0) {
      return "argonne";
    }
    if (!lines.empty() && lines[0].rfind("row_id,source_id,source_url", 0) == 0) {
      return "public-vllm-runs";
    }
    return "guidellm";
  }
  if (name.size() >= 15 && name.compare(name.size() - 15, 15, "genai_perf.json") == 0) {
    return "genai-perf";
  }
  if (p.extension() == ".json") {
    const json j = parse_python_json(read_text(p), path);
    if (j.is_object() && j.contains("time_to_first_token")) return "genai-perf";
    if (j.is_object() &&
        (j.contains("ttfts") || j.contains("mean_ttft_ms") || j.contains("completed"))) {
      return "vllm-bench";
    }
  }
  throw ConfigError(path +
                    ": unknown result format; expected a vllm bench serve JSON, an SGLang "
                    "bench_serving JSONL, a genai-perf profile_export_genai_perf.json, an "
                    "LLMServingSim requests.jsonl or a guidellm per-request CSV");
}

std::vector<MeasuredRun> read_runs(const std::string& path) {
  const std::string format = detect_format(path);
  if (format == "vllm-bench") return read_vllm_bench_json(path);
  if (format == "sglang-bench") return read_sglang_jsonl(path);
  if (format == "genai-perf") return read_genai_perf_json(path);
  if (format == "llmservingsim") return read_llmservingsim(path);
  if (format == "inferencex") return read_inferencex_csv(path);
  if (format == "argonne") return read_argonne_csv(path);
  if (format == "public-vllm-runs") return read_public_runs_csv(path);
  return read_guidellm_csv(path);
}

}  // namespace servesim::measured
