// The result store: one SQLite file (DESIGN.md "The result store").
// Each point is written in its own transaction, so a killed sweep loses at most the points in flight,
// and a second run skips what is already there.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/records.hpp"

struct sqlite3;

namespace shapescope {

class Store {
 public:
  // Opens or creates the file. Throws Error(ExitCode::kStore) with one line naming the path when it
  // cannot be opened or created, is not writable, is not a SQLite database, or fails its schema check.
  explicit Store(const std::string& path);
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

  void save_calibration(const DeviceContext& device, const Calibration& calibration);
  // The newest calibration of each kind for this GPU (by UUID).
  std::vector<Calibration> load_calibration(const DeviceContext& device) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace shapescope
