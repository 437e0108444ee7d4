// Reading the files a workload comes from (config.json, traces, GEMM lists): the whole text, and
// JSON with one-line errors that name the source. Pure C++.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace shapescope {

// The file's text; throws usage_error "<origin> is a directory, not a file" or "<origin> cannot be
// read (<errno text>)".
std::string read_text_file(const std::string& path, const std::string& origin);

// Parses JSON; throws usage_error "<origin> is not valid JSON (parse error at line 3, column 5: ...)"
// on one line, which is also what a truncated file gets.
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

// A JSON value shortened for a message: `{"a": 1, "b": [1, 2, 3...` (at most 40 characters).
std::string short_dump(const nlohmann::json& value);

}  // namespace shapescope
