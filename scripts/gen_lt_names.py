#!/usr/bin/env python3
"""Writes src/backends/lt_names.cpp from cublasLt.h: one case per enumerator of the four enums."""
import re, sys

lt_h = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda/include/cublasLt.h"
api_h = lt_h.replace("cublasLt.h", "cublas_api.h")
lt = open(lt_h).read()
cudart = int(re.search(r"#define CUDART_VERSION\s+(\d+)", open(lt_h.replace("cublasLt.h", "cuda_runtime_api.h")).read()).group(1))
ver = dict(re.findall(r"#define CUBLAS_VER_(MAJOR|MINOR|PATCH|BUILD) (\d+)", open(api_h).read()))

def enumerators(type_name):
    body = re.search(r"typedef enum \{((?:(?!typedef enum).)*?)\}\s*" + type_name + ";", lt, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return re.findall(r"^\s*(CUBLASLT_\w+)\s*=", body, re.M)

REDUCTION = {"NONE": "none", "INPLACE": "inplace", "COMPUTE_TYPE": "compute", "OUTPUT_TYPE": "output"}
tables = [
    ("lt_tile_name", "cublasLtMatmulTile_t", "CUBLASLT_MATMUL_TILE_", None),
    ("lt_stages_name", "cublasLtMatmulStages_t", "CUBLASLT_MATMUL_STAGES_", None),
    ("lt_cluster_name", "cublasLtClusterShape_t", "CUBLASLT_CLUSTER_SHAPE_", None),
    ("lt_reduction_name", "cublasLtReductionScheme_t", "CUBLASLT_REDUCTION_SCHEME_", REDUCTION),
]

out = []
out.append("// Generated from cublasLt.h of cuBLAS %s.%s.%s (CUBLAS_VER_BUILD %s; CUDA %d.%d toolkit)."
           % (ver["MAJOR"], ver["MINOR"], ver["PATCH"], ver["BUILD"], cudart // 1000, cudart % 1000 // 10))
out.append("// One case per enumerator of cublasLtMatmulTile_t, cublasLtMatmulStages_t, cublasLtClusterShape_t")
out.append("// and cublasLtReductionScheme_t (less the _END and _MASK markers), named by its constant so that")
out.append("// the compiler checks every name against the header. The text is the enumerator's suffix in lower")
out.append("// case (\"256x128\", \"64xauto\", \"undefined\"); reduction schemes are shortened to none/inplace/")
out.append("// compute/output. Values a newer cuBLAS adds print as \"id<N>\" until this file is regenerated.")
out.append('#include "backends/lt_names.hpp"')
out.append("")
out.append("#include <cublasLt.h>")
out.append("")
out.append("namespace shapescope {")
out.append("namespace {")
out.append("")
out.append("std::string unknown_name(int id) { return \"id\" + std::to_string(id); }")
out.append("")
out.append("}  // namespace")
for func, type_name, prefix, renames in tables:
    out.append("")
    out.append("std::string %s(int id) {" % func)
    out.append("  switch (id) {")
    for name in enumerators(type_name):
        suffix = name[len(prefix):]
        if suffix in ("END", "MASK"):
            continue  # bounds and masks, not values an algorithm reports
        text = renames[suffix] if renames else suffix.lower()
        out.append('    case %s: return "%s";' % (name, text))
    out.append("  }")
    out.append("  return unknown_name(id);")
    out.append("}")
out.append("")
out.append("}  // namespace shapescope")
print("\n".join(out))
