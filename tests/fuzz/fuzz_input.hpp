// What every fuzz target shares (libFuzzer; scripts/fuzz.sh builds and runs them): the input as
// text, and the one outcome besides success that is not a finding. A parser may refuse its input
// only with shapescope::Error on one line with the usage code (exit 2), as the CLI prints it; a
// crash, a sanitizer report, another exception type, a multi-line message or another code is a
// finding (abort() makes libFuzzer keep the input).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/error.hpp"

namespace shapescope::fuzz {

inline std::string_view text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <class Parse>
int refuse_cleanly(Parse&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    const std::string_view what = e.what();
    if (what.empty() || what.find('\n') != std::string_view::npos || e.code() != ExitCode::kUsage) {
      std::fprintf(stderr, "finding: exit code %d, message '%s'\n", int(e.code()), e.what());
      std::abort();
    }
  }
  return 0;
}

}  // namespace shapescope::fuzz
