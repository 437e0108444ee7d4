#include "backends/backend.hpp"

#include <fmt/format.h>

#include "backends/cast_backend.hpp"
#include "backends/control_backends.hpp"
#include "backends/cublas_backend.hpp"
#include "backends/cublas_grouped_backend.hpp"
#include "backends/cublaslt_backend.hpp"
#include "backends/custom_backend.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"

namespace shapescope {

std::unique_ptr<Backend> make_backend(const BackendSpec& spec, const DeviceBuffers& buffers, int lt_algos) {
  switch (spec.kind) {
    case BackendKind::kCublas: return std::make_unique<CublasBackend>(buffers);
    case BackendKind::kCublasLt: return std::make_unique<CublasLtBackend>(buffers, lt_algos);
    case BackendKind::kCublasGrouped: return std::make_unique<CublasGroupedBackend>(buffers);
    case BackendKind::kCustom: return std::make_unique<CustomBackend>(spec, buffers);
    case BackendKind::kCopy: return std::make_unique<CopyBackend>(buffers);
    case BackendKind::kLaunchFloor: return std::make_unique<LaunchFloorBackend>();
    case BackendKind::kCast: return std::make_unique<CastBackend>(buffers);
  }
  throw Error(ExitCode::kInternal, fmt::format("make_backend: backend kind {} is not known", int(spec.kind)));
}

std::optional<std::string> grouped_unsupported(const Problem& problem) {
  if (!problem.grouped()) return std::nullopt;
  return fmt::format("a grouped call ({} groups) runs only on --backend cublas_grouped or custom:05_wgmma_tma:<BMxBN>:grouped",
                     problem.groups.size());
}

OperandPointers operand_pointers(const Problem& problem, const DeviceBuffers& buffers) {
  const int in = input_bytes(problem.dtype);
  const int out = output_bytes(problem.dtype);
  return {static_cast<const char*>(buffers.a) + problem.off_a * in,
          static_cast<const char*>(buffers.b) + problem.off_b * in,
          static_cast<char*>(buffers.c) + problem.off_c * out};
}

int pointer_alignment(const void* pointer) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  int alignment = 1;
  while (alignment < 256 && address % (alignment * 2) == 0) alignment *= 2;
  return alignment;
}

}  // namespace shapescope
