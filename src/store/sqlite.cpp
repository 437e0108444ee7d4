#include "store/sqlite.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "common/error.hpp"

namespace shapescope::sql {

std::string describe(int rc, const char* otherwise) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT: return "not a shapescope store or corrupt";
    case SQLITE_READONLY: return "read-only";
    case SQLITE_CANTOPEN: return "cannot open";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "locked by another process";
    case SQLITE_FULL: return "disk full";
    case SQLITE_IOERR: return "I/O error";
    default: return otherwise;
  }
}

void fail(const std::string& path, const std::string& what) {
  throw Error(ExitCode::kStore, fmt::format("store '{}': {}", path, what));
}

void fail_sqlite(const std::string& path, sqlite3* db, int rc, const char* otherwise) {
  // A rollback journal left by a writer that was killed: reading needs it rolled back, which writes.
  if (rc == SQLITE_READONLY_ROLLBACK)
    fail(path, fmt::format("a write to it was cut off ('{0}-journal' holds what to roll back, which shapescope "
                           "leaves to you: sqlite3 '{0}' 'PRAGMA quick_check')",
                           path));
  // The connection's message names the failure more precisely than the code's generic text.
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  fail(path, fmt::format("{} ({})", describe(rc, otherwise), message));
}

void exec(sqlite3* db, const std::string& path, const char* sql, const char* otherwise) {
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail_sqlite(path, db, rc, otherwise);
}

std::string uri_of(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '?' || c == '#' || c == '%') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri;
}

bool has_wal(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path + "-wal", ec) && std::filesystem::file_size(path + "-wal", ec) > 0;
}

// Without changing a byte of the store or making a file beside it (SQLite's plain read-only open
// would: it makes -wal and -shm files for a WAL store, and rewrites a stale -shm):
// - nothing beside it (no writer at work, nothing left over): immutable, no locks, no files;
// - a -wal with its -shm (a writer at work, or one killed after a commit): readonly_shm reads the
//   WAL through the -shm without writing it (SQLite rebuilds a stale -shm in memory);
// - a -wal without its -shm: SQLite could read it only by making the -shm: refused;
// - a rollback -journal (a writer at work, or one killed half way): through the locks; a journal
//   that must be rolled back first is refused by SQLite (SQLITE_READONLY_ROLLBACK, fail_sqlite).
std::string read_only_uri(const std::string& path) {
  namespace fs = std::filesystem;
  const auto beside = [&path](const char* suffix) {
    std::error_code ec;
    const auto size = fs::file_size(path + suffix, ec);
    return !ec && size > 0;
  };
  if (beside("-wal")) {
    std::error_code ec;
    if (!fs::exists(path + "-shm", ec))
      fail(path, fmt::format("'{0}-wal' holds writes that SQLite reads only by making '{0}-shm', which shapescope "
                             "leaves to you: sqlite3 '{0}' 'PRAGMA quick_check'",
                             path));
    return uri_of(path) + "?mode=ro&readonly_shm=1";
  }
  if (beside("-journal")) return uri_of(path) + "?mode=ro";
  return uri_of(path) + kImmutableQuery;
}

}  // namespace shapescope::sql
