// An Annotation as a flat list of named values (core/fields.hpp): one list that the store's
// `annotations` table, the CSV columns and the JSON keys are all made from, so that they cannot
// drift apart. Pure C++.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "core/fields.hpp"
#include "model/annotate.hpp"

namespace shapescope {

using AnnotationField = NamedValue;

// In output order; the names are the same for every annotation (a default one gives the header).
std::vector<AnnotationField> annotation_fields(const Annotation& annotation);

// The store's `annotations` table: these columns, rebuilt when kModelVersion changes.
DerivedTable annotation_table();

}  // namespace shapescope
