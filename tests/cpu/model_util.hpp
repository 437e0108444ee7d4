// Helpers for the model tests: the presets under models/, and the one-line usage error every bad
// input must give.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "model/pad.hpp"

namespace shapescope {

inline ModelConfig preset(const std::string& name) {
  ModelConfig c = load_model_config(std::string(SHAPESCOPE_MODELS_DIR) + "/" + name + ".json", name);
  c.name = name;
  return c;
}

// Runs `parse` and expects a usage_error: one line, starting with `origin`, containing `words`.
template <class Parse>
void expect_usage_error(Parse&& parse, const std::string& origin, const std::string& words) {
  try {
    parse();
    ADD_FAILURE() << "no error; expected: " << words;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ExitCode::kUsage) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind(origin, 0), 0u) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
  }
}

}  // namespace shapescope
