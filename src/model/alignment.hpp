// Alignment of a problem (DESIGN.md "alignment"): what divides M, N and K, and whether each
// operand's rows and base pointer meet the 16-byte rule that gates the fastest kernels (TMA needs
// 16-byte aligned strides and base addresses; tensor-core kernels load 16 bytes per access).
// Pure C++.
#pragma once
#include <cstdint>
#include <string>

#include "core/problem.hpp"

namespace shapescope {

constexpr int64_t kAlignmentCap = 256;
constexpr int64_t kRuleBytes = 16;  // the 16-byte rule

// Largest power of two dividing `value`, capped at kAlignmentCap; 0 divides by everything, so it
// gets the cap.
int64_t pow2_alignment(int64_t value);

struct OperandAlignment {
  int64_t ld = 0;               // leading dimension, elements
  int element_bytes = 0;
  int64_t ld_elements = 0;      // largest power of two dividing ld (capped)
  int64_t ld_bytes = 0;         // largest power of two dividing ld * element size (capped)
  int64_t base_bytes = 0;       // of the base pointer: allocations are 256-byte aligned, so the offset decides
  bool ld_ok() const { return ld_bytes >= kRuleBytes; }
  bool base_ok() const { return base_bytes >= kRuleBytes; }
  bool ok() const { return ld_ok() && base_ok(); }
};

struct Alignment {
  int64_t m = 0, n = 0, k = 0;  // largest power of two dividing each (capped)
  OperandAlignment a, b, c;
  // Every operand meets the 16-byte rule.
  bool ok() const { return a.ok() && b.ok() && c.ok(); }
  // "A's rows (lda 1793 x 2 B = 3586 B) are 2-byte aligned"-style list of what breaks the rule;
  // empty when nothing does.
  std::string violations() const;
};

Alignment alignment_of(const Problem& problem);

}  // namespace shapescope
