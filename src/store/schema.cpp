// The store's schema: the tables, the points table's columns with the version that added each, the
// SQL made from them, and what opening a file checks and upgrades (store/schema.hpp).
#include "store/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>

#include "common/error.hpp"

namespace shapescope::schema {

using namespace sql;

namespace {

// Schema 2: the clock state and a grouped call's groups ('' for an ordinary problem) are part of a
// point's key; the stopping rule's reason and interval and the sentinel's drift are stored per point.
// Schema 3 (this build): an fp8 point's recipe ('' for other dtypes) and a cast point's operand
// ('' for a GEMM) are part of the key. A store written before recipes timed its fp8 GEMMs with
// cuBLASLt's scale pointers unset (scale 1 on both operands): the one-scale-per-tensor call with
// scalars of 1, which is recipe tensor (the same kernels; the GPU test
// Fp8Recipes.TensorScalesKeepTheUnscaledKernel holds it), so its fp8 points read as 'tensor'.
// Older stores are read as they are (the new columns read as their legacy values, below) and
// upgraded only by a writing command.
constexpr int kSchemaVersion = 3;
constexpr const char* kApplication = "shapescope";

// The columns that make a point distinct: the device's software stack and the key. They are both the
// UNIQUE constraint and find()'s WHERE clause, so the two can never disagree.
constexpr const char* kKeyColumns[] = {
    "gpu_uuid", "driver", "cuda_runtime", "cublas", "cublaslt", "backend", "algo", "dtype", "layout",
    "m",        "n",      "k",            "batch",  "lda",      "ldb",     "ldc",  "off_a", "off_b",
    "off_c",    "groups", "mode",         "clock_state", "recipe", "cast_operand"};

constexpr const char* kMetaTable = "\nCREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);\n";
constexpr const char* kOtherTables = R"sql(
CREATE TABLE IF NOT EXISTS kernels (
  point_id INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, name TEXT NOT NULL,
  grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
  block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
  cluster_x INTEGER NOT NULL, cluster_y INTEGER NOT NULL, cluster_z INTEGER NOT NULL,
  registers INTEGER NOT NULL, static_smem INTEGER NOT NULL, dynamic_smem INTEGER NOT NULL,
  duration_us REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS kernels_point_id ON kernels (point_id);
CREATE TABLE IF NOT EXISTS calibration (
  id INTEGER PRIMARY KEY,
  gpu_uuid TEXT NOT NULL, gpu_name TEXT NOT NULL, driver TEXT NOT NULL, cublas TEXT NOT NULL,
  what TEXT NOT NULL, value REAL NOT NULL, measured_at TEXT NOT NULL, detail TEXT NOT NULL
);
)sql";

// Every column of the points table in table order, which is also the order read_point() reads
// them in: the CREATE TABLE (with kKeyColumns as its UNIQUE constraint), the SELECT list and the
// INSERT column list are all made from this one list.
// `since`: the schema version that added the column; reading an older table, `legacy` (an SQL
// expression) stands in for it, and an upgrade fills it with the column's DEFAULT.
struct Column {
  const char* name;
  const char* type;
  int since = 1;
  const char* legacy = nullptr;
};
constexpr Column kPointTable[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"gpu_name", "TEXT NOT NULL"},
    {"gpu_uuid", "TEXT NOT NULL"},
    {"sm_count", "INTEGER NOT NULL"},
    {"cc", "TEXT NOT NULL"},
    {"driver", "TEXT NOT NULL"},
    {"cuda_runtime", "TEXT NOT NULL"},
    {"cublas", "TEXT NOT NULL"},
    {"cublaslt", "TEXT NOT NULL"},
    {"backend", "TEXT NOT NULL"},
    {"algo", "TEXT NOT NULL"},
    {"dtype", "TEXT NOT NULL"},
    {"layout", "TEXT NOT NULL"},
    {"m", "INTEGER NOT NULL"},
    {"n", "INTEGER NOT NULL"},
    {"k", "INTEGER NOT NULL"},
    {"batch", "INTEGER NOT NULL"},
    {"lda", "INTEGER NOT NULL"},
    {"ldb", "INTEGER NOT NULL"},
    {"ldc", "INTEGER NOT NULL"},
    {"off_a", "INTEGER NOT NULL"},
    {"off_b", "INTEGER NOT NULL"},
    {"off_c", "INTEGER NOT NULL"},
    {"groups", "TEXT NOT NULL DEFAULT ''", 2, "''"},
    {"mode", "TEXT NOT NULL CHECK (mode IN ('cold', 'hot'))"},
    {"clock_state", "TEXT NOT NULL DEFAULT 'unrecorded' CHECK (clock_state IN ('unrecorded', 'sustained', 'burst'))",
     2, "'unrecorded'"},
    {"recipe", "TEXT NOT NULL DEFAULT ''", 3, "(CASE WHEN dtype = 'fp8' THEN 'tensor' ELSE '' END)"},
    {"cast_operand", "TEXT NOT NULL DEFAULT '' CHECK (cast_operand IN ('', 'a', 'b'))", 3, "''"},
    {"median_us", "REAL NOT NULL"},
    {"min_us", "REAL NOT NULL"},
    {"max_us", "REAL NOT NULL"},
    {"q1_us", "REAL NOT NULL"},
    {"q3_us", "REAL NOT NULL"},
    {"samples", "INTEGER NOT NULL"},
    {"noise", "REAL NOT NULL"},
    {"noisy", "INTEGER NOT NULL"},
    {"sm_clock_mhz", "REAL"},
    {"throttle_reasons", "INTEGER NOT NULL"},
    {"throttled", "INTEGER NOT NULL"},
    {"stop_reason", "TEXT NOT NULL DEFAULT 'unrecorded'", 2, "'unrecorded'"},
    {"median_ci", "REAL", 2, "NULL"},
    {"sentinel_drift", "REAL", 2, "NULL"},
    {"reruns", "INTEGER NOT NULL DEFAULT 0", 2, "0"},
    {"drifted", "INTEGER NOT NULL DEFAULT 0", 2, "0"},
    {"lt_algo_id", "INTEGER"},
    {"lt_tile_id", "INTEGER"},
    {"lt_tile", "TEXT"},
    {"lt_stages_id", "INTEGER"},
    {"lt_stages", "TEXT"},
    {"lt_splitk", "INTEGER"},
    {"lt_reduction_scheme", "INTEGER"},
    {"lt_reduction", "TEXT"},
    {"lt_swizzle", "INTEGER"},
    {"lt_custom_option", "INTEGER"},
    {"lt_cluster_shape_id", "INTEGER"},
    {"lt_cluster", "TEXT"},
    {"lt_inner_shape_id", "INTEGER"},
    {"lt_waves_count", "REAL"},
    {"lt_workspace_bytes", "INTEGER"},
    {"measured_at", "TEXT NOT NULL"},
    {"command", "TEXT NOT NULL"},
    {"annotated", "INTEGER NOT NULL DEFAULT 0"},
};

std::string point_table_sql(const char* table = "points") {
  std::string sql = fmt::format("CREATE TABLE IF NOT EXISTS {} (\n", table);
  for (const Column& column : kPointTable) sql += fmt::format("  {} {},\n", column.name, column.type);
  std::string unique;
  for (const char* column : kKeyColumns) unique += fmt::format("{}{}", unique.empty() ? "" : ", ", column);
  return sql + fmt::format("  UNIQUE ({})\n);\n", unique);
}

// What a query of a table of schema `version` reads for the column: its name, or its legacy value
// where the table predates it.
std::string column_expr(const char* name, int version) {
  for (const Column& column : kPointTable)
    if (std::string_view(column.name) == name && column.since > version) return column.legacy;
  return name;
}

// Every column of the points table, in table order (what an upgrade fills).
std::string all_columns() {
  std::string list;
  for (const Column& column : kPointTable) list += fmt::format("{}{}", list.empty() ? "" : ", ", column.name);
  return list;
}

// The schema as the constructor runs it: meta first, then the points table, then the others.
const std::string kSchemaText = std::string(kMetaTable) + point_table_sql() + kOtherTables;
const char* const kSchema = kSchemaText.c_str();

}  // namespace

int version() { return kSchemaVersion; }

std::vector<std::string> key_columns() { return {std::begin(kKeyColumns), std::end(kKeyColumns)}; }

std::vector<std::string> point_columns() {
  std::vector<std::string> columns;
  for (const Column& column : kPointTable)
    if (std::string_view(column.name) != "id") columns.emplace_back(column.name);
  return columns;
}

std::string select_list(int version) {
  std::string list;
  for (const Column& column : kPointTable)
    list += fmt::format("{}{}", list.empty() ? "" : ", ", column_expr(column.name, version));
  return list;
}

std::vector<std::string> insert_columns() {
  auto is_key = [](const char* name) {
    return std::any_of(std::begin(kKeyColumns), std::end(kKeyColumns),
                       [&](const char* key) { return std::string_view(key) == name; });
  };
  const std::string_view last_key = kKeyColumns[std::size(kKeyColumns) - 1];
  std::vector<std::string> before, after;
  bool past_key = false;
  for (const Column& column : kPointTable) {
    if (std::string_view(column.name) == "id" || is_key(column.name)) {
      past_key = past_key || column.name == last_key;
      continue;
    }
    (past_key ? after : before).push_back(column.name);
  }
  before.insert(before.end(), std::begin(kKeyColumns), std::end(kKeyColumns));
  before.insert(before.end(), after.begin(), after.end());
  return before;
}

std::string key_where_clause(int version) {
  std::string clause;
  for (const char* column : kKeyColumns) {
    if (!clause.empty()) clause += " AND ";
    clause += fmt::format("{} = ?", column_expr(column, version));
  }
  return clause;
}

int bind_key(Statement& stmt, int first, const DeviceContext& device, const PointKey& key) {
  const Problem& p = key.problem;
  int i = first;
  stmt.bind(i++, device.gpu_uuid);
  stmt.bind(i++, device.driver);
  stmt.bind(i++, device.cuda_runtime);
  stmt.bind(i++, device.cublas);
  stmt.bind(i++, device.cublaslt);
  stmt.bind(i++, to_string(key.backend));
  stmt.bind(i++, key.algo);
  stmt.bind(i++, to_string(p.dtype));
  stmt.bind(i++, to_string(p.layout));
  for (int64_t value : {p.m, p.n, p.k, p.batch, p.lda, p.ldb, p.ldc, p.off_a, p.off_b, p.off_c}) {
    stmt.bind(i++, value);
  }
  stmt.bind(i++, groups_text(p));
  stmt.bind(i++, std::string(key.hot ? "hot" : "cold"));
  stmt.bind(i++, to_string(key.clocks));
  stmt.bind(i++, p.dtype == DType::kFp8 ? recipe_text(p.recipe) : std::string());
  stmt.bind(i++, std::string(to_string(p.cast)));
  return i;
}

std::vector<std::string> table_names(sqlite3* db, const std::string& path) {
  std::vector<std::string> tables;
  Statement list(db, path, "SELECT name FROM sqlite_master WHERE type = 'table'");
  while (list.step()) tables.push_back(list.text(0));
  return tables;
}

// A file with tables must be a shapescope store of a schema version this build reads; returns it.
namespace {

// A points or kernels table without a column its version has (a damaged file, or one another program
// wrote) fails here, naming the store, rather than in the middle of a read or a merge whose query
// names the column alone ("no such column: s.groups").
void check_columns(sqlite3* db, const std::string& path, const std::vector<std::string>& tables, int version) {
  std::vector<std::string> kernel_columns;
  const std::string_view listed = kKernelColumns;
  for (size_t start = 0; start < listed.size();) {
    const size_t end = std::min(listed.find(',', start), listed.size());
    kernel_columns.emplace_back(listed.substr(start, end - start));
    start = listed.find_first_not_of(", ", end);
  }
  std::vector<std::string> point_columns;
  for (const Column& column : kPointTable)
    if (column.since <= version) point_columns.emplace_back(column.name);
  for (const auto& [table, expected] : {std::pair{std::string("points"), point_columns},
                                        std::pair{std::string("kernels"), kernel_columns}}) {
    if (std::find(tables.begin(), tables.end(), table) == tables.end()) continue;
    std::vector<std::string> present;
    Statement info(db, path, fmt::format("PRAGMA table_info({})", table));
    while (info.step()) present.push_back(info.text(1));
    for (const std::string& column : expected)
      if (std::find(present.begin(), present.end(), column) == present.end())
        fail(path, fmt::format("damaged: its {} table has no column '{}', which a schema {} store has (it was not "
                               "written by shapescope, or was changed since)",
                               table, column, version));
  }
}

}  // namespace

int check_schema_version(sqlite3* db, const std::string& path, const std::vector<std::string>& tables) {
  std::optional<std::string> application, version;
  if (std::find(tables.begin(), tables.end(), "meta") != tables.end()) {
    Statement meta(db, path, "SELECT key, value FROM meta WHERE key IN ('application', 'schema_version')");
    while (meta.step()) {
      (meta.text(0) == "application" ? application : version) = meta.text(1);
    }
  }
  if (application != std::string(kApplication)) {
    fail(path, "not a shapescope store (it is a SQLite database with other tables)");
  }
  char* end = nullptr;
  long stored_version = version ? std::strtol(version->c_str(), &end, 10) : 0;
  if (!version || version->empty() || *end != '\0' || stored_version < 1) {
    fail(path, fmt::format("not a shapescope store or corrupt (schema version '{}')", version.value_or("")));
  }
  if (stored_version > kSchemaVersion) {
    fail(path, fmt::format("written by a newer shapescope (schema version {}; this build reads up to {})",
                           stored_version, kSchemaVersion));
  }
  check_columns(db, path, tables, int(stored_version));
  return int(stored_version);
}

// An older schema -> this one, inside the writing connection's open transaction, with foreign keys
// off (SQLite's way to change a table's constraints: make the new table, copy, drop the old one,
// rename; the kernels' and annotations' references to points(id) hold, as the ids are copied). Each
// column the old table lacks is filled with its legacy value, as a read of the old table sees it.
// Returns the number of points kept.
int64_t upgrade_points_table(sqlite3* db, const std::string& path, int from_version,
                             const std::vector<std::string>& tables) {
  if (std::find(tables.begin(), tables.end(), "points") == tables.end()) {
    exec(db, path, fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'", kSchemaVersion).c_str(),
         "cannot upgrade the schema");
    return 0;
  }
  exec(db, path, point_table_sql("points_upgrade").c_str(), "cannot upgrade the schema");
  exec(db, path,
       fmt::format("INSERT INTO points_upgrade ({}) SELECT {} FROM points", all_columns(), select_list(from_version))
           .c_str(),
       "cannot upgrade the schema");
  exec(db, path, "DROP TABLE points", "cannot upgrade the schema");
  exec(db, path, "ALTER TABLE points_upgrade RENAME TO points", "cannot upgrade the schema");
  Statement check(db, path, "PRAGMA foreign_key_check");
  if (check.step()) fail(path, "cannot upgrade the schema (a kernel or annotation row lost its point)");
  Statement count(db, path, "SELECT count(*) FROM points");
  count.step();
  const int64_t points = count.int64(0);
  exec(db, path, fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'", kSchemaVersion).c_str(),
       "cannot upgrade the schema");
  return points;
}

// The tables that do not exist yet, and the meta rows that name the file a shapescope store.
void create_schema(sqlite3* db, const std::string& path) {
  exec(db, path, kSchema, "cannot create the schema");
  exec(db, path,
       fmt::format("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', '{}'), "
                   "('application', '{}')",
                   kSchemaVersion, kApplication)
           .c_str(),
       "cannot create the schema");
}

// A truncated or damaged file can pass the schema check (the first page is intact) and fail only
// when a sweep reaches the damaged pages; stores are small, so check every page now.
// SQLite lists one problem per row, the first after a "*** in database main ***" line: the message
// names the first problem, on one line.
void check_pages(sqlite3* db, const std::string& path) {
  Statement check(db, path, "PRAGMA quick_check");
  std::vector<std::string> problems;
  while (check.step()) {
    std::string result = check.text(0);
    if (result == "ok") continue;
    const std::string header = "*** in database main ***";
    const size_t start = result.find_first_not_of("\n ", result.rfind(header, 0) == 0 ? header.size() : 0);
    result = result.substr(start == std::string::npos ? 0 : start);
    std::replace(result.begin(), result.end(), '\n', ' ');
    problems.push_back(result);
  }
  if (!problems.empty()) {
    const std::string more = problems.size() > 1 ? fmt::format("; {} more", problems.size() - 1) : "";
    fail(path, fmt::format("not a shapescope store or corrupt (quick_check: {}{})", problems.front(), more));
  }
}

}  // namespace shapescope::schema
