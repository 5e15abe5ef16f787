#include "sim/base/json_file.h"

#include <cstdlib>

namespace servesim {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("SERVESIM_DATA_DIR"); env && *env) return env;
  return SERVESIM_DATA_DIR;
}

}  // namespace servesim
