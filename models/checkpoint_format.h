// A checkpoint's dtype and weight format, read from its config.json (torch_dtype and
// quantization_config) by vLLM's quantization methods; a value servesim does not model throws
// ConfigError naming the file (`where`) and the field.
#ifndef SERVESIM_MODELS_CHECKPOINT_FORMAT_H_
#define SERVESIM_MODELS_CHECKPOINT_FORMAT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "models/model_spec.h"

namespace servesim::models {

// torch_dtype (or "dtype", its name in transformers >= 4.56): the checkpoint's dtype, bfloat16
// when absent; bfloat16, float16 or float32.
std::string checkpoint_dtype_of(const nlohmann::json& j, const std::string& where);

// quantization_config -> the checkpoint's weight format (ModelSpec::checkpoint_quantization): ""
// (none), "mxfp4", "fp8", "w4a16" or "w8a16". For the integer formats it also sets
// m.checkpoint_weight_bits (the integer plus its group's scale and zero point) and
// m.checkpoint_quant_method.
std::string checkpoint_format(const nlohmann::json& j, const std::string& where, ModelSpec& m);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_CHECKPOINT_FORMAT_H_
