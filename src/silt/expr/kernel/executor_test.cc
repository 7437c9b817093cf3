// UnaryExecutor / BinaryExecutor against a naive row-by-row reference
// computed here: every path (all valid, some nulls, constant left / right /
// both, a null constant, an op making NULLs, an op failing at row k, empty
// batches, bool and string outputs) over batches long enough to cross
// 64-row validity words.
#include "silt/expr/kernel/executor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypePtr;

template <typename T>
using Values = std::vector<std::optional<T>>;

template <typename T>
ColumnPtr Column(const TypePtr& type, const Values<T>& values) {
  columnar::ColumnBuilder builder(type);
  for (const auto& v : values) {
    if (!v) {
      builder.AppendNull();
    } else if constexpr (std::is_same_v<T, bool>) {
      builder.AppendBool(*v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      builder.AppendString(*v);
    } else {
      builder.Append<T>(*v);
    }
  }
  return builder.Finish();
}

// `n` values; row i is NULL when null_every > 0 and i % null_every == 0.
Values<int32_t> Ints(int64_t n, int null_every, int32_t seed = 7) {
  Values<int32_t> out;
  for (int64_t i = 0; i < n; ++i) {
    if (null_every > 0 && i % null_every == 0) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(static_cast<int32_t>((i * 2654435761u + seed) % 201) - 100);
    }
  }
  return out;
}

Values<std::string> Strings(int64_t n, int null_every) {
  Values<std::string> out;
  for (int64_t i = 0; i < n; ++i) {
    if (null_every > 0 && i % null_every == 0) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(std::string(static_cast<size_t>(i % 5), static_cast<char>('a' + i % 26)));
    }
  }
  return out;
}

// The column's rows as optionals.
template <typename T>
Values<T> Read(const columnar::Column& c) {
  Values<T> out;
  for (int64_t row = 0; row < c.length; ++row) {
    if (c.IsNull(row)) {
      out.push_back(std::nullopt);
    } else if constexpr (std::is_same_v<T, bool>) {
      out.push_back(c.BoolValue(row));
    } else if constexpr (std::is_same_v<T, std::string>) {
      out.push_back(std::string(c.StringValue(row)));
    } else {
      out.push_back(c.Value<T>(row));
    }
  }
  return out;
}

template <typename T>
void ExpectColumn(const Result<ColumnPtr>& got, const Values<T>& want) {
  ASSERT_OK(got.status());
  const columnar::Column& c = **got;
  ASSERT_OK(columnar::ValidateColumn(c));
  EXPECT_EQ(c.length, static_cast<int64_t>(want.size()));
  int64_t nulls = 0;
  for (const auto& v : want) nulls += v ? 0 : 1;
  EXPECT_EQ(c.null_count, nulls);
  EXPECT_EQ(Read<T>(c), want);
}

// Row `row` of a Datum's values (row 0 of a constant).
template <typename T>
std::optional<T> At(const Values<T>& values, bool constant, int64_t row) {
  return values[constant ? 0 : static_cast<size_t>(row)];
}

Datum Flat(ColumnPtr c) { return Datum{std::move(c), false}; }
Datum Constant(ColumnPtr c) { return Datum{std::move(c), true}; }

// A wrapping op that is total for every int32 (also run on NULL rows).
int32_t Mix(int32_t x, int32_t y) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) * 3u + static_cast<uint32_t>(y));
}

struct Shape {
  const char* name;
  bool left_constant;
  bool right_constant;
};
constexpr Shape kShapes[] = {
    {"flat/flat", false, false},
    {"constant/flat", true, false},
    {"flat/constant", false, true},
    {"constant/constant", true, true},
};

TEST(ExecutorTest, UnaryFixedMatchesReference) {
  for (int64_t n : {0, 1, 63, 64, 65, 200}) {
    for (int null_every : {0, 3, 1}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " null_every=" << null_every);
      Values<int32_t> in = Ints(n, null_every);
      Values<int64_t> want;
      for (const auto& v : in) {
        want.push_back(v ? std::optional<int64_t>(int64_t{*v} * *v) : std::nullopt);
      }
      auto got = UnaryExecutor<int32_t, int64_t>::Execute(DataType::Long(),
                                                          Flat(Column(DataType::Int(), in)), n,
                                                          [](int32_t x) { return int64_t{x} * x; });
      ExpectColumn(got, want);
    }
  }
}

TEST(ExecutorTest, UnaryConstantComputesOnceForEveryRow) {
  int calls = 0;
  auto op = [&calls](int32_t x) {
    ++calls;
    return x + 1;
  };
  auto got = UnaryExecutor<int32_t, int32_t>::Execute(
      DataType::Int(), Constant(Column<int32_t>(DataType::Int(), {41})), 100, op);
  ExpectColumn(got, Values<int32_t>(100, 42));
  EXPECT_EQ(calls, 1);
}

TEST(ExecutorTest, NullConstantMakesEveryRowNullWithoutRunningTheOp) {
  int calls = 0;
  auto op = [&calls](int32_t x, int32_t y) {
    ++calls;
    return x + y;
  };
  auto null_constant = Constant(Column<int32_t>(DataType::Int(), {std::nullopt}));
  auto flat = Flat(Column(DataType::Int(), Ints(70, 0)));
  ExpectColumn(BinaryExecutor<int32_t, int32_t, int32_t>::Execute(DataType::Int(), flat,
                                                                  null_constant, 70, op),
               Values<int32_t>(70, std::nullopt));
  ExpectColumn(BinaryExecutor<int32_t, int32_t, int32_t>::Execute(DataType::Int(), null_constant,
                                                                  flat, 70, op),
               Values<int32_t>(70, std::nullopt));
  auto checked = [&calls](int32_t x, int32_t y, RowContext&) {
    ++calls;
    return x + y;
  };
  ExpectColumn(BinaryExecutor<int32_t, int32_t, int32_t>::ExecuteChecked(
                   DataType::Int(), flat, null_constant, 70, checked),
               Values<int32_t>(70, std::nullopt));
  EXPECT_EQ(calls, 0);
}

TEST(ExecutorTest, BinaryFixedMatchesReferenceInEveryShape) {
  for (const Shape& shape : kShapes) {
    for (int64_t n : {0, 1, 64, 130}) {
      for (int null_every : {0, 2, 5}) {
        SCOPED_TRACE(::testing::Message() << shape.name << " n=" << n << " nulls=" << null_every);
        const int64_t rows_a = shape.left_constant ? 1 : n;
        const int64_t rows_b = shape.right_constant ? 1 : n;
        if ((rows_a == 0 || rows_b == 0) && n > 0) continue;
        // A constant is valid here (null constants have their own test).
        Values<int32_t> a = Ints(rows_a, shape.left_constant ? 0 : null_every, 3);
        Values<int32_t> b = Ints(rows_b, shape.right_constant ? 0 : null_every + 1, 11);
        if (n == 0 && (shape.left_constant || shape.right_constant)) continue;
        Datum da{Column(DataType::Int(), a), shape.left_constant};
        Datum db{Column(DataType::Int(), b), shape.right_constant};
        Values<int32_t> want;
        Values<bool> want_less;
        for (int64_t row = 0; row < n; ++row) {
          auto x = At(a, shape.left_constant, row);
          auto y = At(b, shape.right_constant, row);
          want.push_back(x && y ? std::optional<int32_t>(Mix(*x, *y)) : std::nullopt);
          want_less.push_back(x && y ? std::optional<bool>(*x < *y) : std::nullopt);
        }
        ExpectColumn(
            BinaryExecutor<int32_t, int32_t, int32_t>::Execute(DataType::Int(), da, db, n, Mix),
            want);
        ExpectColumn(
            BinaryExecutor<int32_t, int32_t, bool>::Execute(
                DataType::Boolean(), da, db, n, [](int32_t x, int32_t y) { return x < y; }),
            want_less);
      }
    }
  }
}

// x / y, NULL when y is 0, failing on y == -100 (an "ANSI" error naming
// the row): the checked op in every shape.
struct CheckedDivide {
  int* calls;
  int32_t operator()(int32_t x, int32_t y, RowContext& ctx) const {
    ++*calls;
    if (y == 0) {
      ctx.SetNull();
      return 0;
    }
    if (y == -100) {
      ctx.Fail(Status::InvalidArgument("bad divisor (row ", ctx.row(), ")"));
      return 0;
    }
    return x / y;
  }
};

TEST(ExecutorTest, CheckedOpMakesNullsAndRunsOnValidRowsOnly) {
  for (const Shape& shape : kShapes) {
    for (int null_every : {0, 4}) {
      SCOPED_TRACE(::testing::Message() << shape.name << " nulls=" << null_every);
      const int64_t n = 150;
      Values<int32_t> a = Ints(shape.left_constant ? 1 : n, shape.left_constant ? 0 : null_every);
      Values<int32_t> b;
      for (int64_t row = 0; row < (shape.right_constant ? 1 : n); ++row) {
        if (!shape.right_constant && null_every > 0 && row % (null_every + 3) == 1) {
          b.push_back(std::nullopt);
        } else {
          b.push_back(static_cast<int32_t>(shape.right_constant ? 7 : row % 9 - 4));
        }
      }
      Datum da{Column(DataType::Int(), a), shape.left_constant};
      Datum db{Column(DataType::Int(), b), shape.right_constant};
      Values<int32_t> want;
      int valid_rows = 0;
      for (int64_t row = 0; row < n; ++row) {
        auto x = At(a, shape.left_constant, row);
        auto y = At(b, shape.right_constant, row);
        if (!x || !y) {
          want.push_back(std::nullopt);
          continue;
        }
        ++valid_rows;
        want.push_back(*y == 0 ? std::nullopt : std::optional<int32_t>(*x / *y));
      }
      int calls = 0;
      ExpectColumn(BinaryExecutor<int32_t, int32_t, int32_t>::ExecuteChecked(
                       DataType::Int(), da, db, n, CheckedDivide{&calls}),
                   want);
      const bool once = shape.left_constant && shape.right_constant;
      EXPECT_EQ(calls, once ? 1 : valid_rows);
    }
  }
}

TEST(ExecutorTest, CheckedOpFailingAtRowKReturnsItsStatus) {
  const int64_t n = 100;
  for (int64_t k : {0, 5, 63, 64, 99}) {
    Values<int32_t> b = Ints(n, 0);
    for (auto& v : b) {
      if (*v == 0 || *v == -100) v = 1;
    }
    b[static_cast<size_t>(k)] = -100;
    // A null row before k must not stop or shift anything.
    if (k > 2) b[1] = std::nullopt;
    int calls = 0;
    auto got = BinaryExecutor<int32_t, int32_t, int32_t>::ExecuteChecked(
        DataType::Int(), Flat(Column(DataType::Int(), Ints(n, 0))),
        Flat(Column(DataType::Int(), b)), n, CheckedDivide{&calls});
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().message(), "bad divisor (row " + std::to_string(k) + ")");
  }
  // Both constant: the error is row 0's.
  int calls = 0;
  auto got = BinaryExecutor<int32_t, int32_t, int32_t>::ExecuteChecked(
      DataType::Int(), Constant(Column<int32_t>(DataType::Int(), {1})),
      Constant(Column<int32_t>(DataType::Int(), {-100})), 10, CheckedDivide{&calls});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "bad divisor (row 0)");
}

TEST(ExecutorTest, CheckedConstantNullHoldsForEveryRow) {
  int calls = 0;
  auto got = BinaryExecutor<int32_t, int32_t, int32_t>::ExecuteChecked(
      DataType::Int(), Constant(Column<int32_t>(DataType::Int(), {5})),
      Constant(Column<int32_t>(DataType::Int(), {0})), 9, CheckedDivide{&calls});
  ExpectColumn(got, Values<int32_t>(9, std::nullopt));
  auto unary = UnaryExecutor<int32_t, int32_t>::ExecuteChecked(
      DataType::Int(), Constant(Column<int32_t>(DataType::Int(), {0})), 9,
      [](int32_t x, RowContext& ctx) {
        if (x == 0) ctx.SetNull();
        return x;
      });
  ExpectColumn(unary, Values<int32_t>(9, std::nullopt));
}

TEST(ExecutorTest, BoolInputAndCheckedBoolOutput) {
  const int64_t n = 77;
  Values<bool> in;
  for (int64_t row = 0; row < n; ++row) {
    in.push_back(row % 6 == 0 ? std::nullopt : std::optional<bool>(row % 3 == 1));
  }
  Values<bool> want_not;
  Values<bool> want_checked;
  for (int64_t row = 0; row < n; ++row) {
    auto v = in[static_cast<size_t>(row)];
    want_not.push_back(v ? std::optional<bool>(!*v) : std::nullopt);
    want_checked.push_back(v && row % 5 != 0 ? std::optional<bool>(*v) : std::nullopt);
  }
  Datum d = Flat(Column(DataType::Boolean(), in));
  ExpectColumn(
      UnaryExecutor<bool, bool>::Execute(DataType::Boolean(), d, n, [](bool x) { return !x; }),
      want_not);
  ExpectColumn(UnaryExecutor<bool, bool>::ExecuteChecked(DataType::Boolean(), d, n,
                                                         [](bool x, RowContext& ctx) {
                                                           if (ctx.row() % 5 == 0) ctx.SetNull();
                                                           return x;
                                                         }),
               want_checked);
}

TEST(ExecutorTest, StringInputFixedOutput) {
  for (int null_every : {0, 3}) {
    const int64_t n = 90;
    Values<std::string> in = Strings(n, null_every);
    Values<int32_t> want;
    for (const auto& v : in) {
      want.push_back(v ? std::optional<int32_t>(static_cast<int32_t>(v->size())) : std::nullopt);
    }
    ExpectColumn(UnaryExecutor<std::string_view, int32_t>::Execute(
                     DataType::Int(), Flat(Column(DataType::String(), in)), n,
                     [](std::string_view s) { return static_cast<int32_t>(s.size()); }),
                 want);
  }
}

TEST(ExecutorTest, StringOutputMatchesReference) {
  for (int64_t n : {0, 1, 65, 200}) {
    for (int null_every : {0, 2, 7}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " nulls=" << null_every);
      Values<std::string> in = Strings(n, null_every);
      Values<std::string> want;
      for (const auto& v : in) {
        want.push_back(v ? std::optional<std::string>("<" + *v + ">") : std::nullopt);
      }
      auto got = UnaryExecutor<std::string_view, std::string_view>::Execute(
          DataType::String(), Flat(Column(DataType::String(), in)), n,
          [](std::string_view s, StringAppender& out) {
            out.Push('<');
            char* p = out.Extend(static_cast<int64_t>(s.size()));
            // An empty value's data() may be null (memcpy from null is UB).
            if (!s.empty()) std::memcpy(p, s.data(), s.size());
            out.Push('>');
          });
      ExpectColumn(got, want);
    }
  }
}

TEST(ExecutorTest, CheckedStringOutputDropsTheBytesOfNullRows) {
  const int64_t n = 130;
  Values<std::string> text = Strings(n, 4);
  Values<int32_t> times = Ints(n, 9);
  Values<std::string> want;
  for (int64_t row = 0; row < n; ++row) {
    auto s = text[static_cast<size_t>(row)];
    auto t = times[static_cast<size_t>(row)];
    if (!s || !t || *t < 0) {
      want.push_back(std::nullopt);
      continue;
    }
    std::string r;
    for (int32_t i = 0; i < *t % 4; ++i) r += *s;
    want.push_back(r);
  }
  auto repeat = [](std::string_view s, int32_t t, StringAppender& out, RowContext& ctx) {
    for (int32_t i = 0; i < (t < 0 ? 2 : t % 4); ++i) out.Append(s);
    if (t < 0) ctx.SetNull();  // after appending: the bytes must go
  };
  ExpectColumn(BinaryExecutor<std::string_view, int32_t, std::string_view>::ExecuteChecked(
                   DataType::String(), Flat(Column(DataType::String(), text)),
                   Flat(Column(DataType::Int(), times)), n, repeat),
               want);
}

TEST(ExecutorTest, StringOutputWithConstants) {
  const int64_t n = 70;
  Values<std::string> text = Strings(n, 5);
  auto concat = [](std::string_view a, std::string_view b, StringAppender& out) {
    out.Append(a);
    out.Append(b);
  };
  using Concat = BinaryExecutor<std::string_view, std::string_view, std::string_view>;
  Datum flat = Flat(Column(DataType::String(), text));
  Datum dash = Constant(Column<std::string>(DataType::String(), {"-"}));
  Values<std::string> want_right;
  Values<std::string> want_left;
  for (const auto& v : text) {
    want_right.push_back(v ? std::optional<std::string>(*v + "-") : std::nullopt);
    want_left.push_back(v ? std::optional<std::string>("-" + *v) : std::nullopt);
  }
  ExpectColumn(Concat::Execute(DataType::String(), flat, dash, n, concat), want_right);
  ExpectColumn(Concat::Execute(DataType::String(), dash, flat, n, concat), want_left);
  ExpectColumn(Concat::Execute(DataType::String(), dash, dash, 4, concat),
               Values<std::string>(4, std::string("--")));
  ExpectColumn(
      Concat::Execute(DataType::String(), dash,
                      Constant(Column<std::string>(DataType::String(), {std::nullopt})), 4, concat),
      Values<std::string>(4, std::nullopt));
}

}  // namespace
}  // namespace silt::expr
