// Run by the build: writes the Python package's field tables (_fields.py) to the file named, from
// the tables the CLI checks its JSON against (src/report/json_schema.hpp).
#include <cstdio>
#include <fstream>

#include "report/json_schema.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.py\n", argv[0]);
    return 2;
  }
  std::ofstream out(argv[1]);
  shapescope::write_python_fields(out);
  out.close();
  if (!out) {
    std::fprintf(stderr, "%s: could not write %s\n", argv[0], argv[1]);
    return 1;
  }
  return 0;
}
