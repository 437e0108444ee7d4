// Size ranges as users write them (DESIGN.md "Conventions"):
//   4096          one size
//   1..4096       inclusive
//   1..4096:8     with a step (1, 9, 17, ...)
//   64..8192*2    geometric (64, 128, ..., 8192)
//   1..64,128,1000..1100   comma lists of the above, in the order given, duplicates removed
// Every size must be >= 1. A malformed, empty or reversed range is a usage error that names it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope {

// Throws shapescope::Error (ExitCode::kUsage) with a message that starts with `option`
// (e.g. "--n: '4096..1' is a reversed range (first 4096 > last 1)").
std::vector<int64_t> parse_range(std::string_view text, std::string_view option);

// "900,100,0,..." as numbers (0..2^31-1), in order, repeats kept: an option's list of counts or
// numbers. Error(kUsage) naming the option, with `one` ("a token count") for a bad item and `list`
// ("token counts, one per expert") for a bad or empty list.
std::vector<int64_t> parse_number_list(const std::string& text, const char* option, const char* one, const char* list);

}  // namespace shapescope
