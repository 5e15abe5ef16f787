// `servesim list`: the model and GPU catalogs, and per GPU what its predictions can rest on (the
// kernel table its steps are timed from and the calibration profiles shipped for it).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hardware/calibration.h"
#include "hardware/gpu_spec.h"
#include "models/kernel_timer.h"
#include "models/model_name.h"
#include "sim/app/command.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;

// The profiles shipped for `gpu`: hardware/calibration/<gpu>.json and every
// hardware/calibration/<dir>/<gpu>.json, each as "PATH (the host lines it was fitted on)", sorted
// by path. A profile in a folder that is not its host line's vllm-<line> is not applied by default
// (hardware::default_calibration_path): it is marked opt-in.
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
    for (const std::string& l : hardware::load_calibration(p.string()).domain.host_lines) {
      lines += (lines.empty() ? "" : ", ") + l;
      by_default = by_default || p.parent_path().filename() == hardware::host_line_dir(l);
    }
    if (!by_default) lines += std::string(lines.empty() ? "" : "; ") + "opt-in: --calibration";
    out.push_back(relative_to_data_dir(p.string()) +
                  (lines.empty() ? std::string() : " (" + lines + ")"));
  }
  return out;
}

class ListCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    return app.add_subcommand(
        "list", "list the model and GPU catalogs; per GPU, its kernel table and shipped profiles");
  }
  int run(std::ostream& out, std::ostream&) override {
    out << "Models (models/catalog), with the Hugging Face ids --model also takes for them (and\n"
           "those ids with -Instruct, -Chat or -it appended; docs/cli.md):\n";
    for (const models::CatalogModelIds& m : models::catalog_model_ids()) {
      std::string name = m.name;
      name.resize(std::max<size_t>(name.size(), 18), ' ');
      out << "  " << name << " " << join_names(m.hf_ids) << "\n";
    }
    out << "GPUs (hardware/catalog): the kernel times a simulation uses by default, and the\n"
           "calibration profiles shipped (the host lines they were fitted on; hardware/calibration/\n"
           "<gpu>.json applies to every line without a vllm-<line> profile of its own):\n";
    char line[160];
    for (const std::string& n : hardware::gpu_catalog_names()) {
      // As a simulation picks it without --kernel-table: the GPU profile's own tables, if any.
      const std::optional<std::string> profile = hardware::default_calibration_path(n);
      const std::string kernels =
          models::resolve_kernel_source(
              "", hardware::load_gpu(n),
              profile ? hardware::load_calibration(*profile).kernels : nullptr,
              profile.value_or(""))
              .label();
      std::string profiles;
      for (const std::string& p : shipped_profiles(n)) {
        profiles += (profiles.empty() ? "" : "; ") + p;
      }
      std::snprintf(line, sizeof line, "  %-13s kernels: %s\n", n.c_str(), kernels.c_str());
      out << line << "  " << std::string(13, ' ') << " profiles: "
          << (profiles.empty() ? std::string("none (datasheet-only)") : profiles) << "\n";
    }
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> make_list_command() { return std::make_unique<ListCommand>(); }

}  // namespace servesim::app
