// libFuzzer target for silt's Spark SQL expression parser and binder: any
// text must parse to an expression or give a Status (never a crash, hang or
// sanitizer report), and a parsed expression must print, re-parse from its
// printed form and bind against a small schema (or fail binding with a
// Status). Evaluation is left out: functions such as repeat() may
// legitimately ask for gigabytes. Built only with clang
// (SILT_BUILD_FUZZERS=ON); see README.md in this directory.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "silt/columnar/types.h"
#include "silt/expr/expression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using silt::columnar::DataType;
  static const auto schema = DataType::Struct({
      {"a", DataType::Int(), true},
      {"s", DataType::String(), true},
      {"ts", DataType::Timestamp(), true},
      {"d", DataType::Decimal(10, 2), true},
      {"arr", DataType::Array(DataType::Int()), true},
      {"e", DataType::Struct({{"x", DataType::Long(), true}, {"y", DataType::String(), true}}),
       true},
  });
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = silt::expr::ParseExpression(text);
  if (!parsed.ok()) return 0;
  const silt::expr::Expression& expr = **parsed;
  std::string printed = expr.ToString();
  (void)expr.OutputName();
  // Printing must give text the parser accepts again.
  if (!silt::expr::ParseExpression(printed).ok()) std::abort();
  (void)silt::expr::AsGenerator(expr);
  auto bound = silt::expr::BindSelectItem(expr, schema);
  (void)bound;
  return 0;
}
