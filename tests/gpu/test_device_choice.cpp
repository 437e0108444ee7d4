// The GPU that measures is the GPU asked for: measure() makes the chosen ordinal current on its
// thread whatever was current before, its operands live there, and the points carry its UUID; a
// context that describes another GPU than the one CUDA would use is refused before anything runs.
// On a host with two or more GPUs this chooses the last one while GPU 0 is current, so the test
// fails when the work is not moved (buffers, context and points would be GPU 0's).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.hpp"
#include "gpu_test_util.hpp"
#include "measure/measure.hpp"
#include "shape/plan.hpp"
#include "store/store.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

struct TempStore : testing::TempStore {
  TempStore() : testing::TempStore("device_choice") {}
};

MeasureRequest small_request() {
  ShapeOptions shape;
  shape.n = "256,264";
  MeasureRequest request;
  request.problems = plan_problems(shape);
  request.measure.samples = 3;
  request.measure.warmup_ms = 0;
  return request;
}

TEST(DeviceChoice, MeasureRunsOnTheGpuAskedForWhateverWasCurrent) {
  SKIP_WITHOUT_GPU();
  const int chosen = device_count() - 1;
  if (chosen == 0) std::cout << "one GPU: the chosen GPU is also the one current before (two GPUs test the move)\n";
  const DeviceContext device = query_device(chosen);
  CHECK_CUDA(cudaSetDevice(0));  // as a thread that never chose would have it
  TempStore temp;
  Store store(temp.path.string());
  const MeasureOutcome outcome = measure(small_request(), device, store, {}, nullptr);
  EXPECT_EQ(outcome.allocated_on, device.gpu_uuid) << "the operands were allocated on another GPU";
  int current = -1;
  CHECK_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, chosen);
  ASSERT_EQ(outcome.points.size(), 2u);
  for (const StoredPoint& p : outcome.points) {
    EXPECT_EQ(p.device.gpu_uuid, device.gpu_uuid);
    EXPECT_GT(p.result.timing.median_us, 0);
  }
  // A buffer on the chosen GPU passes the check; one on another GPU is refused.
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, 256));
  EXPECT_EQ(check_allocation(buffer, device), device.gpu_uuid);
  if (chosen > 0) {
    const DeviceContext other = query_device(0);
    EXPECT_THROW(check_allocation(buffer, other), Error);
    use_device(device);
  }
  CHECK_CUDA(cudaFree(buffer));
}

TEST(DeviceChoice, AContextOfAnotherGpuIsRefusedBeforeAnythingRuns) {
  SKIP_WITHOUT_GPU();
  DeviceContext device = query_device(0);
  device.gpu_uuid = "GPU-00000000-0000-0000-0000-000000000000";
  try {
    use_device(device);
    FAIL() << "a context naming another GPU was used";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("refusing to measure one GPU and label it another"), std::string::npos)
        << e.what();
  }
  TempStore temp;
  Store store(temp.path.string());
  EXPECT_THROW(measure(small_request(), device, store, {}, nullptr), Error);
  EXPECT_TRUE(store.load_all().empty()) << "points were stored under a GPU that did not measure them";
}

}  // namespace
}  // namespace shapescope
