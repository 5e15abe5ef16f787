#include "hardware/profiles.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/line_reader.h"
#include "sim/base/number_text.h"

namespace servesim::hardware {
namespace {

// A small CSV table: header names → column index; '#' lines and empty lines skipped. Read with
// the project's CSV reader (sim/base/line_reader.h): its line ends, byte-order marks, quoting and
// messages.
class CsvTable {
 public:
  explicit CsvTable(const std::string& path) : path_(path) {
    check_input_file(path, "", kMaxDataFileBytes);
    LineReader reader(path, "");
    std::string line;
    bool header = true;
    while (reader.next(line)) {
      if (line.empty() || line[0] == '#') continue;
      if (header) {
        const std::vector<std::string> cells = split_csv_header(reader, line);
        for (size_t i = 0; i < cells.size(); ++i) columns_[cells[i]] = i;
        header = false;
      } else {
        rows_.push_back(split_csv(line));
        line_numbers_.push_back(static_cast<int>(reader.line_number()));
      }
    }
    if (header) throw ConfigError(path + ": empty file (no header line)");
  }
  size_t size() const { return rows_.size(); }
  std::string where(size_t row) const { return path_ + ":" + std::to_string(line_numbers_[row]); }
  const std::string& path() const { return path_; }
  bool has(const std::string& column) const { return columns_.count(column) > 0; }
  const std::string& text(size_t row, const std::string& column) const {
    auto it = columns_.find(column);
    if (it == columns_.end()) throw ConfigError(path_ + ": missing column '" + column + "'");
    if (it->second >= rows_[row].size()) {
      throw ConfigError(path_ + ":" + std::to_string(line_numbers_[row]) + ": column '" + column +
                        "' is missing on this line");
    }
    return rows_[row][it->second];
  }
  double number(size_t row, const std::string& column) const {
    const std::string& t = text(row, column);
    const std::optional<double> v = parse_finite_double(t);
    if (!v) {
      throw ConfigError(path_ + ":" + std::to_string(line_numbers_[row]) + ": column '" + column +
                        "' has '" + t + "'; expected a finite number");
    }
    return *v;
  }
  // A count (tokens, workers, TP degree): an integral number in [0, 1e12], so that the casts
  // that follow are defined.
  int64_t count(size_t row, const std::string& column) const {
    const double v = number(row, column);
    if (!(v >= 0 && v <= 1e12 && v == std::floor(v))) {
      throw ConfigError(path_ + ":" + std::to_string(line_numbers_[row]) + ": column '" + column +
                        "' has '" + text(row, column) + "'; expected an integer in [0, 1e12]");
    }
    return static_cast<int64_t>(v);
  }
  // A count that fits an int (a TP degree, a worker count): at most 2^30.
  int small_count(size_t row, const std::string& column) const {
    return static_cast<int>(std::min<int64_t>(count(row, column), int64_t{1} << 30));
  }

 private:
  std::string path_;
  std::map<std::string, size_t> columns_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> line_numbers_;
};

}  // namespace

std::vector<GemmSample> read_vidur_mlp(const std::string& path) {
  const CsvTable t(path);
  std::vector<GemmSample> out;
  for (size_t i = 0; i < t.size(); ++i) {
    const double heads = t.number(i, "n_head"), kv = t.number(i, "n_kv_head");
    const double h = t.number(i, "n_embd"), ffn = t.number(i, "n_expanded_embd");
    const bool gated = t.text(i, "use_gated_mlp") == "True";
    const int tp = t.small_count(i, "num_tensor_parallel_workers");
    const auto tokens = t.count(i, "num_tokens");
    const double d = h / heads;
    auto add = [&](const char* op, const char* column, double in, double outd) {
      GemmSample s;
      s.op = op;
      s.tokens = tokens;
      s.tp = tp;
      s.in_dim = in;
      s.out_dim = outd;
      s.time_s = t.number(i, std::string("time_stats.") + column + ".median") * 1e-3;
      out.push_back(s);
    };
    add("qkv", "attn_pre_proj", h, (heads + 2 * kv) * d / tp);
    add("o", "attn_post_proj", heads * d / tp, h);
    add("gate_up", "mlp_up_proj", h, (gated ? 2 : 1) * ffn / tp);
    add("down", "mlp_down_proj", ffn / tp, h);
  }
  return out;
}

std::vector<CollectiveSample> read_vidur_collective(const std::string& path) {
  const CsvTable t(path);
  std::vector<CollectiveSample> out;
  for (size_t i = 0; i < t.size(); ++i) {
    CollectiveSample s;
    s.collective = t.text(i, "collective");
    s.num_workers = t.small_count(i, "num_workers");
    s.devices_per_node = t.small_count(i, "devices_per_node");
    s.bytes = t.number(i, "size");
    s.time_s = t.number(i, "time_stats." + s.collective + ".median") * 1e-3;
    out.push_back(s);
  }
  return out;
}

std::vector<LayerSample> read_llmservingsim_layers(const std::string& path) {
  const CsvTable t(path);
  std::vector<LayerSample> out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    LayerSample s;
    s.layer = t.text(i, "layer_name");
    s.tokens = t.count(i, "input");
    s.kv_cache = t.count(i, "kv_cache");
    s.tp = t.small_count(i, "tp_size");
    s.time_s = t.number(i, "latency(ns)") * 1e-9;
    out.push_back(s);
  }
  return out;
}

std::vector<GemmSample> gemm_samples_from_layers(const std::vector<LayerSample>& layers,
                                                 const LayerDims& d) {
  std::vector<GemmSample> out;
  for (const LayerSample& l : layers) {
    const double tp = l.tp;
    double in = 0, outd = 0;
    if (l.layer == "q_proj") {
      in = d.hidden, outd = d.heads * d.head_dim / tp;
    } else if (l.layer == "k_proj" || l.layer == "v_proj") {
      in = d.hidden, outd = std::max(1.0, d.kv_heads / tp) * d.head_dim;
    } else if (l.layer == "o_proj") {
      in = d.heads * d.head_dim / tp, outd = d.hidden;
    } else if (l.layer == "gate_proj" || l.layer == "up_proj") {
      in = d.hidden, outd = d.intermediate / tp;
    } else if (l.layer == "down_proj") {
      in = d.intermediate / tp, outd = d.hidden;
    } else if (l.layer == "lm_head") {
      in = d.hidden, outd = d.vocab / tp;
    } else {
      continue;
    }
    GemmSample g;
    g.op = l.layer;
    g.tokens = l.tokens;
    g.tp = l.tp;
    g.in_dim = in;
    g.out_dim = outd;
    g.time_s = l.time_s;
    out.push_back(g);
  }
  return out;
}

std::vector<SplitwiseSample> read_splitwise(const std::string& path) {
  const CsvTable t(path);
  std::vector<SplitwiseSample> out;
  for (size_t i = 0; i < t.size(); ++i) {
    SplitwiseSample s;
    s.model = t.text(i, "model");
    s.hardware = t.text(i, "hardware");
    s.prompt_size = t.count(i, "prompt_size");
    s.batch_size = t.count(i, "batch_size");
    s.token_size = t.count(i, "token_size");
    s.tp = t.small_count(i, "tensor_parallel");
    s.prompt_time_s = t.number(i, "prompt_time") * 1e-3;
    s.token_time_s = t.number(i, "token_time") * 1e-3;
    out.push_back(s);
  }
  return out;
}

std::vector<KernelRow> read_kernel_csv(const std::string& path) {
  const CsvTable t(path);
  for (const char* c : {"kind", "dtype", "m_tokens", "n", "k", "time_us"}) {
    if (!t.has(c)) {
      throw ConfigError(path + ": missing column '" + c +
                        "'; expected the columns of kernels_h100.csv (scripts/profile_gpu.py)");
    }
  }
  // Integer cells may be empty (a column that does not apply to the row's kind).
  auto integer = [&](size_t i, const char* column) -> long long {
    if (!t.has(column) || t.text(i, column).empty()) return 0;
    const double v = t.number(i, column);
    // Range first: casting 5.6e83 to long long is undefined behaviour (found by
    // fuzz_kernel_tables). 2^53 keeps every accepted value exact.
    if (!(v >= 0 && v <= 9007199254740992.0) || v != std::floor(v)) {
      throw ConfigError(t.where(i) + ": column '" + column + "' has '" + t.text(i, column) +
                        "'; expected a non-negative integer");
    }
    return static_cast<long long>(v);
  };
  auto word = [&](size_t i, const char* column) {
    return t.has(column) ? t.text(i, column) : std::string();
  };
  std::vector<KernelRow> out;
  for (size_t i = 0; i < t.size(); ++i) {
    KernelRow r;
    r.gpu = word(i, "gpu");
    r.kind = t.text(i, "kind");
    r.dtype = t.text(i, "dtype");
    r.model = word(i, "model");
    r.op = word(i, "op");
    r.tp = static_cast<int>(integer(i, "tp"));
    r.m_tokens = integer(i, "m_tokens");
    r.n = integer(i, "n");
    r.k = integer(i, "k");
    r.batch = integer(i, "batch");
    r.q_len = integer(i, "q_len");
    r.kv_len = integer(i, "kv_len");
    r.q_heads = integer(i, "q_heads");
    r.kv_heads = integer(i, "kv_heads");
    r.head_dim = integer(i, "head_dim");
    const double us = t.number(i, "time_us");
    if (!(us > 0)) {
      throw ConfigError(t.where(i) + ": column 'time_us' has '" + t.text(i, "time_us") +
                        "'; expected a time > 0");
    }
    r.time_s = us * 1e-6;
    if (r.kind == "linear") {
      if (r.m_tokens <= 0 || r.n <= 0 || r.k <= 0) {
        throw ConfigError(t.where(i) + ": a linear row needs m_tokens, n and k > 0");
      }
      if (r.dtype != "bf16" && r.dtype != "fp8") {
        throw ConfigError(t.where(i) + ": column 'dtype' has '" + r.dtype +
                          "'; expected bf16 or fp8");
      }
    } else if (r.kind == "attn_prefill" || r.kind == "attn_decode") {
      if (r.q_heads <= 0 || r.kv_heads <= 0 || r.head_dim <= 0 || r.kv_len <= 0 || r.q_len <= 0 ||
          r.batch <= 0) {
        throw ConfigError(t.where(i) +
                          ": an attention row needs batch, q_len, kv_len, q_heads, "
                          "kv_heads and head_dim > 0");
      }
    } else if (r.kind == "elementwise") {
      // The elementwise chain of one layer (scripts/profile_gpu.py): n = hidden size, k = the
      // SwiGLU width per token per rank, heads per rank.
      if (r.m_tokens <= 0 || r.n <= 0 || r.k <= 0 || r.q_heads <= 0 || r.kv_heads <= 0 ||
          r.head_dim <= 0) {
        throw ConfigError(t.where(i) +
                          ": an elementwise row needs m_tokens, n, k, q_heads, "
                          "kv_heads and head_dim > 0");
      }
      if (r.dtype != "bf16" && r.dtype != "fp8") {
        throw ConfigError(t.where(i) + ": column 'dtype' has '" + r.dtype +
                          "'; expected bf16 or fp8");
      }
    } else if (r.kind == "moe") {
      // An MoE layer's routed experts as one grouped GEMM (scripts/profile_gpu.py --sections
      // moe): n, k per rank, batch = experts, q_len = top-k.
      if (r.m_tokens <= 0 || r.n <= 0 || r.k <= 0 || r.batch <= 0 || r.q_len <= 0 ||
          r.q_len > r.batch) {
        throw ConfigError(t.where(i) +
                          ": an moe row needs m_tokens, n, k, batch (experts) > 0 "
                          "and 0 < q_len (top-k) <= batch");
      }
      if (r.dtype != "bf16" && r.dtype != "fp8") {
        throw ConfigError(t.where(i) + ": column 'dtype' has '" + r.dtype +
                          "'; expected bf16 or fp8");
      }
    } else if (r.kind == "mla_decode" || r.kind == "mla_prefill" || r.kind == "mla_absorb") {
      // Multi-head latent attention (scripts/profile_mla.py): read and checked, no curve yet.
      if (r.m_tokens <= 0 || r.q_heads <= 0) {
        throw ConfigError(t.where(i) + ": an " + r.kind + " row needs m_tokens and q_heads > 0");
      }
    } else if (r.kind == "deltanet_chunked" || r.kind == "deltanet_recurrent") {
      // Gated DeltaNet (scripts/profile_deltanet.py): batch = sequences, q_len = tokens each,
      // q_heads / kv_heads = key / value heads per rank; read and checked, no curve yet.
      if (r.m_tokens <= 0 || r.batch <= 0 || r.q_len <= 0 || r.q_heads <= 0 || r.kv_heads <= 0 ||
          r.head_dim <= 0) {
        throw ConfigError(t.where(i) + ": a " + r.kind +
                          " row needs m_tokens, batch, q_len, q_heads, kv_heads and "
                          "head_dim > 0");
      }
    } else {
      throw ConfigError(t.where(i) + ": column 'kind' has '" + r.kind +
                        "'; expected linear, attn_prefill, attn_decode, elementwise, moe, "
                        "mla_decode, mla_prefill, mla_absorb, deltanet_chunked or "
                        "deltanet_recurrent");
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) throw ConfigError(path + ": no rows");
  return out;
}

}  // namespace servesim::hardware
