#include "silt/parquet/pruning.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/bloom_filter.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet {
namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPredicate;
using columnar::DataType;
using columnar::Field;
using columnar::PredicateOp;
using columnar::PredicateValue;
using columnar::TypePtr;

template <typename T>
std::string Bytes(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

ColumnDescriptor Leaf(TypePtr type, PhysicalType physical) {
  ColumnDescriptor d;
  d.field = Field{"c", type, true, "{}"};
  d.flat = true;
  d.leaf.type = physical;
  d.leaf.name = "c";
  return d;
}

ColumnPredicate Pred(TypePtr type, PredicateOp op, std::vector<PredicateValue> values) {
  ColumnPredicate p;
  p.column = "c";
  p.type = std::move(type);
  p.op = op;
  p.values = std::move(values);
  return p;
}

PredicateValue I(int64_t v) {
  PredicateValue p;
  p.i64 = v;
  return p;
}
PredicateValue F(double v) {
  PredicateValue p;
  p.f64 = v;
  return p;
}
PredicateValue S(std::string v) {
  PredicateValue p;
  p.str = std::move(v);
  return p;
}

TEST(Pruning, IntegerBoundsDecideEveryOperator) {
  const ColumnDescriptor leaf = Leaf(DataType::Int(), PhysicalType::kInt32);
  const std::string lo = Bytes<int32_t>(-10), hi = Bytes<int32_t>(20);
  LeafFacts f;
  f.min = &lo;
  f.max = &hi;
  f.null_count = 0;
  f.num_values = 100;
  auto may = [&](PredicateOp op, std::vector<PredicateValue> v) {
    return MayMatch(leaf, Pred(DataType::Long(), op, std::move(v)), f);
  };
  EXPECT_TRUE(may(PredicateOp::kEq, {I(-10)}));
  EXPECT_FALSE(may(PredicateOp::kEq, {I(21)}));
  EXPECT_FALSE(may(PredicateOp::kIn, {I(-11), I(100)}));
  EXPECT_TRUE(may(PredicateOp::kIn, {I(-11), I(0)}));
  EXPECT_FALSE(may(PredicateOp::kLt, {I(-10)}));
  EXPECT_TRUE(may(PredicateOp::kLtEq, {I(-10)}));
  EXPECT_FALSE(may(PredicateOp::kGt, {I(20)}));
  EXPECT_TRUE(may(PredicateOp::kGtEq, {I(20)}));
  EXPECT_TRUE(may(PredicateOp::kNotEq, {I(5)}));
  EXPECT_FALSE(may(PredicateOp::kIsNull, {}));
  EXPECT_TRUE(may(PredicateOp::kIsNotNull, {}));
  // Another type family is never pruned.
  EXPECT_TRUE(MayMatch(leaf, Pred(DataType::String(), PredicateOp::kEq, {S("x")}), f));
}

TEST(Pruning, AllNullChunksMatchOnlyIsNull) {
  const ColumnDescriptor leaf = Leaf(DataType::Long(), PhysicalType::kInt64);
  LeafFacts f;
  f.null_count = 50;
  f.num_values = 50;
  EXPECT_TRUE(MayMatch(leaf, Pred(DataType::Long(), PredicateOp::kIsNull, {}), f));
  EXPECT_FALSE(MayMatch(leaf, Pred(DataType::Long(), PredicateOp::kIsNotNull, {}), f));
  EXPECT_FALSE(MayMatch(leaf, Pred(DataType::Long(), PredicateOp::kEq, {I(1)}), f));
}

TEST(Pruning, UnsignedAndStringOrderings) {
  ColumnDescriptor u = Leaf(DataType::Long(), PhysicalType::kInt32);
  u.leaf.logical_type = LogicalType::Integer(32, false);
  // 3'000'000'000 stored as INT32 bits is negative when read as signed.
  const std::string lo = Bytes<int32_t>(5);
  const std::string hi = Bytes<int32_t>(static_cast<int32_t>(3'000'000'000U));
  LeafFacts f;
  f.min = &lo;
  f.max = &hi;
  EXPECT_TRUE(MayMatch(u, Pred(DataType::Long(), PredicateOp::kGt, {I(2'999'999'999)}), f));
  EXPECT_FALSE(MayMatch(u, Pred(DataType::Long(), PredicateOp::kGt, {I(3'000'000'000)}), f));

  const ColumnDescriptor s = Leaf(DataType::String(), PhysicalType::kByteArray);
  const std::string a = "apple", z = "\xc3\xa9t\xc3\xa9";  // "été": bytes above ASCII
  f.min = &a;
  f.max = &z;
  EXPECT_TRUE(MayMatch(s, Pred(DataType::String(), PredicateOp::kEq, {S("zebra")}), f));
  EXPECT_FALSE(MayMatch(s, Pred(DataType::String(), PredicateOp::kEq, {S("aaa")}), f));
  EXPECT_FALSE(MayMatch(s, Pred(DataType::String(), PredicateOp::kGt, {S("\xc3\xa9z")}), f));
}

TEST(Pruning, FloatsKeepRowsNaNMightSatisfy) {
  const ColumnDescriptor leaf = Leaf(DataType::Double(), PhysicalType::kDouble);
  const std::string lo = Bytes<double>(1.0), hi = Bytes<double>(2.0);
  LeafFacts f;
  f.min = &lo;
  f.max = &hi;
  // NaN rows are not in the bounds and Spark sorts NaN above all numbers.
  EXPECT_TRUE(MayMatch(leaf, Pred(DataType::Double(), PredicateOp::kGt, {F(5)}), f));
  EXPECT_TRUE(MayMatch(leaf, Pred(DataType::Double(), PredicateOp::kNotEq, {F(1)}), f));
  EXPECT_FALSE(MayMatch(leaf, Pred(DataType::Double(), PredicateOp::kLt, {F(1)}), f));
  EXPECT_FALSE(MayMatch(leaf, Pred(DataType::Double(), PredicateOp::kEq, {F(3)}), f));
  EXPECT_TRUE(MayMatch(leaf, Pred(DataType::Double(), PredicateOp::kEq, {F(NAN)}), f));
  const std::string nan = Bytes<double>(NAN);
  f.max = &nan;
  EXPECT_TRUE(MayMatch(leaf, Pred(DataType::Double(), PredicateOp::kEq, {F(3)}), f));
  // -0.0 and 0.0 hash differently: no bloom answer for zero.
  EXPECT_FALSE(BloomHashFor(leaf, Pred(DataType::Double(), PredicateOp::kEq, {}), F(0.0)));
  EXPECT_TRUE(BloomHashFor(leaf, Pred(DataType::Double(), PredicateOp::kEq, {}), F(1.5)));
}

TEST(Pruning, DecimalsAndTimestampUnits) {
  ColumnDescriptor dec = Leaf(DataType::Decimal(20, 2), PhysicalType::kFixedLenByteArray);
  dec.leaf.type_length = 9;
  const std::string lo("\xff\xff\xff\xff\xff\xff\xff\xff\x9c", 9);  // -100
  const std::string hi("\x00\x00\x00\x00\x00\x00\x00\x01\x00", 9);  // 256
  LeafFacts f;
  f.min = &lo;
  f.max = &hi;
  PredicateValue v;
  v.i128 = -101;
  EXPECT_FALSE(MayMatch(dec, Pred(DataType::Decimal(20, 2), PredicateOp::kEq, {v}), f));
  v.i128 = -100;
  EXPECT_TRUE(MayMatch(dec, Pred(DataType::Decimal(20, 2), PredicateOp::kEq, {v}), f));
  // Another scale: not compared.
  v.i128 = 1000000;
  EXPECT_TRUE(MayMatch(dec, Pred(DataType::Decimal(20, 3), PredicateOp::kEq, {v}), f));

  ColumnDescriptor ns = Leaf(DataType::Timestamp(), PhysicalType::kInt64);
  ns.leaf.logical_type = LogicalType::Timestamp(true, TimeUnit::kNanos);
  const std::string nlo = Bytes<int64_t>(1'000'500), nhi = Bytes<int64_t>(2'000'500);
  f.min = &nlo;
  f.max = &nhi;
  // Bounds round outwards: [1000, 2001] micros.
  EXPECT_TRUE(MayMatch(ns, Pred(DataType::Timestamp(), PredicateOp::kEq, {I(2001)}), f));
  EXPECT_FALSE(MayMatch(ns, Pred(DataType::Timestamp(), PredicateOp::kEq, {I(2002)}), f));
  EXPECT_FALSE(BloomHashFor(ns, Pred(DataType::Timestamp(), PredicateOp::kEq, {}), I(1000)));
}

// ---------------------------------------------------------------------------
// Through the file reader.

columnar::RecordBatchPtr SortedBatch(int64_t first, int64_t rows) {
  auto schema = DataType::Struct(
      {Field{"id", DataType::Long(), false, "{}"}, Field{"name", DataType::String(), true, "{}"},
       Field{"s", DataType::Struct({Field{"a", DataType::Int(), true, "{}"}}), true, "{}"},
       Field{"l", DataType::Array(DataType::Long()), true, "{}"}});
  ColumnBuilder id(DataType::Long()), name(DataType::String()), s(schema->field(2).type),
      l(schema->field(3).type);
  for (int64_t r = first; r < first + rows; ++r) {
    id.Append<int64_t>(r);
    if (r % 10 == 3) {
      name.AppendNull();
    } else {
      char buf[24];
      std::snprintf(buf, sizeof(buf), "n%07lld", static_cast<long long>(r));
      name.AppendString(buf);
    }
    s.child(0)->Append<int32_t>(static_cast<int32_t>(r));
    s.AppendValid();
    l.child(0)->Append<int64_t>(r);
    l.child(0)->Append<int64_t>(-r);
    l.CloseList();
  }
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = schema;
  batch->num_rows = rows;
  batch->columns = {id.Finish(), name.Finish(), s.Finish(), l.Finish()};
  return batch;
}

class PrunedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    WriterOptions options;
    options.page_bytes = 2000;
    options.row_group_bytes = 60000;
    options.bloom_filters["name"] = BloomFilterOptions{};
    options.bloom_filters["s.a"] = BloomFilterOptions{1000, 0.01};
    auto batch = SortedBatch(0, kRows);
    ASSERT_OK_AND_ASSIGN(auto writer,
                         ParquetFileWriter::Open(fs_.get(), "/f.parquet", batch->schema, options));
    for (int64_t off = 0; off < kRows; off += 1000) {
      ASSERT_OK(writer->WriteBatch(*columnar::SliceBatch(*batch, off, 1000)));
    }
    ASSERT_OK(writer->Close().status());
    ASSERT_OK_AND_ASSIGN(reader_, ParquetFileReader::Open(fs_.get(), "/f.parquet"));
    ASSERT_GT(reader_->num_row_groups(), 2);
  }

  ColumnPredicate IdPred(PredicateOp op, int64_t v) {
    ColumnPredicate p = Pred(DataType::Long(), op, {I(v)});
    p.column = "id";
    return p;
  }

  static constexpr int64_t kRows = 20000;
  fs::FileSystemPtr fs_;
  std::unique_ptr<ParquetFileReader> reader_;
};

TEST_F(PrunedFileTest, RowGroupsAndPagesAreSkippedRowsStayAligned) {
  columnar::Conjunction conj = {IdPred(PredicateOp::kGtEq, 12000), IdPred(PredicateOp::kLt, 12050)};
  ASSERT_OK_AND_ASSIGN(std::vector<int> groups, reader_->SelectRowGroups(conj));
  ASSERT_EQ(groups.size(), 1u);
  int64_t seen = 0;
  for (const std::vector<std::string>& columns :
       std::vector<std::vector<std::string>>{{}, {"l", "id", "s.a", "name"}}) {
    ASSERT_OK_AND_ASSIGN(auto batch, reader_->ReadRowGroupPruned(groups[0], columns, conj));
    ASSERT_OK(columnar::ValidateBatch(*batch));
    const int id_col = batch->schema->FieldIndex("id");
    const int l_col = batch->schema->FieldIndex("l");
    const auto& ids = *batch->column(id_col);
    const auto& lists = *batch->column(l_col);
    EXPECT_LT(batch->num_rows, 2000) << "pages were not skipped";
    bool has_first = false, has_last = false;
    for (int64_t r = 0; r < batch->num_rows; ++r) {
      const int64_t id = ids.Value<int64_t>(r);
      has_first |= id == 12000;
      has_last |= id == 12049;
      ASSERT_EQ(lists.offsets()[r + 1] - lists.offsets()[r], 2);
      EXPECT_EQ(lists.children[0]->Value<int64_t>(lists.offsets()[r]), id);
    }
    EXPECT_TRUE(has_first && has_last);
    seen = batch->num_rows;
  }
  EXPECT_GT(seen, 0);
}

TEST_F(PrunedFileTest, NoSurvivingPagesGiveAnEmptyBatch) {
  columnar::Conjunction conj = {IdPred(PredicateOp::kGt, 1'000'000)};
  ASSERT_OK_AND_ASSIGN(std::vector<int> groups, reader_->SelectRowGroups(conj));
  EXPECT_TRUE(groups.empty());
  ASSERT_OK_AND_ASSIGN(auto batch, reader_->ReadRowGroupPruned(0, {"id", "s"}, conj));
  EXPECT_EQ(batch->num_rows, 0);
  EXPECT_EQ(batch->num_columns(), 2);
  ASSERT_OK(columnar::ValidateBatch(*batch));
}

TEST_F(PrunedFileTest, BloomFiltersAnswerForTopLevelAndStructLeaves) {
  for (int rg = 0; rg < reader_->num_row_groups(); ++rg) {
    ASSERT_OK_AND_ASSIGN(auto batch, reader_->ReadRowGroup(rg, {"id"}));
    const int64_t first = batch->column(0)->Value<int64_t>(0);
    char buf[16];
    std::snprintf(buf, sizeof(buf), "n%07lld", static_cast<long long>(first));
    ASSERT_OK_AND_ASSIGN(auto present,
                         reader_->BloomFilterMightContain(rg, "name", DataType::String(), S(buf)));
    ASSERT_TRUE(present.has_value());
    EXPECT_TRUE(*present);
    ASSERT_OK_AND_ASSIGN(auto sa,
                         reader_->BloomFilterMightContain(rg, "s.a", DataType::Int(), I(first)));
    ASSERT_TRUE(sa.has_value());
    EXPECT_TRUE(*sa);
    ASSERT_OK_AND_ASSIGN(auto none,
                         reader_->BloomFilterMightContain(rg, "id", DataType::Long(), I(first)));
    EXPECT_FALSE(none.has_value());  // no filter on id
  }
  // A value between two present ones, within every bound: only the bloom
  // filter rules it out.
  ColumnPredicate p = Pred(DataType::String(), PredicateOp::kEq, {S("n0000005x")});
  p.column = "name";
  ASSERT_OK_AND_ASSIGN(std::vector<int> groups, reader_->SelectRowGroups({p}));
  EXPECT_TRUE(groups.empty());
}

TEST(PrunedFile, WriterRejectsBadBloomOptions) {
  auto fs = fs::MakeMemoryFileSystem();
  auto schema = DataType::Struct({Field{"b", DataType::Boolean(), true, "{}"}});
  WriterOptions options;
  options.bloom_filters["nope"] = BloomFilterOptions{};
  ASSERT_RAISES(InvalidArgument, ParquetFileWriter::Open(fs.get(), "/x", schema, options));
  options.bloom_filters = {{"b", BloomFilterOptions{}}};
  ASSERT_RAISES(InvalidArgument, ParquetFileWriter::Open(fs.get(), "/x", schema, options));
}

}  // namespace
}  // namespace silt::parquet
