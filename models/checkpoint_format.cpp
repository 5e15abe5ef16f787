// A checkpoint's dtype and weight format from its config.json (checkpoint_format.h).
#include "models/checkpoint_format.h"

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::models {
namespace {

using nlohmann::json;

// Bits per weight of an integer checkpoint: `bits` plus a 16-bit scale and (asymmetric) a
// `bits`-wide zero point per group of `group` weights (group <= 0: per output channel, whose
// scales are negligible per weight).
double int_weight_bits(int bits, int group, bool asymmetric) {
  if (group <= 0) return bits;
  return bits + (16.0 + (asymmetric ? bits : 0)) / group;
}

// The integer weight-only formats vLLM serves with Marlin kernels (w4a16 / w8a16): AWQ
// (AWQConfig: bits, group_size, zero_point), GPTQ (GPTQConfig: bits, group_size, sym) and
// compressed-tensors groups with integer weights and no quantized activations
// (CompressedTensorsWNA16). Sets m's format and bits; false when `q` is none of them.
bool read_int_weights(const json& q, const std::string& method, const std::string& where,
                      ModelSpec& m) {
  int bits = 0, group = 0;
  bool asym = false;
  if (method == "awq" || method == "gptq") {
    bits = q.value("bits", q.value("w_bit", 0));
    group = q.value("group_size", q.value("q_group_size", 128));
    asym = method == "awq" ? q.value("zero_point", true) : !q.value("sym", true);
  } else if (method == "compressed-tensors" && q.contains("config_groups") &&
             q["config_groups"].is_object() && !q["config_groups"].empty()) {
    for (const auto& [name, g] : q["config_groups"].items()) {
      if (!g.is_object() || !g.contains("weights") || !g["weights"].is_object()) return false;
      const json& w = g["weights"];
      const bool act = g.contains("input_activations") && !g["input_activations"].is_null();
      if (act || w.value("type", std::string()) != "int") return false;
      const int b = w.value("num_bits", 0);
      if (bits != 0 && b != bits) return false;
      bits = b;
      group = w.contains("group_size") && w["group_size"].is_number_integer()
                  ? w["group_size"].get<int>()
                  : 0;
      asym = !w.value("symmetric", true);
    }
  } else {
    return false;
  }
  if (bits != 4 && bits != 8) {
    throw ConfigError(where + ": quantization_config (quant_method '" + method + "') has " +
                      std::to_string(bits) +
                      "-bit weights; servesim models 4- and 8-bit integer "
                      "weights");
  }
  m.checkpoint_quantization = bits == 4 ? "w4a16" : "w8a16";
  m.checkpoint_weight_bits = int_weight_bits(bits, group, asym);
  m.checkpoint_quant_method = method;
  return true;
}

}  // namespace

std::string checkpoint_dtype_of(const json& j, const std::string& where) {
  std::string key = "torch_dtype";
  if (!j.contains(key) || j[key].is_null()) key = "dtype";
  const auto dtype = optional_field<std::string>(j, key, where, "bfloat16");
  if (dtype == "bfloat16" || dtype == "float16" || dtype == "float32") return dtype;
  throw ConfigError(where + ": field '" + key + "' has unsupported value '" + dtype +
                    "' (expected bfloat16, float16 or float32)");
}

std::string checkpoint_format(const json& j, const std::string& where, ModelSpec& m) {
  if (!j.contains("quantization_config") || !j["quantization_config"].is_object()) return "";
  const json& q = j["quantization_config"];
  const auto method = optional_field<std::string>(q, "quant_method", where, "");
  // mxfp4 (openai/gpt-oss config.json): vLLM's Mxfp4Config quantizes only the FusedMoE layers
  // (modules_to_not_convert lists self_attn, the router, embed_tokens and lm_head).
  if (method == "mxfp4") return "mxfp4";
  // fp8 (DeepSeek-V3/R1: e4m3, weight_block_size [128, 128], dynamic activations; vLLM's
  // Fp8Config), modelopt FP8 (quant_algo "FP8"), compressed-tensors float 8-bit weights.
  if (method == "fp8") return "fp8";
  if (method == "modelopt" && optional_field<std::string>(q, "quant_algo", where, "") == "FP8") {
    return "fp8";
  }
  if (method == "compressed-tensors" && q.contains("config_groups") &&
      q["config_groups"].is_object() && !q["config_groups"].empty()) {
    bool all_fp8 = true;
    for (const auto& [group, g] : q["config_groups"].items()) {
      const json w = g.is_object() && g.contains("weights") ? g["weights"] : json();
      all_fp8 = all_fp8 && w.is_object() && w.value("num_bits", 0) == 8 &&
                w.value("type", std::string()) == "float";
    }
    if (all_fp8) return "fp8";
  }
  if (read_int_weights(q, method, where, m)) return m.checkpoint_quantization;
  throw ConfigError(where + ": quantization_config (quant_method '" + method +
                    "') is not modelled; servesim reads fp8 (block or per-tensor), modelopt FP8, "
                    "compressed-tensors FP8, 4/8-bit integer weights (AWQ, GPTQ, "
                    "compressed-tensors W4A16/W8A16) and mxfp4 checkpoints (give the unquantized "
                    "config.json with --quantization to model another format's weight bytes)");
}

}  // namespace servesim::models
