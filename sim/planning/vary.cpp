#include "sim/planning/vary.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/number_text.h"

namespace servesim::planning {
namespace {

using nlohmann::json;

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream ss(s);
  while (std::getline(ss, item, sep)) out.push_back(trim(item));
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

bool parse_int(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (used != text.size()) return false;
  *out = v;
  return true;
}

std::string number_text(double v) {
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}

}  // namespace

std::vector<double> parse_axis_values(const std::string& flag, const std::string& raw_text,
                                      bool integers) {
  const std::string text = trim(raw_text);
  const std::string shape =
      integers ? "expected start:stop:step or a list of integers >= 1 such as 1,2,4,8"
               : "expected start:stop:step such as 1:40:1, or a list such as 1,2,5,10";
  auto bad = [&](const std::string& why) {
    return ConfigError(flag + ": '" + raw_text + "' is invalid: " + why + "; " + shape);
  };
  if (text.empty()) throw bad("no values");
  auto number = [&](const std::string& item, const char* what) {
    const std::optional<double> v = parse_finite_double(item);
    if (!v) throw bad(std::string(what) + " '" + item + "' is not a finite number");
    return *v;
  };
  auto check_value = [&](double v) {
    if (!(v > 0)) throw bad("value " + number_text(v) + " is not > 0");
    if (integers && v != std::floor(v)) throw bad("value " + number_text(v) + " is not an integer");
  };

  std::vector<double> values;
  if (text.find(':') != std::string::npos) {
    const std::vector<std::string> parts = split(text, ':');
    if (parts.size() != 3) throw bad("a range has three parts");
    const double start = number(parts[0], "start");
    const double stop = number(parts[1], "stop");
    const double step = number(parts[2], "step");
    if (start > stop) {
      throw bad("start " + number_text(start) + " is above stop " + number_text(stop));
    }
    if (!(step > 0)) throw bad("step " + number_text(step) + " is not > 0");
    // Count with a small relative slack so that 0.1:0.3:0.1 includes 0.3 despite rounding.
    const double count_f = std::floor((stop - start) / step * (1 + 1e-12) + 1e-9) + 1;
    if (count_f > double(kMaxAxisValues)) {
      throw bad("more than " + std::to_string(kMaxAxisValues) + " values");
    }
    const auto count = static_cast<int64_t>(count_f);
    for (int64_t k = 0; k < count; ++k) {
      double v = start + double(k) * step;
      v = std::round(v * 1e10) / 1e10;
      values.push_back(v);
    }
  } else {
    for (const std::string& item : split(text, ',')) {
      if (item.empty()) throw bad("empty list item");
      values.push_back(number(item, "value"));
    }
    if (values.size() > size_t(kMaxAxisValues)) {
      throw bad("more than " + std::to_string(kMaxAxisValues) + " values");
    }
  }
  for (double v : values) check_value(v);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

const std::vector<KnobInfo>& vary_knobs() {
  using T = KnobType;
  static const std::vector<KnobInfo> knobs = {
      {"max-num-seqs", "max_num_seqs", T::kInt},
      {"max-num-batched-tokens", "max_num_batched_tokens", T::kInt},
      {"gpu-memory-utilization", "gpu_memory_utilization", T::kDouble},
      {"block-size", "block_size", T::kInt},
      {"tensor-parallel-size", "tensor_parallel_size", T::kInt},
      {"pipeline-parallel-size", "pipeline_parallel_size", T::kInt},
      {"gpu", "gpu", T::kString},
      {"model", "model", T::kString},
      {"quantization", "quantization", T::kString},
      {"kv-cache-dtype", "kv_cache_dtype", T::kString},
      {"enable-prefix-caching", "enable_prefix_caching", T::kBool},
      {"enforce-eager", "enforce_eager", T::kBool},
      {"max-model-len", "max_model_len", T::kInt},
      {"long-prefill-token-threshold", "long_prefill_token_threshold", T::kInt},
      {"scheduling-policy", "scheduling_policy", T::kString},
      {"num-gpu-blocks-override", "num_gpu_blocks_override", T::kInt},
      {"num-replicas", "num_replicas", T::kInt},
      {"router", "router", T::kString},
      {"kv-offloading-size", "kv_offloading_size", T::kDouble},
      // Disaggregated prefill/decode (sim/cluster/pd_simulation.h).
      {"prefill-replicas", "prefill_replicas", T::kInt},
      {"decode-replicas", "decode_replicas", T::kInt},
      {"prefill-tensor-parallel-size", "prefill_tensor_parallel_size", T::kInt},
      {"decode-tensor-parallel-size", "decode_tensor_parallel_size", T::kInt},
      {"prefill-gpu", "prefill_gpu", T::kString},
      {"decode-gpu", "decode_gpu", T::kString},
      {"kv-transfer-link", "kv_transfer_link", T::kString},
      {"pd-local-prefill-threshold", "pd_local_prefill_threshold", T::kInt},
      // LoRA (docs/deployment-modes.md, "LoRA").
      {"enable-lora", "enable_lora", T::kBool},
      {"max-loras", "max_loras", T::kInt},
      {"max-lora-rank", "max_lora_rank", T::kInt},
      {"max-cpu-loras", "max_cpu_loras", T::kInt},
      {"num-lora-adapters", "num_lora_adapters", T::kInt},
      {"lora-zipf-exponent", "lora_zipf_exponent", T::kDouble},
      // Speculative decoding: keys within --speculative-config's JSON (vary_spec.h).
      {"num-speculative-tokens", "num_speculative_tokens", T::kInt, "speculative_config"},
      {"spec-acceptance-rate", "spec_acceptance_rate", T::kDouble, "speculative_config"},
      {"spec-acceptance-length", "spec_acceptance_length", T::kDouble, "speculative_config"},
  };
  return knobs;
}

VaryAxis parse_vary(const std::string& raw) {
  const std::string text = trim(raw);
  const size_t eq = text.find('=');
  std::string knob_list;
  for (const KnobInfo& k : vary_knobs()) knob_list += (knob_list.empty() ? "" : ", ") + k.flag;
  if (eq == std::string::npos) {
    throw ConfigError("--vary: '" + raw +
                      "' is invalid; expected KNOB=v1,v2,... such as "
                      "max-num-seqs=64,128,256 (knobs: " +
                      knob_list + ")");
  }
  std::string name = trim(text.substr(0, eq));
  while (!name.empty() && name.front() == '-') name.erase(name.begin());
  std::replace(name.begin(), name.end(), '_', '-');
  const KnobInfo* knob = nullptr;
  for (const KnobInfo& k : vary_knobs()) {
    if (k.flag == name) knob = &k;
  }
  if (knob == nullptr) {
    throw ConfigError("--vary: '" + trim(text.substr(0, eq)) + "' is not a knob; expected one of " +
                      knob_list);
  }
  VaryAxis axis;
  axis.knob = *knob;
  const std::string list = text.substr(eq + 1);
  if (trim(list).empty()) {
    throw ConfigError("--vary " + knob->flag + ": no values; expected " + knob->flag +
                      "=v1,v2,...");
  }
  for (const std::string& item : split(list, ',')) {
    auto bad = [&](const std::string& what) {
      return ConfigError("--vary " + knob->flag + ": '" + item + "' is invalid; expected " + what);
    };
    json value;
    switch (knob->type) {
      case KnobType::kInt: {
        int64_t v = 0;
        if (!parse_int(item, &v)) throw bad("an integer");
        value = v;
        break;
      }
      case KnobType::kDouble: {
        const std::optional<double> v = parse_finite_double(item);
        if (!v) throw bad("a number");
        value = *v;
        break;
      }
      case KnobType::kBool:
        if (item == "true" || item == "1" || item == "on") {
          value = true;
        } else if (item == "false" || item == "0" || item == "off") {
          value = false;
        } else {
          throw bad("true or false");
        }
        break;
      case KnobType::kString:
        if (item.empty() && knob->key != "quantization") throw bad("a non-empty name");
        value = (knob->key == "quantization" && item == "none") ? std::string() : item;
        break;
    }
    for (const json& seen : axis.values) {
      if (seen == value) {
        throw ConfigError("--vary " + knob->flag + ": value '" + item + "' is given twice");
      }
    }
    axis.values.push_back(value);
    axis.texts.push_back(item.empty() ? "none" : item);
  }
  return axis;
}

std::vector<VaryPoint> vary_product(const std::vector<VaryAxis>& axes) {
  for (size_t i = 0; i < axes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (axes[i].knob.key == axes[j].knob.key) {
        throw ConfigError("--vary: knob '" + axes[i].knob.flag +
                          "' is given twice; list all its values in one --vary");
      }
    }
  }
  std::vector<VaryPoint> points(1);
  for (const VaryAxis& axis : axes) {
    std::vector<VaryPoint> next;
    for (const VaryPoint& p : points) {
      for (size_t v = 0; v < axis.values.size(); ++v) {
        VaryPoint q = p;
        q.settings[axis.knob.key] = axis.values[v];
        q.label += (q.label.empty() ? "" : " ") + axis.knob.flag + "=" + axis.texts[v];
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

}  // namespace servesim::planning
