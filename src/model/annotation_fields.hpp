// An Annotation as a flat list of named values: one list that the store's `annotations` table, the
// CSV columns and the JSON keys are all made from, so that they cannot drift apart. Pure C++.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "model/annotate.hpp"

namespace shapescope {

// monostate: not known (SQL NULL, JSON null, empty CSV cell).
using FieldValue = std::variant<std::monostate, int64_t, double, std::string>;

struct AnnotationField {
  const char* name;
  FieldValue value;
};

// In output order; the names are the same for every annotation (a default one gives the header).
std::vector<AnnotationField> annotation_fields(const Annotation& annotation);

}  // namespace shapescope
