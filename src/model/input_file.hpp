// Reading the files a workload comes from (config.json, traces, GEMM lists): the whole text, and
// JSON with one-line errors that name the source. Pure C++.
//
// Every input is held to two limits, checked before any parser sees it, so that a broken or hostile
// file gets a one-line refusal (exit 2) instead of exhausting memory or the stack: its size (real
// PyTorch traces run to tens of MB; nlohmann's tree takes several times the text) and, for JSON,
// how deeply arrays and objects nest (real traces and configs nest fewer than 10 levels).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace shapescope {

constexpr uint64_t kMaxInputBytes = uint64_t(256) << 20;  // 256 MiB
constexpr int kMaxJsonDepth = 100;

// The file's text; throws usage_error "<origin> is a directory, not a file" (a FIFO, a device, a
// socket or a dangling link alike: common/input_path.hpp; none is waited on), "<origin> cannot be
// read (<errno text>)" or, past kMaxInputBytes, "<origin> is larger than 256 MiB (... bytes), ...".
std::string read_text_file(const std::string& path, const std::string& origin);

// Parses JSON; throws usage_error "<origin> is not valid JSON (parse error at line 3, column 5: ...)"
// on one line, which is also what a truncated file gets; "<origin> nests JSON arrays and objects
// deeper than 100 levels (at line L), ..." before building anything, and the size message above
// for a text past kMaxInputBytes.
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

// A JSON value shortened for a message: `{"a": 1, "b": [1, 2, 3...` (at most 40 characters).
std::string short_dump(const nlohmann::json& value);

}  // namespace shapescope
