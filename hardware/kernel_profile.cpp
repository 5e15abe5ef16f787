#include "hardware/kernel_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::hardware {

MonotoneCurve MonotoneCurve::fit(std::vector<std::pair<double, double>> samples) {
  std::sort(samples.begin(), samples.end());
  // Blocks of the pool-adjacent-violators algorithm on log y: (x values, mean log y, weight).
  struct Block {
    std::vector<double> xs;
    double mean = 0;
    double weight = 0;
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < samples.size();) {
    // Repeated x: one point at the mean log y, weighted by its count.
    size_t j = i;
    double sum = 0;
    while (j < samples.size() && samples[j].first == samples[i].first) {
      sum += std::log(samples[j].second);
      ++j;
    }
    Block b{{samples[i].first}, sum / static_cast<double>(j - i), static_cast<double>(j - i)};
    blocks.push_back(std::move(b));
    // Merge while the last two blocks decrease.
    while (blocks.size() >= 2 && blocks[blocks.size() - 2].mean > blocks.back().mean) {
      Block last = std::move(blocks.back());
      blocks.pop_back();
      Block& prev = blocks.back();
      prev.mean = (prev.mean * prev.weight + last.mean * last.weight) / (prev.weight + last.weight);
      prev.weight += last.weight;
      prev.xs.insert(prev.xs.end(), last.xs.begin(), last.xs.end());
    }
    i = j;
  }
  MonotoneCurve c;
  for (const Block& b : blocks) {
    for (double x : b.xs) {
      c.x.push_back(x);
      c.y.push_back(std::exp(b.mean));
    }
  }
  return c;
}

double MonotoneCurve::at(double xq) const {
  if (x.empty()) return 0;
  if (xq <= x.front()) return y.front();
  if (xq >= x.back()) return y.back() * xq / x.back();
  const size_t hi = static_cast<size_t>(std::upper_bound(x.begin(), x.end(), xq) - x.begin());
  const size_t lo = hi - 1;
  // The step loop asks for the same point again and again (decode batches padded to the same
  // CUDA-graph size): a small per-thread memo spares the log and pow, which otherwise cost the
  // simulator ~15 % of its time. It is keyed by everything the result depends on (the segment's
  // two points and x), so it returns exactly what the computation would, for any curve.
  struct Memo {
    double xq = -1, x0 = 0, x1 = 0, y0 = 0, y1 = 0, yq = 0;
  };
  thread_local Memo memo[64];
  uint64_t bx = 0, by = 0;  // a cheap mix of the two keys' bits (std::hash<double> hashes bytes)
  std::memcpy(&bx, &xq, sizeof bx);
  std::memcpy(&by, &y[lo], sizeof by);
  constexpr uint64_t kMix = 0x9E3779B97F4A7C15ull;
  Memo& m = memo[((bx ^ (by * kMix)) * kMix) >> 58];
  if (m.xq == xq && m.x0 == x[lo] && m.x1 == x[hi] && m.y0 == y[lo] && m.y1 == y[hi]) return m.yq;
  const double f = std::log(xq / x[lo]) / std::log(x[hi] / x[lo]);
  const double yq = y[lo] * std::pow(y[hi] / y[lo], f);
  m = {xq, x[lo], x[hi], y[lo], y[hi], yq};
  return yq;
}

std::vector<KernelRow> kernel_rows_from_gemms(const std::vector<GemmSample>& samples,
                                              const std::string& gpu) {
  std::vector<KernelRow> rows;
  for (const GemmSample& s : samples) {
    KernelRow r;
    r.gpu = gpu;
    r.kind = "linear";
    r.dtype = "bf16";
    r.op = s.op;
    r.tp = s.tp;
    r.m_tokens = s.tokens;
    r.n = std::llround(s.out_dim);
    r.k = std::llround(s.in_dim);
    r.time_s = s.time_s;
    if (r.m_tokens > 0 && r.n > 0 && r.k > 0 && r.time_s > 0) rows.push_back(r);
  }
  return rows;
}

void check_rows_measured_on(const std::vector<KernelRow>& rows, const GpuSpec& gpu,
                            const std::string& flag, const std::string& file) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string& label = rows[i].gpu;
    if (label.empty() || label_names_gpu(label, gpu)) continue;
    throw ConfigError(flag + ": " + file + ": data row " + std::to_string(i + 1) + " has gpu '" +
                      label + "', another GPU than " + gpu.name +
                      ": a kernel table times kernels on the GPU it was measured on; expected "
                      "rows measured on " +
                      gpu.name + " (gpu column '" + gpu.name + "' or its family '" +
                      gpu.name.substr(0, gpu.name.find('-')) + "'), or --gpu " + label +
                      " (or a GPU of that family)");
  }
}

KernelProfile KernelProfile::from_rows(const std::vector<KernelRow>& rows, const std::string& gpu) {
  std::map<LinearShape, std::vector<std::pair<double, double>>> lin;
  std::map<AttentionShape, std::vector<std::pair<double, double>>> pre;
  std::map<ElementwiseShape, std::vector<std::pair<double, double>>> elem;
  std::map<MoeShape, std::vector<std::pair<double, double>>> moe;
  for (const KernelRow& r : rows) {
    if (r.kind == "linear") {
      lin[{r.dtype, r.n, r.k}].emplace_back(static_cast<double>(r.m_tokens), r.time_s);
    } else if (r.kind == "attn_prefill" && r.batch == 1 && r.q_len == r.kv_len) {
      pre[{r.q_heads, r.kv_heads, r.head_dim}].emplace_back(static_cast<double>(r.q_len), r.time_s);
    } else if (r.kind == "elementwise" && r.op == "layer_compiled") {
      elem[{r.dtype, r.n, r.k, r.q_heads, r.kv_heads, r.head_dim}].emplace_back(
          static_cast<double>(r.m_tokens), r.time_s);
    } else if (r.kind == "moe" && r.dtype == "bf16") {
      // TP shards (every expert sliced) and EP shards (op *_ep: batch = the rank's whole experts,
      // m_tokens = tokens per rank with about m·top-k rows on it) share the key: both map tokens
      // to rows as m·top-k over `batch` experts.
      moe[{r.dtype, r.batch, r.q_len, r.n, r.k}].emplace_back(static_cast<double>(r.m_tokens),
                                                              r.time_s);
    }
  }
  KernelProfile p;
  p.gpu_ = gpu;
  for (auto& [shape, samples] : lin) p.linear_[shape] = MonotoneCurve::fit(std::move(samples));
  for (auto& [shape, samples] : pre) p.prefill_[shape] = MonotoneCurve::fit(std::move(samples));
  for (auto& [shape, samples] : elem) {
    p.elementwise_[shape] = MonotoneCurve::fit(std::move(samples));
  }
  for (auto& [shape, samples] : moe) p.moe_[shape] = MonotoneCurve::fit(std::move(samples));
  return p;
}

std::optional<double> KernelProfile::linear_time_s(const LinearShape& shape, double tokens) const {
  auto it = linear_.find(shape);
  if (it == linear_.end()) return std::nullopt;
  return it->second.at(tokens);
}

std::optional<LinearShape> KernelProfile::nearest_linear_shape(const LinearShape& shape) const {
  std::optional<LinearShape> best;
  double best_d = std::numeric_limits<double>::infinity();
  for (const auto& [s, curve] : linear_) {
    if (s.dtype != shape.dtype) continue;
    const double dn = std::log(static_cast<double>(s.n) / static_cast<double>(shape.n));
    const double dk = std::log(static_cast<double>(s.k) / static_cast<double>(shape.k));
    const double d = dn * dn + dk * dk;
    if (d < best_d) {  // strict: ties go to the first in map order (deterministic)
      best_d = d;
      best = s;
    }
  }
  return best;
}

std::optional<AttentionShape> KernelProfile::nearest_attention_shape(
    const AttentionShape& shape) const {
  std::optional<AttentionShape> best;
  double best_d = std::numeric_limits<double>::infinity();
  for (const auto& [s, curve] : prefill_) {
    const double dq = std::log(static_cast<double>(s.q_heads) / static_cast<double>(shape.q_heads));
    const double dkv =
        std::log(static_cast<double>(s.kv_heads) / static_cast<double>(shape.kv_heads));
    // A different head_dim is a different kernel configuration: only as a last resort.
    const double dd = s.head_dim == shape.head_dim ? 0 : 100;
    const double d = dq * dq + dkv * dkv + dd;
    if (d < best_d) {
      best_d = d;
      best = s;
    }
  }
  return best;
}

double elementwise_bytes_per_token(const ElementwiseShape& s) {
  const bool fp8 = s.dtype == "fp8";
  const double a = 2, o = fp8 ? 1 : 2;
  const double h = static_cast<double>(s.hidden), w = static_cast<double>(s.width);
  const double qh = static_cast<double>(s.q_heads), kvh = static_cast<double>(s.kv_heads);
  const double hd = static_cast<double>(s.head_dim);
  double b = 2 * h * (3 * a + o) + 2 * (qh + kvh) * hd * a + 4 * kvh * hd * a + w * (2 * a + o);
  if (fp8) b += qh * hd * (a + 1);
  return b;
}

std::optional<ElementwiseShape> KernelProfile::nearest_elementwise_shape(
    const ElementwiseShape& shape) const {
  std::optional<ElementwiseShape> best;
  double best_d = std::numeric_limits<double>::infinity();
  const double bytes = elementwise_bytes_per_token(shape);
  for (const auto& [s, curve] : elementwise_) {
    if (s.dtype != shape.dtype) continue;
    // Traffic per token sets the time at many tokens; the hidden size (the RMSNorm rows'
    // length) breaks ties between shapes of equal traffic.
    const double db = std::log(elementwise_bytes_per_token(s) / bytes);
    const double dh = std::log(static_cast<double>(s.hidden) / static_cast<double>(shape.hidden));
    const double d = db * db + dh * dh;
    if (d < best_d) {  // strict: ties go to the first in map order (deterministic)
      best_d = d;
      best = s;
    }
  }
  return best;
}

std::optional<MoeShape> KernelProfile::nearest_moe_shape(const MoeShape& shape) const {
  std::optional<MoeShape> best;
  double best_d = std::numeric_limits<double>::infinity();
  for (const auto& [s, curve] : moe_) {
    const double dn = std::log(static_cast<double>(s.n) / static_cast<double>(shape.n));
    const double dk = std::log(static_cast<double>(s.k) / static_cast<double>(shape.k));
    // Another expert count or top-k routes the rows differently: only as a last resort.
    const double dr = s.experts == shape.experts && s.top_k == shape.top_k ? 0 : 100;
    const double d = dn * dn + dk * dk + dr;
    if (d < best_d) {  // strict: ties go to the first in map order (deterministic)
      best_d = d;
      best = s;
    }
  }
  return best;
}

KernelProfile KernelProfile::without(const LinearShape& leave_out) const {
  KernelProfile p = *this;
  p.linear_.erase(leave_out);
  return p;
}

namespace {

void add_curve(nlohmann::ordered_json& j, const MonotoneCurve& c, const char* x_name) {
  j[x_name] = c.x;
  std::vector<double> us;
  for (double y : c.y) us.push_back(std::round(y * 1e9) / 1e3);  // µs, 3 decimals (= ns)
  j["time_us"] = us;
}

MonotoneCurve curve_from_json(const nlohmann::json& j, const char* x_name,
                              const std::string& where) {
  const auto xs = require_field<std::vector<double>>(j, x_name, where);
  const auto us = require_field<std::vector<double>>(j, "time_us", where);
  if (xs.empty() || xs.size() != us.size()) {
    throw ConfigError(where + ": '" + std::string(x_name) +
                      "' and 'time_us' must be non-empty and of equal length");
  }
  std::vector<std::pair<double, double>> samples;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!(xs[i] > 0) || !(us[i] > 0)) {
      throw ConfigError(where + ": point " + std::to_string(i) + " must have x > 0 and time > 0");
    }
    samples.emplace_back(xs[i], us[i] * 1e-6);
  }
  // Stored curves are already monotone; fit() keeps them as they are (and repairs a hand edit).
  return MonotoneCurve::fit(std::move(samples));
}

}  // namespace

nlohmann::ordered_json KernelProfile::to_json() const {
  nlohmann::ordered_json j;
  j["gpu"] = gpu_;
  if (identity_) j["gpu_identity"] = identity_->to_json();  // absent: older tables unchanged
  nlohmann::ordered_json lin = nlohmann::ordered_json::array();
  for (const auto& [s, c] : linear_) {
    nlohmann::ordered_json e;
    e["dtype"] = s.dtype;
    e["n"] = s.n;
    e["k"] = s.k;
    add_curve(e, c, "tokens");
    lin.push_back(e);
  }
  j["linear"] = lin;
  nlohmann::ordered_json pre = nlohmann::ordered_json::array();
  for (const auto& [s, c] : prefill_) {
    nlohmann::ordered_json e;
    e["q_heads"] = s.q_heads;
    e["kv_heads"] = s.kv_heads;
    e["head_dim"] = s.head_dim;
    add_curve(e, c, "seq_len");
    pre.push_back(e);
  }
  j["attention_prefill"] = pre;
  if (!elementwise_.empty()) {  // absent rather than empty: older tables stay byte-identical
    nlohmann::ordered_json el = nlohmann::ordered_json::array();
    for (const auto& [s, c] : elementwise_) {
      nlohmann::ordered_json e;
      e["dtype"] = s.dtype;
      e["hidden"] = s.hidden;
      e["width"] = s.width;
      e["q_heads"] = s.q_heads;
      e["kv_heads"] = s.kv_heads;
      e["head_dim"] = s.head_dim;
      add_curve(e, c, "tokens");
      el.push_back(e);
    }
    j["elementwise"] = el;
  }
  if (!moe_.empty()) {  // absent rather than empty, as above
    nlohmann::ordered_json mo = nlohmann::ordered_json::array();
    for (const auto& [s, c] : moe_) {
      nlohmann::ordered_json e;
      e["dtype"] = s.dtype;
      e["experts"] = s.experts;
      e["top_k"] = s.top_k;
      e["n"] = s.n;
      e["k"] = s.k;
      add_curve(e, c, "tokens");
      mo.push_back(e);
    }
    j["moe"] = mo;
  }
  return j;
}

KernelProfile KernelProfile::from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": 'kernels' must be an object");
  KernelProfile p;
  p.gpu_ = optional_field<std::string>(j, "gpu", where, "");
  if (j.contains("gpu_identity") && !j.at("gpu_identity").is_null()) {
    p.identity_ = GpuIdentity::from_json(j.at("gpu_identity"), where + ": kernels");
  }
  // A list each, or absent: indexing another JSON value by position would throw nlohmann's
  // type_error, which is not a ConfigError.
  auto list = [&](const char* key) {
    auto v = optional_field<nlohmann::json>(j, key, where, nlohmann::json::array());
    if (!v.is_array()) {
      throw ConfigError(
          where + ": kernels." + key + " has value " +
          v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 60) +
          "; expected a list of shapes");
    }
    return v;
  };
  const auto lin = list("linear");
  for (size_t i = 0; i < lin.size(); ++i) {
    const std::string w = where + ": kernels.linear[" + std::to_string(i) + "]";
    LinearShape s{require_field<std::string>(lin[i], "dtype", w),
                  require_field<long long>(lin[i], "n", w),
                  require_field<long long>(lin[i], "k", w)};
    if (s.dtype != "bf16" && s.dtype != "fp8") {
      throw ConfigError(w + ": field 'dtype' has '" + s.dtype + "'; expected bf16 or fp8");
    }
    if (s.n <= 0 || s.k <= 0) throw ConfigError(w + ": fields 'n' and 'k' must be > 0");
    p.linear_[s] = curve_from_json(lin[i], "tokens", w);
  }
  const auto pre = list("attention_prefill");
  for (size_t i = 0; i < pre.size(); ++i) {
    const std::string w = where + ": kernels.attention_prefill[" + std::to_string(i) + "]";
    AttentionShape s{require_field<long long>(pre[i], "q_heads", w),
                     require_field<long long>(pre[i], "kv_heads", w),
                     require_field<long long>(pre[i], "head_dim", w)};
    if (s.q_heads <= 0 || s.kv_heads <= 0 || s.head_dim <= 0) {
      throw ConfigError(w + ": heads and head_dim must be > 0");
    }
    p.prefill_[s] = curve_from_json(pre[i], "seq_len", w);
  }
  const auto el = list("elementwise");
  for (size_t i = 0; i < el.size(); ++i) {
    const std::string w = where + ": kernels.elementwise[" + std::to_string(i) + "]";
    ElementwiseShape s{require_field<std::string>(el[i], "dtype", w),
                       require_field<long long>(el[i], "hidden", w),
                       require_field<long long>(el[i], "width", w),
                       require_field<long long>(el[i], "q_heads", w),
                       require_field<long long>(el[i], "kv_heads", w),
                       require_field<long long>(el[i], "head_dim", w)};
    if (s.dtype != "bf16" && s.dtype != "fp8") {
      throw ConfigError(w + ": field 'dtype' has '" + s.dtype + "'; expected bf16 or fp8");
    }
    if (s.hidden <= 0 || s.width <= 0 || s.q_heads <= 0 || s.kv_heads <= 0 || s.head_dim <= 0) {
      throw ConfigError(w + ": hidden, width, heads and head_dim must be > 0");
    }
    p.elementwise_[s] = curve_from_json(el[i], "tokens", w);
  }
  const auto mo = list("moe");
  for (size_t i = 0; i < mo.size(); ++i) {
    const std::string w = where + ": kernels.moe[" + std::to_string(i) + "]";
    MoeShape s{require_field<std::string>(mo[i], "dtype", w),
               require_field<long long>(mo[i], "experts", w),
               require_field<long long>(mo[i], "top_k", w), require_field<long long>(mo[i], "n", w),
               require_field<long long>(mo[i], "k", w)};
    if (s.dtype != "bf16") {
      throw ConfigError(w + ": field 'dtype' has '" + s.dtype + "'; expected bf16");
    }
    if (s.experts <= 0 || s.top_k <= 0 || s.top_k > s.experts || s.n <= 0 || s.k <= 0) {
      throw ConfigError(w + ": experts, n and k must be > 0 and 0 < top_k <= experts");
    }
    p.moe_[s] = curve_from_json(mo[i], "tokens", w);
  }
  return p;
}

}  // namespace servesim::hardware
