// SQLite as the store layer uses it: a statement finalized on every path out, a write transaction
// that rolls back unless committed, and failures as one line naming the store (Error(kStore)).
// Shared by the Store (store.cpp) and the merge of stores (merge.cpp); internal to src/store/.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace shapescope::sql {

// What a SQLite result code means to someone holding the file, for the one-line message.
std::string describe(int rc, const char* otherwise);
[[noreturn]] void fail(const std::string& path, const std::string& what);
[[noreturn]] void fail_sqlite(const std::string& path, sqlite3* db, int rc, const char* otherwise);
void exec(sqlite3* db, const std::string& path, const char* sql, const char* otherwise);
// SQLite's URI form of a path, so that query parameters (mode=ro, immutable=1) can follow it:
// '?', '#' and '%' are escaped; everything else stands as it is.
std::string uri_of(const std::string& path);
// The URI that reads a store without changing a byte of it: immutable when no process is writing
// it (no -wal beside it, so no -wal or -shm files appear either), else mode=ro through the -wal.
// The URI to read the store at `path` with, leaving every byte as it is (sqlite.cpp says how).
std::string read_only_uri(const std::string& path);
// The query of a read without locks (read_only_uri() of a store with nothing beside it).
inline constexpr const char* kImmutableQuery = "?immutable=1";
// Whether a -wal with content lies beside the store: a writer is at work, or one was killed.
bool has_wal(const std::string& path);

// A prepared statement that is finalized on every path out, and reports failures naming the store.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const std::string& sql) : db_(db), path_(path) {
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr);
    if (rc != SQLITE_OK) fail_sqlite(path_, db_, rc, "cannot read");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int index, int64_t value) { check_bind(sqlite3_bind_int64(stmt_, index, value)); }
  void bind(int index, int value) { check_bind(sqlite3_bind_int(stmt_, index, value)); }
  void bind(int index, double value) { check_bind(sqlite3_bind_double(stmt_, index, value)); }
  void bind(int index, const std::string& value) {
    check_bind(sqlite3_bind_text(stmt_, index, value.data(), int(value.size()), SQLITE_TRANSIENT));
  }
  void bind(int index, std::string_view value) {
    check_bind(sqlite3_bind_text(stmt_, index, value.data(), int(value.size()), SQLITE_TRANSIENT));
  }
  void bind_null(int index) { check_bind(sqlite3_bind_null(stmt_, index)); }

  // True when a row is ready; false when the statement is done.
  bool step(const char* otherwise = "cannot read") {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail_sqlite(path_, db_, rc, otherwise);
  }
  void run(const char* otherwise = "cannot write") {
    while (step(otherwise)) {
    }
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  int int32(int column) const { return sqlite3_column_int(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string text(int column) const {
    const unsigned char* value = sqlite3_column_text(stmt_, column);
    if (value == nullptr) return {};
    return std::string(reinterpret_cast<const char*>(value), size_t(sqlite3_column_bytes(stmt_, column)));
  }

 private:
  void check_bind(int rc) {
    if (rc != SQLITE_OK) fail_sqlite(path_, db_, rc, "cannot write");
  }

  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE takes the write lock up front, so a concurrent writer waits on busy_timeout instead
// of failing halfway through; anything but commit() rolls back.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path) : db_(db), path_(path) {
    exec(db_, path_, "BEGIN IMMEDIATE", "cannot write");
  }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    exec(db_, path_, "COMMIT", "cannot write");
    done_ = true;
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  bool done_ = false;
};

}  // namespace shapescope::sql
