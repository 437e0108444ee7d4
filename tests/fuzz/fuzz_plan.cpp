// Fuzz target: sweep's shape options as a whole (plan_problems), above all the numbers CLI11 hands
// over as any int64 (--ld-pad, --lda, --ldb, --ldc, --offset). The input is one option a line:
// m, n, k, batch, dtype, layout, then the five numbers (an empty --lda line: not given).
#include <sstream>
#include <string>

#include "fuzz_input.hpp"
#include "shape/plan.hpp"

namespace {

std::optional<int64_t> number(const std::string& line) {
  if (line.empty()) return std::nullopt;
  return std::strtoll(line.c_str(), nullptr, 10);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in{std::string(shapescope::fuzz::text(data, size))};
  std::string lines[11];
  for (std::string& line : lines) std::getline(in, line);
  shapescope::ShapeOptions o;
  o.m = lines[0], o.n = lines[1], o.k = lines[2];
  if (!lines[3].empty()) o.batch = lines[3];
  if (!lines[4].empty()) o.dtype = lines[4];
  if (!lines[5].empty()) o.layout = lines[5];
  o.ld_pad = number(lines[6]).value_or(0);
  o.lda = number(lines[7]), o.ldb = number(lines[8]), o.ldc = number(lines[9]);
  o.offset = number(lines[10]).value_or(0);
  return shapescope::fuzz::refuse_cleanly([&] { shapescope::plan_problems(o); });
}
