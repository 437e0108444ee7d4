#include "trace/graph_kernels.hpp"

#include <cuda.h>

#include <map>
#include <memory>
#include <string>

#include "common/check.hpp"
#include "common/error.hpp"
#include "trace/demangle.hpp"

namespace shapescope {

namespace {

// Driver entry points are looked up through the runtime (cudaGetDriverEntryPointByVersion), so the
// binary does not link libcuda and still starts on a machine without a driver.
constexpr unsigned kDriverApiVersion = 12030;  // cuFuncGetName is from CUDA 12.3

template <typename Fn>
Fn entry_point(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CHECK_CUDA(cudaGetDriverEntryPointByVersion(symbol, &fn, kDriverApiVersion, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw Error(ExitCode::kInternal, std::string("the CUDA driver has no ") + symbol +
                                         " (a driver for CUDA 12.3 or newer is needed to read a graph's kernels)");
  return reinterpret_cast<Fn>(fn);
}

std::string driver_error_text(CUresult status) { return "CUresult " + std::to_string(int(status)); }

void check_driver(CUresult status, const char* what) {
  if (status != CUDA_SUCCESS)
    throw Error(ExitCode::kInternal, std::string(what) + " failed: " + driver_error_text(status));
}

// The graph's nodes in dependency order (Kahn's algorithm; ties keep cudaGraphGetNodes' order).
std::vector<cudaGraphNode_t> ordered_nodes(cudaGraph_t graph) {
  size_t count = 0;
  CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0) CHECK_CUDA(cudaGraphGetNodes(graph, nodes.data(), &count));
  nodes.resize(count);
  size_t edges = 0;
  CHECK_CUDA(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  std::vector<cudaGraphNode_t> from(edges), to(edges);
  std::vector<cudaGraphEdgeData> data(edges);
  if (edges > 0) CHECK_CUDA(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &edges));
  std::map<cudaGraphNode_t, size_t> waiting;
  std::multimap<cudaGraphNode_t, cudaGraphNode_t> after;
  for (size_t e = 0; e < edges; ++e) {
    ++waiting[to[e]];
    after.emplace(from[e], to[e]);
  }
  std::vector<cudaGraphNode_t> order;
  std::vector<bool> placed(nodes.size(), false);
  while (order.size() < nodes.size()) {
    bool progressed = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (placed[i] || waiting[nodes[i]] > 0) continue;
      placed[i] = true;
      progressed = true;
      order.push_back(nodes[i]);
      auto [begin, end] = after.equal_range(nodes[i]);
      for (auto it = begin; it != end; ++it) --waiting[it->second];
      break;  // rescan from the start: the earliest ready node goes next
    }
    if (!progressed) throw Error(ExitCode::kInternal, "a captured graph has a dependency cycle");
  }
  return order;
}

}  // namespace

struct GraphKernels::Driver {
  using NodeParams = CUresult (*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*);
  using NodeAttribute = CUresult (*)(CUgraphNode, CUlaunchAttributeID, CUlaunchAttributeValue*);
  using FuncName = CUresult (*)(const char**, CUfunction);
  using FuncAttribute = CUresult (*)(int*, CUfunction_attribute, CUfunction);
  using KernelFunction = CUresult (*)(CUfunction*, CUkernel);
  NodeParams node_params = entry_point<NodeParams>("cuGraphKernelNodeGetParams");
  NodeAttribute node_attribute = entry_point<NodeAttribute>("cuGraphKernelNodeGetAttribute");
  FuncName func_name = entry_point<FuncName>("cuFuncGetName");
  FuncAttribute func_attribute = entry_point<FuncAttribute>("cuFuncGetAttribute");
  KernelFunction kernel_function = entry_point<KernelFunction>("cuKernelGetFunction");

  int attribute(CUfunction f, CUfunction_attribute which) const {
    int value = 0;
    check_driver(func_attribute(&value, which, f), "cuFuncGetAttribute");
    return value;
  }

  KernelRecord record(cudaGraphNode_t node) const {
    CUDA_KERNEL_NODE_PARAMS params{};
    check_driver(node_params(node, &params), "cuGraphKernelNodeGetParams");
    CUfunction f = params.func;
    if (f == nullptr && params.kern != nullptr) check_driver(kernel_function(&f, params.kern), "cuKernelGetFunction");
    if (f == nullptr) throw Error(ExitCode::kInternal, "a captured kernel node has neither a function nor a kernel");
    KernelRecord k;
    const char* name = nullptr;
    check_driver(func_name(&name, f), "cuFuncGetName");
    k.name = demangle(name);
    k.grid_x = params.gridDimX;
    k.grid_y = params.gridDimY;
    k.grid_z = params.gridDimZ;
    k.block_x = params.blockDimX;
    k.block_y = params.blockDimY;
    k.block_z = params.blockDimZ;
    k.dynamic_smem = params.sharedMemBytes;
    k.static_smem = attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    k.registers = attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
    // The launch's cluster, else the one the kernel was compiled with (__cluster_dims__).
    CUlaunchAttributeValue cluster{};
    check_driver(node_attribute(node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &cluster),
                 "cuGraphKernelNodeGetAttribute(cluster dimension)");
    k.cluster_x = cluster.clusterDim.x;
    k.cluster_y = cluster.clusterDim.y;
    k.cluster_z = cluster.clusterDim.z;
    if (k.cluster_x == 0) {
      k.cluster_x = uint32_t(attribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH));
      k.cluster_y = uint32_t(attribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT));
      k.cluster_z = uint32_t(attribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH));
    }
    return k;
  }
};

GraphKernels::GraphKernels() : driver_(std::make_unique<Driver>()) {
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

GraphKernels::~GraphKernels() {
  if (stream_) cudaStreamDestroy(stream_);
}

std::vector<KernelRecord> GraphKernels::in(cudaGraph_t graph) const {
  std::vector<KernelRecord> kernels;
  for (cudaGraphNode_t node : ordered_nodes(graph)) {
    cudaGraphNodeType type{};
    CHECK_CUDA(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeKernel) kernels.push_back(driver_->record(node));
  }
  return kernels;
}

std::vector<KernelRecord> GraphKernels::of(GemmCall& call) {
  CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    call.enqueue(stream_);
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CHECK_CUDA(cudaStreamEndCapture(stream_, &graph));
  std::unique_ptr<CUgraph_st, cudaError_t (*)(cudaGraph_t)> owned(graph, cudaGraphDestroy);
  return in(graph);
}

}  // namespace shapescope
