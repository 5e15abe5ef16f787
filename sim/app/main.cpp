// servesim entry point: all logic lives in sim/app/cli.cpp and the libraries.
#include <iostream>
#include <string>
#include <vector>

#include "sim/app/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return servesim::app::run_cli(args, std::cout, std::cerr);
}
