#include "report/number_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace modelcost {
namespace {

const double kTwoPow53 = 9007199254740992.0;
const double kTwoPow93 = std::ldexp(1.0, 93);

TEST(ReportNumbers, IntegralValuesBelow2Pow53AreExactIntegers) {
  EXPECT_EQ(exact_number(0), "0");
  EXPECT_EQ(exact_number(4089184256.0), "4089184256");
  EXPECT_EQ(exact_number(kTwoPow53 - 1), "9007199254740991");
  EXPECT_EQ(exact_number(25507944.0), "25507944");
}

TEST(ReportNumbers, LargeValuesReadBackExactlyAndNeverWrap) {
  for (double v : {kTwoPow53, kTwoPow53 * 3, std::ldexp(1.0, 62), kTwoPow93, 1e300}) {
    const std::string text = exact_number(v);
    ASSERT_FALSE(text.empty());
    EXPECT_NE(text[0], '-') << text;
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
  }
  EXPECT_EQ(exact_number(kTwoPow93), "9.903520314283042e+27");
}

TEST(ReportNumbers, FractionsKeepRoundTripDigits) {
  EXPECT_EQ(exact_number(0.5), "0.5");
  const double third = 400.0 / 1072.0;
  EXPECT_EQ(std::strtod(exact_number(third).c_str(), nullptr), third);
}

TEST(ReportNumbers, NonFiniteIsEmptyInFilesAndNullInJson) {
  EXPECT_EQ(exact_number(std::numeric_limits<double>::infinity()), "");
  EXPECT_TRUE(json_number(std::numeric_limits<double>::quiet_NaN()).is_null());
}

TEST(ReportNumbers, JsonIntegersAndDoubles) {
  const Json small = json_number(4089184256.0);
  EXPECT_TRUE(small.is_number_unsigned());
  EXPECT_EQ(small.dump(), "4089184256");
  const Json huge = json_number(kTwoPow93);
  EXPECT_TRUE(huge.is_number_float());
  EXPECT_EQ(Json::parse(huge.dump()).get<double>(), kTwoPow93);
  EXPECT_EQ(huge.dump().find('-'), std::string::npos);
}

TEST(ReportNumbers, HumanCounts) {
  EXPECT_EQ(human_count(4089184256.0), "4.09 G");
  EXPECT_EQ(human_count(25507944.0), "25.5 M");
  EXPECT_EQ(human_count(169), "169");
  EXPECT_EQ(human_count(999), "999");
  EXPECT_EQ(human_count(999.6), "1.00 K");
  EXPECT_EQ(human_count(999999), "1.00 M");
  EXPECT_EQ(human_count(170e6), "170 M");
  EXPECT_EQ(human_count(0), "0");
  EXPECT_EQ(human_count(kTwoPow93), "9.9e+27");
}

TEST(ReportNumbers, HumanBytesAreDecimal) {
  EXPECT_EQ(human_bytes(97.5e6), "97.5 MB");
  EXPECT_EQ(human_bytes(102031776), "102 MB");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1200), "1.20 KB");
  EXPECT_EQ(human_bytes(3.2e12), "3.20 TB");
}

TEST(ReportNumbers, ThreeSignificantDigits) {
  EXPECT_EQ(three_digits(56.3), "56.3");
  EXPECT_EQ(three_digits(9.996), "10.0");
  EXPECT_EQ(three_digits(0.123), "0.123");
  EXPECT_EQ(three_digits(1234.4), "1234");
  EXPECT_EQ(human_share(0.1234), "12.3%");
  EXPECT_EQ(human_share(std::numeric_limits<double>::quiet_NaN()), "-");
}

TEST(ReportNumbers, CellsByKind) {
  EXPECT_EQ(terminal_text(CellValue::of_number(2048), ColumnKind::kBytes), "2.05 KB");
  EXPECT_EQ(terminal_text(CellValue::of_number(20000), ColumnKind::kInteger), "20000");
  EXPECT_EQ(terminal_text(CellValue::of_number(0.25), ColumnKind::kShare), "25.0%");
  EXPECT_EQ(terminal_text(CellValue::empty(), ColumnKind::kCount), "-");
  EXPECT_EQ(file_text(CellValue::of_flag(true)), "true");
  EXPECT_EQ(file_text(CellValue::empty()), "");
  EXPECT_TRUE(cell_json(CellValue::of_flag(false)).is_boolean());
  EXPECT_EQ(cell_json(CellValue::of_text("x")), "x");
}

}  // namespace
}  // namespace modelcost
