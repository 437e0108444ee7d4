// Output files that never cost the user a file: what a command writes goes to a temporary file (or
// folder) beside its destination and is renamed into place only when the command has succeeded.
// A failing, interrupted or killed command leaves the old file exactly as it was.
#pragma once
#include <atomic>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace shapescope {

// The files SQLite keeps beside a database: its write-ahead log, that log's index, a rollback journal.
inline constexpr const char* kSqliteSideSuffixes[] = {"-wal", "-shm", "-journal"};

// Refuses, with usage_error naming `option` and the value, an output path that is empty, a
// directory, a device or another special file, or that is one of `inputs` (every file the command
// reads: result stores, templates) or a store's -wal/-shm/-journal file, under any spelling (the
// same file on disk). The path may not exist yet. Also, unless kReplace, a path that holds an SQLite
// database (a result store; through a link, its target): a page, a table or a picture never takes a
// store's place by accident. kRefuseUnlessForced says that --force replaces it. Always, the -wal, -shm
// or -journal file beside any SQLite database, read by the command or not.
enum class StoreAtOutput { kRefuse, kRefuseUnlessForced, kReplace };
void check_output_path(const std::string& path, const std::string& option, const std::vector<std::string>& inputs,
                       StoreAtOutput store = StoreAtOutput::kRefuse);
// kReplace when --force was given, else kRefuseUnlessForced.
inline StoreAtOutput store_at_output(bool force) {
  return force ? StoreAtOutput::kReplace : StoreAtOutput::kRefuseUnlessForced;
}
// Whether the file at `path` (a link's target) is an SQLite database: its first 16 bytes.
bool is_sqlite_file(const std::string& path);

// Whether two paths name one file: the same file on disk, or (one not existing yet) the same
// absolute path once links and dots are resolved.
bool same_file(const std::string& a, const std::string& b);
// Refuses, with usage_error naming `option`, a file given twice under any spelling (--db s.db --db ./s.db).
void check_given_once(const std::vector<std::string>& paths, const std::string& option);

// A write to a symbolic link replaces its target (the link stays). Failures name the path as given,
// never the temporary file: Error(kWrite) for a full disk or read-only file system, else usage_error.

// The commit point of a process (the CLI's main() opens one around the command). While one is open,
// commit() of OutputFile, StagedFile and OutputFolder makes the output complete and synced beside
// its destination and hands it over, and announce() holds the lines that say what was written; the
// owner then calls print() and, when every line reached its stream, put_in_place(), or lets the
// destructor remove what it holds. So an output replaces its destination only once the command ran
// to its end, was not interrupted, and its standard output, success line included, was written.
// Without an open commit point (tests, other callers) commit() renames at once and announce()
// prints at once.
class CommitPoint {
 public:
  CommitPoint();
  ~CommitPoint();  // removes every output still held
  CommitPoint(const CommitPoint&) = delete;
  CommitPoint& operator=(const CommitPoint&) = delete;

  // The destinations held, as the user named them.
  std::vector<std::string> held() const;
  // Writes the announced lines to their streams, in order.
  void print();
  // Renames every output held over its destination, in the order committed; throws Error naming
  // the first that fails (the ones before it are in place).
  void put_in_place();

  struct Held {
    std::string path;                   // as the user named it
    std::function<void()> put;          // the rename(s)
    std::function<void()> remove;       // the temporary file or folder, when not put in place
    std::shared_ptr<void> keep;         // held until put or removed (a lock)
  };
  void hold(Held output);
  void say(std::string line, bool to_stderr);

 private:
  std::vector<Held> outputs_;
  std::vector<std::pair<std::string, bool>> lines_;
};
// The process's open commit point, nullptr when there is none.
CommitPoint* commit_point();
// While one lives, commit() puts outputs in place at once: for the files a command makes in its own
// scratch folder and reads back (report's figures), which are no output of the command.
class CommitNow {
 public:
  CommitNow();
  ~CommitNow();
  CommitNow(const CommitNow&) = delete;
  CommitNow& operator=(const CommitNow&) = delete;

 private:
  CommitPoint* held_;
};
// A line that says what a command wrote ("export: 12 points from 'a.db' to 'p.csv'"): printed with
// the outputs put in place, never when they are not (see CommitPoint); at once when no commit point
// is open. A newline is added.
void announce(const std::string& line, bool to_stderr = false);

// An exclusive lock on what a path names, for a writer that replaces the file whole (merge): taken
// before the file is read and held until it is replaced, so that a second such writer waits and then
// reads the first one's result. It locks the file itself (flock), and checks once it holds the lock
// that the path still names that file (a writer that replaced it released the old one: it locks the
// new one); when the file does not exist, it locks its folder until the file appears. A file system
// without locks (flock fails for another reason than a holder) is written unlocked. While another
// holds it, `waiting` is called once and the lock is tried every 100 ms until it is free or
// `*interrupted` is set (then Error(kInterrupted), nothing written).
class ExclusiveLock {
 public:
  ExclusiveLock(const std::string& path, const std::atomic<bool>* interrupted, const std::function<void()>& waiting);
  ~ExclusiveLock();
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;

 private:
  int fd_ = -1;
};

// One output file: written through stream(), put in place by commit(). Until then the destination
// is untouched; a destructor without commit() removes the temporary file.
class OutputFile {
 public:
  // Creates ".NAME.shapescope-XXXXXX" beside `path` (its target, for a link); throws naming
  // `option` when that cannot be done (no such directory, not writable, disk full).
  OutputFile(std::string path, std::string option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return stream_; }
  // Flushes, syncs to disk and renames over the destination (keeping an existing file's mode).
  void commit();

 private:
  std::string path_, option_, target_, temp_;
  std::ofstream stream_;
  bool committed_ = false;
};

// A temporary file beside `path` that another writer fills by its name (SQLite builds a store in
// it): commit() syncs it to disk and renames it over the destination; without commit() the
// destructor removes it. A killed process leaves the destination as it was (and the hidden
// ".NAME.shapescope-XXXXXX" file behind). Throws naming `option` as OutputFile does.
class StagedFile {
 public:
  StagedFile(std::string path, std::string option);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  const std::string& path() const { return temp_; }
  // Keeps `lock` until the file is renamed into place (or removed).
  void hold(std::shared_ptr<ExclusiveLock> lock) { lock_ = std::move(lock); }
  // Syncs and renames (at the commit point, when one is open); `then` runs right after the rename.
  void commit(std::function<void()> then = {});

 private:
  std::string path_, option_, target_, temp_;
  std::shared_ptr<ExclusiveLock> lock_;
  bool committed_ = false;
};

// A temporary folder beside `dir` for outputs made of several files (plot: .gp, .dat, .svg, .png);
// commit() moves each file into `dir` (each rename atomic), then removes the folder; without
// commit() the destructor removes the folder and everything in it.
class OutputFolder {
 public:
  OutputFolder(std::string dir, std::string option);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  const std::string& path() const { return temp_; }
  // Moves these file names (relative to the folder) into `dir` (at the commit point, when one is open).
  void commit(const std::vector<std::string>& names);

 private:
  std::string dir_, option_, temp_;
  bool handed_over_ = false;
};

}  // namespace shapescope
