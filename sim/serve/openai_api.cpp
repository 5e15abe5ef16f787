#include "sim/serve/openai_api.h"

#include <cmath>
#include <limits>

namespace servesim::serve {
namespace {

using nlohmann::json;

[[noreturn]] void bad_request(const std::string& message) {
  throw ApiError(400, "BadRequestError", message);
}

// Unicode code points of UTF-8 text (continuation bytes are not counted).
int64_t code_points(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

int32_t tokens_of_chars(int64_t chars, double chars_per_token) {
  const double t = std::ceil(static_cast<double>(chars) / chars_per_token);
  return static_cast<int32_t>(std::max(1.0, std::min(t, 2147483647.0)));
}

// An integer field, absent = `fallback`.
int64_t int_field(const json& body, const char* key, int64_t fallback) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) bad_request("'" + std::string(key) + "' must be an integer");
  return it->get<int64_t>();
}

bool bool_field(const json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_boolean()) bad_request("'" + std::string(key) + "' must be a boolean");
  return it->get<bool>();
}

int32_t token_id_list(const json& ids, const char* what) {
  for (const json& t : ids) {
    if (!t.is_number_integer()) bad_request(std::string(what) + " must hold integer token ids");
  }
  if (ids.empty()) bad_request(std::string(what) + " is empty");
  return static_cast<int32_t>(std::min<size_t>(ids.size(), std::numeric_limits<int32_t>::max()));
}

int32_t completion_prompt(const json& body, double chars_per_token) {
  if (const auto ids = body.find("prompt_token_ids"); ids != body.end() && !ids->is_null()) {
    if (!ids->is_array()) bad_request("'prompt_token_ids' must be an array of token ids");
    return token_id_list(*ids, "'prompt_token_ids'");
  }
  const auto p = body.find("prompt");
  if (p == body.end() || p->is_null()) bad_request("'prompt' is required");
  if (p->is_string()) return text_tokens(p->get<std::string>(), chars_per_token);
  if (!p->is_array() || p->empty()) {
    bad_request("'prompt' must be a string, an array of token ids, or one of either in an array");
  }
  if ((*p)[0].is_number_integer()) return token_id_list(*p, "'prompt'");
  if (p->size() != 1) {
    bad_request("servesim serve takes one prompt per request; 'prompt' holds " +
                std::to_string(p->size()));
  }
  const json& one = (*p)[0];
  if (one.is_string()) return text_tokens(one.get<std::string>(), chars_per_token);
  if (one.is_array()) return token_id_list(one, "'prompt'");
  bad_request("'prompt' must be a string, an array of token ids, or one of either in an array");
}

int32_t chat_prompt(const json& body, double chars_per_token) {
  const auto m = body.find("messages");
  if (m == body.end() || m->is_null()) bad_request("'messages' is required");
  if (!m->is_array() || m->empty()) bad_request("'messages' must be a non-empty array");
  int64_t chars = 0;
  for (const json& msg : *m) {
    if (!msg.is_object() || !msg.contains("role")) {
      bad_request("each message must be an object with a 'role'");
    }
    const auto c = msg.find("content");
    if (c == msg.end() || c->is_null()) continue;
    if (c->is_string()) {
      chars += code_points(c->get<std::string>());
    } else if (c->is_array()) {
      for (const json& part : *c) {
        if (part.is_object() && part.value("type", "") == "text" && part.contains("text") &&
            part["text"].is_string()) {
          chars += code_points(part["text"].get<std::string>());
        } else {
          bad_request("servesim serve reads text message parts only ({\"type\": \"text\", ...})");
        }
      }
    } else {
      bad_request("a message's 'content' must be a string or an array of text parts");
    }
  }
  return tokens_of_chars(chars, chars_per_token);
}

json choice_base() { return json{{"index", 0}, {"logprobs", nullptr}}; }

const char* object_name(Endpoint e, bool chunk) {
  if (e == Endpoint::kChat) return chunk ? "chat.completion.chunk" : "chat.completion";
  return "text_completion";
}

json envelope(Endpoint endpoint, const ResponseIds& ids, bool chunk) {
  return json{{"id", ids.id},
              {"object", object_name(endpoint, chunk)},
              {"created", ids.created},
              {"model", ids.model}};
}

}  // namespace

json error_body(int status, const std::string& type, const std::string& message) {
  return json{
      {"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", status}}}};
}

int32_t text_tokens(const std::string& text, double chars_per_token) {
  return tokens_of_chars(code_points(text), chars_per_token);
}

CompletionRequest parse_request(Endpoint endpoint, const std::string& body_text,
                                const ApiLimits& limits) {
  json body;
  try {
    body = json::parse(body_text);
  } catch (const json::parse_error& e) {
    bad_request(std::string("the body is not valid JSON: ") + e.what());
  }
  if (!body.is_object()) bad_request("the body must be a JSON object");
  const auto model = body.find("model");
  if (model == body.end() || !model->is_string()) bad_request("'model' is required (a string)");
  if (model->get<std::string>() != limits.served_model) {
    throw ApiError(404, "NotFoundError",
                   "The model `" + model->get<std::string>() + "` does not exist.");
  }
  CompletionRequest r;
  r.endpoint = endpoint;
  r.prompt_tokens = endpoint == Endpoint::kChat ? chat_prompt(body, limits.chars_per_token)
                                                : completion_prompt(body, limits.chars_per_token);
  if (int_field(body, "n", 1) != 1) bad_request("servesim serve takes n = 1 only");
  if (r.prompt_tokens >= limits.max_model_len) {
    bad_request("This model's maximum context length is " + std::to_string(limits.max_model_len) +
                " tokens. However, your request has " + std::to_string(r.prompt_tokens) +
                " input tokens. Please reduce the length of the input messages.");
  }
  int64_t max_tokens = int_field(body, "max_tokens", -1);
  if (endpoint == Endpoint::kChat)
    max_tokens = int_field(body, "max_completion_tokens", max_tokens);
  if (max_tokens == -1) max_tokens = limits.max_model_len - r.prompt_tokens;
  if (max_tokens < 1)
    bad_request("max_tokens must be at least 1, got " + std::to_string(max_tokens));
  if (r.prompt_tokens + max_tokens > limits.max_model_len) {
    bad_request(
        "'max_tokens' or 'max_completion_tokens' is too large: " + std::to_string(max_tokens) +
        ". This model's maximum context length is " + std::to_string(limits.max_model_len) +
        " tokens and your request has " + std::to_string(r.prompt_tokens) + " input tokens (" +
        std::to_string(max_tokens) + " > " + std::to_string(limits.max_model_len) + " - " +
        std::to_string(r.prompt_tokens) + ").");
  }
  const int64_t min_tokens = int_field(body, "min_tokens", 0);
  if (min_tokens < 0 || min_tokens > max_tokens) {
    bad_request("min_tokens must be in [0, max_tokens = " + std::to_string(max_tokens) + "], got " +
                std::to_string(min_tokens));
  }
  bool_field(body, "ignore_eos");  // checked; generation runs to max_tokens either way
  r.max_tokens = static_cast<int32_t>(max_tokens);
  r.stream = bool_field(body, "stream");
  if (const auto so = body.find("stream_options"); so != body.end() && !so->is_null()) {
    if (!so->is_object()) bad_request("'stream_options' must be an object");
    if (!r.stream) bad_request("stream_options can only be set if stream is true");
    r.include_usage = bool_field(*so, "include_usage");
  }
  return r;
}

json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return json{{"prompt_tokens", prompt_tokens},
              {"total_tokens", prompt_tokens + completion_tokens},
              {"completion_tokens", completion_tokens},
              {"prompt_tokens_details", nullptr}};
}

json full_response(Endpoint endpoint, const ResponseIds& ids, int64_t prompt_tokens,
                   int64_t tokens) {
  std::string text;
  text.reserve(static_cast<size_t>(tokens) * 6);
  for (int64_t i = 0; i < tokens; ++i) text += kFillerToken;
  json choice = choice_base();
  if (endpoint == Endpoint::kChat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}, {"tool_calls", json::array()}};
  } else {
    choice["text"] = text;
    choice["prompt_logprobs"] = nullptr;
  }
  choice["finish_reason"] = "length";
  choice["stop_reason"] = nullptr;
  json out = envelope(endpoint, ids, false);
  out["choices"] = json::array({choice});
  out["usage"] = usage_json(prompt_tokens, tokens);
  return out;
}

json token_chunk(Endpoint endpoint, const ResponseIds& ids, const std::string& text, bool last,
                 bool include_usage) {
  json choice = choice_base();
  if (endpoint == Endpoint::kChat) {
    choice["delta"] = {{"content", text}};
  } else {
    choice["text"] = text;
  }
  choice["finish_reason"] = last ? json("length") : json(nullptr);
  choice["stop_reason"] = nullptr;
  json out = envelope(endpoint, ids, true);
  out["choices"] = json::array({choice});
  if (include_usage) out["usage"] = nullptr;
  return out;
}

json role_chunk(const ResponseIds& ids, bool include_usage) {
  json choice = choice_base();
  choice["delta"] = {{"role", "assistant"}, {"content", ""}};
  choice["finish_reason"] = nullptr;
  json out = envelope(Endpoint::kChat, ids, true);
  out["choices"] = json::array({choice});
  if (include_usage) out["usage"] = nullptr;
  return out;
}

json usage_chunk(Endpoint endpoint, const ResponseIds& ids, int64_t prompt_tokens, int64_t tokens) {
  json out = envelope(endpoint, ids, true);
  out["choices"] = json::array();
  out["usage"] = usage_json(prompt_tokens, tokens);
  return out;
}

}  // namespace servesim::serve
