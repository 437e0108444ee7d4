// The result store: one SQLite file (DESIGN.md "The result store").
// Each point is written in its own transaction, so a killed sweep loses at most the points in flight,
// and a second run skips what is already there.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fields.hpp"
#include "core/records.hpp"

struct sqlite3;

namespace shapescope {

class Store {
 public:
  enum class Access { kReadWrite, kReadOnly };
  // Opens or creates the file (read-write), or opens an existing one without writing (read-only: the
  // views, which must work on a copied store). Throws Error(ExitCode::kStore) with one line naming
  // the path when it cannot be opened or created, is not writable (read-write), is not a SQLite
  // database, or fails its schema check.
  explicit Store(const std::string& path, Access access = Access::kReadWrite);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }

  // The id of the stored point with this device and key, if any.
  std::optional<int64_t> find(const DeviceContext& device, const PointKey& key) const;
  // Whether the point's launched kernels have been recorded.
  bool is_annotated(int64_t id) const;

  // Writes (or, when the key exists, replaces: its kernels go too) one point; one transaction.
  int64_t save_point(const DeviceContext& device, const PointKey& key, const PointResult& result);
  // Replaces the point's kernels and marks it annotated; one transaction.
  void save_kernels(int64_t id, const std::vector<KernelRecord>& kernels);

  std::optional<StoredPoint> load(int64_t id) const;
  // Every point, oldest first (views filter in memory; stores hold thousands of points, not millions).
  std::vector<StoredPoint> load_all() const;

  // Writes the annotations of these points (replacing older ones) in one transaction: a derived
  // copy for SQL users; views recompute them from the facts. Each row's fields are in the order of
  // `table.columns`. The table is (re)created first when missing or of another version: the store
  // knows the model only through this description. Not available read-only.
  void save_annotations(const DerivedTable& table,
                        const std::vector<std::pair<int64_t, std::vector<NamedValue>>>& annotations);

  void save_calibration(const DeviceContext& device, const Calibration& calibration);
  // The newest calibration of each kind for this GPU (by UUID).
  std::vector<Calibration> load_calibration(const DeviceContext& device) const;

 private:
  void create_annotations_table(const DerivedTable& table);

  std::string path_;
  sqlite3* db_ = nullptr;
  bool read_only_ = false;
};

}  // namespace shapescope
