#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "tests/test_paths.h"

namespace servesim::test {
const char* test_data_dir() { return SERVESIM_TEST_DATA_DIR_VALUE; }
const char* realdata_dir() { return SERVESIM_REALDATA_DIR_VALUE; }
}  // namespace servesim::test
