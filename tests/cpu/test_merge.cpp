// `shapescope merge`: overlapping stores (counts, the newer of a key kept, replaced keys), merging
// into an existing store, refusals before anything is written (another schema version, corrupt,
// missing, OUT among the inputs), inputs byte for byte unchanged, and a merge killed with SIGKILL
// half way leaving OUT as it was. Works on copies of the committed H200 stores in a temporary folder.
#include "store/merge.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "store/store.hpp"

extern char** environ;

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kData = SHAPESCOPE_TEST_DATA;
const std::string kExplain = kData + "/h200-2026-11-21-final/explain.db";       // 94 points, annotated
const std::string kOtherExplain = kData + "/h200-2026-11-21-explain/explain.db";  // 92 points, another run
const std::string kSquares = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";  // 4096 points

std::string bytes_of(const fs::path& path) { return file_text(path.string()); }
size_t checksum(const fs::path& path) { return std::hash<std::string>{}(bytes_of(path)); }

void sql(const std::string& path, const std::string& statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(rc, SQLITE_OK) << statement << ": " << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

std::string text(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(("file:" + path + "?immutable=1").c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                            nullptr),
            SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query.c_str(), -1, &stmt, nullptr), SQLITE_OK) << query;
  std::string value;
  if (sqlite3_step(stmt) == SQLITE_ROW) value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}
int64_t number(const std::string& path, const std::string& query) { return std::stoll(text(path, query)); }

// A point's identity as the store keys it, as text.
std::string key_text(const StoredPoint& p) {
  const Problem& q = p.key.problem;
  return p.device.gpu_uuid + p.device.driver + p.device.cublas + p.device.cublaslt + p.device.cuda_runtime + " " +
         std::string(to_string(p.key.backend)) + p.key.algo + (p.key.hot ? "h" : "c") + q.shape_string() + std::string(to_string(q.dtype)) +
         std::string(to_string(q.layout)) +
         fmt::format(" {} {} {} {} {} {} {}", q.batch, q.lda, q.ldb, q.ldc, q.off_a, q.off_b, q.off_c);
}
std::set<std::string> keys_of(const std::string& path) {
  std::set<std::string> keys;
  for (const StoredPoint& p : Store(path, Store::Access::kReadOnly).load_all()) keys.insert(key_text(p));
  return keys;
}

class Merge : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/shapescope_merge_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string copy(const std::string& from, const std::string& name) {
    fs::copy_file(from, dir_ / name);
    return (dir_ / name).string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Every file in the folder: nothing but what the test made, and OUT when it should be there.
  std::set<std::string> files() const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.insert(entry.path().filename().string());
    return names;
  }

  fs::path dir_;
};

TEST_F(Merge, OverlappingStoresKeepTheNewerOfEachKey) {
  const std::string a = copy(kExplain, "a.db");
  const std::string b = copy(kExplain, "b.db");
  // b re-measured ten of a's points later (their kernels changed too), and lacks five others.
  sql(b, "UPDATE points SET measured_at = '2099-01-01T00:00:00Z', median_us = 1.5 WHERE id IN "
         "(SELECT id FROM points ORDER BY id LIMIT 10)");
  sql(b, "UPDATE kernels SET name = 'remeasured' WHERE point_id IN (SELECT id FROM points ORDER BY id LIMIT 10)");
  // (with their kernels and annotations, as a store that never had them)
  sql(b, "DELETE FROM kernels WHERE point_id IN (SELECT id FROM points ORDER BY id DESC LIMIT 5); "
         "DELETE FROM annotations WHERE point_id IN (SELECT id FROM points ORDER BY id DESC LIMIT 5); "
         "DELETE FROM points WHERE id IN (SELECT id FROM points ORDER BY id DESC LIMIT 5)");
  const size_t a_sum = checksum(a), b_sum = checksum(b);
  const int64_t a_points = number(a, "SELECT count(*) FROM points");

  const MergeResult r = merge_stores(path("out.db"), {a, b});
  EXPECT_FALSE(r.out_existed);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].added, size_t(a_points));
  EXPECT_EQ(r.inputs[1].added, 0u);
  EXPECT_EQ(r.inputs[1].replaced, 10u);
  EXPECT_EQ(r.inputs[1].left_out, size_t(a_points - 5 - 10));
  EXPECT_EQ(r.points, size_t(a_points));
  const std::string out = path("out.db");
  EXPECT_EQ(number(out, "SELECT count(*) FROM points"), a_points);
  EXPECT_EQ(number(out, "SELECT count(*) FROM points WHERE measured_at = '2099-01-01T00:00:00Z' AND median_us = 1.5"), 10);
  // The replacing points came with their own kernels, and the replaced ones' kernels went.
  EXPECT_EQ(number(out, "SELECT count(*) FROM kernels WHERE name = 'remeasured'"),
            number(b, "SELECT count(*) FROM kernels WHERE name = 'remeasured'"));
  EXPECT_EQ(number(out, "SELECT count(*) FROM kernels"), number(a, "SELECT count(*) FROM kernels"));
  EXPECT_EQ(number(out, "SELECT count(*) FROM kernels WHERE point_id NOT IN (SELECT id FROM points)"), 0);
  EXPECT_EQ(number(out, "SELECT count(*) FROM annotations"), a_points);
  EXPECT_EQ(number(out, "SELECT count(*) FROM annotations WHERE point_id NOT IN (SELECT id FROM points)"), 0);
  // Calibrations are a history: the same rows twice are one.
  EXPECT_EQ(number(out, "SELECT count(*) FROM calibration"), number(a, "SELECT count(*) FROM calibration"));
  EXPECT_EQ(text(out, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(checksum(a), a_sum);
  EXPECT_EQ(checksum(b), b_sum);
  EXPECT_EQ(files(), (std::set<std::string>{"a.db", "b.db", "out.db"}));
}

TEST_F(Merge, CountsAreTheUnionOfTheKeys) {
  const std::string a = copy(kExplain, "a.db");
  const std::string c = copy(kOtherExplain, "c.db");
  std::set<std::string> expected = keys_of(a);
  for (const std::string& key : keys_of(c)) expected.insert(key);
  const CliRun r = run(fmt::format("merge '{}' '{}' '{}'", path("out.db"), a, c));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(keys_of(path("out.db")), expected);
  EXPECT_NE(r.out.find(fmt::format("holds {} points", expected.size())), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replaced"), std::string::npos) << r.out;
  // Into the existing store: the same keys again add nothing and are counted as left out.
  const CliRun again = run(fmt::format("merge '{}' '{}'", path("out.db"), a));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(keys_of(path("out.db")), expected);
  EXPECT_NE(again.out.find(fmt::format("{} it had", expected.size())), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("replaced 0, left out"), std::string::npos) << again.out;
}

TEST_F(Merge, IntoAnExistingStoreAddsItsPoints) {
  const std::string out = copy(kExplain, "out.db");
  const std::string pad = copy(kData + "/h200-2026-11-21-final/pad.db", "pad.db");
  const int64_t before = number(out, "SELECT count(*) FROM points");
  const std::set<std::string> old_keys = keys_of(out);
  const MergeResult r = merge_stores(out, {pad});
  EXPECT_TRUE(r.out_existed);
  EXPECT_EQ(r.out_points, size_t(before));
  std::set<std::string> expected = old_keys;
  for (const std::string& key : keys_of(pad)) expected.insert(key);
  EXPECT_EQ(keys_of(out), expected);
  EXPECT_EQ(r.points, expected.size());
}

TEST_F(Merge, AnnotationsOfAnotherModelVersionAreLeftOut) {
  const std::string a = copy(kExplain, "a.db");
  const std::string b = copy(kOtherExplain, "b.db");
  sql(b, "UPDATE meta SET value = '99' WHERE key = 'model_version'");
  const CliRun r = run(fmt::format("merge '{}' '{}' '{}'", path("out.db"), a, b));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(number(path("out.db"), "SELECT count(*) FROM annotations"), number(a, "SELECT count(*) FROM annotations"));
  EXPECT_NE(r.out.find("; the annotations of '" + b + "' (model version 99) left out"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;  // the one line the README shows
}

// Each refusal: one line, its exit code, OUT as it was (or still absent), no file made or left.
TEST_F(Merge, RefusalsComeBeforeAnythingIsWritten) {
  const std::string good = copy(kExplain, "good.db");
  const std::string newer = copy(kExplain, "newer.db");
  sql(newer, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  const std::string corrupt = copy(kSquares, "corrupt.db");
  {
    // Garbage over pages in the middle of the file: the header still reads, the pages do not.
    std::fstream f(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1 << 20);
    const std::string junk(64 * 1024, '\x5a');
    f.write(junk.data(), std::streamsize(junk.size()));
  }
  // Points whose times no measurement gives (shapescope never writes one; reading the store refuses
  // them): refused, not copied into OUT.
  const std::string negative = copy(kExplain, "negative.db");
  sql(negative, "UPDATE points SET median_us = -5 WHERE id = (SELECT min(id) FROM points)");
  const std::string infinite = copy(kExplain, "infinite.db");
  sql(infinite, "UPDATE points SET q3_us = 1e999 WHERE id IN (SELECT id FROM points LIMIT 3)");
  const std::string existing = copy(kOtherExplain, "existing.db");
  const std::set<std::string> made = files();
  std::map<std::string, size_t> sums;
  for (const std::string& name : made) sums[name] = checksum(dir_ / name);

  struct Case {
    std::string args, expect;
    int code;
  };
  const std::vector<Case> cases = {
      {fmt::format("'{}' '{}' '{}'", path("out.db"), good, newer), "newer shapescope", 5},
      {fmt::format("'{}' '{}'", path("out.db"), corrupt), "corrupt", 5},
      {fmt::format("'{}' '{}' '{}'", path("out.db"), good, path("missing.db")), "no such file", 5},
      {fmt::format("'{}' '{}' '{}'", existing, good, existing), "is OUT itself", 2},
      {fmt::format("'{}' '{}' '{}/../{}/good.db'", path("out.db"), good, dir_.string(), dir_.filename().string()),
       "given twice", 2},
      {fmt::format("'{}' '{}'", newer, good), "newer shapescope", 5},
      {fmt::format("'{}' '{}'", existing, corrupt), "corrupt", 5},
      {fmt::format("'{}'", path("out.db")), "IN: missing", 2},
      {fmt::format("'{}' '{}' '{}'", path("out.db"), good, negative),
       "corrupt: 1 point with a time that is not a positive number (the first: id", 5},
      {fmt::format("'{}' '{}'", existing, infinite), "corrupt: 3 points with a time that is not a positive number", 5},
  };
  for (const Case& c : cases) {
    const CliRun r = run("merge " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(files(), made) << c.args;
    for (const auto& [name, sum] : sums) EXPECT_EQ(checksum(dir_ / name), sum) << name << " after " << c.args;
  }
}

// SIGKILL once the merge has started writing its temporary copy: OUT is byte for byte as it was,
// and a second merge completes.
TEST_F(Merge, KilledMergeLeavesOutAsItWas) {
  const std::string out = copy(kExplain, "out.db");
  const std::string squares = copy(kSquares, "squares.db");
  const std::string other = copy(kOtherExplain, "other.db");
  const std::string pad = copy(kData + "/h200-2026-11-21-final/pad.db", "pad.db");
  const size_t before = checksum(out);
  bool killed_mid_way = false;
  for (int attempt = 0; attempt < 10 && !killed_mid_way; ++attempt) {
    std::vector<const char*> argv = {kShapescopeBin, "merge", out.c_str(), squares.c_str(),
                                     other.c_str(), pad.c_str(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, kShapescopeBin, nullptr, nullptr, const_cast<char* const*>(argv.data()), environ), 0);
    bool staging = false;
    int status = 0;
    const auto start = std::chrono::steady_clock::now();
    // Up to two minutes: a busy machine may take long to start the merge.
    while (!staging && std::chrono::steady_clock::now() - start < std::chrono::minutes(2)) {
      for (const auto& entry : fs::directory_iterator(dir_))
        if (entry.path().filename().string().rfind(".out.db.shapescope-", 0) == 0) staging = true;
      if (waitpid(pid, &status, WNOHANG) == pid) break;  // finished before we saw it: try again
    }
    if (staging) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      killed_mid_way = WIFSIGNALED(status);
    }
    if (!killed_mid_way) {
      fs::remove(out);
      fs::copy_file(kExplain, out);
    }
    for (const auto& entry : fs::directory_iterator(dir_))
      if (entry.path().filename().string().rfind(".out.db.shapescope-", 0) == 0) fs::remove(entry.path());
  }
  ASSERT_TRUE(killed_mid_way) << "the merge never got killed while writing";
  EXPECT_EQ(checksum(out), before);
  EXPECT_FALSE(fs::exists(out + "-wal"));
  const CliRun r = run(fmt::format("merge '{}' '{}' '{}' '{}'", out, squares, other, pad));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(checksum(out), before);
  EXPECT_EQ(number(out, "SELECT count(*) FROM points"),
            int64_t(keys_of(out).size()));
}

}  // namespace
}  // namespace shapescope
