// The JSON tables (report/json_schema.hpp): what check_json refuses, and that the tables hold
// together (every record named once, keys unique, every nested record defined).
#include "report/json_schema.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "common/error.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::ordered_json;

// check_json's one line, or "" where it accepts the object.
std::string refusal(const Json& value, const char* record) {
  try {
    check_json(value, record);
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);
    return e.what();
  }
}

TEST(JsonSchema, AnObjectOfItsRecordPasses) {
  EXPECT_EQ(refusal({{"name", "k"}, {"grid_x", 120}, {"duration_us", 1.5}}, "Kernel"), "");
  // null is every field's "not known"; a real may be written as an integer; keys may be absent
  EXPECT_EQ(refusal({{"m", 1}, {"median_us", 12}, {"sm_clock_mhz", nullptr}, {"kernels", Json::array()}}, "Point"), "");
}

TEST(JsonSchema, WhatItRefusesNamesThePath) {
  EXPECT_EQ(refusal({{"name", "k"}, {"grid_w", 1}}, "Kernel"),
            "JSON: grid_w is no key of Kernel (src/report/json_records.cpp)");
  EXPECT_EQ(refusal({{"grid_x", 1.5}}, "Kernel"),
            "JSON: grid_x is number, not the type its table gives (src/report/json_records.cpp)");
  EXPECT_EQ(refusal({{"grid_y", 1}, {"grid_x", 1}}, "Kernel"),
            "JSON: grid_x comes before grid_y in the table of Kernel (src/report/json_records.cpp)");
  const Json point = {{"m", 1}, {"kernels", Json::array({{{"name", "k"}}, {{"name", 7}}})}};
  EXPECT_EQ(refusal(point, "Point"),
            "JSON: kernels[1].name is number, not the type its table gives (src/report/json_records.cpp)");
  EXPECT_EQ(refusal({{"supports", Json::array({"tile quantization", 2})}}, "ExplainPoint"),
            "JSON: supports[1] is number, not the type its table gives (src/report/json_records.cpp)");
  EXPECT_EQ(refusal(Json::array(), "Kernel"), "JSON: the document is array, not an object (Kernel) (src/report/json_records.cpp)");
  EXPECT_THROW(check_json(Json::object(), "NoSuchRecord"), Error);
}

TEST(JsonSchema, ABaseRecordsFieldsFollowItsOwn) {
  const std::vector<JsonField> fields = record_fields("PadSizeCandidate");
  ASSERT_GT(fields.size(), 4u);
  EXPECT_STREQ(fields[3].key, "extra_gflop");
  EXPECT_STREQ(fields[4].key, "before_us");  // Saving's first
  EXPECT_EQ(refusal({{"value", 64}, {"before_us", 1.0}, {"cannot_tell", false}}, "PadSizeCandidate"), "");
}

TEST(JsonSchema, TheTablesHoldTogether) {
  std::set<std::string> names;
  for (const JsonRecord& r : json_records()) EXPECT_TRUE(names.insert(r.name).second) << r.name << " twice";
  for (const JsonRecord& r : json_records()) {
    std::set<std::string> keys;
    for (const JsonField& f : record_fields(r.name)) {
      EXPECT_TRUE(keys.insert(f.key).second) << r.name << "." << f.key << " twice";
      const bool nested = f.type == JsonType::kRecord || f.type == JsonType::kRecords;
      EXPECT_EQ(nested, f.record != nullptr) << r.name << "." << f.key;
      if (f.record) {
        EXPECT_TRUE(names.count(f.record)) << r.name << "." << f.key << ": no record " << f.record;
      }
    }
  }
}

TEST(JsonSchema, ThePythonTablesHaveEveryRecord) {
  std::ostringstream out;
  write_python_fields(out);
  const std::string text = out.str();
  EXPECT_NE(text.find("RECORDS = {\n"), std::string::npos);
  for (const JsonRecord& r : json_records()) EXPECT_NE(text.find(std::string("    \"") + r.name + "\": (\n"), std::string::npos);
  EXPECT_NE(text.find("        (\"kernels\", \"List[Kernel]\"),\n"), std::string::npos);
  EXPECT_NE(text.find("        (\"supports\", \"List[str]\"),\n"), std::string::npos);
}

}  // namespace
}  // namespace shapescope
