// The store's tables as lists of column names, for code in src/store/ that copies rows between
// stores (merge.cpp) without restating the schema that store.cpp defines.
#pragma once
#include <string>
#include <vector>

namespace shapescope::schema {

// The schema version this build writes and reads.
int version();
// The columns that make a point distinct (the points table's UNIQUE constraint).
std::vector<std::string> key_columns();
// Every column of the points table except its id, in table order.
std::vector<std::string> point_columns();

}  // namespace shapescope::schema
