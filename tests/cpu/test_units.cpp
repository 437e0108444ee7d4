// The shared unit formatters (src/common/units.hpp): the texts the reports have always printed.
#include <gtest/gtest.h>

#include <cmath>

#include "common/units.hpp"

namespace shapescope {
namespace {

TEST(Units, FixedShowsADashForNonNumbers) {
  EXPECT_EQ(fixed(12.345, 2), "12.35");
  EXPECT_EQ(fixed(std::nan(""), 1), "-");
  EXPECT_EQ(fixed(INFINITY, 1), "-");
}

TEST(Units, BinarySizes) {
  EXPECT_EQ(gib(double(3ll << 29), 2), "1.50 GiB");
  EXPECT_EQ(mib(double(50ll << 20), 1), "50.0 MiB");
  EXPECT_EQ(in_mib(double(3ll << 19), 1), "1.5");
}

TEST(Units, TimesSwitchToMillisecondsFromTen) {
  EXPECT_EQ(us_or_ms(812.34), "812.3 us");
  EXPECT_EQ(us_or_ms(9999), "9999.0 us");
  EXPECT_EQ(us_or_ms(12345), "12.35 ms");
}

TEST(Units, Percentages) {
  EXPECT_EQ(percent(0.97, 1), "97.0 %");
  EXPECT_EQ(percent_tight(0.914, 0), "91%");
  EXPECT_EQ(signed_percent(0.0123), "+1.23 %");
  EXPECT_EQ(signed_percent(-0.00012), "-0.012 %");
  EXPECT_EQ(signed_percent(0), "+0.00 %");
}

TEST(Units, ThroughputAndCounts) {
  EXPECT_EQ(tflops_text(712.34, 1), "712.3 TFLOP/s");
  EXPECT_EQ(signed_si(1.2e9), "+1.20 G");
  EXPECT_EQ(signed_si(-3.4e6), "-3.40 M");
  EXPECT_EQ(signed_si(12345), "+12.3 k");
  EXPECT_EQ(signed_si(7), "+7");
}

TEST(Units, ScientificForErrors) {
  EXPECT_EQ(scientific(0.00412), "4.1e-3");
  EXPECT_EQ(scientific(2.34e-7), "2.3e-7");
  EXPECT_EQ(scientific(0.5), "5.0e-1");
  EXPECT_EQ(scientific(9.96e-4), "1.0e-3");  // rounds into the next decade
  EXPECT_EQ(scientific(12.5), "1.2e1");
  EXPECT_EQ(scientific(0), "0");
  EXPECT_EQ(scientific(std::nan("")), "-");
}

}  // namespace
}  // namespace shapescope
