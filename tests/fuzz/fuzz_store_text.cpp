// Fuzz target: the store's text columns as a query reads them back (a store is a user's file too):
// groups ("MxNxK/lda/ldb/ldc;..."), dtype, layout, clock state, stop reason and backend. Each parser
// answers nullopt for what it does not know; groups it reads must read back the same from their text.
#include "core/backend_kind.hpp"
#include "core/problem.hpp"
#include "core/states.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shapescope;
  const std::string_view text = fuzz::text(data, size);
  return fuzz::refuse_cleanly([&] {
    parse_dtype(text);
    parse_layout(text);
    parse_clock_state(text);
    parse_stop_reason(text);
    parse_backend_kind(text);
    const std::optional<std::vector<GroupShape>> groups = parse_groups(text);
    if (!groups || groups->empty()) return;
    Problem p;
    p.groups = *groups;
    if (parse_groups(groups_text(p)) != groups) std::abort();
  });
}
