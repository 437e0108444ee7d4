#include "report/annotated.hpp"

#include <map>

namespace shapescope {

std::vector<Annotation> annotate_points(const Store& store, const std::vector<StoredPoint>& points) {
  std::map<std::string, ModelGpu> gpus;  // by UUID: one calibration query per GPU
  std::vector<Annotation> annotations;
  annotations.reserve(points.size());
  for (const StoredPoint& point : points) {
    auto found = gpus.find(point.device.gpu_uuid);
    if (found == gpus.end()) {
      found = gpus.emplace(point.device.gpu_uuid, model_gpu(point.device, store.load_calibration(point.device)))
                  .first;
    }
    annotations.push_back(annotate(point, found->second));
  }
  add_regret(points, annotations);
  return annotations;
}

}  // namespace shapescope
