#include "model/alignment.hpp"

#include <fmt/format.h>

namespace shapescope {

int64_t pow2_alignment(int64_t value) {
  if (value == 0) return kAlignmentCap;
  if (value < 0) value = -value;
  const int64_t lowest_bit = value & -value;
  return lowest_bit < kAlignmentCap ? lowest_bit : kAlignmentCap;
}

namespace {

OperandAlignment operand(int64_t ld, int64_t offset, int element_bytes) {
  OperandAlignment a;
  a.ld = ld;
  a.element_bytes = element_bytes;
  a.ld_elements = pow2_alignment(ld);
  a.ld_bytes = pow2_alignment(ld * element_bytes);
  a.base_bytes = pow2_alignment(offset * element_bytes);
  return a;
}

// Operands whose rows break the rule in the same way are named together: "lda/ldb 1793 x 2 B".
void describe_rows(std::string& out, const OperandAlignment* ops[3]) {
  const char* names[3] = {"A", "B", "C"};
  const char* lds[3] = {"lda", "ldb", "ldc"};
  bool done[3] = {false, false, false};
  for (int i = 0; i < 3; ++i) {
    if (done[i] || ops[i]->ld_ok()) continue;
    std::string who = names[i], which = lds[i];
    for (int j = i + 1; j < 3; ++j) {
      if (!done[j] && !ops[j]->ld_ok() && ops[j]->ld == ops[i]->ld && ops[j]->element_bytes == ops[i]->element_bytes) {
        who += std::string("/") + names[j];
        which += std::string("/") + lds[j];
        done[j] = true;
      }
    }
    if (!out.empty()) out += "; ";
    out += fmt::format("rows of {} ({} {} x {} B = {} B) are only {}-byte aligned", who, which, ops[i]->ld,
                       ops[i]->element_bytes, ops[i]->ld * ops[i]->element_bytes, ops[i]->ld_bytes);
  }
  for (int i = 0; i < 3; ++i) {
    if (ops[i]->base_ok()) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("{}'s base pointer is only {}-byte aligned", names[i], ops[i]->base_bytes);
  }
}

}  // namespace

Alignment alignment_of(const Problem& p) {
  Alignment al;
  al.m = pow2_alignment(p.m);
  al.n = pow2_alignment(p.n);
  al.k = pow2_alignment(p.k);
  al.a = operand(p.lda, p.off_a, input_bytes(p.dtype));
  al.b = operand(p.ldb, p.off_b, input_bytes(p.dtype));
  al.c = operand(p.ldc, p.off_c, output_bytes(p.dtype));
  return al;
}

std::string Alignment::violations() const {
  std::string out;
  const OperandAlignment* ops[3] = {&a, &b, &c};
  describe_rows(out, ops);
  return out;
}

}  // namespace shapescope
