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

std::string read_only_uri(const std::string& path) {
  return uri_of(path) + (has_wal(path) ? "?mode=ro" : "?immutable=1");
}

}  // namespace shapescope::sql
