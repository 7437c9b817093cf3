// Test-only, shared by the Parquet tests: rows of every primitive type
// generated from their row number, a column-by-column value comparison,
// one-call writing, footer parsing and reading of a file, and builders of
// the footer's schema elements for schemas and files made by hand.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"
#include "silt/parquet/parquet_metadata.h"
#include "silt/parquet/parquet_schema.h"
#include "silt/testing/gtest_util.h"

namespace silt::parquet::test_util {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;
using columnar::TypeId;
using columnar::TypePtr;

inline __int128 Pow10(int n) {
  __int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

// Deterministic value for row `row` of a column of `type`; null when
// `nullable` and the row falls on the null pattern (every 3rd row, plus a
// run of 40 rows to exercise runs in the levels).
inline void AppendValue(ColumnBuilder* b, const DataType& type, bool nullable, int64_t row,
                        int64_t salt) {
  if (nullable && (row % 3 == 1 || (row % 500 >= 100 && row % 500 < 140))) {
    b->AppendNull();
    return;
  }
  const int64_t x = row * 7919 + salt;
  switch (type.id()) {
    case TypeId::kBoolean: b->AppendBool((x / 3) % 2 == 0); break;
    case TypeId::kByte: b->Append<int8_t>(static_cast<int8_t>(x % 256 - 128)); break;
    case TypeId::kShort: b->Append<int16_t>(static_cast<int16_t>(x % 65536 - 32768)); break;
    case TypeId::kInt: b->Append<int32_t>(static_cast<int32_t>((x % 2000) - 1000) * 1000003); break;
    case TypeId::kLong:
      b->Append<int64_t>((x % 100) * (int64_t{1} << 40) - (int64_t{1} << 45));
      break;
    case TypeId::kFloat: {
      static const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN(), -1.5e30f};
      b->Append<float>(row % 50 < 5 ? special[row % 50] : static_cast<float>(x % 1000) / 7.0f);
      break;
    }
    case TypeId::kDouble: {
      static const double special[] = {0.0, -0.0, -std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN(), 1e300};
      b->Append<double>(row % 50 < 5 ? special[row % 50] : static_cast<double>(x % 100000) / 3.0);
      break;
    }
    case TypeId::kDecimal: {
      // Spread over the full precision, both signs.
      __int128 limit = Pow10(type.precision()) - 1;
      __int128 v = (static_cast<__int128>(x) * 1000000007 * 998244353) % limit;
      if (row % 2 == 1) v = -v;
      if (row % 97 == 0) v = row % 194 == 0 ? limit : -limit;
      b->Append<__int128>(v);
      break;
    }
    case TypeId::kString: {
      // Low cardinality (dictionary friendly) with multi-byte UTF-8.
      static const char* words[] = {"alpha", "β-beta", "", "gamma γ", "delta", "\xf0\x9f\x98\x80"};
      b->AppendString(std::string(words[x % 6]) + std::to_string(x % 13));
      break;
    }
    case TypeId::kBinary: {
      std::string s;
      for (int64_t i = 0; i < x % 9; ++i) s.push_back(static_cast<char>((x + i * 31) % 256));
      b->AppendString(s);
      break;
    }
    case TypeId::kDate: b->Append<int32_t>(static_cast<int32_t>(x % 40000 - 20000)); break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      b->Append<int64_t>((x % 100000 - 50000) * int64_t{86400000000} / 7 + x % 1000);
      break;
    default: FAIL() << "unexpected type";
  }
}

// Rows [first_row, first_row + rows) of `schema`, each column by AppendValue.
inline RecordBatchPtr MakeBatch(const SchemaPtr& schema, int64_t first_row, int64_t rows) {
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = rows;
  for (int col_idx = 0; col_idx < schema->num_fields(); ++col_idx) {
    const Field& f = schema->field(col_idx);
    ColumnBuilder b(f.type);
    for (int64_t row = first_row; row < first_row + rows; ++row) {
      AppendValue(&b, *f.type, f.nullable, row, col_idx);
    }
    batch->columns.push_back(b.Finish());
  }
  return batch;
}

template <typename T>
inline bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Compares row values (not buffer layouts).
inline void ExpectColumnsEqual(const Column& expected, const Column& actual,
                               const std::string& what) {
  ASSERT_TRUE(expected.type->Equals(*actual.type))
      << what << ": " << expected.type->ToDdl() << " vs " << actual.type->ToDdl();
  ASSERT_EQ(expected.length, actual.length) << what;
  EXPECT_EQ(expected.null_count, actual.null_count) << what;
  ASSERT_OK(columnar::ValidateColumn(actual));
  for (int64_t i = 0; i < expected.length; ++i) {
    ASSERT_EQ(expected.IsValid(i), actual.IsValid(i)) << what << " row " << i;
    if (!expected.IsValid(i)) continue;
    bool same = false;
    switch (expected.type->id()) {
      case TypeId::kBoolean: same = expected.BoolValue(i) == actual.BoolValue(i); break;
      case TypeId::kByte: same = expected.Value<int8_t>(i) == actual.Value<int8_t>(i); break;
      case TypeId::kShort: same = expected.Value<int16_t>(i) == actual.Value<int16_t>(i); break;
      case TypeId::kInt:
      case TypeId::kDate: same = expected.Value<int32_t>(i) == actual.Value<int32_t>(i); break;
      case TypeId::kLong:
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz:
        same = expected.Value<int64_t>(i) == actual.Value<int64_t>(i);
        break;
      case TypeId::kFloat: same = SameBits(expected.Value<float>(i), actual.Value<float>(i)); break;
      case TypeId::kDouble:
        same = SameBits(expected.Value<double>(i), actual.Value<double>(i));
        break;
      case TypeId::kDecimal: same = expected.Value<__int128>(i) == actual.Value<__int128>(i); break;
      case TypeId::kString:
      case TypeId::kBinary: same = expected.StringValue(i) == actual.StringValue(i); break;
      default: FAIL() << "unexpected type";
    }
    ASSERT_TRUE(same) << what << " row " << i;
  }
}

// Every primitive type, each as a nullable column and a NOT NULL one
// (`<name>_req`).
inline SchemaPtr AllTypesSchema() {
  std::vector<Field> fields;
  const std::vector<std::pair<std::string, TypePtr>> types = {
      {"bool", DataType::Boolean()},
      {"byte", DataType::Byte()},
      {"short", DataType::Short()},
      {"int", DataType::Int()},
      {"long", DataType::Long()},
      {"float", DataType::Float()},
      {"double", DataType::Double()},
      {"dec5_2", DataType::Decimal(5, 2)},
      {"dec15_3", DataType::Decimal(15, 3)},
      {"dec25_4", DataType::Decimal(25, 4)},
      {"dec38_0", DataType::Decimal(38, 0)},
      {"string", DataType::String()},
      {"binary", DataType::Binary()},
      {"date", DataType::Date()},
      {"ts", DataType::Timestamp()},
      {"ts_ntz", DataType::TimestampNtz()},
  };
  for (const auto& [name, type] : types) {
    fields.push_back(Field{name, type, true});
    fields.push_back(Field{name + "_req", type, false});
  }
  return DataType::Struct(std::move(fields));
}

// Writes `batches` to `path` and returns the file's bytes ("" after a
// failure, which the test reports); `result`, when given, receives Close's.
inline std::string WriteFile(fs::FileSystem* fs, const std::string& path, const SchemaPtr& schema,
                             const std::vector<RecordBatchPtr>& batches,
                             const WriterOptions& options, WriteResult* result = nullptr) {
  auto writer = ParquetFileWriter::Open(fs, path, schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  if (!writer.ok()) return "";
  for (const auto& b : batches) {
    Status s = (*writer)->WriteBatch(*b);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  auto r = (*writer)->Close();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok() && result != nullptr) *result = *r;
  auto bytes = fs->ReadFile(path);
  EXPECT_TRUE(bytes.ok());
  return bytes.ok() ? *bytes : "";
}

// The parsed footer of a whole file's bytes.
inline FileMetaData Footer(const std::string& file) {
  uint32_t len;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  auto md = ParseFileMetaData(std::string_view(file).substr(file.size() - 8 - len, len));
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  return md.ok() ? *md : FileMetaData();
}

// Reads every row group and concatenates them.
inline RecordBatchPtr ReadAll(fs::FileSystem* fs, const std::string& path,
                              const std::vector<std::string>& columns = {}) {
  auto reader = ParquetFileReader::Open(fs, path);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return nullptr;
  std::vector<RecordBatchPtr> parts;
  for (int rg = 0; rg < (*reader)->num_row_groups(); ++rg) {
    auto batch = (*reader)->ReadRowGroup(rg, columns);
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok()) return nullptr;
    parts.push_back(*batch);
  }
  if (parts.empty()) return nullptr;
  return columnar::ConcatBatches(parts);
}

// A primitive schema element (a leaf column).
inline SchemaElement Leaf(std::string name, PhysicalType type,
                          Repetition rep = Repetition::kOptional) {
  SchemaElement el;
  el.name = std::move(name);
  el.type = type;
  el.repetition_type = rep;
  return el;
}

// A group schema element whose `children` elements follow it.
inline SchemaElement Group(std::string name, int children, Repetition rep = Repetition::kOptional) {
  SchemaElement el;
  el.name = std::move(name);
  el.num_children = children;
  el.repetition_type = rep;
  return el;
}

// `children` (depth first) under a root element with `top_level` children.
inline std::vector<SchemaElement> WithRoot(std::vector<SchemaElement> children, int top_level) {
  SchemaElement root;
  root.name = "schema";
  root.num_children = top_level;
  children.insert(children.begin(), root);
  return children;
}

}  // namespace silt::parquet::test_util
