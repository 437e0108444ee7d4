// Output files that never cost the user a file: what a command writes goes to a temporary file (or
// folder) beside its destination and is renamed into place only when the command has succeeded.
// A failing, interrupted or killed command leaves the old file exactly as it was.
#pragma once
#include <fstream>
#include <string>
#include <vector>

namespace shapescope {

// Refuses, with usage_error naming `option` and the value, an output path that is empty, a
// directory, a device or another special file, or that is one of `inputs` (every file the command
// reads: result stores, templates) or a store's -wal/-shm/-journal file, under any spelling (the
// same file on disk). The path may not exist yet.
void check_output_path(const std::string& path, const std::string& option, const std::vector<std::string>& inputs);

// Whether two paths name one file: the same file on disk, or (one not existing yet) the same
// absolute path once links and dots are resolved.
bool same_file(const std::string& a, const std::string& b);
// Refuses, with usage_error naming `option`, a file given twice under any spelling (--db s.db --db ./s.db).
void check_given_once(const std::vector<std::string>& paths, const std::string& option);

// A write to a symbolic link replaces its target (the link stays). Failures name the path as given,
// never the temporary file: Error(kWrite) for a full disk or read-only file system, else usage_error.

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
  void commit();

 private:
  std::string path_, option_, target_, temp_;
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
  // Moves these file names (relative to the folder) into `dir`.
  void commit(const std::vector<std::string>& names);

 private:
  std::string dir_, option_, temp_;
  bool committed_ = false;
};

}  // namespace shapescope
