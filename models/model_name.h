// Model names as vLLM takes them: what a --model value names, and where its config.json is.
//
// A --model value is, in this order (an existing path first, as in vLLM, whose
// file_or_path_exists checks Path(model).exists() before any Hub lookup:
// vllm/transformers_utils/repo_utils.py):
//   1. an existing file: read as an HF config.json;
//   2. an existing folder (a model snapshot, as `vllm serve DIR` takes it): DIR/config.json, which
//      must exist (vLLM too reads an existing folder without a config.json as no model);
//   3. a catalog entry (models/catalog/<name>.json) named by the value (catalog_matches);
//   4. otherwise an error naming the value: for a Hugging Face id shape (NAME or ORG/NAME)
//      "not in the catalog (models are not downloaded); pass the path of its config.json" and the
//      nearest catalog entries; for any other shape (a path) "cannot open file".
//
// The catalog records the Hugging Face ids each entry stands for in its "_hf_ids" array (the
// repositories whose config.json it copies, with the same architecture fields). That one mapping
// serves --model and the readers of measured runs (catalog_name_for_id).
#ifndef SERVESIM_MODELS_MODEL_NAME_H_
#define SERVESIM_MODELS_MODEL_NAME_H_

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace servesim::models {

// models/catalog under the data folder (data_dir()).
std::filesystem::path model_catalog_dir();

// One catalog entry's names: the file stem and the Hugging Face ids ("ORG/NAME") it records.
struct CatalogModelIds {
  std::string name;
  std::vector<std::string> hf_ids;
};

// Every catalog entry with its "_hf_ids", sorted by name. Throws ConfigError naming the file when
// "_hf_ids" is present but is not an array of "ORG/NAME" strings.
std::vector<CatalogModelIds> catalog_model_ids();

// The catalog entries that `id` names, sorted (several = ambiguous; empty = none). Case-
// insensitive. `id` names an entry when it is
//   - its catalog name ("llama-3.1-8b"), or
//   - one of its recorded ids ("meta-llama/Llama-3.1-8B"), or that id followed by one of the
//     suffixes of fine-tuned variants "-Instruct", "-Chat", "-it" ("meta-llama/Llama-3.1-8B-
//     Instruct"): a fine-tune keeps its base model's architecture. Not the other way round: a base
//     model is not assumed to share its -Instruct variant's config (Qwen2.5-7B's
//     max_position_embeddings is 131072, Qwen2.5-7B-Instruct's 32768), so the catalog records
//     each base id that does;
//   - without an organisation ("Llama-3.1-8B-Instruct"): the same against the ids' NAME parts.
// Reads no file: `catalog` is catalog_model_ids() or a test's own.
std::vector<std::string> catalog_matches(const std::vector<CatalogModelIds>& catalog,
                                         const std::string& id);

// The `count` entries of `catalog` nearest to `id`, nearest first, each as "name (first id)":
// the lower-cased NAME part of `id` (a fine-tune suffix dropped) against the entry's name and its
// ids' NAME parts, by Levenshtein distance less the length of the common prefix (a name that
// starts as the id does is nearer); ties by catalog name (deterministic).
std::vector<std::string> nearest_catalog_models(const std::vector<CatalogModelIds>& catalog,
                                                const std::string& id, size_t count = 3);

// What a --model value resolved to.
struct ModelSource {
  std::string given;         // the value as given
  std::string catalog_name;  // the catalog entry it names; "" when it is a path
  std::string config_path;   // the config.json to read
  // The model's name in outputs (ModelSpec::name): the catalog name, else the value as given.
  const std::string& name() const { return catalog_name.empty() ? given : catalog_name; }
};

// Resolves a --model value by the order at the top of this file. Throws ConfigError (one line,
// naming the value and what was expected) when it names nothing, or several catalog entries (the
// message names them). Reads the filesystem; never the network.
ModelSource resolve_model(const std::string& value);

// The model as `vllm serve MODEL` and `vllm bench serve --model MODEL` take it: a catalog name
// ("llama-3.1-70b", or an id without its organisation) becomes the first Hugging Face id the
// entry records ("meta-llama/Llama-3.1-70B", the repository whose config.json it copies), which
// vLLM can download; an ORG/NAME id, a path, or an entry that records no id stays as given.
// Throws ConfigError as resolve_model does.
std::string vllm_model_argument(const std::string& value);

// The catalog entry a model id in a measured run's file names ("meta-llama/Llama-3.3-70B-Instruct"
// -> "llama-3.3-70b"), by catalog_matches; an id that is a local path on the machine that served
// it ("/models/Llama-3.3-70B-Instruct") by its last component. "" when it names none or several.
std::string catalog_name_for_id(const std::string& id);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MODEL_NAME_H_
