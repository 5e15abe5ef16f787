# cmake "-DBINARIES=a|b|..." -P check_catch_names.cmake
# Fails if a Catch2 binary has a test case whose name contains ';'. Catch2 2.13's
# catch_discover_tests reads the names as a CMake list and would register such a test case as two
# ctest tests that match no test case (they fail under --warn NoTests; this says why).
string(ASCII 1 mark)
string(REPLACE "|" ";" binaries "${BINARIES}")
set(bad "")
foreach(bin IN LISTS binaries)
  execute_process(COMMAND "${bin}" --list-test-names-only
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc MATCHES "^[0-9]+$" OR out STREQUAL "")
    message(FATAL_ERROR "${bin} --list-test-names-only failed (${rc})")
  endif()
  # ';' in a name becomes a mark first, so that the names split into a list at the newlines only.
  string(REPLACE ";" "${mark}" out "${out}")
  string(REPLACE "\n" ";" names "${out}")
  foreach(name IN LISTS names)
    if(name MATCHES "${mark}")
      string(REPLACE "${mark}" ";" name "${name}")
      string(APPEND bad "\n  ${bin}: ${name}")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "Catch2 test case names with ';' (rename them, e.g. ';' -> ','):${bad}")
endif()
list(LENGTH binaries n)
message(STATUS "${n} Catch2 binaries; no test case name contains ';'")
