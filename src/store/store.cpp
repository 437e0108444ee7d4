#include "store/store.hpp"

#include <sqlite3.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <optional>
#include <string_view>
#include <type_traits>
#include <variant>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace shapescope {

using namespace sql;

namespace {

// Schema 2 (this build): the clock state and a grouped call's groups ('' for an ordinary problem)
// are part of a point's key; the stopping rule's reason and interval and the sentinel's drift are
// stored per point. Schema 1 stores are read as they are (the
// new columns read as their legacy values, below) and upgraded only by a writing command.
constexpr int kSchemaVersion = 2;
constexpr const char* kApplication = "shapescope";
constexpr int kBusyTimeoutMs = 5000;

// The columns that make a point distinct: the device's software stack and the key. They are both the
// UNIQUE constraint and find()'s WHERE clause, so the two can never disagree.
constexpr const char* kKeyColumns[] = {
    "gpu_uuid", "driver", "cuda_runtime", "cublas", "cublaslt", "backend", "algo", "dtype", "layout",
    "m",        "n",      "k",            "batch",  "lda",      "ldb",     "ldc",  "off_a", "off_b",
    "off_c",    "groups", "mode",         "clock_state"};

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

// Every column of the points table, in table order, as a SELECT list for a table of `version`.
std::string point_columns(int version) {
  std::string list;
  for (const Column& column : kPointTable)
    list += fmt::format("{}{}", list.empty() ? "" : ", ", column_expr(column.name, version));
  return list;
}

// The columns a table of `version` has, in table order (what an upgrade copies).
std::string stored_columns(int version) {
  std::string list;
  for (const Column& column : kPointTable)
    if (column.since <= version) list += fmt::format("{}{}", list.empty() ? "" : ", ", column.name);
  return list;
}

// The columns save_point() binds, in its order: the device columns outside the key (gpu_name,
// sm_count, cc), the key (bind_key()), then every column after the key, as in the table.
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

// The schema as the constructor runs it: meta first, then the points table, then the others.
const std::string kSchemaText = std::string(kMetaTable) + point_table_sql() + kOtherTables;
const char* const kSchema = kSchemaText.c_str();

constexpr const char* kKernelColumns =
    "point_id, seq, name, grid_x, grid_y, grid_z, block_x, block_y, block_z, "
    "cluster_x, cluster_y, cluster_z, registers, static_smem, dynamic_smem, duration_us";


std::string key_where_clause(int version) {
  std::string clause;
  for (const char* column : kKeyColumns) {
    if (!clause.empty()) clause += " AND ";
    clause += fmt::format("{} = ?", column_expr(column, version));
  }
  return clause;
}

// Binds the key columns, in kKeyColumns order, starting at parameter `first`; returns the next one.
int bind_key(Statement& stmt, int first, const DeviceContext& device, const PointKey& key) {
  const Problem& p = key.problem;
  int i = first;
  stmt.bind(i++, device.gpu_uuid);
  stmt.bind(i++, device.driver);
  stmt.bind(i++, device.cuda_runtime);
  stmt.bind(i++, device.cublas);
  stmt.bind(i++, device.cublaslt);
  stmt.bind(i++, key.backend);
  stmt.bind(i++, key.algo);
  stmt.bind(i++, to_string(p.dtype));
  stmt.bind(i++, to_string(p.layout));
  for (int64_t value : {p.m, p.n, p.k, p.batch, p.lda, p.ldb, p.ldc, p.off_a, p.off_b, p.off_c}) {
    stmt.bind(i++, value);
  }
  stmt.bind(i++, groups_text(p));
  stmt.bind(i++, std::string(key.hot ? "hot" : "cold"));
  stmt.bind(i++, to_string(key.clocks));
  return i;
}

bool parse_cc(const std::string& text, int& major, int& minor) {
  size_t dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == text.size()) return false;
  char* end = nullptr;
  long parsed_major = std::strtol(text.c_str(), &end, 10);
  if (end != text.c_str() + dot) return false;
  long parsed_minor = std::strtol(text.c_str() + dot + 1, &end, 10);
  if (*end != '\0') return false;
  major = int(parsed_major);
  minor = int(parsed_minor);
  return true;
}

// The stopping rule's and the sentinel's columns (schema 2; a schema 1 table reads their legacy
// values), from column `c` on; advances `c` past them.
void read_stopping(const Statement& row, int& c, int64_t id, const std::string& path, TimingStats& t) {
  const std::string stop = row.text(c++);
  const std::optional<StopReason> reason = parse_stop_reason(stop);
  if (!reason) fail(path, fmt::format("corrupt (point {} has stop reason '{}')", id, stop));
  t.stop = *reason;
  if (!row.is_null(c)) t.median_ci = row.real(c);
  c++;
  if (!row.is_null(c)) t.sentinel_drift = row.real(c);
  c++;
  t.reruns = row.int32(c++);
  t.drifted = row.int64(c++) != 0;
}

// The key's columns (backend .. clock_state), from column `c` on; advances `c` past them.
void read_key(const Statement& row, int& c, int64_t id, const std::string& path, PointKey& key) {
  key.backend = row.text(c++);
  key.algo = row.text(c++);
  std::string dtype = row.text(c++);
  std::string layout = row.text(c++);
  std::optional<DType> parsed_dtype = parse_dtype(dtype);
  if (!parsed_dtype) fail(path, fmt::format("corrupt (point {} has dtype '{}')", id, dtype));
  std::optional<Layout> parsed_layout = parse_layout(layout);
  if (!parsed_layout) fail(path, fmt::format("corrupt (point {} has layout '{}')", id, layout));
  Problem& p = key.problem;
  p.dtype = *parsed_dtype;
  p.layout = *parsed_layout;
  for (int64_t* field : {&p.m, &p.n, &p.k, &p.batch, &p.lda, &p.ldb, &p.ldc, &p.off_a, &p.off_b, &p.off_c}) {
    *field = row.int64(c++);
  }
  const std::string groups = row.text(c++);
  const std::optional<std::vector<GroupShape>> parsed_groups = parse_groups(groups);
  if (!parsed_groups) fail(path, fmt::format("corrupt (point {} has groups '{}')", id, groups.substr(0, 60)));
  p.groups = *parsed_groups;
  std::string mode = row.text(c++);
  if (mode != "hot" && mode != "cold") {
    fail(path, fmt::format("corrupt (point {} has mode '{}')", id, mode));
  }
  key.hot = mode == "hot";
  const std::string clocks = row.text(c++);
  const std::optional<ClockState> state = parse_clock_state(clocks);
  if (!state) fail(path, fmt::format("corrupt (point {} has clock state '{}')", id, clocks));
  key.clocks = *state;
}

// cuBLASLt's config (15 columns from `c`; lt_algo_id is NULL exactly when the point has none);
// advances `c` past them.
std::optional<LtAlgoConfig> read_lt(const Statement& row, int& c) {
  if (row.is_null(c)) {
    c += 15;
    return std::nullopt;
  }
  LtAlgoConfig lt;
  lt.algo_id = row.int32(c++);
  lt.tile_id = row.int32(c++);
  lt.tile = row.text(c++);
  lt.stages_id = row.int32(c++);
  lt.stages = row.text(c++);
  lt.splitk = row.int32(c++);
  lt.reduction_scheme = row.int32(c++);
  lt.reduction = row.text(c++);
  lt.swizzle = row.int32(c++);
  lt.custom_option = row.int32(c++);
  lt.cluster_shape_id = row.int32(c++);
  lt.cluster = row.text(c++);
  lt.inner_shape_id = row.int32(c++);
  lt.waves_count = float(row.real(c++));
  lt.workspace_bytes = row.int64(c++);
  return lt;
}

StoredPoint read_point(const Statement& row, const std::string& path) {
  StoredPoint point;
  int c = 0;
  point.id = row.int64(c++);
  DeviceContext& device = point.device;
  device.gpu_name = row.text(c++);
  device.gpu_uuid = row.text(c++);
  device.sm_count = row.int32(c++);
  std::string cc = row.text(c++);
  if (!parse_cc(cc, device.cc_major, device.cc_minor)) {
    fail(path, fmt::format("corrupt (point {} has compute capability '{}')", point.id, cc));
  }
  device.driver = row.text(c++);
  device.cuda_runtime = row.text(c++);
  device.cublas = row.text(c++);
  device.cublaslt = row.text(c++);

  read_key(row, c, point.id, path, point.key);

  TimingStats& t = point.result.timing;
  t.median_us = row.real(c++);
  t.min_us = row.real(c++);
  t.max_us = row.real(c++);
  t.q1_us = row.real(c++);
  t.q3_us = row.real(c++);
  t.samples = row.int32(c++);
  t.noise = row.real(c++);
  t.noisy = row.int64(c++) != 0;
  if (!row.is_null(c)) t.sm_clock_mhz = row.real(c);
  c++;
  // Stored as the signed 64-bit integer SQLite holds; the bits come back unchanged.
  t.throttle_reasons = static_cast<uint64_t>(row.int64(c++));
  t.throttled = row.int64(c++) != 0;
  read_stopping(row, c, point.id, path, t);

  point.result.lt = read_lt(row, c);
  point.result.measured_at = row.text(c++);
  point.result.command = row.text(c++);
  point.annotated = row.int64(c++) != 0;
  return point;
}

// Reads a kernels row (kKernelColumns order) into a record; column 0 (point_id) and 1 (seq) are the
// caller's.
KernelRecord read_kernel(const Statement& row) {
  KernelRecord kernel;
  int c = 2;
  kernel.name = row.text(c++);
  for (uint32_t* field : {&kernel.grid_x, &kernel.grid_y, &kernel.grid_z, &kernel.block_x, &kernel.block_y,
                          &kernel.block_z, &kernel.cluster_x, &kernel.cluster_y, &kernel.cluster_z}) {
    *field = static_cast<uint32_t>(row.int64(c++));
  }
  kernel.registers = row.int32(c++);
  kernel.static_smem = row.int64(c++);
  kernel.dynamic_smem = row.int64(c++);
  kernel.duration_us = row.real(c++);
  return kernel;
}

// Connection settings: extended result codes, the busy timeout and the pragmas. A writable
// connection must really be writable, and turns WAL on.
void configure_connection(sqlite3* db, const std::string& path, bool writable) {
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // SQLite quietly opens a write-protected file read-only; a sweep must learn that now, not after
  // its first measurement.
  if (writable && sqlite3_db_readonly(db, "main") == 1) {
    fail(path, fmt::format("read-only ({})", sqlite3_errstr(SQLITE_READONLY)));
  }
  // WAL with synchronous=NORMAL: a commit survives a killed process (only power loss can undo the
  // last few), and readers (views) do not block the sweep. A reader leaves the mode as it is.
  if (writable) exec(db, path, "PRAGMA journal_mode = WAL", "cannot open");
  exec(db, path, "PRAGMA synchronous = NORMAL", "cannot open");
  exec(db, path, "PRAGMA foreign_keys = ON", "cannot open");
  exec(db, path, fmt::format("PRAGMA busy_timeout = {}", kBusyTimeoutMs).c_str(), "cannot open");
}

// The names of the file's tables (none for a new or empty file).
std::vector<std::string> table_names(sqlite3* db, const std::string& path) {
  std::vector<std::string> tables;
  Statement list(db, path, "SELECT name FROM sqlite_master WHERE type = 'table'");
  while (list.step()) tables.push_back(list.text(0));
  return tables;
}

// A file with tables must be a shapescope store of a schema version this build reads; returns it.
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
  return int(stored_version);
}

// Schema 1 -> 2, inside the writing connection's open transaction, with foreign keys off (SQLite's
// way to change a table's constraints: make the new table, copy, drop the old one, rename; the
// kernels' and annotations' references to points(id) hold, as the ids are copied). Returns the
// number of points kept.
int64_t upgrade_points_table(sqlite3* db, const std::string& path, int from_version,
                             const std::vector<std::string>& tables) {
  if (std::find(tables.begin(), tables.end(), "points") == tables.end()) {
    exec(db, path, fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'", kSchemaVersion).c_str(),
         "cannot upgrade the schema");
    return 0;
  }
  exec(db, path, point_table_sql("points_upgrade").c_str(), "cannot upgrade the schema");
  const std::string columns = stored_columns(from_version);
  exec(db, path, fmt::format("INSERT INTO points_upgrade ({0}) SELECT {0} FROM points", columns).c_str(),
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

// The file's size and modification time: what a write by another process changes.
std::pair<uintmax_t, int64_t> file_stamp(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto time = std::filesystem::last_write_time(path, ec);
  return {size, int64_t(time.time_since_epoch().count())};
}

}  // namespace

Store::Store(const std::string& path, Access access)
    : path_(path), read_only_(access == Access::kReadOnly) {
  namespace fs = std::filesystem;
  if (path_.empty()) fail(path_, "the path is empty");
  std::error_code ec;
  const fs::file_status status = fs::status(path_, ec);
  if (fs::is_directory(status)) fail(path_, "cannot open (it is a directory, not a store file)");
  if (fs::exists(status) && !fs::is_regular_file(status))
    fail(path_, "cannot open (it is not a regular file)");
  if (!fs::exists(status)) {
    if (read_only_) fail(path_, "cannot open (no such file: nothing has been measured into it)");
    // Created at the first write; a command that fails before it leaves no file behind.
    const fs::path parent = fs::path(path_).has_parent_path() ? fs::path(path_).parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec))
      fail(path_, fmt::format("cannot open (directory '{}' does not exist)", parent.string()));
    if (::access(parent.c_str(), W_OK) != 0)
      fail(path_, fmt::format("cannot open (directory '{}' is not writable)", parent.string()));
    return;
  }
  // SQLite would open a write-protected file read-only and fail only at the first save; a sweep
  // must learn that now, not after measuring (root writes anyway).
  if (!read_only_ && ::access(path_.c_str(), W_OK) != 0)
    fail(path_, fmt::format("read-only ({})", std::strerror(errno)));
  open_connection(false);
}

// Opens the file and checks that it is a shapescope store of a schema this build reads.
// Read-only (views, and a measuring command until its first write) never changes a byte: a store
// that no process is writing (no -wal beside it) is opened immutable, so SQLite creates no -wal or
// -shm files either; one with a live or left-over -wal is read through it (mode=ro).
// Writable (the first write): creates the file or brings its schema up to date in one transaction,
// saying so in one line when an existing store changes.
void Store::open_connection(bool writable) const {
  int flags = SQLITE_OPEN_URI;
  std::string uri = uri_of(path_);
  if (writable) {
    flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  } else {
    flags |= SQLITE_OPEN_READONLY;
    uri = read_only_uri(path_);
    immutable_ = uri.size() >= std::string_view(kImmutableQuery).size() &&
                 uri.compare(uri.size() - std::string_view(kImmutableQuery).size(), std::string::npos,
                             kImmutableQuery) == 0;
    immutable_stamp_ = file_stamp(path_);
  }
  int rc = sqlite3_open_v2(uri.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    fail(path_, fmt::format("{} ({})", describe(rc, "cannot open"), message));
  }
  // The destructor does not run for a throwing constructor, so every failure below closes first.
  try {
    configure_connection(db_, path_, writable);
    // An upgrade rebuilds the points table: foreign keys are off until it is committed (the pragma
    // is a no-op inside a transaction).
    if (writable) exec(db_, path_, "PRAGMA foreign_keys = OFF", "cannot open");
    // Checked and created under the write lock, so two processes creating one store do not race.
    std::optional<Transaction> transaction;
    if (writable) transaction.emplace(db_, path_);
    const std::vector<std::string> tables = table_names(db_, path_);
    if (tables.empty() && !writable) {
      if (read_only_) fail(path_, "empty: nothing has been measured into it");
      // A measuring command's store that exists but is still empty holds nothing: read as none.
      sqlite3_close_v2(db_);
      db_ = nullptr;
      return;
    }
    int version = kSchemaVersion;
    if (!tables.empty()) version = check_schema_version(db_, path_, tables);
    if (writable) {
      std::optional<int64_t> upgraded;
      if (!tables.empty() && version < kSchemaVersion) upgraded = upgrade_points_table(db_, path_, version, tables);
      create_schema(db_, path_);
      transaction->commit();
      exec(db_, path_, "PRAGMA foreign_keys = ON", "cannot open");
      if (upgraded && announce_upgrade_)
        fmt::print(stderr,
                   "store '{}': upgraded from schema {} to {} ({} points kept; the clock state and a grouped "
                   "call's groups are now part of a point's key, and points measured before read 'unrecorded')\n",
                   path_, version, kSchemaVersion, *upgraded);
      version = kSchemaVersion;
    }
    check_pages(db_, path_);
    version_ = version;
  } catch (...) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
  writable_ = writable;
}

sqlite3* Store::reader() const {
  // A measuring command reads without locks while nothing is beside the store; when another process
  // has written since (its -wal appeared, or the file changed), it opens the store again.
  if (db_ != nullptr && immutable_ && !read_only_ &&
      (std::filesystem::exists(path_ + "-wal") || file_stamp(path_) != immutable_stamp_)) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
  if (db_ == nullptr && std::filesystem::exists(path_)) open_connection(false);
  return db_;
}

void Store::open_for_writing(bool announce) {
  announce_upgrade_ = announce;
  if (read_only_) fail(path_, "opened read-only: cannot write");
  if (writable_) return;
  sqlite3_close_v2(db_);
  db_ = nullptr;
  open_connection(true);
}

Store::~Store() { sqlite3_close_v2(db_); }

std::vector<std::optional<StoredRef>> Store::find(const DeviceContext& device, const std::vector<PointKey>& keys) const {
  std::vector<std::optional<StoredRef>> found(keys.size());
  if (reader() == nullptr) return found;  // not created yet: nothing stored
  Statement stmt(db_, path_, "SELECT id, annotated FROM points WHERE " + key_where_clause(version_));
  for (size_t i = 0; i < keys.size(); ++i) {
    stmt.reset();
    bind_key(stmt, 1, device, keys[i]);
    if (stmt.step()) found[i] = StoredRef{stmt.int64(0), stmt.int64(1) != 0};
  }
  return found;
}

std::optional<int64_t> Store::find(const DeviceContext& device, const PointKey& key) const {
  const std::optional<StoredRef> found = find(device, std::vector<PointKey>{key}).front();
  if (!found) return std::nullopt;
  return found->id;
}

bool Store::is_annotated(int64_t id) const {
  if (reader() == nullptr) return false;
  Statement stmt(db_, path_, "SELECT annotated FROM points WHERE id = ?");
  stmt.bind(1, id);
  return stmt.step() && stmt.int64(0) != 0;
}

namespace {

// Binds a point's results (the columns after the key: timing, stopping rule, sentinel, cuBLASLt's
// config, when and how it was measured) from parameter `i` on; advances `i` past them.
void bind_result(Statement& insert, int& i, const PointResult& result) {
  const TimingStats& t = result.timing;
  for (double value : {t.median_us, t.min_us, t.max_us, t.q1_us, t.q3_us}) insert.bind(i++, value);
  insert.bind(i++, t.samples);
  insert.bind(i++, t.noise);
  insert.bind(i++, int(t.noisy));
  auto bind_optional = [&](const std::optional<double>& value) {
    if (value) {
      insert.bind(i++, *value);
    } else {
      insert.bind_null(i++);
    }
  };
  bind_optional(t.sm_clock_mhz);
  insert.bind(i++, static_cast<int64_t>(t.throttle_reasons));
  insert.bind(i++, int(t.throttled));
  insert.bind(i++, to_string(t.stop));
  bind_optional(t.median_ci);
  bind_optional(t.sentinel_drift);
  insert.bind(i++, t.reruns);
  insert.bind(i++, int(t.drifted));
  if (result.lt) {
    const LtAlgoConfig& lt = *result.lt;
    for (int value : {lt.algo_id, lt.tile_id}) insert.bind(i++, value);
    insert.bind(i++, lt.tile);
    insert.bind(i++, lt.stages_id);
    insert.bind(i++, lt.stages);
    for (int value : {lt.splitk, lt.reduction_scheme}) insert.bind(i++, value);
    insert.bind(i++, lt.reduction);
    for (int value : {lt.swizzle, lt.custom_option, lt.cluster_shape_id}) insert.bind(i++, value);
    insert.bind(i++, lt.cluster);
    insert.bind(i++, lt.inner_shape_id);
    insert.bind(i++, double(lt.waves_count));
    insert.bind(i++, lt.workspace_bytes);
  } else {
    for (int j = 0; j < 15; ++j) insert.bind_null(i++);
  }
  insert.bind(i++, result.measured_at);
  insert.bind(i++, result.command);
}

std::string insert_point_sql() {
  std::string columns, placeholders;
  for (const std::string& column : insert_columns()) {
    columns += fmt::format("{}{}", columns.empty() ? "" : ", ", column);
    placeholders += placeholders.empty() ? "?" : ", ?";
  }
  return fmt::format("INSERT INTO points ({}) VALUES ({})", columns, placeholders);
}

// The statements that write points and kernels, prepared once per transaction.
struct Writer {
  Writer(sqlite3* db, const std::string& path)
      : db(db),
        remove_point(db, path, "DELETE FROM points WHERE " + key_where_clause(kSchemaVersion)),
        insert_point(db, path, insert_point_sql()),
        mark(db, path, "UPDATE points SET annotated = 1 WHERE id = ?"),
        remove_kernels(db, path, "DELETE FROM kernels WHERE point_id = ?"),
        insert_kernel(db, path,
                      fmt::format("INSERT INTO kernels ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                  kKernelColumns)) {}
  sqlite3* db;
  Statement remove_point, insert_point, mark, remove_kernels, insert_kernel;

  // Writes (or replaces: the old point's kernels go with it, ON DELETE CASCADE) one point.
  int64_t point(const DeviceContext& device, const PointKey& key, const PointResult& result) {
    remove_point.reset();
    bind_key(remove_point, 1, device, key);
    remove_point.run();
    insert_point.reset();
    int i = 1;
    insert_point.bind(i++, device.gpu_name);
    insert_point.bind(i++, device.sm_count);
    insert_point.bind(i++, fmt::format("{}.{}", device.cc_major, device.cc_minor));
    i = bind_key(insert_point, i, device, key);
    bind_result(insert_point, i, result);
    insert_point.bind(i++, 0);  // annotated: kernels() marks it
    insert_point.run();
    return sqlite3_last_insert_rowid(db);
  }

  // Replaces the point's kernels and marks it annotated; false when there is no such point.
  bool kernels(int64_t id, const std::vector<KernelRecord>& kernels) {
    mark.reset();
    mark.bind(1, id);
    mark.run();
    if (sqlite3_changes(db) == 0) return false;
    remove_kernels.reset();
    remove_kernels.bind(1, id);
    remove_kernels.run();
    int64_t seq = 0;
    for (const KernelRecord& kernel : kernels) {
      insert_kernel.reset();
      int i = 1;
      insert_kernel.bind(i++, id);
      insert_kernel.bind(i++, seq++);
      insert_kernel.bind(i++, kernel.name);
      for (uint32_t value : {kernel.grid_x, kernel.grid_y, kernel.grid_z, kernel.block_x, kernel.block_y,
                             kernel.block_z, kernel.cluster_x, kernel.cluster_y, kernel.cluster_z}) {
        insert_kernel.bind(i++, int64_t(value));
      }
      insert_kernel.bind(i++, kernel.registers);
      insert_kernel.bind(i++, kernel.static_smem);
      insert_kernel.bind(i++, kernel.dynamic_smem);
      insert_kernel.bind(i++, kernel.duration_us);
      insert_kernel.run();
    }
    return true;
  }
};

}  // namespace

int64_t Store::save_point(const DeviceContext& device, const PointKey& key, const PointResult& result) {
  return save_points(device, {PointToSave{key, result, std::nullopt}}).front();
}

std::vector<int64_t> Store::save_points(const DeviceContext& device, const std::vector<PointToSave>& points) {
  std::vector<int64_t> ids;
  if (points.empty()) return ids;
  open_for_writing();
  Transaction transaction(db_, path_);
  Writer writer(db_, path_);
  for (const PointToSave& p : points) {
    ids.push_back(writer.point(device, p.key, p.result));
    if (p.kernels) writer.kernels(ids.back(), *p.kernels);
  }
  transaction.commit();
  return ids;
}

void Store::save_kernels(int64_t id, const std::vector<KernelRecord>& kernels) { save_kernels({{id, kernels}}); }

void Store::save_kernels(const std::vector<std::pair<int64_t, std::vector<KernelRecord>>>& kernels) {
  if (kernels.empty()) return;
  open_for_writing();
  Transaction transaction(db_, path_);
  Writer writer(db_, path_);
  for (const auto& [id, list] : kernels)
    if (!writer.kernels(id, list)) fail(path_, fmt::format("cannot annotate point {}: it is not stored", id));
  transaction.commit();
}

std::optional<StoredPoint> Store::load(int64_t id) const {
  std::vector<StoredPoint> points = load(std::vector<int64_t>{id});
  if (points.empty()) return std::nullopt;
  return std::move(points.front());
}

std::vector<StoredPoint> Store::load(const std::vector<int64_t>& ids) const {
  std::vector<StoredPoint> points;
  if (reader() == nullptr) return points;
  Statement stmt(db_, path_, fmt::format("SELECT {} FROM points WHERE id = ?", point_columns(version_)));
  Statement kernels(db_, path_, fmt::format("SELECT {} FROM kernels WHERE point_id = ? ORDER BY seq", kKernelColumns));
  for (int64_t id : ids) {
    stmt.reset();
    stmt.bind(1, id);
    if (!stmt.step()) continue;
    points.push_back(read_point(stmt, path_));
    kernels.reset();
    kernels.bind(1, id);
    while (kernels.step()) points.back().kernels.push_back(read_kernel(kernels));
  }
  return points;
}

std::vector<StoredPoint> Store::load_all() const {
  std::vector<StoredPoint> points;
  if (reader() == nullptr) return points;
  std::unordered_map<int64_t, size_t> index_of;
  {
    Statement stmt(db_, path_, fmt::format("SELECT {} FROM points ORDER BY id", point_columns(version_)));
    while (stmt.step()) {
      points.push_back(read_point(stmt, path_));
      index_of[points.back().id] = points.size() - 1;
    }
  }
  // One pass over all kernels rather than a query per point.
  Statement kernels(db_, path_, fmt::format("SELECT {} FROM kernels ORDER BY point_id, seq", kKernelColumns));
  while (kernels.step()) {
    auto found = index_of.find(kernels.int64(0));
    if (found != index_of.end()) points[found->second].kernels.push_back(read_kernel(kernels));
  }
  return points;
}

// The annotations table is derived data: its columns come from the model's field list (passed in
// as `table`), and it is rebuilt (emptied) when the model's version changes, so that no stale
// annotation survives an upgrade. Runs inside save_annotations's transaction. Returns the model
// version of the table it replaced, when there was one of another version.
std::optional<std::string> Store::create_annotations_table(const DerivedTable& table) {
  std::string stored_version;
  {
    Statement meta(db_, path_, "SELECT value FROM meta WHERE key = 'model_version'");
    if (meta.step()) stored_version = meta.text(0);
  }
  if (stored_version == std::to_string(table.version)) return std::nullopt;
  std::string columns;
  for (const std::string& name : table.columns) columns += fmt::format(", {}", name);
  exec(db_, path_, "DROP TABLE IF EXISTS annotations", "cannot create the schema");
  exec(db_, path_,
       fmt::format("CREATE TABLE annotations (point_id INTEGER PRIMARY KEY REFERENCES points(id) "
                   "ON DELETE CASCADE{})",
                   columns)
           .c_str(),
       "cannot create the schema");
  exec(db_, path_,
       fmt::format("INSERT OR REPLACE INTO meta (key, value) VALUES ('model_version', '{}')", table.version).c_str(),
       "cannot create the schema");
  if (stored_version.empty()) return std::nullopt;
  return stored_version;
}

void Store::save_annotations(const DerivedTable& table,
                             const std::vector<std::pair<int64_t, std::vector<NamedValue>>>& annotations) {
  if (read_only_) fail(path_, "opened read-only: cannot save annotations");
  if (annotations.empty()) return;
  open_for_writing();
  const size_t count = table.columns.size();
  std::string names = "point_id", marks = "?";
  for (const std::string& name : table.columns) {
    names += fmt::format(", {}", name);
    marks += ", ?";
  }
  Transaction transaction(db_, path_);
  const std::optional<std::string> replaced = create_annotations_table(table);
  Statement insert(db_, path_, fmt::format("INSERT OR REPLACE INTO annotations ({}) VALUES ({})", names, marks));
  for (const auto& [id, fields] : annotations) {
    insert.reset();
    insert.bind(1, id);
    for (size_t i = 0; i < count; ++i) {
      const int index = int(i) + 2;
      std::visit(
          [&](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
              insert.bind_null(index);
            } else {
              insert.bind(index, value);
            }
          },
          fields[i].value);
    }
    insert.run();
  }
  transaction.commit();
  if (replaced) {
    fmt::print(stderr, "store '{}': rebuilt the annotations table for model version {} (it held version {}; derived data)\n",
               path_, table.version, *replaced);
  }
}

void Store::save_calibration(const DeviceContext& device, const Calibration& calibration) {
  open_for_writing();
  Transaction transaction(db_, path_);
  Statement insert(db_, path_,
                   "INSERT INTO calibration (gpu_uuid, gpu_name, driver, cublas, what, value, measured_at, detail) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, device.gpu_uuid);
  insert.bind(2, device.gpu_name);
  insert.bind(3, device.driver);
  insert.bind(4, device.cublas);
  insert.bind(5, calibration.what);
  insert.bind(6, calibration.value);
  insert.bind(7, calibration.measured_at);
  insert.bind(8, calibration.detail);
  insert.run();
  transaction.commit();
}

std::vector<Calibration> Store::load_calibration(const DeviceContext& device) const {
  if (reader() == nullptr) return {};
  // Newest by measured_at (ISO 8601 sorts as text); of two in the same second, the later insert.
  Statement stmt(db_, path_,
                 "SELECT what, value, measured_at, detail FROM calibration AS c WHERE gpu_uuid = ?1 AND id = "
                 "(SELECT id FROM calibration WHERE gpu_uuid = ?1 AND what = c.what "
                 "ORDER BY measured_at DESC, id DESC LIMIT 1) ORDER BY what");
  stmt.bind(1, device.gpu_uuid);
  std::vector<Calibration> calibrations;
  while (stmt.step()) {
    Calibration calibration;
    calibration.what = stmt.text(0);
    calibration.value = stmt.real(1);
    calibration.measured_at = stmt.text(2);
    calibration.detail = stmt.text(3);
    calibrations.push_back(calibration);
  }
  return calibrations;
}

int Store::schema_version() const {
  if (reader() == nullptr) return 0;
  Statement meta(db_, path_, "SELECT value FROM meta WHERE key = 'schema_version'");
  // The constructor has checked that the value is a number this build reads.
  return meta.step() ? std::stoi(meta.text(0)) : 0;
}

namespace schema {

int version() { return kSchemaVersion; }

std::vector<std::string> key_columns() { return {std::begin(kKeyColumns), std::end(kKeyColumns)}; }

std::vector<std::string> point_columns() {
  std::vector<std::string> columns;
  for (const Column& column : kPointTable)
    if (std::string_view(column.name) != "id") columns.emplace_back(column.name);
  return columns;
}

}  // namespace schema

}  // namespace shapescope
