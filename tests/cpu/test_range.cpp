#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "shape/range.hpp"

namespace shapescope {
namespace {

using Sizes = std::vector<int64_t>;

// The message of the usage error that parsing `text` must throw, after checking that it names
// the option first and quotes the whole value.
std::string range_error(const std::string& text, const std::string& option = "--n") {
  try {
    parse_range(text, option);
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_EQ(error.code(), ExitCode::kUsage) << message;
    EXPECT_EQ(message.rfind(option + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("'" + text + "'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "'" << text << "' was accepted";
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ParseRange, SingleSize) {
  EXPECT_EQ(parse_range("4096", "--n"), Sizes({4096}));
  EXPECT_EQ(parse_range("1", "--n"), Sizes({1}));
}

TEST(ParseRange, LargestSizeFitsInt32) {
  EXPECT_EQ(parse_range("2147483647", "--n"), Sizes({2147483647}));
}

TEST(ParseRange, InclusiveRange) {
  EXPECT_EQ(parse_range("1..5", "--n"), Sizes({1, 2, 3, 4, 5}));
  EXPECT_EQ(parse_range("7..7", "--n"), Sizes({7}));
}

TEST(ParseRange, StepNeedNotHitTheEnd) {
  EXPECT_EQ(parse_range("1..10:4", "--n"), Sizes({1, 5, 9}));
  EXPECT_EQ(parse_range("1..9:4", "--n"), Sizes({1, 5, 9}));
  EXPECT_EQ(parse_range("1..5:100", "--n"), Sizes({1}));
  EXPECT_EQ(parse_range("3..3:1", "--n"), Sizes({3}));
}

TEST(ParseRange, Geometric) {
  EXPECT_EQ(parse_range("64..8192*2", "--n"), Sizes({64, 128, 256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(parse_range("3..100*3", "--n"), Sizes({3, 9, 27, 81}));
  EXPECT_EQ(parse_range("5..5*2", "--n"), Sizes({5}));
}

TEST(ParseRange, GeometricNearInt32LimitDoesNotOverflow) {
  EXPECT_EQ(parse_range("2147483640..2147483647*2147483647", "--n"), Sizes({2147483640}));
  EXPECT_EQ(parse_range("1073741824..2147483647*2", "--n"), Sizes({1073741824}));
}

TEST(ParseRange, CommaListKeepsOrder) {
  EXPECT_EQ(parse_range("1..4,128,1000..1002", "--n"), Sizes({1, 2, 3, 4, 128, 1000, 1001, 1002}));
  EXPECT_EQ(parse_range("8,4,2", "--n"), Sizes({8, 4, 2}));
  EXPECT_EQ(parse_range("1..3,64..256*2,10..30:10", "--n"),
            Sizes({1, 2, 3, 64, 128, 256, 10, 20, 30}));
}

TEST(ParseRange, DuplicatesRemovedKeepingFirst) {
  EXPECT_EQ(parse_range("1..4,2..6,3", "--n"), Sizes({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(parse_range("8,4,8,2,4", "--n"), Sizes({8, 4, 2}));
}

TEST(ParseRange, SpacesAroundItemsAllowed) {
  EXPECT_EQ(parse_range(" 1..3 , 8 ", "--n"), Sizes({1, 2, 3, 8}));
  EXPECT_EQ(parse_range("\t16\t", "--n"), Sizes({16}));
}

TEST(ParseRange, OneMillionValuesAllowed) {
  Sizes sizes = parse_range("1..1000000", "--n");
  ASSERT_EQ(sizes.size(), 1000000u);
  EXPECT_EQ(sizes.front(), 1);
  EXPECT_EQ(sizes.back(), 1000000);
}

TEST(ParseRangeError, Empty) {
  EXPECT_EQ(range_error("", "--k"), "--k: '' is empty");
  EXPECT_TRUE(contains(range_error("   "), "is empty"));
}

TEST(ParseRangeError, EmptyItem) {
  for (std::string text : {",,", "1,,2", "1,", ",1", "1, ,2", ","}) {
    EXPECT_TRUE(contains(range_error(text), "empty item")) << text;
  }
}

TEST(ParseRangeError, Malformed) {
  for (std::string text :
       {"1..", "..5", "1...5", "1..5..7", "a..b", "abc", "+5", "1e3", "1.5", "0x10", "1 ..5",
        "1.. 5", "5:2", "5*2", "1..5:", "1..5*", "1..5:2*2", "1..5:x", "-", "1-5", "..", "1..:2",
        "4096 4096"}) {
    EXPECT_TRUE(contains(range_error(text),
                         "is not a range (expected A, A..B, A..B:STEP or A..B*FACTOR)"))
        << text;
  }
}

TEST(ParseRangeError, MalformedExactMessage) {
  EXPECT_EQ(range_error("1..x"),
            "--n: '1..x' is not a range (expected A, A..B, A..B:STEP or A..B*FACTOR)");
}

TEST(ParseRangeError, MalformedBeforeZero) {
  EXPECT_TRUE(contains(range_error("0..x"), "is not a range"));
}

TEST(ParseRangeError, Zero) {
  EXPECT_EQ(range_error("0", "--m"), "--m: '0': sizes must be >= 1");
  EXPECT_EQ(range_error("4,0", "--m"), "--m: '4,0': '0': sizes must be >= 1");
  // Reversed first: "1..0" is a range that counts down, whatever else is wrong with it.
  EXPECT_EQ(range_error("1..0", "--n"), "--n: '1..0' is a reversed range (1 > 0), and sizes must be >= 1");
  EXPECT_EQ(range_error("8..-2", "--n"), "--n: '8..-2' is a reversed range (8 > -2), and sizes must be >= 1");
  for (std::string text : {"0..5", "1..0", "00", "4,0"}) {
    EXPECT_TRUE(contains(range_error(text), "sizes must be >= 1")) << text;
  }
}

TEST(ParseRangeError, Negative) {
  for (std::string text : {"-5", "-1..5", "1..-5", "8,-1"}) {
    EXPECT_TRUE(contains(range_error(text), "sizes must be >= 1")) << text;
  }
}

TEST(ParseRangeError, StepZeroOrNegative) {
  EXPECT_TRUE(contains(range_error("1..5:0"), "the step must be >= 1"));
  EXPECT_TRUE(contains(range_error("1..5:-1"), "the step must be >= 1"));
}

TEST(ParseRangeError, FactorBelowTwo) {
  EXPECT_TRUE(contains(range_error("1..5*1"), "the factor must be >= 2"));
  EXPECT_TRUE(contains(range_error("1..5*0"), "the factor must be >= 2"));
  EXPECT_TRUE(contains(range_error("1..5*-2"), "the factor must be >= 2"));
}

TEST(ParseRangeError, Reversed) {
  EXPECT_EQ(range_error("4096..1"), "--n: '4096..1' is a reversed range (4096 > 1); write '1..4096'");
  EXPECT_TRUE(contains(range_error("100..1:8"), "write '1..100:8'"));
  EXPECT_TRUE(contains(range_error("256..64*2"), "write '64..256*2'"));
}

TEST(ParseRangeError, Overflow) {
  for (std::string text : {"2147483648", "99999999999999999999999999", "1..2147483648",
                           "2147483648..2147483649"}) {
    EXPECT_TRUE(contains(range_error(text), "is too large")) << text;
  }
  EXPECT_TRUE(contains(range_error("2147483648"), "2147483648 is too large"));
  EXPECT_TRUE(contains(range_error("1..5:2147483648"), "the step must be <= 2147483647"));
  EXPECT_TRUE(contains(range_error("1..5*99999999999"), "the factor must be <= 2147483647"));
}

TEST(ParseRangeError, TooManyValues) {
  EXPECT_TRUE(contains(range_error("1..1000001"), "gives 1000001 sizes"));
  EXPECT_TRUE(contains(range_error("1..2147483647:1"), "gives 2147483647 sizes"));
}

TEST(ParseRangeError, CommaListNamesTheItem) {
  std::string message = range_error("64,4096..1,8");
  EXPECT_EQ(message,
            "--n: '64,4096..1,8': '4096..1' is a reversed range (4096 > 1); write '1..4096'");
}

TEST(ParseRangeError, UsesTheGivenOption) {
  range_error("0", "--batch");
  range_error("x", "--k");
}

}  // namespace
}  // namespace shapescope
