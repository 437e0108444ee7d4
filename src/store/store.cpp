// The store: opening a file (checked, and upgraded at the first write) and writing points, kernels,
// annotations and calibrations. Reading: store_read.cpp; the tables and their SQL: schema.cpp.
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
#include "common/input_path.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace shapescope {

using namespace sql;

namespace {

// How long a connection waits for another one's lock (a --devices worker's write) before it fails.
constexpr int kBusyTimeoutMs = 5000;

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
  // SQLite would wait on a FIFO's writer: a store is a regular file, as every input is.
  // A writer given a link to a file not made yet creates its target, as it would create the file.
  if (const std::optional<std::string> why = not_a_regular_file(path_))
    if (read_only_ || why->rfind("is a dangling", 0) != 0) fail(path_, fmt::format("cannot open: it {}", *why));
  const fs::file_status status = fs::status(path_, ec);
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
    const std::vector<std::string> tables = schema::table_names(db_, path_);
    if (tables.empty() && !writable) {
      if (read_only_) fail(path_, "empty: nothing has been measured into it");
      // A measuring command's store that exists but is still empty holds nothing: read as none.
      sqlite3_close_v2(db_);
      db_ = nullptr;
      return;
    }
    int version = schema::version();
    if (!tables.empty()) version = schema::check_schema_version(db_, path_, tables);
    if (writable) {
      std::optional<int64_t> upgraded;
      if (!tables.empty() && version < schema::version()) upgraded = schema::upgrade_points_table(db_, path_, version, tables);
      schema::create_schema(db_, path_);
      transaction->commit();
      exec(db_, path_, "PRAGMA foreign_keys = ON", "cannot open");
      if (upgraded && announce_upgrade_)
        fmt::print(stderr,
                   "store '{}': upgraded from schema {} to {} ({} points kept; the clock state and a grouped "
                   "call's groups are now part of a point's key, and points measured before read 'unrecorded')\n",
                   path_, version, schema::version(), *upgraded);
      version = schema::version();
    }
    schema::check_pages(db_, path_);
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
  for (const std::string& column : schema::insert_columns()) {
    columns += fmt::format("{}{}", columns.empty() ? "" : ", ", column);
    placeholders += placeholders.empty() ? "?" : ", ?";
  }
  return fmt::format("INSERT INTO points ({}) VALUES ({})", columns, placeholders);
}

// The statements that write points and kernels, prepared once per transaction.
struct Writer {
  Writer(sqlite3* db, const std::string& path)
      : db(db),
        remove_point(db, path, "DELETE FROM points WHERE " + schema::key_where_clause(schema::version())),
        insert_point(db, path, insert_point_sql()),
        mark(db, path, "UPDATE points SET annotated = 1 WHERE id = ?"),
        remove_kernels(db, path, "DELETE FROM kernels WHERE point_id = ?"),
        insert_kernel(db, path,
                      fmt::format("INSERT INTO kernels ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                  schema::kKernelColumns)) {}
  sqlite3* db;
  Statement remove_point, insert_point, mark, remove_kernels, insert_kernel;

  // Writes (or replaces: the old point's kernels go with it, ON DELETE CASCADE) one point.
  int64_t point(const DeviceContext& device, const PointKey& key, const PointResult& result) {
    remove_point.reset();
    schema::bind_key(remove_point, 1, device, key);
    remove_point.run();
    insert_point.reset();
    int i = 1;
    insert_point.bind(i++, device.gpu_name);
    insert_point.bind(i++, device.sm_count);
    insert_point.bind(i++, fmt::format("{}.{}", device.cc_major, device.cc_minor));
    i = schema::bind_key(insert_point, i, device, key);
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

int Store::schema_version() const {
  if (reader() == nullptr) return 0;
  Statement meta(db_, path_, "SELECT value FROM meta WHERE key = 'schema_version'");
  // The constructor has checked that the value is a number this build reads.
  return meta.step() ? std::stoi(meta.text(0)) : 0;
}

}  // namespace shapescope
