#include "store/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>

#include "common/error.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "shapescope_store_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/results.db";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(dir_, ignored);
  }

  std::string dir_;
  std::string path_;
};

DeviceContext sample_device() {
  DeviceContext device;
  device.gpu_name = "NVIDIA H100 80GB HBM3";
  device.gpu_uuid = "GPU-1a2b3c4d-0000-1111-2222-333344445555";
  device.sm_count = 132;
  device.cc_major = 9;
  device.cc_minor = 0;
  device.driver = "580.159.04";
  device.cuda_runtime = "13.0";
  device.cublas = "13.1.0";
  device.cublaslt = "13.1.0";
  return device;
}

PointKey sample_key(int64_t m = 4096) {
  PointKey key;
  key.backend = BackendKind::kCublasLt;
  key.algo = "h0";
  Problem& p = key.problem;
  p.m = m;
  p.n = 2048;
  p.k = 1024;
  p.batch = 2;
  p.dtype = DType::kFp16;
  p.layout = Layout::kNT;
  p.lda = 1024 + 8;
  p.ldb = 1024;
  p.ldc = 2048;
  p.off_a = 16;
  p.off_b = 0;
  p.off_c = 8;
  key.clocks = ClockState::kBurst;  // not the default, so that the round trip shows it
  return key;
}

PointResult sample_result(double median_us = 123.25) {
  PointResult result;
  TimingStats& t = result.timing;
  t.median_us = median_us;
  t.min_us = median_us - 3.5;
  t.max_us = median_us + 10.125;
  t.q1_us = median_us - 1;
  t.q3_us = median_us + 1.5;
  t.samples = 50;
  t.noise = 2.5 / median_us;
  t.noisy = true;
  t.sm_clock_mhz = 1755.5;
  t.throttle_reasons = 0x8000000000000004ULL;  // the top bit must survive SQLite's signed integers
  t.throttled = true;
  t.stop = StopReason::kConverged;
  t.median_ci = 0.0042;
  t.sentinel_drift = -0.0125;
  t.reruns = 1;
  t.drifted = true;
  LtAlgoConfig lt;
  lt.algo_id = 66;
  lt.tile_id = 20;
  lt.tile = "256x128";
  lt.stages_id = 8;
  lt.stages = "64x4";
  lt.splitk = 3;
  lt.reduction_scheme = 2;
  lt.reduction = "compute";
  lt.swizzle = 1;
  lt.custom_option = 5;
  lt.cluster_shape_id = 13;
  lt.cluster = "1x2x1";
  lt.inner_shape_id = 4;
  lt.waves_count = 1.375f;
  lt.workspace_bytes = 33554432;
  result.lt = lt;
  result.measured_at = "2025-06-01T12:34:56Z";
  result.command = "shapescope sweep -m 4096 -n 2048 -k 1024 --dtype fp16 --layout nt --note \"a, b\"";
  return result;
}

std::vector<KernelRecord> sample_kernels() {
  KernelRecord main;
  main.name = "void cutlass::Kernel2<cutlass_90_tensorop_f16_s16816gemm_f16_256x128_64x4_nt_align8>(Params, int)";
  main.grid_x = 132;
  main.grid_y = 1;
  main.grid_z = 1;
  main.block_x = 384;
  main.block_y = 1;
  main.block_z = 1;
  main.cluster_x = 1;
  main.cluster_y = 2;
  main.cluster_z = 1;
  main.registers = 168;
  main.static_smem = 0;
  main.dynamic_smem = 232448;
  main.duration_us = 118.5;
  KernelRecord reduce;
  reduce.name = "splitKreduce_kernel<32, 16, int, __half, __half, float>";
  reduce.grid_x = 64;
  reduce.grid_y = 16;
  reduce.grid_z = 2;
  reduce.block_x = 256;
  reduce.block_y = 1;
  reduce.block_z = 1;
  reduce.registers = 32;
  reduce.static_smem = 4096;
  reduce.dynamic_smem = 0;
  reduce.duration_us = 3.25;
  return {main, reduce};
}

// Runs a statement on the file directly, as a second tool (or a damaged file) would.
void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(rc, SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

std::string raw_single_text(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
  std::string text;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    const unsigned char* value = sqlite3_column_text(stmt, 0);
    text = value ? reinterpret_cast<const char*>(value) : "";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return text;
}

// The one-line message of the Error that opening `path` throws; fails the test unless it is a kStore
// error that names the path.
std::string open_error(const std::string& path) {
  try {
    Store store(path);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kStore);
    std::string message = error.what();
    EXPECT_NE(message.find("store '" + path + "'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "opening " << path << " did not throw";
  return {};
}

void expect_same_kernel(const KernelRecord& a, const KernelRecord& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.grid_x, b.grid_x);
  EXPECT_EQ(a.grid_y, b.grid_y);
  EXPECT_EQ(a.grid_z, b.grid_z);
  EXPECT_EQ(a.block_x, b.block_x);
  EXPECT_EQ(a.block_y, b.block_y);
  EXPECT_EQ(a.block_z, b.block_z);
  EXPECT_EQ(a.cluster_x, b.cluster_x);
  EXPECT_EQ(a.cluster_y, b.cluster_y);
  EXPECT_EQ(a.cluster_z, b.cluster_z);
  EXPECT_EQ(a.registers, b.registers);
  EXPECT_EQ(a.static_smem, b.static_smem);
  EXPECT_EQ(a.dynamic_smem, b.dynamic_smem);
  EXPECT_EQ(a.duration_us, b.duration_us);
}

TEST_F(StoreTest, RoundTripKeepsEveryField) {
  Store store(path_);
  DeviceContext device = sample_device();
  PointKey key = sample_key();
  PointResult result = sample_result();
  std::vector<KernelRecord> kernels = sample_kernels();
  int64_t id = store.save_point(device, key, result);
  store.save_kernels(id, kernels);

  std::optional<StoredPoint> loaded = store.load(id);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->id, id);
  EXPECT_EQ(loaded->device.gpu_name, device.gpu_name);
  EXPECT_EQ(loaded->device.gpu_uuid, device.gpu_uuid);
  EXPECT_EQ(loaded->device.sm_count, device.sm_count);
  EXPECT_EQ(loaded->device.cc_major, device.cc_major);
  EXPECT_EQ(loaded->device.cc_minor, device.cc_minor);
  EXPECT_EQ(loaded->device.driver, device.driver);
  EXPECT_EQ(loaded->device.cuda_runtime, device.cuda_runtime);
  EXPECT_EQ(loaded->device.cublas, device.cublas);
  EXPECT_EQ(loaded->device.cublaslt, device.cublaslt);

  EXPECT_EQ(loaded->key.backend, key.backend);
  EXPECT_EQ(loaded->key.algo, key.algo);
  EXPECT_TRUE(loaded->key.problem == key.problem);
  EXPECT_EQ(loaded->key.hot, key.hot);
  EXPECT_EQ(loaded->key.clocks, key.clocks);

  const TimingStats& t = loaded->result.timing;
  EXPECT_EQ(t.median_us, result.timing.median_us);
  EXPECT_EQ(t.min_us, result.timing.min_us);
  EXPECT_EQ(t.max_us, result.timing.max_us);
  EXPECT_EQ(t.q1_us, result.timing.q1_us);
  EXPECT_EQ(t.q3_us, result.timing.q3_us);
  EXPECT_EQ(t.samples, result.timing.samples);
  EXPECT_EQ(t.noise, result.timing.noise);
  EXPECT_EQ(t.noisy, result.timing.noisy);
  EXPECT_EQ(t.sm_clock_mhz, result.timing.sm_clock_mhz);
  EXPECT_EQ(t.throttle_reasons, result.timing.throttle_reasons);
  EXPECT_EQ(t.throttled, result.timing.throttled);
  EXPECT_EQ(t.stop, result.timing.stop);
  EXPECT_EQ(t.median_ci, result.timing.median_ci);
  EXPECT_EQ(t.sentinel_drift, result.timing.sentinel_drift);
  EXPECT_EQ(t.reruns, result.timing.reruns);
  EXPECT_EQ(t.drifted, result.timing.drifted);
  EXPECT_EQ(raw_single_text(path_, "SELECT clock_state || ' ' || stop_reason FROM points"), "burst converged");

  ASSERT_TRUE(loaded->result.lt);
  const LtAlgoConfig& lt = *loaded->result.lt;
  const LtAlgoConfig& want = *result.lt;
  EXPECT_EQ(lt.algo_id, want.algo_id);
  EXPECT_EQ(lt.tile_id, want.tile_id);
  EXPECT_EQ(lt.tile, want.tile);
  EXPECT_EQ(lt.tile_size, std::make_pair(256, 128));  // the tile column's name, read once at load
  EXPECT_EQ(lt.stages_id, want.stages_id);
  EXPECT_EQ(lt.stages, want.stages);
  EXPECT_EQ(lt.splitk, want.splitk);
  EXPECT_EQ(lt.reduction_scheme, want.reduction_scheme);
  EXPECT_EQ(lt.reduction, want.reduction);
  EXPECT_EQ(lt.swizzle, want.swizzle);
  EXPECT_EQ(lt.custom_option, want.custom_option);
  EXPECT_EQ(lt.cluster_shape_id, want.cluster_shape_id);
  EXPECT_EQ(lt.cluster, want.cluster);
  EXPECT_EQ(lt.inner_shape_id, want.inner_shape_id);
  EXPECT_EQ(lt.waves_count, want.waves_count);
  EXPECT_EQ(lt.workspace_bytes, want.workspace_bytes);

  EXPECT_EQ(loaded->result.measured_at, result.measured_at);
  EXPECT_EQ(loaded->result.command, result.command);
  EXPECT_TRUE(loaded->annotated);
  ASSERT_EQ(loaded->kernels.size(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) expect_same_kernel(loaded->kernels[i], kernels[i]);
}

TEST_F(StoreTest, PointWithoutLtConfigOrClockLoadsThemAsAbsent) {
  Store store(path_);
  PointKey key = sample_key();
  key.backend = BackendKind::kCublas;
  key.algo = "default";
  key.hot = true;
  PointResult result = sample_result();
  result.lt.reset();
  result.timing.sm_clock_mhz.reset();
  result.timing.throttle_reasons = 0;
  result.timing.median_ci.reset();
  result.timing.sentinel_drift.reset();
  int64_t id = store.save_point(sample_device(), key, result);
  std::optional<StoredPoint> loaded = store.load(id);
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded->result.lt);
  EXPECT_FALSE(loaded->result.timing.sm_clock_mhz);
  EXPECT_FALSE(loaded->result.timing.median_ci);
  EXPECT_FALSE(loaded->result.timing.sentinel_drift);
  EXPECT_EQ(loaded->result.timing.throttle_reasons, 0u);
  EXPECT_TRUE(loaded->key.hot);
  EXPECT_FALSE(loaded->annotated);
  EXPECT_TRUE(loaded->kernels.empty());
  EXPECT_EQ(raw_single_text(path_, "SELECT mode FROM points"), "hot");
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM points WHERE lt_tile IS NULL AND lt_waves_count IS NULL"),
            "1");
}

// The clock state is part of the key: a burst and a sustained measurement of one shape are two points.
TEST_F(StoreTest, ClockStatesAreTwoPoints) {
  Store store(path_);
  PointKey burst = sample_key();
  PointKey sustained = burst;
  sustained.clocks = ClockState::kSustained;
  const int64_t a = store.save_point(sample_device(), burst, sample_result(100));
  EXPECT_FALSE(store.find(sample_device(), sustained));
  const int64_t b = store.save_point(sample_device(), sustained, sample_result(120));
  EXPECT_NE(a, b);
  EXPECT_EQ(store.find(sample_device(), burst), a);
  EXPECT_EQ(store.find(sample_device(), sustained), b);
  const std::vector<StoredPoint> all = store.load_all();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(with_clock_state(all, ClockState::kSustained).size(), 1u);
  EXPECT_EQ(with_clock_state(all, ClockState::kSustained).front().result.timing.median_us, 120);
  EXPECT_FALSE(same_clock_state(all[0].key, all[1].key));
}

// A chunk's points in one transaction, with their kernels; many keys looked up and loaded at once.
TEST_F(StoreTest, BatchesSaveFindAndLoadInOrder) {
  Store store(path_);
  std::vector<PointToSave> batch;
  std::vector<PointKey> keys;
  for (int64_t m : {64, 128, 192}) {
    batch.push_back({sample_key(m), sample_result(double(m)), m == 128 ? std::nullopt
                                                                       : std::optional(sample_kernels())});
    keys.push_back(sample_key(m));
  }
  const std::vector<int64_t> ids = store.save_points(sample_device(), batch);
  ASSERT_EQ(ids.size(), 3u);
  keys.insert(keys.begin() + 1, sample_key(999));  // not stored
  const std::vector<std::optional<StoredRef>> found = store.find(sample_device(), keys);
  ASSERT_EQ(found.size(), 4u);
  ASSERT_TRUE(found[0] && found[2] && found[3]);
  EXPECT_FALSE(found[1]);
  EXPECT_EQ(found[0]->id, ids[0]);
  EXPECT_TRUE(found[0]->annotated);
  EXPECT_FALSE(found[2]->annotated) << "saved without kernels";
  EXPECT_TRUE(found[3]->annotated);
  const std::vector<StoredPoint> loaded = store.load(std::vector<int64_t>{ids[2], 4242, ids[0]});
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].id, ids[2]);
  EXPECT_EQ(loaded[1].id, ids[0]);
  EXPECT_EQ(loaded[0].kernels.size(), 2u);
  EXPECT_EQ(loaded[0].result.timing.median_us, 192);
}

TEST_F(StoreTest, SaveKernelsForManyWritesNothingWhenOneIsUnknown) {
  Store store(path_);
  const int64_t id = store.save_point(sample_device(), sample_key(), sample_result());
  EXPECT_THROW(store.save_kernels({{id, sample_kernels()}, {id + 100, sample_kernels()}}), Error);
  EXPECT_FALSE(store.is_annotated(id));
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM kernels"), "0");
  store.save_kernels({{id, sample_kernels()}});
  EXPECT_TRUE(store.is_annotated(id));
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A committed schema 1 store (measured before clock states were recorded): read as it is, without a
// byte changed, by a reader and by a writing command that has not written yet; upgraded in one
// transaction by the first write, its points and their kernels kept.
TEST_F(StoreTest, SchemaOneStoreIsReadAsItIsAndUpgradedByTheFirstWrite) {
  const std::string committed = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21-final/pad.db";
  fs::copy_file(committed, path_);
  const std::string before = file_bytes(path_);
  ASSERT_EQ(raw_single_text(path_, "SELECT value FROM meta WHERE key = 'schema_version'"), "1");
  const std::string points = raw_single_text(path_, "SELECT count(*) FROM points");
  const std::string kernels = raw_single_text(path_, "SELECT count(*) FROM kernels");
  std::vector<StoredPoint> old;
  {
    Store reader(path_, Store::Access::kReadOnly);
    old = reader.load_all();
    ASSERT_EQ(std::to_string(old.size()), points);
    for (const StoredPoint& p : old) {
      EXPECT_EQ(p.key.clocks, ClockState::kUnrecorded);
      EXPECT_EQ(p.result.timing.stop, StopReason::kUnrecorded);
      EXPECT_FALSE(p.result.timing.median_ci);
    }
    EXPECT_EQ(reader.find(old.front().device, old.front().key), old.front().id);
    PointKey sustained = old.front().key;
    sustained.clocks = ClockState::kSustained;
    EXPECT_FALSE(reader.find(old.front().device, sustained));
  }
  {
    Store writer(path_);  // a measuring command before its first point
    EXPECT_EQ(writer.load_all().size(), old.size());
  }
  EXPECT_TRUE(file_bytes(path_) == before) << "reading changed the schema 1 store";
  EXPECT_FALSE(fs::exists(path_ + "-wal"));

  Store writer(path_);
  PointKey key = old.front().key;
  key.clocks = ClockState::kSustained;
  testing::internal::CaptureStderr();
  const int64_t id = writer.save_point(old.front().device, key, sample_result());
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("upgraded from schema 1 to 3 (" + points + " points kept"), std::string::npos) << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  EXPECT_EQ(raw_single_text(path_, "SELECT value FROM meta WHERE key = 'schema_version'"), "3");
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM kernels"), kernels);
  EXPECT_EQ(raw_single_text(path_, "PRAGMA foreign_key_check"), "");
  EXPECT_EQ(raw_single_text(path_, "PRAGMA integrity_check"), "ok");
  const std::vector<StoredPoint> now = writer.load_all();
  ASSERT_EQ(now.size(), old.size() + 1);
  for (size_t i = 0; i < old.size(); ++i) {
    EXPECT_EQ(now[i].id, old[i].id);
    EXPECT_EQ(now[i].key.clocks, ClockState::kUnrecorded);
    EXPECT_EQ(now[i].kernels.size(), old[i].kernels.size());
    EXPECT_EQ(now[i].result.timing.median_us, old[i].result.timing.median_us);
  }
  EXPECT_EQ(now.back().id, id);
  EXPECT_EQ(writer.find(old.front().device, old.front().key), old.front().id);
  // Deleting an old point still takes its kernels (the foreign key holds after the rebuild).
  raw_exec(path_, "PRAGMA foreign_keys = ON; DELETE FROM points WHERE id = " + std::to_string(old.front().id));
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM kernels WHERE point_id = " + std::to_string(old.front().id)),
            "0");
}

TEST_F(StoreTest, LoadOfUnknownIdIsEmpty) {
  Store store(path_);
  EXPECT_FALSE(store.load(42));
  EXPECT_FALSE(store.is_annotated(42));
  EXPECT_TRUE(store.load_all().empty());
}

TEST_F(StoreTest, FindMatchesTheWholeKeyAndSoftwareStack) {
  Store store(path_);
  DeviceContext device = sample_device();
  PointKey key = sample_key();
  int64_t id = store.save_point(device, key, sample_result());
  EXPECT_EQ(store.find(device, key), id);

  PointKey other_ld = key;
  other_ld.problem.ldc += 64;
  EXPECT_FALSE(store.find(device, other_ld));
  PointKey other_offset = key;
  other_offset.problem.off_b = 4;
  EXPECT_FALSE(store.find(device, other_offset));
  PointKey other_algo = key;
  other_algo.algo = "h1";
  EXPECT_FALSE(store.find(device, other_algo));
  PointKey other_dtype = key;
  other_dtype.problem.dtype = DType::kBf16;
  EXPECT_FALSE(store.find(device, other_dtype));
  DeviceContext other_driver = device;
  other_driver.driver = "580.65.06";
  EXPECT_FALSE(store.find(other_driver, key));
  DeviceContext other_gpu = device;
  other_gpu.gpu_uuid = "GPU-ffffffff-0000-1111-2222-333344445555";
  EXPECT_FALSE(store.find(other_gpu, key));

  PointKey hot = key;
  hot.hot = true;
  EXPECT_FALSE(store.find(device, hot));
  int64_t hot_id = store.save_point(device, hot, sample_result(99));
  EXPECT_NE(hot_id, id);
  EXPECT_EQ(store.find(device, hot), hot_id);
  EXPECT_EQ(store.find(device, key), id);

  // What is not part of the key (the ordinal, the bus id) does not make a different point.
  DeviceContext same_gpu_elsewhere = device;
  same_gpu_elsewhere.ordinal = 3;
  same_gpu_elsewhere.pci_bus_id = "0000:9a:00.0";
  EXPECT_EQ(store.find(same_gpu_elsewhere, key), id);
}

TEST_F(StoreTest, SavingAnExistingKeyReplacesThePointAndItsKernels) {
  Store store(path_);
  DeviceContext device = sample_device();
  PointKey key = sample_key();
  int64_t old_id = store.save_point(device, key, sample_result(100));
  store.save_kernels(old_id, sample_kernels());
  ASSERT_TRUE(store.is_annotated(old_id));

  int64_t new_id = store.save_point(device, key, sample_result(200));
  EXPECT_EQ(store.find(device, key), new_id);
  std::optional<StoredPoint> loaded = store.load(new_id);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->result.timing.median_us, 200);
  EXPECT_FALSE(loaded->annotated);
  EXPECT_TRUE(loaded->kernels.empty());
  EXPECT_EQ(store.load_all().size(), 1u);
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM kernels"), "0");
}

TEST_F(StoreTest, SaveKernelsMarksAnnotatedAndReplacesKernels) {
  Store store(path_);
  int64_t id = store.save_point(sample_device(), sample_key(), sample_result());
  EXPECT_FALSE(store.is_annotated(id));
  store.save_kernels(id, sample_kernels());
  EXPECT_TRUE(store.is_annotated(id));

  std::vector<KernelRecord> single = {sample_kernels()[1]};
  store.save_kernels(id, single);
  std::optional<StoredPoint> loaded = store.load(id);
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->kernels.size(), 1u);
  expect_same_kernel(loaded->kernels[0], single[0]);

  // A call that launched nothing CUPTI could see is still annotated: there is nothing to retry.
  store.save_kernels(id, {});
  EXPECT_TRUE(store.is_annotated(id));
  EXPECT_TRUE(store.load(id)->kernels.empty());
}

TEST_F(StoreTest, SaveKernelsOfUnknownPointThrows) {
  Store store(path_);
  try {
    store.save_kernels(7, sample_kernels());
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kStore);
  }
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM kernels"), "0");
}

TEST_F(StoreTest, LoadAllIsOldestFirstWithKernelsInLaunchOrder) {
  Store store(path_);
  DeviceContext device = sample_device();
  std::vector<int64_t> ids;
  for (int64_t m : {512, 1024, 2048}) ids.push_back(store.save_point(device, sample_key(m), sample_result()));
  std::vector<KernelRecord> kernels = sample_kernels();
  store.save_kernels(ids[1], kernels);
  std::vector<KernelRecord> reversed(kernels.rbegin(), kernels.rend());
  store.save_kernels(ids[2], reversed);

  std::vector<StoredPoint> points = store.load_all();
  ASSERT_EQ(points.size(), 3u);
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].id, ids[i]);
  EXPECT_EQ(points[0].key.problem.m, 512);
  EXPECT_TRUE(points[0].kernels.empty());
  ASSERT_EQ(points[1].kernels.size(), 2u);
  EXPECT_EQ(points[1].kernels[0].name, kernels[0].name);
  EXPECT_EQ(points[1].kernels[1].name, kernels[1].name);
  ASSERT_EQ(points[2].kernels.size(), 2u);
  EXPECT_EQ(points[2].kernels[0].name, kernels[1].name);
}

TEST_F(StoreTest, CalibrationNewestPerKindWins) {
  Store store(path_);
  DeviceContext device = sample_device();
  store.save_calibration(device, {"tflops:bf16", 700, "2025-06-01T10:00:00Z", "first"});
  store.save_calibration(device, {"tflops:bf16", 720, "2025-06-02T10:00:00Z", "newest"});
  store.save_calibration(device, {"tflops:bf16", 650, "2025-05-01T10:00:00Z", "older, saved last"});
  store.save_calibration(device, {"bandwidth", 3000, "2025-06-01T10:00:00Z", "copy"});
  store.save_calibration(device, {"bandwidth", 3100, "2025-06-01T10:00:00Z", "same second, saved later"});
  DeviceContext other = device;
  other.gpu_uuid = "GPU-other";
  store.save_calibration(other, {"tflops:bf16", 300, "2025-07-01T10:00:00Z", "another GPU"});

  std::vector<Calibration> calibrations = store.load_calibration(device);
  ASSERT_EQ(calibrations.size(), 2u);
  std::map<std::string, Calibration> by_what;
  for (const Calibration& calibration : calibrations) by_what[calibration.what] = calibration;
  EXPECT_EQ(by_what["tflops:bf16"].value, 720);
  EXPECT_EQ(by_what["tflops:bf16"].detail, "newest");
  EXPECT_EQ(by_what["tflops:bf16"].measured_at, "2025-06-02T10:00:00Z");
  EXPECT_EQ(by_what["bandwidth"].value, 3100);

  std::vector<Calibration> other_calibrations = store.load_calibration(other);
  ASSERT_EQ(other_calibrations.size(), 1u);
  EXPECT_EQ(other_calibrations[0].value, 300);
  DeviceContext unknown = device;
  unknown.gpu_uuid = "GPU-never-calibrated";
  EXPECT_TRUE(store.load_calibration(unknown).empty());
}

TEST_F(StoreTest, NewFileGetsMetadataAndReopens) {
  int64_t id = 0;
  {
    Store store(path_);
    EXPECT_EQ(store.path(), path_);
    id = store.save_point(sample_device(), sample_key(), sample_result());
  }
  EXPECT_EQ(raw_single_text(path_, "SELECT value FROM meta WHERE key = 'application'"), "shapescope");
  EXPECT_EQ(raw_single_text(path_, "SELECT value FROM meta WHERE key = 'schema_version'"), "3");
  EXPECT_EQ(raw_single_text(path_, "PRAGMA journal_mode"), "wal");
  Store reopened(path_);
  EXPECT_EQ(reopened.find(sample_device(), sample_key()), id);
}

TEST_F(StoreTest, EmptyFileIsInitializedAtTheFirstWrite) {
  std::ofstream(path_).close();
  ASSERT_TRUE(fs::exists(path_));
  Store store(path_);
  EXPECT_TRUE(store.load_all().empty());
  EXPECT_FALSE(store.find(sample_device(), sample_key()));
  EXPECT_EQ(fs::file_size(path_), 0u);
  store.open_for_writing();
  EXPECT_EQ(raw_single_text(path_, "SELECT value FROM meta WHERE key = 'application'"), "shapescope");
}

TEST_F(StoreTest, MissingDirectoryIsRefused) {
  std::string path = dir_ + "/no/such/dir/results.db";
  std::string message = open_error(path);
  EXPECT_NE(message.find("cannot open"), std::string::npos) << message;
}

TEST_F(StoreTest, DirectoryIsRefused) {
  std::string message = open_error(dir_);
  EXPECT_NE(message.find("cannot open"), std::string::npos) << message;
}

TEST_F(StoreTest, RandomBytesAreRefused) {
  std::mt19937 random(12345);
  std::ofstream file(path_, std::ios::binary);
  for (int i = 0; i < 16384; ++i) file.put(char(random() & 0xff));
  file.close();
  std::string message = open_error(path_);
  EXPECT_NE(message.find("not a shapescope store or corrupt"), std::string::npos) << message;
}

// Makes `dir` read-only for this process alone: a mount namespace (as root; else a user namespace
// that maps us to root in it) with `dir` bind-mounted read-only. false when neither is allowed.
bool read_only_mount(const std::string& dir) {
  if (unshare(CLONE_NEWNS) != 0) {
    const std::string uid = fmt::format("0 {} 1", getuid()), gid = fmt::format("0 {} 1", getgid());
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
    std::ofstream("/proc/self/setgroups") << "deny";
    std::ofstream("/proc/self/uid_map") << uid;
    std::ofstream("/proc/self/gid_map") << gid;
  }
  return mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
         mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) == 0 &&
         mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0;
}

// A store that cannot be written is refused when it is opened for writing, before a sweep measures.
// chmod 444 stops no root (CI runs as root): the store lies on a read-only bind mount instead, which
// stops root too (EROFS). Checked in a child process, whose namespaces go with it.
TEST_F(StoreTest, ReadOnlyFileIsRefused) {
  Store(path_).open_for_writing();
  ASSERT_EQ(chmod(path_.c_str(), 0444), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!read_only_mount(dir_)) _exit(77);
    try {
      Store store(path_);
    } catch (const Error& error) {
      const std::string message = error.what();
      _exit(error.code() == ExitCode::kStore && message.find("read-only") != std::string::npos ? 0 : 1);
    }
    _exit(2);  // opened for writing
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    // No namespaces here: as a user other than root, chmod 444 alone is the test.
    if (getuid() == 0) GTEST_SKIP() << "root without mount namespaces: nothing here can make a file read-only for root";
    const std::string message = open_error(path_);
    EXPECT_NE(message.find("read-only"), std::string::npos) << message;
    return;
  }
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: refused without 'read-only'; 2: opened for writing";
}

// What makes a view unable to write, root or not: its connection holds the file open O_RDONLY.
TEST_F(StoreTest, ReadOnlyStoreHoldsItsFileOpenReadOnly) {
  Store(path_).open_for_writing();
  const Store store(path_, Store::Access::kReadOnly);
  EXPECT_GT(store.load_all().size() + 1, 0u);  // the connection is open and reads
  const fs::path target = fs::canonical(path_);
  int held = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (fs::read_symlink(entry.path(), ec) != target) continue;
    std::ifstream info("/proc/self/fdinfo/" + entry.path().filename().string());
    std::string key;
    int flags = -1;
    while (info >> key)
      if (key == "flags:") info >> std::oct >> flags;
    ASSERT_GE(flags, 0);
    EXPECT_EQ(flags & O_ACCMODE, O_RDONLY) << entry.path() << " flags " << std::oct << flags;
    ++held;
  }
  EXPECT_GE(held, 1);
}

TEST_F(StoreTest, TruncatedStoreIsRefused) {
  {
    Store store(path_);
    DeviceContext device = sample_device();
    for (int64_t m = 1; m <= 200; ++m) {
      int64_t id = store.save_point(device, sample_key(m), sample_result());
      store.save_kernels(id, sample_kernels());
    }
  }
  ASSERT_FALSE(fs::exists(path_ + "-wal") && fs::file_size(path_ + "-wal") > 0);
  uintmax_t size = fs::file_size(path_);
  ASSERT_GT(size, 16384u);
  fs::resize_file(path_, size / 2);
  std::string message = open_error(path_);
  EXPECT_NE(message.find("corrupt"), std::string::npos) << message;
}

TEST_F(StoreTest, ForeignSqliteDatabaseIsRefused) {
  raw_exec(path_, "CREATE TABLE photos (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO photos VALUES (1, 'x')");
  std::string message = open_error(path_);
  EXPECT_NE(message.find("not a shapescope store"), std::string::npos) << message;
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM sqlite_master WHERE name = 'points'"), "0");
}

TEST_F(StoreTest, ForeignMetaTableIsRefused) {
  raw_exec(path_,
           "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('application', 'other')");
  std::string message = open_error(path_);
  EXPECT_NE(message.find("not a shapescope store"), std::string::npos) << message;
}

// A measuring command reads its store without locks until it writes (so that a failing command
// makes no -wal/-shm beside it); points another process saves meanwhile are still seen, while that
// writer is at work (its -wal) and after it has finished (the file changed).
TEST_F(StoreTest, MeasuringStoreSeesPointsOthersSaveBeforeItWrites) {
  Store(path_).save_point(sample_device(), sample_key(), sample_result());  // WAL mode, closed
  ASSERT_FALSE(fs::exists(path_ + "-wal"));
  PointKey second = sample_key(), third = sample_key();
  second.problem.n += 1;
  third.problem.n += 2;
  {
    std::optional<Store> measuring(std::in_place, path_);
    ASSERT_TRUE(measuring->find(sample_device(), sample_key()));
    ASSERT_FALSE(measuring->find(sample_device(), second));
    Store writer(path_);
    writer.save_point(sample_device(), second, sample_result());
    EXPECT_TRUE(measuring->find(sample_device(), second)) << "while the writer is at work";
    measuring.reset();  // the writer closes last, and removes its -wal
  }
  ASSERT_FALSE(fs::exists(path_ + "-wal"));
  Store late(path_);
  ASSERT_FALSE(late.find(sample_device(), third));
  Store(path_).save_point(sample_device(), third, sample_result());
  ASSERT_FALSE(fs::exists(path_ + "-wal"));
  EXPECT_TRUE(late.find(sample_device(), third)) << "after the writer has finished";
}

TEST_F(StoreTest, NewerSchemaVersionIsRefused) {
  Store(path_).open_for_writing();
  raw_exec(path_, "UPDATE meta SET value = '4' WHERE key = 'schema_version'");
  std::string message = open_error(path_);
  EXPECT_NE(message.find("newer"), std::string::npos) << message;
  EXPECT_NE(message.find("schema version 4"), std::string::npos) << message;
}

// A grouped call (MoE experts) is keyed by its groups: two routings of the same tokens are two
// points, and each comes back with its groups.
TEST_F(StoreTest, GroupedCallsAreKeyedByTheirGroups) {
  auto grouped_key = [](std::vector<int64_t> rows) {
    std::vector<Problem> groups;
    for (int64_t m : rows) {
      Problem g;
      g.m = m;
      g.n = 28672;
      g.k = 4096;
      g.layout = Layout::kNT;
      g.lda = 4096;
      g.ldb = 4096;
      g.ldc = 28672;
      groups.push_back(g);
    }
    PointKey key;
    key.backend = BackendKind::kCublasGrouped;
    key.algo = "default";
    key.problem = grouped_problem(groups);
    return key;
  };
  const PointKey balanced = grouped_key({1025, 1025, 1024, 1024});
  const PointKey uneven = grouped_key({1025, 1024, 1025, 1024});  // same sizes, another order: another call
  const PointKey single = grouped_key({1025});                    // one group is an ordinary problem
  EXPECT_FALSE(single.problem.grouped());
  Store store(path_);
  const int64_t a = store.save_point(sample_device(), balanced, sample_result(100));
  const int64_t b = store.save_point(sample_device(), uneven, sample_result(200));
  EXPECT_NE(a, b);
  EXPECT_EQ(store.find(sample_device(), balanced), a);
  EXPECT_EQ(store.find(sample_device(), uneven), b);
  EXPECT_FALSE(store.find(sample_device(), single));
  const std::optional<StoredPoint> back = store.load(b);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->key.problem == uneven.problem);
  ASSERT_EQ(back->key.problem.groups.size(), 4u);
  EXPECT_EQ(back->key.problem.groups[1].m, 1024);
  EXPECT_EQ(raw_single_text(path_, "SELECT groups FROM points WHERE id = " + std::to_string(a)),
            "1025x28672x4096/4096/4096/28672;1025x28672x4096/4096/4096/28672;"
            "1024x28672x4096/4096/4096/28672;1024x28672x4096/4096/4096/28672");
  // A damaged group list is a corrupt store, said in one line.
  raw_exec(path_, "UPDATE points SET groups = '12x4' WHERE id = " + std::to_string(a));
  try {
    store.load(a);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kStore);
    EXPECT_NE(std::string(e.what()).find("has groups '12x4'"), std::string::npos) << e.what();
  }
}

// A store written before grouped calls (schema version 1) is read as it is, without a byte
// changed; its first write brings it to version 3 and keeps every point, its id and its kernels.
TEST_F(StoreTest, VersionOneStoreIsReadAsItIsAndMigratedAtItsFirstWrite) {
  const std::string committed = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21-final/explain.db";
  fs::copy_file(committed, path_);  // the committed file is never opened here
  ASSERT_EQ(raw_single_text(path_, "SELECT value FROM meta WHERE key = 'schema_version'"), "1");
  const std::string kernels_before = raw_single_text(path_, "SELECT count(*) FROM kernels");
  std::vector<StoredPoint> before;
  {
    Store reader(path_, Store::Access::kReadOnly);
    before = reader.load_all();
  }
  ASSERT_GT(before.size(), 10u);
  EXPECT_EQ(raw_single_text(path_, "SELECT value FROM meta WHERE key = 'schema_version'"), "1");
  {
    Store store(path_);
    EXPECT_EQ(store.find(before[3].device, before[3].key), before[3].id);  // found before any write
    store.save_point(sample_device(), sample_key(), sample_result());
  }
  EXPECT_EQ(raw_single_text(path_, "SELECT value FROM meta WHERE key = 'schema_version'"), "3");
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM kernels"), kernels_before);
  EXPECT_EQ(raw_single_text(path_, "PRAGMA foreign_key_check"), "");
  Store after(path_, Store::Access::kReadOnly);
  const std::vector<StoredPoint> now = after.load_all();
  ASSERT_EQ(now.size(), before.size() + 1);
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(now[i].id, before[i].id);
    EXPECT_TRUE(now[i].key.problem == before[i].key.problem);
    EXPECT_EQ(now[i].kernels.size(), before[i].kernels.size());
    EXPECT_EQ(now[i].result.timing.median_us, before[i].result.timing.median_us);
  }
  // Deleting a point still takes its kernels (the foreign key survived the rebuild).
  raw_exec(path_, "PRAGMA foreign_keys = ON; DELETE FROM points WHERE id = " + std::to_string(before[0].id));
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM kernels WHERE point_id = " + std::to_string(before[0].id)), "0");
}

TEST_F(StoreTest, UnparsableDtypeIsReportedAsCorrupt) {
  Store store(path_);
  int64_t id = store.save_point(sample_device(), sample_key(), sample_result());
  raw_exec(path_, "UPDATE points SET dtype = 'bf17'");
  try {
    store.load(id);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kStore);
    std::string message = error.what();
    EXPECT_NE(message.find("store '" + path_ + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("corrupt"), std::string::npos) << message;
    EXPECT_NE(message.find("bf17"), std::string::npos) << message;
  }
  EXPECT_THROW(store.load_all(), Error);
}

TEST_F(StoreTest, TwoStoresOnOneFileSeeEachOthersWrites) {
  Store first(path_);
  Store second(path_);
  DeviceContext device = sample_device();
  int64_t id = first.save_point(device, sample_key(), sample_result());
  EXPECT_EQ(second.find(device, sample_key()), id);
  second.save_kernels(id, sample_kernels());
  EXPECT_TRUE(first.is_annotated(id));
  int64_t other = second.save_point(device, sample_key(8192), sample_result());
  EXPECT_EQ(first.find(device, sample_key(8192)), other);
  EXPECT_EQ(first.load_all().size(), 2u);
}

TEST_F(StoreTest, KilledWriterLosesNothingCommitted) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // No gtest assertions here: the child only writes and dies the way a SIGKILLed sweep does.
    Store store(path_);
    for (int64_t m = 1; m <= 5; ++m) store.save_point(sample_device(), sample_key(m), sample_result());
    raise(SIGKILL);
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  Store store(path_);
  for (int64_t m = 1; m <= 5; ++m) EXPECT_TRUE(store.find(sample_device(), sample_key(m))) << m;
}

TEST_F(StoreTest, IntegrityHoldsAfterManySaves) {
  {
    Store store(path_);
    DeviceContext device = sample_device();
    for (int round = 0; round < 2; ++round) {
      for (int64_t m = 1; m <= 150; ++m) {
        PointKey key = sample_key(m * 64);
        key.hot = m % 2 == 0;
        // Times of 10 us and more: sample_result's min (median - 3.5) stays a time (the store refuses others).
        int64_t id = store.save_point(device, key, sample_result(double(m + round) + 10));
        if (m % 3 != 0) store.save_kernels(id, sample_kernels());
      }
    }
    std::vector<StoredPoint> points = store.load_all();
    EXPECT_EQ(points.size(), 150u);
    for (const StoredPoint& point : points) {
      EXPECT_EQ(point.result.timing.median_us, double(point.key.problem.m / 64 + 1 + 10));
      EXPECT_EQ(point.kernels.size(), point.key.problem.m / 64 % 3 != 0 ? 2u : 0u);
    }
  }
  EXPECT_EQ(raw_single_text(path_, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(raw_single_text(path_, "SELECT count(*) FROM kernels"), "200");
  EXPECT_EQ(raw_single_text(path_, "PRAGMA foreign_key_check"), "");
}

}  // namespace
}  // namespace shapescope
