// `shapescope merge OUT.db IN.db...`: the points, kernels, annotations and calibrations of several
// stores (the shards of a job array, the stores of several GPUs) into one. No GPU needed.
#include <fmt/format.h>

#include <memory>

#include "cli/commands.hpp"
#include "common/output_file.hpp"
#include "report/scale_report.hpp"
#include "store/merge.hpp"

namespace shapescope {
namespace {

struct MergeOptions {
  std::string out;
  std::vector<std::string> inputs;
};

void run_merge(const MergeOptions& o) {
  MergeWait wait;
  wait.interrupted = &g_interrupted;
  wait.waiting = [&o] {
    fmt::print(stderr, "merge: another merge is writing '{}' (or a new store in its folder); waiting for it to "
                       "finish, then merging into its result (^C stops)\n",
               o.out);
  };
  const MergeResult result = merge_stores(o.out, o.inputs, wait);
  for (const std::string& line : merge_summary(result, o.out)) announce(line);
}

}  // namespace

void register_merge(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  auto* cmd = app.add_subcommand("merge", "Merge result stores (shards of a sweep, several GPUs) into one");
  cmd->footer(
      "OUT is created, or merged into when it exists. A point measured twice (the same GPU, driver,\n"
      "libraries and key) is kept once: the newer (measured_at); the merge says how many it replaced.\n"
      "Every store is checked first (a shapescope store of this schema version, quick_check ok);\n"
      "OUT is built beside itself and renamed into place only when the merge succeeded, so a failed or\n"
      "killed merge leaves it as it was. The inputs are only read. OUT may not be an input's -wal,\n"
      "-shm or -journal file. A second merge into the same OUT while one runs waits for it (a lock on\n"
      "OUT) and then merges into its result; ^C ends the wait.\n"
      "Examples:\n"
      "  shapescope merge all.db shard-1.db shard-2.db shard-3.db shard-4.db\n"
      "  shapescope merge gpus.db h100.db h200.db        # then: plot compare --db gpus.db ...\n"
      "  shapescope merge shapescope.db from-cluster.db  # add another store's points to yours\n"
      "Exit codes: 0 ok, 2 bad arguments (OUT among the inputs or their SQLite files, an input twice),\n"
      "5 a store missing, corrupt, of another schema version, or not writable, 6 standard output\n"
      "could not be written (OUT left as it was), 130 interrupted (OUT left as it was).");
  cmd->add_option("OUT", o->out, "the store to write (created, or merged into)")->required();
  cmd->add_option("IN", o->inputs, "stores to read")->required();
  cmd->callback([o] { run_merge(*o); });
}

}  // namespace shapescope
