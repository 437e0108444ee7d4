#include "views/annotated.hpp"

#include <map>
#include <optional>

#include "core/backend_kind.hpp"
#include "kernels/registry.hpp"
#include "model/annotation_fields.hpp"

namespace shapescope {

std::optional<OwnKernelTiling> own_kernel_tiling(const PointKey& key) {
  if (key.backend != BackendKind::kCustom) return std::nullopt;
  const kernels::Variant* variant = kernels::find_variant(key.algo);
  if (!variant) return std::nullopt;
  return OwnKernelTiling{variant->bm, variant->bn, variant->bk, std::string(kernels::schedule_name(variant->schedule)),
                         variant->key()};
}

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
    const std::optional<OwnKernelTiling> ours = own_kernel_tiling(point.key);
    annotations.push_back(annotate(point, found->second, ours ? &*ours : nullptr));
  }
  add_regret(points, annotations);
  return annotations;
}

std::vector<Annotation> annotate_and_save(Store& store, const std::vector<StoredPoint>& points) {
  std::vector<Annotation> annotations = annotate_points(store, points);
  std::vector<std::pair<int64_t, std::vector<NamedValue>>> rows;
  for (size_t i = 0; i < points.size(); ++i) rows.emplace_back(points[i].id, annotation_fields(annotations[i]));
  store.save_annotations(annotation_table(), rows);
  return annotations;
}

}  // namespace shapescope
