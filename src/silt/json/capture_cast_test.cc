#include "silt/json/capture_cast.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "silt/json/json_multi_path.h"
#include "silt/json/json_test_util.h"
#include "silt/testing/gtest_util.h"

// The contracts of capture_cast.h, each checked against an independent
// reading of the text the captured value stands for: the evaluator's own
// text of the number (its DOM path, which does not capture), the C++
// library's correctly rounded parsing (Java's Float/Double.parseFloat and
// parseDouble round the same way), and the grammar of Spark's
// UTF8String.toLong / toLongExact and StringUtils.isTrueString. The fused
// kernel's comparison with silt's own text cast (itself checked against
// pyspark by the expression corpus) is JsonFusedCastTest's, in expr.

namespace silt::json {
namespace {

struct Captured {
  CapturedKind kind;
  int64_t bits;
};

Captured OfDouble(double d) { return {CapturedKind::kDouble, std::bit_cast<int64_t>(d)}; }

std::string TextOf(const Captured& value) {
  std::string text;
  AppendCapturedText(value.kind, value.bits, &text);
  return text;
}

// Finite doubles around every edge the cast looks at: zero, the plain /
// exponent print boundaries (1e-3, 1e7), fractions and the integer types'
// ranges, float rounding ties and the largest float, and seeded random bit
// patterns and magnitudes.
std::vector<double> SampleDoubles() {
  std::vector<double> out = {0.0,
                             -0.0,
                             0.5,
                             -0.5,
                             21.5,
                             -21.5,
                             1.0,
                             -1.0,
                             127.9,
                             128.0,
                             -128.5,
                             -129.0,
                             32767.5,
                             32768.0,
                             -32768.9,
                             255.0,
                             9999999.0,
                             9999999.999,
                             1e7,
                             1e20,
                             1e-5,
                             5e-324,
                             std::numeric_limits<double>::max(),
                             static_cast<double>(std::numeric_limits<float>::max()),
                             3.0e38,
                             3.5e38,
                             -3.5e38,
                             2147483647.0,
                             -2147483648.0};
  for (double edge : {1e-3, 1e7}) {
    for (double sign : {1.0, -1.0}) {
      const double d = sign * edge;
      out.push_back(d);
      out.push_back(std::nextafter(d, 0.0));
      out.push_back(std::nextafter(d, sign * std::numeric_limits<double>::infinity()));
    }
  }
  std::mt19937_64 random(20261207);
  std::uniform_real_distribution<double> exponent(-5, 9);
  std::uniform_real_distribution<float> unit(-1, 1);
  for (int sample_idx = 0; sample_idx < 2000; ++sample_idx) {
    const double bits_value = std::bit_cast<double>(random());
    if (std::isfinite(bits_value)) out.push_back(bits_value);
    out.push_back((random() % 2 == 0 ? 1 : -1) * std::pow(10.0, exponent(random)));
    // The midpoint of two adjacent floats (exact in a double): a tie.
    const float f = unit(random) * std::pow(10.0F, static_cast<float>(random() % 30));
    const float next = std::nextafter(f, std::numeric_limits<float>::infinity());
    out.push_back((static_cast<double>(f) + static_cast<double>(next)) / 2);
    out.push_back(static_cast<double>(f));
  }
  return out;
}

// Captured values of every kind: integers around each integer type's range,
// unsigned values on both sides of the int64 range, booleans and doubles.
std::vector<Captured> SampleValues() {
  std::vector<Captured> out;
  std::vector<int64_t> ints = {
      0, 1, -1, 2, 7, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  for (int64_t bound : {int64_t{127}, int64_t{32767}, int64_t{2147483647}}) {
    for (int64_t delta : {-1, 0, 1}) {
      ints.push_back(bound + delta);
      ints.push_back(-bound - 1 + delta);
    }
  }
  std::mt19937_64 random(7);
  for (int sample_idx = 0; sample_idx < 200; ++sample_idx) {
    ints.push_back(static_cast<int64_t>(random()) >> (random() % 64));
  }
  for (int64_t value : ints) out.push_back({CapturedKind::kInt64, value});
  for (uint64_t value : {uint64_t{0}, uint64_t{5}, uint64_t{1} << 63, (uint64_t{1} << 63) + 1,
                         std::numeric_limits<uint64_t>::max(), uint64_t{18446744073709551557u}}) {
    out.push_back({CapturedKind::kUint64, std::bit_cast<int64_t>(value)});
  }
  out.push_back({CapturedKind::kBool, 0});
  out.push_back({CapturedKind::kBool, 1});
  for (double d : SampleDoubles()) out.push_back(OfDouble(d));
  return out;
}

// A JSON number literal that parses to exactly the captured value.
std::string Literal(const Captured& value) {
  switch (value.kind) {
    case CapturedKind::kInt64: return std::to_string(value.bits);
    case CapturedKind::kUint64: return std::to_string(std::bit_cast<uint64_t>(value.bits));
    case CapturedKind::kBool: return value.bits != 0 ? "true" : "false";
    case CapturedKind::kDouble: {
      char buffer[64];
      const auto result =
          std::to_chars(buffer, buffer + sizeof(buffer), std::bit_cast<double>(value.bits));
      std::string literal(buffer, result.ptr);
      // A JSON number with an exponent or a fraction reads as a double.
      if (literal.find_first_of(".e") == std::string::npos) literal += ".0";
      return literal;
    }
  }
  return "";
}

// Java's Float.parseFloat / Double.parseDouble of `text`: correctly rounded,
// to a signed zero below the smallest subnormal (glibc's strtof and strtod,
// in the C locale the tests run in; from_chars reports those as an error).
template <typename Out>
Out ParseFloating(const std::string& text) {
  char* end = nullptr;
  Out value{};
  if constexpr (std::is_same_v<Out, float>) {
    value = std::strtof(text.c_str(), &end);
  } else {
    value = std::strtod(text.c_str(), &end);
  }
  EXPECT_EQ(end, text.c_str() + text.size()) << text;
  return value;
}

// Spark's CAST(text AS integral type), the grammar of UTF8String.toLong
// (non-ANSI: [-]digits[.digits], the fraction truncated) and toLongExact
// (ANSI: [-]digits): the value, or nullopt for NULL (non-ANSI) or an error
// (ANSI). The texts here are AppendCapturedText's: no spaces, no '+'.
template <typename Out>
std::optional<Out> SparkIntegralCast(std::string_view text, bool ansi) {
  size_t pos = text.starts_with('-') ? 1 : 0;
  const size_t digits_start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  const size_t digits_end = pos;
  if (digits_end == digits_start) return std::nullopt;
  if (pos < text.size()) {
    if (ansi || text[pos] != '.') return std::nullopt;
    ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos != text.size()) return std::nullopt;
  }
  Out value{};
  const auto result = std::from_chars(text.data(), text.data() + digits_end, value);
  if (result.ec != std::errc()) return std::nullopt;
  return value;
}

// Spark's CAST(text AS BOOLEAN) of the texts captured values print as
// (StringUtils.isTrueString / isFalseString).
std::optional<bool> SparkBooleanCast(std::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return std::nullopt;
}

TEST(CaptureCastTest, CapturedTextIsTheTextGetJsonObjectGivesForTheValue) {
  // The same path read twice: captured, and as text through the DOM (a
  // nested path, which re-prints the parsed number itself).
  const std::vector<Captured> values = SampleValues();
  test_util::Rows documents;
  for (const Captured& value : values) {
    documents.push_back(R"({"a":{"x":)" + Literal(value) + "}}");
  }
  auto multi = JsonMultiPathEvaluator::Make();
  ASSERT_OK_AND_ASSIGN(int text_path, multi->AddPath("$.a.x"));
  ASSERT_OK_AND_ASSIGN(int captured_path, multi->AddPath("$.a.x", true));
  ASSERT_OK_AND_ASSIGN(std::vector<columnar::ColumnPtr> results,
                       multi->Evaluate(*test_util::StringColumn(documents)));
  const columnar::Column& texts = *results[static_cast<size_t>(text_path)];
  const columnar::Column& captured = *results[static_cast<size_t>(captured_path)];
  for (size_t row_idx = 0; row_idx < values.size(); ++row_idx) {
    const auto row = static_cast<int64_t>(row_idx);
    SCOPED_TRACE(documents[row_idx].value());
    ASSERT_TRUE(captured.children[1]->IsValid(row));
    const Captured read{static_cast<CapturedKind>(captured.children[1]->Value<int8_t>(row)),
                        captured.children[2]->Value<int64_t>(row)};
    ASSERT_TRUE(texts.IsValid(row));
    EXPECT_EQ(TextOf(read), texts.StringValue(row));
  }
}

TEST(CaptureCastTest, PrintsPlainIsWhetherANonzeroDoublePrintsWithoutAnExponent) {
  for (double d : SampleDoubles()) {
    if (d == 0) continue;  // "0.0": plain, but outside the contract
    const std::string text = TextOf(OfDouble(d));
    EXPECT_EQ(PrintsPlain(d), text.find('E') == std::string::npos) << text;
  }
}

// Whether a double is the midpoint of two adjacent floats: nudged either
// way it rounds to a different float.
bool IsFloatTie(double d) {
  const double up = std::nextafter(d, std::numeric_limits<double>::infinity());
  const double down = std::nextafter(d, -std::numeric_limits<double>::infinity());
  return static_cast<float>(up) != static_cast<float>(down) &&
         static_cast<double>(static_cast<float>(d)) != d;
}

uint64_t BitsOf(double d) { return std::bit_cast<uint64_t>(d); }
uint64_t BitsOf(float f) { return std::bit_cast<uint32_t>(f); }

template <typename Out>
void ExpectFloatingCastOfText(const Captured& value, bool ansi) {
  const std::string text = TextOf(value);
  Out out{};
  const bool decided = CastCaptured<Out>(value.kind, value.bits, ansi, &out);
  if (value.kind == CapturedKind::kBool) {
    // "true"/"false" are not numbers: the text decides (NULL or an error).
    EXPECT_FALSE(decided) << text;
    return;
  }
  if constexpr (std::is_same_v<Out, float>) {
    if (value.kind == CapturedKind::kDouble) {
      const double d = std::bit_cast<double>(value.bits);
      if (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()) || IsFloatTie(d)) {
        EXPECT_FALSE(decided) << text;
        return;
      }
    }
  }
  ASSERT_TRUE(decided) << text;
  // Bit for bit: -0.0 is not 0.0.
  EXPECT_EQ(BitsOf(out), BitsOf(ParseFloating<Out>(text))) << text;
}

TEST(CaptureCastTest, FloatingCastsAreTheParsedTextExceptFloatTiesAndOverflow) {
  for (const Captured& value : SampleValues()) {
    for (bool ansi : {false, true}) {
      ExpectFloatingCastOfText<double>(value, ansi);
      ExpectFloatingCastOfText<float>(value, ansi);
    }
  }
}

template <typename Out>
void ExpectIntegralCastOfText(const Captured& value, bool ansi) {
  const std::string text = TextOf(value);
  Out out{};
  const bool decided = CastCaptured<Out>(value.kind, value.bits, ansi, &out);
  const std::optional<Out> expected = SparkIntegralCast<Out>(text, ansi);
  // Decided exactly when the text gives a value; never where it gives NULL
  // or an error.
  ASSERT_EQ(decided, expected.has_value()) << text << (ansi ? " ANSI" : "");
  if (decided) {
    EXPECT_EQ(out, *expected) << text;
  }
}

TEST(CaptureCastTest, IntegralCastsAreSparksCastOfTheText) {
  int decided_fractions = 0;
  for (const Captured& value : SampleValues()) {
    for (bool ansi : {false, true}) {
      ExpectIntegralCastOfText<int8_t>(value, ansi);
      ExpectIntegralCastOfText<int16_t>(value, ansi);
      ExpectIntegralCastOfText<int32_t>(value, ansi);
      ExpectIntegralCastOfText<int64_t>(value, ansi);
    }
    int64_t out = 0;
    if (value.kind == CapturedKind::kDouble &&
        CastCaptured<int64_t>(value.kind, value.bits, false, &out)) {
      ++decided_fractions;
    }
  }
  // The samples do reach the fraction rule, not only integers.
  EXPECT_GT(decided_fractions, 100);
}

TEST(CaptureCastTest, BooleanCastReadsOnlyTrueFalseOneAndZero) {
  for (const Captured& value : SampleValues()) {
    const std::string text = TextOf(value);
    const std::optional<bool> expected = SparkBooleanCast(text);
    for (bool ansi : {false, true}) {
      bool out = false;
      const bool decided = CastCaptured<bool>(value.kind, value.bits, ansi, &out);
      ASSERT_EQ(decided, expected.has_value()) << text;
      if (decided) {
        EXPECT_EQ(out, *expected) << text;
      }
    }
  }
}

TEST(CaptureCastTest, ResultTypesHoldTheTextAndTheCastsType) {
  const columnar::TypePtr& captured = CapturedType();
  ASSERT_EQ(captured->id(), columnar::TypeId::kStruct);
  ASSERT_EQ(captured->fields().size(), 3u);
  EXPECT_EQ(captured->fields()[0].name, "text");
  EXPECT_EQ(captured->fields()[0].type->id(), columnar::TypeId::kString);
  EXPECT_EQ(captured->fields()[1].type->id(), columnar::TypeId::kByte);
  EXPECT_EQ(captured->fields()[2].type->id(), columnar::TypeId::kLong);
  EXPECT_EQ(&CapturedType(), &captured);  // built once
  const std::pair<CaptureCast, columnar::TypeId> casts[] = {
      {CaptureCast::kBoolean, columnar::TypeId::kBoolean},
      {CaptureCast::kByte, columnar::TypeId::kByte},
      {CaptureCast::kShort, columnar::TypeId::kShort},
      {CaptureCast::kInt, columnar::TypeId::kInt},
      {CaptureCast::kLong, columnar::TypeId::kLong},
      {CaptureCast::kFloat, columnar::TypeId::kFloat},
      {CaptureCast::kDouble, columnar::TypeId::kDouble},
  };
  for (const auto& [cast, id] : casts) {
    const columnar::TypePtr& type = CapturedCastType(cast);
    ASSERT_EQ(type->fields().size(), 2u);
    EXPECT_EQ(type->fields()[0].name, "text");
    EXPECT_EQ(type->fields()[0].type->id(), columnar::TypeId::kString);
    EXPECT_EQ(type->fields()[1].name, "value");
    EXPECT_EQ(type->fields()[1].type->id(), id);
    EXPECT_TRUE(type->fields()[1].nullable);
  }
}

}  // namespace
}  // namespace silt::json
