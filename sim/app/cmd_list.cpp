// `servesim list`: the model and GPU catalogs, and per GPU what its predictions can rest on (the
// kernel table its steps are timed from and the calibration profiles shipped for it).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hardware/gpu_spec.h"
#include "models/kernel_timer.h"
#include "models/model_name.h"
#include "models/model_spec.h"
#include "sim/app/command.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/calibration/profile.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;

// The profiles shipped for `gpu`: hardware/calibration/<gpu>.json and every
// hardware/calibration/<dir>/<gpu>.json, each as "PATH (the host lines it was fitted on)", sorted
// by path. A profile in a folder that is not its host line's vllm-<line> is not applied by default
// (calibration::default_calibration_path): it is marked opt-in.
std::vector<std::string> shipped_profiles(const std::string& gpu) {
  const fs::path root = data_dir() / "hardware" / "calibration";
  std::vector<fs::path> paths;
  if (fs::exists(root / (gpu + ".json"))) paths.push_back(root / (gpu + ".json"));
  if (fs::is_directory(root)) {
    for (const fs::directory_entry& e : fs::directory_iterator(root)) {
      if (e.is_directory() && fs::exists(e.path() / (gpu + ".json"))) {
        paths.push_back(e.path() / (gpu + ".json"));
      }
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> out;
  for (const fs::path& p : paths) {
    std::string lines;
    bool by_default = p.parent_path() == root;
    for (const std::string& l : calibration::load_calibration(p.string()).domain.host_lines) {
      lines += (lines.empty() ? "" : ", ") + l;
      by_default = by_default || p.parent_path().filename() == calibration::host_line_dir(l);
    }
    if (!by_default) lines += std::string(lines.empty() ? "" : "; ") + "opt-in: --calibration";
    out.push_back(relative_to_data_dir(p.string()) +
                  (lines.empty() ? std::string() : " (" + lines + ")"));
  }
  return out;
}

// "  NAME  TOTAL / ACTIVE  KV  ATTENTION; MLP" for one catalog model.
std::string model_line(const std::string& name) {
  const models::ModelSpec m = models::load_model(name);
  char buf[200];
  std::string attn;
  if (m.is_mla()) {
    std::snprintf(buf, sizeof buf, "MLA %lld heads, latent %lld+%lld",
                  static_cast<long long>(m.num_heads), static_cast<long long>(m.mla.kv_lora_rank),
                  static_cast<long long>(m.mla.qk_rope_head_dim));
  } else {
    std::snprintf(buf, sizeof buf, "%s %lldq/%lldkv x%lld",
                  m.num_kv_heads == m.num_heads ? "MHA" : "GQA",
                  static_cast<long long>(m.num_heads), static_cast<long long>(m.num_kv_heads),
                  static_cast<long long>(m.head_dim));
  }
  attn = buf;
  if (m.num_sliding_layers > 0) {
    attn += ", " + std::to_string(m.num_sliding_layers) + " sliding (" +
            std::to_string(m.sliding_window) + ")";
  }
  if (m.num_chunked_layers > 0) {
    attn += ", " + std::to_string(m.num_chunked_layers) + " chunked-local (" +
            std::to_string(m.attention_chunk_size) + ")";
  }
  std::string mlp = "dense";
  if (m.is_moe()) {
    mlp = std::to_string(m.num_experts) + " experts top-" + std::to_string(m.experts_per_token);
    if (m.shared_expert_intermediate_size > 0) mlp += " + shared";
    if (m.num_dense_layers > 0) {
      mlp += ", " + std::to_string(m.num_dense_layers) + " dense + " +
             std::to_string(m.num_moe_layers()) + " MoE layers";
    }
  }
  if (!m.checkpoint_quantization.empty()) mlp += "; " + m.checkpoint_quantization + " checkpoint";
  std::snprintf(buf, sizeof buf, "  %-18s %6.1f B / %5.1f B %8lld B  ", name.c_str(),
                m.param_count() / 1e9, m.active_param_count() / 1e9,
                static_cast<long long>(m.kv_bytes_per_token_per_rank(2, 1)));
  return buf + attn + "; " + mlp;
}

class ListCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "list", "list the model and GPU catalogs; per GPU, its kernel table and shipped profiles");
    sub->add_option("catalog", catalog_, "models or gpus: list only that catalog [both]")
        ->check(CLI::IsMember({"models", "gpus"}));
    return sub;
  }
  int run(std::ostream& out, std::ostream&) override {
    if (catalog_ != "gpus") list_models(out);
    if (catalog_ != "models") list_gpus(out);
    return 0;
  }

 private:
  std::string catalog_;  // "", "models" or "gpus"

  static void list_models(std::ostream& out) {
    out << "Models (models/catalog): parameters (total / active per token), KV cache bytes per\n"
           "token at 16 bits on one GPU, attention and MLP (docs/models.md); below each, the\n"
           "Hugging Face ids --model also takes for it (and with -Instruct, -Chat or -it appended;\n"
           "docs/cli.md, \"Model names\"):\n";
    for (const models::CatalogModelIds& m : models::catalog_model_ids()) {
      out << model_line(m.name) << "\n"
          << "  " << std::string(18, ' ') << " ids: " << join_names(m.hf_ids) << "\n";
    }
  }

  static void list_gpus(std::ostream& out) {
    out << "GPUs (hardware/catalog): the kernel times a simulation uses by default, and the\n"
           "calibration profiles shipped (the host lines they were fitted on; hardware/calibration/\n"
           "<gpu>.json applies to every line without a vllm-<line> profile of its own):\n";
    char line[160];
    for (const std::string& n : hardware::gpu_catalog_names()) {
      // As a simulation picks it without --kernel-table: the GPU profile's own tables, if any.
      const std::optional<std::string> profile = calibration::default_calibration_path(n);
      const std::string kernels =
          models::resolve_kernel_source(
              "", hardware::load_gpu(n),
              profile ? calibration::load_calibration(*profile).kernels : nullptr,
              profile.value_or(""))
              .label();
      std::string profiles;
      for (const std::string& p : shipped_profiles(n)) {
        profiles += (profiles.empty() ? "" : "; ") + p;
      }
      std::snprintf(line, sizeof line, "  %-13s kernels: %s\n", n.c_str(), kernels.c_str());
      out << line << "  " << std::string(13, ' ')
          << " profiles: " << (profiles.empty() ? std::string("none (datasheet-only)") : profiles)
          << "\n";
    }
  }
};

}  // namespace

std::unique_ptr<Command> make_list_command() { return std::make_unique<ListCommand>(); }

}  // namespace servesim::app
