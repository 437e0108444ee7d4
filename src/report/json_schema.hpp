// The JSON documents the commands print (sweep's and export's points, explain, a GPU comparison,
// profile, pad) as tables: per object its record's name and, per key in output order, the type of
// its value. The writers check each document against them before printing it (check_json), and
// the build generates the Python package's field tables from them (write_python_fields ->
// python/shapescope/_fields.py, from which results.py makes its dataclasses), so that the JSON,
// these tables and the Python dataclasses cannot drift apart.
#pragma once
#include <functional>
#include <ostream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace shapescope {

enum class JsonType { kInt, kReal, kText, kBool, kInts, kTexts, kRecord, kRecords };

struct JsonField {
  const char* key;
  JsonType type;
  const char* record = nullptr;  // kRecord, kRecords: the record's name
};

struct JsonRecord {
  const char* name;               // the Python package's class ("ExplainResult", "Point")
  std::vector<JsonField> fields;  // in output order; null is every field's "not known"
  const char* base = nullptr;     // a record whose fields follow these (a pad candidate's Saving)
};

// Every record of every document (json_records.cpp).
const std::vector<JsonRecord>& json_records();

// A record's fields with its base's after them. Throws Error(kInternal) for a name no record has.
std::vector<JsonField> record_fields(std::string_view record);

// Prints `doc` (indented by 2) as a document of `record`, after warn_unless_json_fits, with its "text" member
// last: the command's text as `write_text` prints it with every table whole (as under --wide), which
// the Python package shows as it is instead of drawing it again.
void write_json_document(std::ostream& out, nlohmann::ordered_json doc, std::string_view record,
                         const std::function<void(std::ostream&)>& write_text);

// Throws Error(kInternal), naming the path ("points[2].paired.low"), where `value` is no object of
// `record`: a key its table lacks, a key before one it follows in the table, or a value of another
// type (an integer is a real too). A key of the table may be absent (written only in some cases).
void check_json(const nlohmann::ordered_json& value, std::string_view record);
// What the CLI prints: check_json, but a mismatch is one line on stderr (once per record) and the
// document is printed as it is. A key that only a GPU run writes can miss the table without any CPU
// test seeing it; the user's measured result outranks the schema then (the tests call check_json).
void warn_unless_json_fits(const nlohmann::ordered_json& value, std::string_view record);

// The tables as a Python module: RECORDS = {name: ((key, type), ...)}, the types as annotations
// ("int", "float", "str", "bool", "List[str]", "Point", "List[Kernel]").
void write_python_fields(std::ostream& out);

}  // namespace shapescope
