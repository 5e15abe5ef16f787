#ifndef SERVESIM_TESTS_TEST_PATHS_H_
#define SERVESIM_TESTS_TEST_PATHS_H_

// Where the test data and the shipped real-data copy live in this checkout. The paths are compiled
// into test_main.cpp only; the macros keep the spelling the tests use (a `const char*`).

namespace servesim::test {
const char* test_data_dir();  // tests/data
const char* realdata_dir();   // data/realdata
}  // namespace servesim::test

#define SERVESIM_TEST_DATA_DIR (::servesim::test::test_data_dir())
#define SERVESIM_REALDATA_DIR (::servesim::test::realdata_dir())

#endif  // SERVESIM_TESTS_TEST_PATHS_H_
