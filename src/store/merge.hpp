// Several stores into one (`shapescope merge OUT IN...`): the shards of a sweep measured by a job
// array, or the stores of several GPUs, for the views to read together.
//
// Every point, its kernels and annotations, and every calibration of each input are copied into
// OUT. A key stored twice (the same GPU, software stack and point: a re-measurement) is kept once,
// the newer by measured_at (of two as new, the one met first: OUT's, then the inputs' in order).
// Annotations are derived data: an input's are copied when OUT holds none or holds the same model
// version; otherwise they are left out (the views recompute them) and the result says so.
//
// Nothing is written before every check has passed: each input exists, is a shapescope store of
// this build's schema version and passes SQLite's quick_check; OUT, when it exists, too, with no
// -wal beside it (a sweep writing it); OUT is not among the inputs, nor an input given twice.
// OUT is built in a temporary file beside it (from a copy of OUT when it exists) and renamed over
// it only when the merge succeeded: a failed or killed merge leaves OUT as it was. The inputs are
// opened read-only: not a byte of them changes, and no -wal/-shm files appear beside them.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace shapescope {

struct MergeCounts {
  std::string path;
  size_t points = 0;        // points the store holds
  size_t added = 0;         // keys OUT did not have
  size_t replaced = 0;      // newer than OUT's copy of the key, which they replaced
  size_t left_out = 0;      // keys OUT had already, as new or newer: this copy is left out
  size_t kernels = 0;       // kernel rows copied with the added and replacing points
  size_t annotations = 0;   // annotation rows copied
  size_t calibrations = 0;  // calibration rows OUT did not have
  // Annotations not copied because their model version differs from OUT's: "2" against "1".
  std::string skipped_model_version, out_model_version;
};

struct MergeResult {
  bool out_existed = false;
  size_t out_points = 0;              // points OUT held before
  std::vector<MergeCounts> inputs;    // in the order given
  size_t points = 0;                  // points OUT holds now
  // Stores of an older schema (OUT or inputs), merged through upgraded copies (the inputs left as
  // they were; OUT written in this build's schema).
  std::vector<std::string> upgraded;
};

// One merge into OUT at a time: a merge holds an exclusive lock on OUT (ExclusiveLock,
// common/output_file.hpp) from before it reads OUT until OUT is replaced, so that a second merge
// into it (a job array's merge step run twice) waits and then merges into the first one's result.
// `waiting` is called once when the wait starts; `*interrupted` ends it (Error(kInterrupted)).
struct MergeWait {
  const std::atomic<bool>* interrupted = nullptr;
  std::function<void()> waiting;
};

// Throws Error(kUsage) for OUT among the inputs or an input's -wal, -shm or -journal file, or an
// input given twice, Error(kStore) naming the file for a missing, corrupt or foreign store, a newer
// schema version or OUT with a -wal; all before anything is written.
MergeResult merge_stores(const std::string& out, const std::vector<std::string>& inputs, const MergeWait& wait = {});

}  // namespace shapescope
