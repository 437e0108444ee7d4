// A record as a flat list of named values: the model flattens what it derives into one (see
// model/annotation_fields.hpp), and the store, the CSV writer and the JSON writer each read that
// one list, so that a table's columns, a CSV header and JSON keys cannot drift apart. The store
// sees only this shape, never the model's types.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace shapescope {

// monostate: not known (SQL NULL, JSON null, empty CSV cell).
using FieldValue = std::variant<std::monostate, int64_t, double, std::string>;

struct NamedValue {
  const char* name;
  FieldValue value;
};

// A table of derived values: its columns (the names of every row's fields, in order) and the
// version of the code that derives them; a store drops the table's rows when the version changes.
struct DerivedTable {
  int version = 0;
  std::vector<std::string> columns;
};

}  // namespace shapescope
