// The units shapescope prints, in one place: byte sizes, times, throughput and percentages. Every
// layer that writes a number for people (a report, a refusal, the CLI) formats it here, so that
// "GiB" or "%" read the same everywhere. The decimals stay with the caller: a table column and a
// sentence want different precision, and the outputs have fixed them.
#pragma once
#include <string>

namespace shapescope {

inline constexpr double kMiB = double(1ll << 20);
inline constexpr double kGiB = double(1ll << 30);

// "12.35" with the decimals given; "-" where the value is not a number (a failed measurement).
std::string fixed(double value, int decimals);

// Bytes in binary units: gib(3ll << 29, 2) == "1.50 GiB", mib(50ll << 20, 1) == "50.0 MiB".
std::string gib(double bytes, int decimals);
std::string mib(double bytes, int decimals);
// The number alone, for a column whose header carries the unit ("copy [MiB]").
std::string in_mib(double bytes, int decimals);

// A time in microseconds, switching to milliseconds from 10 ms: "812.3 us", "12.34 ms".
std::string us_or_ms(double us);

// Throughput: "712.3 TFLOP/s".
std::string tflops_text(double tflops, int decimals);

// A fraction as a percentage. percent(0.97, 1) == "97.0 %" (sentences and tables);
// percent_tight(0.97, 0) == "97%" (plot labels); signed_percent(0.0123) == "+1.23 %", with three
// decimals below 0.1 % so that a change of a few thousandths still shows.
std::string percent(double fraction, int decimals);
std::string percent_tight(double fraction, int decimals);
std::string signed_percent(double fraction);

// A signed count with an SI prefix: "+1.20 G", "-3.40 M", "+12.3 k", "+7".
std::string signed_si(double value);

// A small quantity that spans decades (a numerical error), with two significant digits:
// scientific(0.00412) == "4.1e-3", scientific(2.3e-7) == "2.3e-7", scientific(0.5) == "5.0e-1";
// "0" for zero, "-" where the value is not a number.
std::string scientific(double value);

}  // namespace shapescope
