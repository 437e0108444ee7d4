// The result store: one SQLite file (DESIGN.md "The result store").
// Each point is written in its own transaction, so a killed sweep loses at most the points in flight,
// and a second run skips what is already there.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/fields.hpp"
#include "core/records.hpp"

struct sqlite3;

namespace shapescope {

// A point the store holds: its id and whether its kernels are recorded.
struct StoredRef {
  int64_t id = 0;
  bool annotated = false;
};

// One point to write: key, results, and (when they were read) its kernels.
struct PointToSave {
  PointKey key;
  PointResult result;
  std::optional<std::vector<KernelRecord>> kernels;
};

// The store a command reads and writes when --db is not given.
inline constexpr const char* kDefaultStore = "shapescope.db";

class Store {
 public:
  enum class Access { kReadWrite, kReadOnly };
  // Read-only (every command that does not measure): opens an existing store and never changes a
  // byte of it, nor leaves -wal/-shm files beside it.
  // Read-write (a measuring command): checks the store now (or, when there is no file yet, that it
  // can be created) but writes nothing until the first save: the file is created, or its schema
  // brought up to date, then, in one transaction. A command that fails before it measures anything
  // leaves the store as it was, and no empty store behind.
  // Throws Error(ExitCode::kStore) with one line naming the path when the path is empty, a
  // directory or another non-file, the file is missing (read-only) or cannot be created, is not a
  // SQLite database, is of a newer schema, or fails its integrity check.
  // A store of an older schema is read as it is (views never change it) and upgraded by the first
  // write, in one transaction, saying so in one line on stderr.
  explicit Store(const std::string& path, Access access = Access::kReadWrite);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  // The schema version the file holds (0 while there is no file yet).
  int schema_version() const;

  // The id of the stored point with this device and key, if any.
  std::optional<int64_t> find(const DeviceContext& device, const PointKey& key) const;
  // The same for many keys at once (one prepared query), with whether each point is annotated.
  std::vector<std::optional<StoredRef>> find(const DeviceContext& device, const std::vector<PointKey>& keys) const;
  // Whether the point's launched kernels have been recorded.
  bool is_annotated(int64_t id) const;

  // Writes (or, when the key exists, replaces: its kernels go too) one point; one transaction.
  int64_t save_point(const DeviceContext& device, const PointKey& key, const PointResult& result);
  // Writes (or replaces) these points, each with its kernels where given (then it is annotated), in
  // ONE transaction: a sweep saves a chunk of points at once. Returns their ids, in order.
  std::vector<int64_t> save_points(const DeviceContext& device, const std::vector<PointToSave>& points);
  // Replaces the point's kernels and marks it annotated; one transaction.
  void save_kernels(int64_t id, const std::vector<KernelRecord>& kernels);
  // The same for many points, in one transaction; throws (writing nothing) when one is not stored.
  void save_kernels(const std::vector<std::pair<int64_t, std::vector<KernelRecord>>>& kernels);

  std::optional<StoredPoint> load(int64_t id) const;
  // The stored points of these ids, in their order (ids not stored are left out).
  std::vector<StoredPoint> load(const std::vector<int64_t>& ids) const;
  // Every point, oldest first (views filter in memory; stores hold thousands of points, not millions).
  std::vector<StoredPoint> load_all() const;

  // Writes the annotations of these points (replacing older ones) in one transaction: a derived
  // copy for SQL users; views recompute them from the facts. Each row's fields are in the order of
  // `table.columns`. The table is (re)created first when missing or of another version: the store
  // knows the model only through this description. Not available read-only.
  void save_annotations(const DerivedTable& table,
                        const std::vector<std::pair<int64_t, std::vector<NamedValue>>>& annotations);

  void save_calibration(const DeviceContext& device, const Calibration& calibration);

  // Creates the file or updates its schema now rather than at the first save (every save calls it).
  // `announce`: say in one line on stderr when the file's schema is upgraded (a merge's temporary
  // copies upgrade silently: the merge says what it did).
  void open_for_writing(bool announce = true);
  // The newest calibration of each kind for this GPU (by UUID).
  std::vector<Calibration> load_calibration(const DeviceContext& device) const;

 private:
  void open_connection(bool writable) const;
  // The connection for reading, opened on first use when the file appeared after the constructor
  // (another Store or process created it); null while there is still no file.
  sqlite3* reader() const;
  // Returns whether the table was (re)made: it is rebuilt when the model's version changes.
  // Returns the model version of the annotations table it replaced, if any (see store.cpp).
  std::optional<std::string> create_annotations_table(const DerivedTable& table);

  std::string path_;
  mutable sqlite3* db_ = nullptr;  // null until the file exists (see reader())
  bool read_only_ = false;
  mutable bool writable_ = false;  // the connection is open read-write (after the first write)
  mutable int version_ = 0;        // the open file's schema version (queries of older ones differ)
  bool announce_upgrade_ = true;   // open_for_writing's argument
  mutable bool immutable_ = false;  // the connection reads without locks (nothing was beside the file)
  mutable std::pair<uintmax_t, int64_t> immutable_stamp_;  // the file's size and time when it opened
};

}  // namespace shapescope
