// --model values as vLLM takes them (models/model_name.h): Hugging Face ids the catalog records,
// snapshot folders, paths before names, and the errors for what names nothing.
#include "models/model_name.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/model_spec.h"
#include "sim/base/error.h"

namespace servesim::models {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Strings = std::vector<std::string>;

// A fresh per-process temp folder for `tag`.
fs::path temp_dir(const std::string& tag) {
  const fs::path d =
      fs::temp_directory_path() / ("servesim_model_name_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A small Llama-shaped config.json (hidden 64: no catalog model has it).
void write_tiny_config(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << R"({"hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 512})";
}

// Runs `body` with the working directory set to `dir`, restoring it afterwards.
template <typename F>
void in_directory(const fs::path& dir, F body) {
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  try {
    body();
  } catch (...) {
    fs::current_path(before);
    throw;
  }
  fs::current_path(before);
}

TEST_CASE("a Hugging Face id resolves to the catalog entry that records it", "[models][names]") {
  CHECK(resolve_model("meta-llama/Llama-3.1-8B-Instruct").catalog_name == "llama-3.1-8b");
  CHECK(resolve_model("meta-llama/Llama-3.1-8B").catalog_name == "llama-3.1-8b");
  CHECK(resolve_model("meta-llama/Meta-Llama-3.1-8B-Instruct").catalog_name == "llama-3.1-8b");
  CHECK(resolve_model("Qwen/Qwen3-32B").catalog_name == "qwen3-32b");
  CHECK(resolve_model("codellama/CodeLlama-34b-Instruct-hf").catalog_name == "codellama-34b");
  CHECK(resolve_model("meta-llama/Llama-2-7b-chat-hf").catalog_name == "llama-2-7b");
  CHECK(resolve_model("mistralai/Mixtral-8x7B-Instruct-v0.1").catalog_name == "mixtral-8x7b");
  CHECK(resolve_model("nvidia/Llama-3.1-70B-Instruct-FP8").catalog_name == "llama-3.1-70b-fp8");
  CHECK(resolve_model("openai/gpt-oss-120b").catalog_name == "gpt-oss-120b");

  SECTION("the loaded model is the catalog entry, under its catalog name") {
    const ModelSpec by_id = load_model("meta-llama/Llama-3.1-8B-Instruct");
    const ModelSpec by_name = load_model("llama-3.1-8b");
    CHECK(by_id.name == "llama-3.1-8b");
    CHECK(by_id.param_count() == by_name.param_count());
    CHECK(by_id.max_position_embeddings == by_name.max_position_embeddings);
    const ModelSource s = resolve_model("meta-llama/Llama-3.1-8B-Instruct");
    CHECK(s.given == "meta-llama/Llama-3.1-8B-Instruct");
    CHECK(fs::path(s.config_path) == model_catalog_dir() / "llama-3.1-8b.json");
  }
  SECTION("case does not matter, nor a trailing '/'") {
    CHECK(resolve_model("META-LLAMA/llama-3.1-8b-instruct").catalog_name == "llama-3.1-8b");
    CHECK(resolve_model("qwen/qwen3-32b").catalog_name == "qwen3-32b");
    CHECK(resolve_model("Qwen/Qwen3-32B/").catalog_name == "qwen3-32b");
    CHECK(resolve_model("LLAMA-3.1-8B").catalog_name == "llama-3.1-8b");
  }
  SECTION("without the organisation, the NAME part") {
    CHECK(resolve_model("Llama-3.1-8B-Instruct").catalog_name == "llama-3.1-8b");
    CHECK(resolve_model("llama-3.1-70b-instruct").catalog_name == "llama-3.1-70b");
  }
  SECTION("catalog names keep working") {
    for (const std::string& n : model_catalog_names()) CHECK(resolve_model(n).catalog_name == n);
  }
}

TEST_CASE("every id the catalog records names exactly its entry", "[models][names]") {
  const std::vector<CatalogModelIds> catalog = catalog_model_ids();
  REQUIRE(catalog.size() == model_catalog_names().size());
  for (const CatalogModelIds& e : catalog) {
    INFO(e.name);
    CHECK_FALSE(e.hf_ids.empty());  // a catalog entry says which Hugging Face model it is
    CHECK(catalog_matches(catalog, e.name) == Strings{e.name});
    for (const std::string& id : e.hf_ids) {
      CHECK(catalog_matches(catalog, id) == Strings{e.name});
      CHECK(catalog_matches(catalog, id + "-Instruct") == Strings{e.name});
    }
  }
}

TEST_CASE("the matching rule: fine-tunes of a recorded base, not bases of a recorded fine-tune",
          "[models][names]") {
  const std::vector<CatalogModelIds> catalog = {
      {"base", {"org/Base-7B"}},
      {"chat", {"org/Chat-7B-Instruct"}},
  };
  CHECK(catalog_matches(catalog, "org/Base-7B") == Strings{"base"});
  CHECK(catalog_matches(catalog, "org/Base-7B-Instruct") == Strings{"base"});
  CHECK(catalog_matches(catalog, "org/Base-7B-chat") == Strings{"base"});
  CHECK(catalog_matches(catalog, "org/Base-7B-it") == Strings{"base"});
  CHECK(catalog_matches(catalog, "org/Base-7B-Instruct-v2").empty());
  CHECK(catalog_matches(catalog, "other/Base-7B").empty());  // another organisation's upload
  CHECK(catalog_matches(catalog, "org/Chat-7B-Instruct") == Strings{"chat"});
  // The base of a recorded -Instruct id may have another config (Qwen2.5-7B: max_position_
  // embeddings 131072, its -Instruct 32768): not matched.
  CHECK(catalog_matches(catalog, "org/Chat-7B").empty());
  CHECK(catalog_matches(catalog, "base") == Strings{"base"});
  CHECK(catalog_matches(catalog, "Base-7B-Instruct") == Strings{"base"});
  // The same NAME under two organisations: without the organisation it is ambiguous.
  const std::vector<CatalogModelIds> twins = {{"a", {"one/Model-1B"}}, {"b", {"two/Model-1B"}}};
  CHECK(catalog_matches(twins, "Model-1B") == Strings{"a", "b"});
  CHECK(catalog_matches(twins, "two/Model-1B") == Strings{"b"});
}

TEST_CASE("an unknown id is refused with the nearest catalog entries", "[models][names]") {
  CHECK_THROWS_WITH(
      resolve_model("meta-llama/Llama-3.2-1B-Instruct"),
      Contains("meta-llama/Llama-3.2-1B-Instruct: not in the catalog (models are not "
               "downloaded); pass the path of its config.json") &&
          Contains("Nearest catalog entries: llama-3.1-8b (meta-llama/Llama-3.1-8B), "));
  // The base of a catalogued -Instruct model is not assumed to share its config.
  CHECK_THROWS_WITH(resolve_model("Qwen/Qwen2.5-7B"),
                    Contains("not in the catalog") &&
                        Contains("Nearest catalog entries: qwen2.5-7b (Qwen/Qwen2.5-7B-Instruct)"));
  CHECK_THROWS_WITH(resolve_model("unsloth/Llama-3.1-8B-Instruct"),
                    Contains("Nearest catalog entries: llama-3.1-8b"));
  CHECK_THROWS_AS(resolve_model("acme/unknown-model"), ConfigError);

  // A later release under a longer name is not the catalogued one (Qwen3-235B-A22B-Instruct-2507
  // has another config); the entry whose name it starts with is suggested first.
  CHECK_THROWS_WITH(
      resolve_model("Qwen/Qwen3-235B-A22B-Instruct-2507"),
      Contains("not in the catalog") &&
          Contains("Nearest catalog entries: qwen3-235b-a22b (Qwen/Qwen3-235B-A22B)"));

  SECTION("nearest is deterministic: distance less common prefix, then catalog name") {
    const std::vector<CatalogModelIds> catalog = {
        {"zz", {"o/abcd"}}, {"aa", {"o/abcf"}}, {"mm", {"o/xyz"}}};
    CHECK(nearest_catalog_models(catalog, "p/abce", 2) == Strings{"aa (o/abcf)", "zz (o/abcd)"});
    CHECK(nearest_catalog_models(catalog, "abcd-Instruct", 1) == Strings{"zz (o/abcd)"});
    // Edit distance alone would prefer the name of similar length.
    const std::vector<CatalogModelIds> two = {{"long", {"o/qwen3-235b-a22b"}},
                                              {"short", {"o/qwen2.5-72b-instruct"}}};
    CHECK(nearest_catalog_models(two, "q/qwen3-235b-a22b-instruct-2507", 1) ==
          Strings{"long (o/qwen3-235b-a22b)"});
  }
  SECTION("a path that is not there says so") {
    CHECK_THROWS_WITH(resolve_model("/nonexistent/snapshot"),
                      Contains("/nonexistent/snapshot: cannot open file") &&
                          Contains("Hugging Face id ORG/NAME"));
    CHECK_THROWS_WITH(resolve_model(""), Contains("empty"));
  }
}

TEST_CASE("an id that names two catalog entries is refused naming both", "[models][names]") {
  const fs::path data = temp_dir("ambiguous");
  const fs::path catalog = data / "models" / "catalog";
  fs::create_directories(catalog);
  std::ofstream(catalog / "one.json") << R"({"_hf_ids": ["one/Twin-1B"]})";
  std::ofstream(catalog / "two.json") << R"({"_hf_ids": ["two/Twin-1B"]})";
  std::ofstream(catalog / "bad.json") << R"({"_hf_ids": ["no-organisation"]})";
  const char* before = std::getenv("SERVESIM_DATA_DIR");
  const std::string saved = before ? before : "";
  setenv("SERVESIM_DATA_DIR", data.c_str(), 1);
  CHECK_THROWS_WITH(catalog_model_ids(),
                    Contains("bad.json: field '_hf_ids'") && Contains("\"no-organisation\""));
  fs::remove(catalog / "bad.json");
  CHECK_THROWS_WITH(resolve_model("Twin-1B"),
                    Contains("Twin-1B: names several catalog entries: one (one/Twin-1B), two "
                             "(two/Twin-1B); pass one of these catalog names"));
  CHECK(resolve_model("two/Twin-1B").catalog_name == "two");
  CHECK(catalog_name_for_id("Twin-1B") == "");
  if (before) {
    setenv("SERVESIM_DATA_DIR", saved.c_str(), 1);
  } else {
    unsetenv("SERVESIM_DATA_DIR");
  }
  fs::remove_all(data);
}

TEST_CASE("a snapshot folder is read through its config.json", "[models][names]") {
  const fs::path dir = temp_dir("snapshot") / "Llama-3.1-8B-Instruct";
  write_tiny_config(dir / "config.json");
  const ModelSource s = resolve_model(dir.string());
  CHECK(s.catalog_name.empty());
  CHECK(fs::path(s.config_path) == dir / "config.json");
  const ModelSpec m = load_model(dir.string());
  CHECK(m.hidden_size == 64);
  CHECK(m.name == dir.string());
  // The config.json itself still loads as before.
  CHECK(load_model((dir / "config.json").string()).hidden_size == 64);

  SECTION("a folder without config.json is refused naming what it lacks") {
    const fs::path empty = temp_dir("empty_snapshot");
    CHECK_THROWS_WITH(load_model(empty.string()),
                      Contains(empty.string() + ": a folder without config.json"));
    fs::remove_all(empty);
  }
  fs::remove_all(dir.parent_path());
}

TEST_CASE("an existing relative path comes before the catalog, as in vLLM", "[models][names]") {
  // vLLM's file_or_path_exists (vllm/transformers_utils/repo_utils.py) reads a local path that
  // exists before it asks the Hub; a folder named like a Hugging Face id is that folder.
  const fs::path root = temp_dir("relative");
  write_tiny_config(root / "meta-llama" / "Llama-3.1-8B-Instruct" / "config.json");
  write_tiny_config(root / "llama-3.1-8b");  // a file named like a catalog entry
  in_directory(root, [] {
    const ModelSpec m = load_model("meta-llama/Llama-3.1-8B-Instruct");
    CHECK(m.hidden_size == 64);
    CHECK(m.name == "meta-llama/Llama-3.1-8B-Instruct");
    CHECK(resolve_model("meta-llama/Llama-3.1-8B-Instruct").catalog_name.empty());
    CHECK(load_model("llama-3.1-8b").hidden_size == 64);
    // What is not there still resolves in the catalog.
    CHECK(resolve_model("Qwen/Qwen3-32B").catalog_name == "qwen3-32b");
  });
  fs::remove_all(root);
}

TEST_CASE("vllm serve names a catalog model by its first Hugging Face id", "[models][names]") {
  // vLLM downloads ORG/NAME; a catalog name is servesim's own and would not resolve there.
  CHECK(vllm_model_argument("llama-3.1-70b") == "meta-llama/Llama-3.1-70B");
  CHECK(vllm_model_argument("deepseek-r1") == "deepseek-ai/DeepSeek-R1");
  CHECK(vllm_model_argument("Llama-3.3-70B-Instruct") == "meta-llama/Llama-3.3-70B-Instruct");
  // An ORG/NAME id as typed (a fine-tune keeps its own name), and a path, stay as given.
  CHECK(vllm_model_argument("meta-llama/Llama-3.1-8B-Instruct") ==
        "meta-llama/Llama-3.1-8B-Instruct");
  const fs::path dir = temp_dir("vllm_arg");
  const std::string config = (dir / "config.json").string();
  { std::ofstream(config) << R"({"hidden_size": 64})"; }
  CHECK(vllm_model_argument(config) == config);
  fs::remove_all(dir);
  CHECK_THROWS_WITH(vllm_model_argument("no-such-model"), Contains("no-such-model"));
}

TEST_CASE("measured runs' model ids use the same mapping", "[models][names]") {
  CHECK(catalog_name_for_id("meta-llama/Llama-3.3-70B-Instruct") == "llama-3.3-70b");
  CHECK(catalog_name_for_id("codellama/CodeLlama-34b-Instruct-hf") == "codellama-34b");
  CHECK(catalog_name_for_id("Qwen/Qwen3-32B") == "qwen3-32b");
  CHECK(catalog_name_for_id("meta-llama/Meta-Llama-3.1-8B-Instruct") == "llama-3.1-8b");
  CHECK(catalog_name_for_id("llama-3.1-70b-instruct") == "llama-3.1-70b");  // InferenceX's
  CHECK(catalog_name_for_id("llama-3.1-70b-fp8") == "llama-3.1-70b-fp8");
  // The local path the server loaded from: its last component.
  CHECK(catalog_name_for_id("/models/Llama-3.3-70B-Instruct") == "llama-3.3-70b");
  CHECK(catalog_name_for_id("/models/Llama-3.3-70B-Instruct/") == "llama-3.3-70b");
  CHECK(catalog_name_for_id("acme/unknown-model") == "");
  CHECK(catalog_name_for_id("unsloth/Llama-3.1-8B-Instruct") == "");
}

}  // namespace
}  // namespace servesim::models
