#include "silt/exec/key_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "silt/columnar/builder.h"
#include "silt/exec/column_text_test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::exec {
namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypePtr;
using testing::CellText;

// One column of every supported primitive type, with a null in row 1 and
// edge values in the other rows.
std::vector<ColumnPtr> AllTypes(std::vector<TypePtr>* types) {
  *types = {DataType::Boolean(),     DataType::Byte(),         DataType::Short(),
            DataType::Int(),         DataType::Long(),         DataType::Float(),
            DataType::Double(),      DataType::Decimal(38, 4), DataType::String(),
            DataType::Binary(),      DataType::Date(),         DataType::Timestamp(),
            DataType::TimestampNtz()};
  std::vector<ColumnPtr> cols;
  for (const TypePtr& t : *types) {
    ColumnBuilder b(t);
    for (int row = 0; row < 3; ++row) {
      if (row == 1) {
        b.AppendNull();
        continue;
      }
      const bool lo = row == 0;
      switch (t->id()) {
        case columnar::TypeId::kBoolean: b.AppendBool(lo); break;
        case columnar::TypeId::kByte: b.Append<int8_t>(lo ? -128 : 127); break;
        case columnar::TypeId::kShort: b.Append<int16_t>(lo ? -32768 : 7); break;
        case columnar::TypeId::kInt:
        case columnar::TypeId::kDate:
          b.Append<int32_t>(lo ? std::numeric_limits<int32_t>::min() : 0);
          break;
        case columnar::TypeId::kFloat: b.Append<float>(lo ? -1.5f : 3e38f); break;
        case columnar::TypeId::kDouble: b.Append<double>(lo ? -1e-300 : 1e300); break;
        case columnar::TypeId::kDecimal: {
          __int128 big = 1;
          for (int i = 0; i < 37; ++i) big *= 10;
          b.Append<__int128>(lo ? -big : 12345);
          break;
        }
        case columnar::TypeId::kString:
        case columnar::TypeId::kBinary: b.AppendString(lo ? "" : std::string("a\0b", 3)); break;
        default: b.Append<int64_t>(lo ? std::numeric_limits<int64_t>::min() : 1); break;
      }
    }
    cols.push_back(b.Finish());
  }
  return cols;
}

std::vector<std::string_view> Views(const std::vector<std::string>& v) {
  return std::vector<std::string_view>(v.begin(), v.end());
}

TEST(KeyCodecTest, RoundTripsEveryPrimitiveTypeWithNulls) {
  std::vector<TypePtr> types;
  std::vector<ColumnPtr> cols = AllTypes(&types);
  ASSERT_OK_AND_ASSIGN(KeyCodec codec, KeyCodec::Make(types));
  std::vector<std::string> encoded;
  codec.EncodeRows(cols, 3, &encoded);
  ASSERT_EQ(encoded.size(), 3u);
  EXPECT_EQ(std::set<std::string>(encoded.begin(), encoded.end()).size(), 3u);
  ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> decoded, codec.Decode(Views(encoded)));
  ASSERT_EQ(decoded.size(), cols.size());
  for (size_t k = 0; k < cols.size(); ++k) {
    ASSERT_OK(columnar::ValidateColumn(*decoded[k]));
    ASSERT_TRUE(decoded[k]->type->Equals(*types[k]));
    for (int64_t row = 0; row < 3; ++row) {
      EXPECT_EQ(CellText(*decoded[k], row), CellText(*cols[k], row))
          << types[k]->ToDdl() << " row " << row;
    }
  }
  // One column at a time: each value round-trips alone too.
  for (size_t k = 0; k < cols.size(); ++k) {
    ASSERT_OK_AND_ASSIGN(KeyCodec one, KeyCodec::Make({types[k]}));
    std::vector<std::string> e;
    one.EncodeRows({cols[k]}, 3, &e);
    ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> d, one.Decode(Views(e)));
    EXPECT_EQ(CellText(*d[0], 0), CellText(*cols[k], 0));
    EXPECT_NE(e[0], e[1]) << "null and a value of " << types[k]->ToDdl();
  }
}

TEST(KeyCodecTest, NaNAndNegativeZeroGroupAsSpark) {
  for (TypePtr t : {DataType::Double(), DataType::Float()}) {
    ColumnBuilder b(t);
    auto put = [&](double v) {
      if (t->id() == columnar::TypeId::kFloat) {
        b.Append<float>(static_cast<float>(v));
      } else {
        b.Append<double>(v);
      }
    };
    put(std::nan(""));
    put(-std::nan("1"));
    put(0.0);
    put(-0.0);
    ColumnPtr c = b.Finish();
    ASSERT_OK_AND_ASSIGN(KeyCodec codec, KeyCodec::Make({t}));
    std::vector<std::string> e;
    codec.EncodeRows({c}, 4, &e);
    EXPECT_EQ(e[0], e[1]);
    EXPECT_EQ(e[2], e[3]);
    EXPECT_NE(e[0], e[2]);
    ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> d, codec.Decode(Views(e)));
    EXPECT_EQ(CellText(*d[0], 1), "NaN");
    EXPECT_EQ(CellText(*d[0], 3), "0");
  }
}

TEST(KeyCodecTest, RoundTripsStructsIncludingNullStructsAndFields) {
  TypePtr window =
      DataType::Struct({{"start", DataType::Timestamp()}, {"end", DataType::Timestamp()}});
  TypePtr nested = DataType::Struct({{"w", window}, {"s", DataType::String()}});
  ColumnBuilder b(nested);
  // {{1, 2}, 'x'}, NULL, {NULL, NULL}, {{NULL, 5}, ''}
  auto window_row = [&](std::optional<int64_t> s, std::optional<int64_t> e) {
    ColumnBuilder* w = b.child(0);
    if (s) {
      w->child(0)->Append<int64_t>(*s);
    } else {
      w->child(0)->AppendNull();
    }
    if (e) {
      w->child(1)->Append<int64_t>(*e);
    } else {
      w->child(1)->AppendNull();
    }
    w->AppendValid();
  };
  window_row(1, 2);
  b.child(1)->AppendString("x");
  b.AppendValid();
  b.AppendNull();
  b.child(0)->AppendNull();
  b.child(1)->AppendNull();
  b.AppendValid();
  window_row(std::nullopt, 5);
  b.child(1)->AppendString("");
  b.AppendValid();
  ColumnPtr c = b.Finish();
  ASSERT_OK_AND_ASSIGN(KeyCodec codec, KeyCodec::Make({nested, DataType::Int()}));
  ColumnBuilder ints(DataType::Int());
  for (int i = 0; i < 4; ++i) ints.Append<int32_t>(i);
  ColumnPtr second = ints.Finish();
  std::vector<std::string> e;
  codec.EncodeRows({c, second}, 4, &e);
  ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> d, codec.Decode(Views(e)));
  ASSERT_OK(columnar::ValidateColumn(*d[0]));
  for (int64_t row = 0; row < 4; ++row) {
    EXPECT_EQ(CellText(*d[0], row), CellText(*c, row));
    EXPECT_EQ(CellText(*d[1], row), CellText(*second, row));
  }
  EXPECT_TRUE(d[0]->IsNull(1));
  EXPECT_FALSE(d[0]->IsNull(2));
  // A null struct and a struct of nulls are different keys.
  std::vector<std::string> alone;
  ASSERT_OK_AND_ASSIGN(KeyCodec one, KeyCodec::Make({nested}));
  one.EncodeRows({c}, 4, &alone);
  EXPECT_NE(alone[1], alone[2]);
}

TEST(KeyCodecTest, EncodingIsTheDocumentedOne) {
  // docs/format/aggregate-state.md: (NULL, 'ab', 7 as INT).
  ColumnBuilder s(DataType::String());
  s.AppendNull();
  ColumnBuilder t(DataType::String());
  t.AppendString("ab");
  ColumnBuilder i(DataType::Int());
  i.Append<int32_t>(7);
  ASSERT_OK_AND_ASSIGN(KeyCodec codec,
                       KeyCodec::Make({DataType::String(), DataType::String(), DataType::Int()}));
  std::vector<std::string> e;
  codec.EncodeRows({s.Finish(), t.Finish(), i.Finish()}, 1, &e);
  EXPECT_EQ(e[0], std::string("\0\1\2\0\0\0ab\1\7\0\0\0", 13));
}

TEST(KeyCodecTest, EncodeRowsAppendsAndNoKeysGiveEmptyStrings) {
  ColumnBuilder b(DataType::Long());
  b.Append<int64_t>(5);
  b.Append<int64_t>(6);
  ASSERT_OK_AND_ASSIGN(KeyCodec codec, KeyCodec::Make({DataType::Long()}));
  std::vector<std::string> out = {"kept"};
  codec.EncodeRows({b.Finish()}, 2, &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "kept");
  ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> d, codec.Decode({out[1], out[2]}));
  EXPECT_EQ(CellText(*d[0], 1), "6");
  ASSERT_OK_AND_ASSIGN(KeyCodec none, KeyCodec::Make({}));
  std::vector<std::string> empty;
  none.EncodeRows({}, 2, &empty);
  EXPECT_EQ(empty, (std::vector<std::string>{"", ""}));
  ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> no_columns, none.Decode({empty[0]}));
  EXPECT_TRUE(no_columns.empty());
}

TEST(KeyCodecTest, MalformedBytesAreCorruption) {
  ASSERT_OK_AND_ASSIGN(KeyCodec codec, KeyCodec::Make({DataType::Int(), DataType::String()}));
  for (std::string bad :
       {std::string(""), std::string("\1\7\0", 3), std::string("\2", 1),
        std::string("\1\7\0\0\0\1\5\0\0\0ab", 12), std::string("\1\7\0\0\0\0x", 7)}) {
    std::vector<std::string_view> one = {bad};
    EXPECT_RAISES(Corruption, codec.Decode(one)) << "bytes of size " << bad.size();
  }
  ASSERT_OK_AND_ASSIGN(KeyCodec b, KeyCodec::Make({DataType::Boolean()}));
  std::string bad_bool("\1\2", 2);
  EXPECT_RAISES(Corruption, b.Decode({bad_bool}));
}

TEST(KeyCodecTest, UnsupportedTypesAreNamed) {
  auto r = KeyCodec::Make({DataType::Array(DataType::Int())});
  ASSERT_RAISES(NotSupported, r);
  EXPECT_NE(r.status().ToString().find("ARRAY<INT>"), std::string::npos);
}

}  // namespace
}  // namespace silt::exec
