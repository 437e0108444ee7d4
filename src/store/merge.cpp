#include "store/merge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "common/output_file.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace shapescope {

using namespace sql;

namespace {

namespace fs = std::filesystem;

// One store as an input or as OUT: a shapescope store this build reads (its schema version or an
// older one; a newer one is refused by the Store) that passes quick_check. Returns its version.
int check_store(const std::string& path) {
  const Store store(path, Store::Access::kReadOnly);
  return store.schema_version();
}

// OUT, when it exists: a store no sweep is writing.
void check_out(const std::string& out) {
  std::error_code ec;
  if (fs::exists(out, ec) || fs::is_symlink(out, ec)) {
    check_store(out);
    if (has_wal(out))
      fail(out, "a -wal file lies beside it: a sweep is writing it, or was killed; let the sweep finish (or run it "
                "again to completion) before merging into it");
  }
}

void check_merge(const std::string& out, const std::vector<std::string>& inputs) {
  if (out.empty()) throw usage_error("OUT: '' is empty (the store to merge into, e.g. all.db)");
  if (inputs.empty()) throw usage_error("IN: no store to merge (shapescope merge OUT.db IN.db...)");
  for (const std::string& input : inputs) {
    if (same_file(input, out))
      throw usage_error(fmt::format("IN: '{}' is OUT itself; OUT's points are kept anyway (leave it out of the inputs)",
                                    input));
    // SQLite reads an input's -wal (and keeps its -shm, a -journal) beside it: OUT there would be
    // read as part of the input, and make it unreadable once written.
    for (const char* suffix : kSqliteSideSuffixes)
      if (same_file(out, input + suffix))
        throw usage_error(fmt::format("OUT: '{}' is the {} file of the input '{}', which SQLite keeps beside it; "
                                      "name the merged store otherwise (e.g. merged.db)",
                                      out, suffix + 1, input));
  }
  check_given_once(inputs, "IN");
  check_out(out);
  for (const std::string& input : inputs) check_store(input);
}

// An older store's rows in this build's schema: a copy of it, upgraded (the file itself is only read).
void upgrade_copy(const std::string& from, const std::string& to);

std::string joined(const std::vector<std::string>& items, const std::string& prefix, const char* separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : separator) + prefix + item;
  return text;
}

// "m.gpu_uuid = s.gpu_uuid AND ...": the key columns of main (m) and the input (s) equal.
std::string key_join() {
  std::string clause;
  for (const std::string& column : schema::key_columns())
    clause += fmt::format("{}m.{} = s.{}", clause.empty() ? "" : " AND ", column, column);
  return clause;
}

size_t count(sqlite3* db, const std::string& path, const std::string& sql) {
  Statement stmt(db, path, sql);
  return stmt.step() ? size_t(stmt.int64(0)) : 0;
}

std::optional<std::string> text_value(sqlite3* db, const std::string& path, const std::string& sql) {
  Statement stmt(db, path, sql);
  if (!stmt.step()) return std::nullopt;
  return stmt.text(0);
}

std::vector<std::string> columns_of(sqlite3* db, const std::string& path, const std::string& schema_name,
                                    const std::string& table) {
  std::vector<std::string> columns;
  Statement info(db, path, fmt::format("PRAGMA {}.table_info({})", schema_name, table));
  while (info.step()) columns.push_back(info.text(1));
  return columns;
}

// The copy of OUT that the merge starts from (SQLite's online backup: consistent, whatever the
// journal mode), or a new store's schema.
void start_from(const std::string& out, bool out_exists, const std::string& staged) {
  if (!out_exists) {
    Store fresh(staged);
    fresh.open_for_writing();
    return;
  }
  sqlite3* from = nullptr;
  sqlite3* to = nullptr;
  int rc = sqlite3_open_v2(read_only_uri(out).c_str(), &from, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_open_v2(staged.c_str(), &to, SQLITE_OPEN_READWRITE, nullptr);
  sqlite3_backup* backup = rc == SQLITE_OK ? sqlite3_backup_init(to, "main", from, "main") : nullptr;
  if (backup != nullptr) {
    sqlite3_backup_step(backup, -1);
    sqlite3_backup_finish(backup);
    rc = sqlite3_errcode(to);
  }
  const std::string message = to != nullptr ? sqlite3_errmsg(to) : sqlite3_errstr(rc);
  sqlite3_close_v2(from);
  sqlite3_close_v2(to);
  if (rc != SQLITE_OK) fail(out, fmt::format("cannot copy it to merge into ({})", message));
}

class Merger {
 public:
  Merger(const std::string& out, const std::string& staged) : out_(out) {
    const int rc = sqlite3_open_v2(staged.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK) {
      const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close_v2(db_);
      fail(out_, fmt::format("cannot write beside it ({})", message));
    }
    // The staged copy needs no -wal or rollback file on disk: a failed merge throws it away whole.
    exec(db_, out_, "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA foreign_keys = ON; "
                    "PRAGMA temp_store = MEMORY", "cannot write");
  }
  ~Merger() { sqlite3_close_v2(db_); }
  Merger(const Merger&) = delete;
  Merger& operator=(const Merger&) = delete;

  size_t points() { return count(db_, out_, "SELECT count(*) FROM main.points"); }

  // `from`: the file read, `input` itself or an upgraded copy of it (named as `input`).
  MergeCounts merge(const std::string& from, const std::string& input) {
    MergeCounts counts;
    counts.path = input;
    {
      Statement attach(db_, input, "ATTACH ? AS src");
      attach.bind(1, read_only_uri(from));
      attach.run("cannot open");
    }
    try {
      Transaction transaction(db_, out_);
      copy_points(counts);
      copy_annotations(counts);
      copy_calibrations(counts);
      exec(db_, out_, "DROP TABLE temp.pairs; DROP TABLE temp.ids", "cannot write");
      transaction.commit();
    } catch (...) {
      sqlite3_exec(db_, "DETACH src", nullptr, nullptr, nullptr);
      throw;
    }
    exec(db_, out_, "DETACH src", "cannot write");
    return counts;
  }

  // Leaves the staged file complete and closed, ready to be renamed.
  void finish() {
    Statement check(db_, out_, "PRAGMA quick_check");
    while (check.step())
      if (check.text(0) != "ok") fail(out_, fmt::format("the merged store fails its check ({})", check.text(0)));
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }

 private:
  // An input point whose times are not positive numbers (zero, negative, infinite or NaN, which SQLite
  // keeps as NULL: shapescope never writes one) is refused, naming it, as reading the store refuses it
  // (store_read.cpp: bad_times), not copied into OUT where every later read would refuse OUT.
  void refuse_bad_times(const std::string& input) {
    Statement bad(db_, input,
                  "SELECT id, m, n, k, median_us, (SELECT count(*) FROM src.points WHERE " + std::string(kBadTimes) +
                      ") FROM src.points WHERE " + kBadTimes + " ORDER BY id LIMIT 1");
    if (!bad.step()) return;
    const int64_t all = bad.int64(5);
    fail(input, fmt::format("corrupt: {} point{} with a time that is not a positive number (the first: id {}, {}x{}x{}, "
                            "median {} us); nothing merged",
                            all, all == 1 ? "" : "s", bad.int64(0), bad.int64(1), bad.int64(2), bad.int64(3),
                            bad.is_null(4) ? std::string("NaN") : fmt::format("{}", bad.real(4))));
  }
  static constexpr const char* kBadTimes =
      "(median_us > 0 AND min_us > 0 AND max_us > 0 AND q1_us > 0 AND q3_us > 0 AND "
      "max(median_us, min_us, max_us, q1_us, q3_us) < 9e999) IS NOT 1";  // 9e999: SQLite's +inf

  // Pairs every input point with OUT's point of the same key, if any; deletes OUT's older ones and
  // copies the new and newer points, then their kernels (temp.ids: input id -> OUT id).
  void copy_points(MergeCounts& counts) {
    refuse_bad_times(counts.path);
    counts.points = count(db_, out_, "SELECT count(*) FROM src.points");
    exec(db_, out_,
         fmt::format("CREATE TEMP TABLE pairs AS SELECT s.id AS src_id, m.id AS main_id, "
                     "(m.id IS NOT NULL AND s.measured_at > m.measured_at) AS newer "
                     "FROM src.points AS s LEFT JOIN main.points AS m ON {}",
                     key_join())
             .c_str(),
         "cannot write");
    counts.added = count(db_, out_, "SELECT count(*) FROM temp.pairs WHERE main_id IS NULL");
    counts.replaced = count(db_, out_, "SELECT count(*) FROM temp.pairs WHERE newer");
    counts.left_out = counts.points - counts.added - counts.replaced;
    // Their kernels and annotations go with them (ON DELETE CASCADE).
    exec(db_, out_, "DELETE FROM main.points WHERE id IN (SELECT main_id FROM temp.pairs WHERE newer)",
         "cannot write");
    const std::vector<std::string> columns = schema::point_columns();
    const std::string taken = "SELECT src_id FROM temp.pairs WHERE main_id IS NULL OR newer";
    exec(db_, out_,
         fmt::format("INSERT INTO main.points ({0}) SELECT {0} FROM src.points WHERE id IN ({1}) ORDER BY id",
                     joined(columns, "", ", "), taken)
             .c_str(),
         "cannot write");
    exec(db_, out_,
         fmt::format("CREATE TEMP TABLE ids AS SELECT s.id AS src_id, m.id AS main_id FROM src.points AS s "
                     "JOIN main.points AS m ON {} WHERE s.id IN ({})",
                     key_join(), taken)
             .c_str(),
         "cannot write");
    counts.kernels = copy_rows_of_copied_points("kernels");
  }

  // The rows of `table` (kernels, annotations: keyed by point_id) that belong to the points just
  // copied, with their ids in OUT; returns how many.
  size_t copy_rows_of_copied_points(const std::string& table) {
    std::vector<std::string> columns;
    for (const std::string& column : columns_of(db_, out_, "main", table))
      if (column != "point_id") columns.push_back(column);
    exec(db_, out_,
         fmt::format("INSERT INTO main.{0} (point_id, {1}) SELECT ids.main_id, {2} FROM src.{0} AS r "
                     "JOIN temp.ids AS ids ON r.point_id = ids.src_id",
                     table, joined(columns, "", ", "), joined(columns, "r.", ", "))
             .c_str(),
         "cannot write");
    return size_t(sqlite3_changes(db_));
  }

  // The input's annotation rows, when OUT's table is of the same model version (or OUT has none:
  // the input's table is made in OUT).
  void copy_annotations(MergeCounts& counts) {
    const auto src_version =
        text_value(db_, out_, "SELECT value FROM src.meta WHERE key = 'model_version'");
    const auto src_sql = text_value(
        db_, out_, "SELECT sql FROM src.sqlite_master WHERE type = 'table' AND name = 'annotations'");
    if (!src_version || !src_sql) return;
    const auto out_version =
        text_value(db_, out_, "SELECT value FROM main.meta WHERE key = 'model_version'");
    const std::vector<std::string> out_columns = columns_of(db_, out_, "main", "annotations");
    if (out_columns.empty()) {
      exec(db_, out_, src_sql->c_str(), "cannot write");
      Statement meta(db_, out_, "INSERT OR REPLACE INTO main.meta (key, value) VALUES ('model_version', ?)");
      meta.bind(1, *src_version);
      meta.run();
    } else if (out_version != src_version || columns_of(db_, out_, "src", "annotations") != out_columns) {
      counts.skipped_model_version = *src_version;
      counts.out_model_version = out_version.value_or("?");
      return;
    }
    counts.annotations = copy_rows_of_copied_points("annotations");
  }

  // Calibrations are a history (the views take the newest per GPU and kind): rows OUT lacks.
  void copy_calibrations(MergeCounts& counts) {
    const std::vector<std::string> columns = {"gpu_uuid", "gpu_name", "driver", "cublas",
                                              "what",     "value",    "measured_at", "detail"};
    std::string same;
    for (const std::string& column : columns) same += fmt::format("{}m.{} = s.{}", same.empty() ? "" : " AND ", column, column);
    exec(db_, out_,
         fmt::format("INSERT INTO main.calibration ({}) SELECT {} FROM src.calibration AS s "
                     "WHERE NOT EXISTS (SELECT 1 FROM main.calibration AS m WHERE {}) ORDER BY s.id",
                     joined(columns, "", ", "), joined(columns, "s.", ", "), same)
             .c_str(),
         "cannot write");
    counts.calibrations = size_t(sqlite3_changes(db_));
  }

  const std::string& out_;
  sqlite3* db_ = nullptr;
};

// Files a killed SQLite writer of the old OUT left empty beside it belong to the old file.
void remove_stale_sidecars(const std::string& out) {
  std::error_code ec;
  if (fs::exists(out + "-wal", ec) && fs::file_size(out + "-wal", ec) == 0) {
    fs::remove(out + "-wal", ec);
    fs::remove(out + "-shm", ec);
  }
}

// The temporary files of a merge: upgraded copies of older inputs, removed whatever happens.
class TemporaryCopies {
 public:
  ~TemporaryCopies() {
    std::error_code ec;
    for (const std::string& path : paths_) fs::remove(path, ec);
  }
  // The path to read `input` from: itself, or an upgraded copy beside OUT when its schema is older.
  std::string readable(const std::string& input, const std::string& out) {
    if (check_store(input) == schema::version()) return input;
    const std::string copy = fmt::format("{}.merge-input-{}-{}", out, getpid(), paths_.size());
    paths_.push_back(copy);
    try {
      upgrade_copy(input, copy);
    } catch (const Error& e) {
      // The copy is this merge's own file: the message names the input it was made from.
      std::string what = e.what();
      for (size_t at = what.find(copy); at != std::string::npos; at = what.find(copy, at + input.size()))
        what.replace(at, copy.size(), input);
      throw Error(e.code(), what);
    }
    return copy;
  }

 private:
  std::vector<std::string> paths_;
};

void upgrade_copy(const std::string& from, const std::string& to) {
  {
    // SQLite's backup needs the target to exist.
    std::FILE* file = std::fopen(to.c_str(), "wb");
    if (file == nullptr) fail(to, "cannot create a temporary copy beside OUT");
    std::fclose(file);
  }
  start_from(from, true, to);
  Store copy(to);
  copy.open_for_writing(false);
}

}  // namespace

MergeResult merge_stores(const std::string& out, const std::vector<std::string>& inputs, const MergeWait& wait) {
  check_merge(out, inputs);
  // From here until OUT is replaced, no other merge reads or replaces it; one that held it before
  // may have replaced it meanwhile: OUT is checked again.
  auto lock = std::make_shared<ExclusiveLock>(out, wait.interrupted, wait.waiting);
  check_out(out);
  MergeResult result;
  std::error_code ec;
  result.out_existed = fs::exists(out, ec);
  StagedFile staged(out, "OUT");
  staged.hold(lock);
  start_from(out, result.out_existed, staged.path());
  if (result.out_existed && check_store(out) < schema::version()) {
    Store(staged.path()).open_for_writing(false);
    result.upgraded.push_back(out);
  }
  TemporaryCopies copies;
  {
    Merger merger(out, staged.path());
    result.out_points = merger.points();
    for (const std::string& input : inputs) {
      const std::string from = copies.readable(input, out);
      if (from != input) result.upgraded.push_back(input);
      MergeCounts counts = merger.merge(from, input);
      result.inputs.push_back(std::move(counts));
    }
    result.points = merger.points();
    merger.finish();
  }
  staged.commit([out] { remove_stale_sidecars(out); });
  return result;
}

}  // namespace shapescope
