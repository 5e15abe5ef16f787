// `servesim list`: the model and GPU catalogs.
#include "hardware/gpu_spec.h"
#include "models/model_spec.h"
#include "sim/app/command.h"

namespace servesim::app {
namespace {

class ListCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    return app.add_subcommand("list", "list the model and GPU catalogs");
  }
  int run(std::ostream& out, std::ostream&) override {
    out << "Models (models/catalog):\n";
    for (const std::string& n : models::model_catalog_names()) out << "  " << n << "\n";
    out << "GPUs (hardware/catalog):\n";
    for (const std::string& n : hardware::gpu_catalog_names()) out << "  " << n << "\n";
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> make_list_command() { return std::make_unique<ListCommand>(); }

}  // namespace servesim::app
