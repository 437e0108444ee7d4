// The GPU side of a build made without the CUDA toolkit (-DSHAPESCOPE_GPU=OFF): there is no device,
// and whatever would measure says in one line that this build cannot. The views (explain, plot,
// pad and export from a store, --dry-run, the model's predictions) work as in the full build.
#include <string>

#include "common/error.hpp"
#include "device/device.hpp"
#include "measure/measure.hpp"
#include "measure/precision_error.hpp"
#include "timing/calibrate.hpp"

namespace shapescope {
namespace {

[[noreturn]] void cannot_measure() {
  throw Error(ExitCode::kNoGpu,
              "this shapescope was built without GPU support (-DSHAPESCOPE_GPU=OFF): it reads stores, plans and "
              "predicts, but cannot measure; build it with the CUDA toolkit to measure");
}

}  // namespace

int device_count() { return 0; }
DeviceContext query_device(int) { cannot_measure(); }
void memory_info(int64_t&, int64_t&) { cannot_measure(); }
void use_device(const DeviceContext&) { cannot_measure(); }
std::string check_allocation(const void*, const DeviceContext&) { cannot_measure(); }
MeasureOutcome measure(const MeasureRequest&, const DeviceContext&, Store&, const ProgressCallback&,
                       const std::atomic<bool>*) {
  cannot_measure();
}
std::vector<Calibration> calibrate(const DeviceContext&, const std::atomic<bool>*) { cannot_measure(); }
NumericalErrors measure_numerical_errors(const Problem&, const std::vector<Precision>&, const BackendSpec&,
                                         const DeviceContext&) {
  cannot_measure();
}

}  // namespace shapescope
