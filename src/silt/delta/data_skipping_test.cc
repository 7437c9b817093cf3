#include "silt/delta/data_skipping.h"

#include <gtest/gtest.h>

namespace silt::delta {
namespace {

using columnar::ColumnPredicate;
using columnar::DataType;
using columnar::PredicateOp;
using columnar::PredicateValue;

Metadata TableMetadata() {
  Metadata m;
  m.schema = DataType::Struct({{"id", DataType::Long()},
                               {"name", DataType::String()},
                               {"ts", DataType::Timestamp()},
                               {"score", DataType::Double()},
                               {"day", DataType::Date()}});
  m.partition_columns = {"day"};
  return m;
}

PredicateValue I(int64_t v) {
  PredicateValue out;
  out.i64 = v;
  return out;
}
PredicateValue S(std::string v) {
  PredicateValue out;
  out.str = std::move(v);
  return out;
}
PredicateValue F(double v) {
  PredicateValue out;
  out.f64 = v;
  return out;
}

ColumnPredicate P(std::string column, columnar::TypePtr type, PredicateOp op,
                  std::vector<PredicateValue> values = {}) {
  return ColumnPredicate{std::move(column), std::move(type), op, std::move(values)};
}

AddFile File(std::optional<std::string> day, std::optional<std::string> stats) {
  AddFile f;
  f.path = "x.parquet";
  f.partition_values = {{"day", std::move(day)}};
  f.stats = std::move(stats);
  return f;
}

const char* kStats =
    R"({"numRecords":10,"minValues":{"id":5,"name":"bob","ts":"2024-01-01T00:00:00.000Z",)"
    R"("score":1.5},"maxValues":{"id":20,"name":"zed","ts":"2024-01-01T00:00:01.000Z",)"
    R"("score":9.5},"nullCount":{"id":0,"name":2,"ts":0,"score":10}})";

SkipDecision Decide(const ColumnPredicate& p, const AddFile& f) {
  return FileSkipper::Make(TableMetadata(), {p}).Decide(f);
}

TEST(DataSkippingTest, PartitionValues) {
  AddFile f = File("2024-03-02", kStats);
  int32_t day = 19784;  // 2024-03-02
  EXPECT_EQ(Decide(P("day", DataType::Date(), PredicateOp::kEq, {I(day)}), f), SkipDecision::kKeep);
  EXPECT_EQ(Decide(P("DAY", DataType::Date(), PredicateOp::kEq, {I(day + 1)}), f),
            SkipDecision::kSkipByPartition);
  EXPECT_EQ(Decide(P("day", DataType::Date(), PredicateOp::kGt, {I(day)}), f),
            SkipDecision::kSkipByPartition);
  EXPECT_EQ(Decide(P("day", DataType::Date(), PredicateOp::kIn, {I(1), I(day)}), f),
            SkipDecision::kKeep);
  EXPECT_EQ(Decide(P("day", DataType::Date(), PredicateOp::kIsNull), f),
            SkipDecision::kSkipByPartition);
  AddFile null_day = File(std::nullopt, kStats);
  EXPECT_EQ(Decide(P("day", DataType::Date(), PredicateOp::kIsNull), null_day),
            SkipDecision::kKeep);
  EXPECT_EQ(Decide(P("day", DataType::Date(), PredicateOp::kEq, {I(day)}), null_day),
            SkipDecision::kSkipByPartition);
}

TEST(DataSkippingTest, Stats) {
  AddFile f = File("2024-03-02", kStats);
  auto id = [&](PredicateOp op, int64_t v) {
    return Decide(P("id", DataType::Long(), op, {I(v)}), f);
  };
  EXPECT_EQ(id(PredicateOp::kEq, 4), SkipDecision::kSkipByStats);
  EXPECT_EQ(id(PredicateOp::kEq, 5), SkipDecision::kKeep);
  EXPECT_EQ(id(PredicateOp::kEq, 21), SkipDecision::kSkipByStats);
  EXPECT_EQ(id(PredicateOp::kLt, 5), SkipDecision::kSkipByStats);
  EXPECT_EQ(id(PredicateOp::kLtEq, 5), SkipDecision::kKeep);
  EXPECT_EQ(id(PredicateOp::kGt, 20), SkipDecision::kSkipByStats);
  EXPECT_EQ(id(PredicateOp::kGtEq, 20), SkipDecision::kKeep);
  EXPECT_EQ(id(PredicateOp::kNotEq, 7), SkipDecision::kKeep);
  EXPECT_EQ(Decide(P("id", DataType::Long(), PredicateOp::kIn, {I(1), I(30)}), f),
            SkipDecision::kSkipByStats);
  EXPECT_EQ(Decide(P("id", DataType::Long(), PredicateOp::kIsNull), f), SkipDecision::kSkipByStats);
  EXPECT_EQ(Decide(P("name", DataType::String(), PredicateOp::kIsNull), f), SkipDecision::kKeep);
  EXPECT_EQ(Decide(P("name", DataType::String(), PredicateOp::kEq, {S("alice")}), f),
            SkipDecision::kSkipByStats);
  EXPECT_EQ(Decide(P("name", DataType::String(), PredicateOp::kEq, {S("carl")}), f),
            SkipDecision::kKeep);
  // Timestamps are stored truncated to milliseconds: the max is widened.
  int64_t max_ts = 1704067201000000;
  EXPECT_EQ(Decide(P("ts", DataType::Timestamp(), PredicateOp::kEq, {I(max_ts + 500)}), f),
            SkipDecision::kKeep);
  EXPECT_EQ(Decide(P("ts", DataType::Timestamp(), PredicateOp::kGt, {I(max_ts + 1000)}), f),
            SkipDecision::kSkipByStats);
  // Every score is null: comparisons are never true.
  EXPECT_EQ(Decide(P("score", DataType::Double(), PredicateOp::kGt, {F(0)}), f),
            SkipDecision::kSkipByStats);
}

TEST(DataSkippingTest, MissingStatsKeep) {
  AddFile none = File("2024-03-02", std::nullopt);
  EXPECT_EQ(Decide(P("id", DataType::Long(), PredicateOp::kEq, {I(-1)}), none),
            SkipDecision::kKeep);
  AddFile bad = File("2024-03-02", "{not json");
  EXPECT_EQ(Decide(P("id", DataType::Long(), PredicateOp::kEq, {I(-1)}), bad), SkipDecision::kKeep);
  AddFile partial = File("2024-03-02", R"({"numRecords":3,"minValues":{},"maxValues":{}})");
  EXPECT_EQ(Decide(P("id", DataType::Long(), PredicateOp::kEq, {I(-1)}), partial),
            SkipDecision::kKeep);
  // Unknown columns are ignored.
  EXPECT_EQ(Decide(P("nope", DataType::Long(), PredicateOp::kEq, {I(-1)}), File("x", kStats)),
            SkipDecision::kKeep);
}

TEST(DataSkippingTest, FloatMaxIgnoredBecauseOfNaN) {
  AddFile f =
      File("2024-03-02", R"({"numRecords":2,"minValues":{"score":1.0},"maxValues":{"score":2.0},)"
                         R"("nullCount":{"score":0}})");
  EXPECT_EQ(Decide(P("score", DataType::Double(), PredicateOp::kGt, {F(5)}), f),
            SkipDecision::kKeep);
  EXPECT_EQ(Decide(P("score", DataType::Double(), PredicateOp::kLt, {F(1)}), f),
            SkipDecision::kSkipByStats);
}

}  // namespace
}  // namespace silt::delta
