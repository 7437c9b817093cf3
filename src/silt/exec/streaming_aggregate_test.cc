#include "silt/exec/streaming_aggregate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

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

// Random rows: keys (device STRING, window STRUCT<start, end>, reading
// DOUBLE with NaN and -0.0) and arguments of every family, with nulls.
struct Rows {
  std::vector<TypePtr> key_types;
  std::vector<ColumnPtr> keys;
  // Arguments: INT, DOUBLE (integral values, so sums are exact), DOUBLE with
  // NaN/-0.0, DECIMAL(10,2), STRING, STRUCT<a: INT, b: STRING>.
  std::vector<ColumnPtr> args;
  int64_t n = 0;
};

Rows MakeRows(uint32_t seed, int64_t n) {
  std::mt19937 rng(seed);
  auto pick = [&](int k) { return static_cast<int>(rng() % static_cast<uint32_t>(k)); };
  Rows r;
  r.n = n;
  TypePtr window =
      DataType::Struct({{"start", DataType::Timestamp()}, {"end", DataType::Timestamp()}});
  r.key_types = {DataType::String(), window, DataType::Double()};
  ColumnBuilder device(DataType::String()), win(window), reading(DataType::Double());
  ColumnBuilder ints(DataType::Int()), dbl(DataType::Double()), odd(DataType::Double()),
      dec(DataType::Decimal(10, 2)), str(DataType::String());
  TypePtr pair = DataType::Struct({{"a", DataType::Int()}, {"b", DataType::String()}});
  ColumnBuilder st(pair);
  const double odd_values[] = {std::nan(""), -0.0, 0.0, 1.5, -2.25, 1e300};
  for (int64_t i = 0; i < n; ++i) {
    int d = pick(4);
    if (d == 3) {
      device.AppendNull();
    } else {
      device.AppendString(d == 0 ? "" : d == 1 ? "dev-a" : "dev-b");
    }
    int w = pick(3);
    if (w == 2) {
      win.AppendNull();
    } else {
      win.child(0)->Append<int64_t>(w * 60000000);
      win.child(1)->Append<int64_t>((w + 1) * 60000000);
      win.AppendValid();
    }
    int k = pick(4);
    reading.Append<double>(k == 0 ? std::nan("") : k == 1 ? -0.0 : k == 2 ? 0.0 : 1.0);
    if (pick(5) == 0) {
      ints.AppendNull();
      dbl.AppendNull();
      dec.AppendNull();
    } else {
      ints.Append<int32_t>(pick(2001) - 1000);
      dbl.Append<double>(pick(201) - 100);
      dec.Append<__int128>(pick(200001) - 100000);
    }
    if (pick(6) == 0) {
      odd.AppendNull();
      str.AppendNull();
      st.AppendNull();
    } else {
      odd.Append<double>(odd_values[pick(6)]);
      str.AppendString(std::string(static_cast<size_t>(pick(3)), static_cast<char>('a' + pick(3))));
      if (pick(4) == 0) {
        st.child(0)->AppendNull();
      } else {
        st.child(0)->Append<int32_t>(pick(3));
      }
      st.child(1)->AppendString(pick(2) ? "x" : "");
      st.AppendValid();
    }
  }
  r.keys = {device.Finish(), win.Finish(), reading.Finish()};
  r.args = {ints.Finish(), dbl.Finish(), odd.Finish(), dec.Finish(), str.Finish(), st.Finish()};
  return r;
}

// Every aggregate over the argument columns it takes; arg index -1 is count(*).
struct Agg {
  AggregateSpec spec;
  int arg;
  bool approximate;  // floating-point results that depend on the merge order
};

std::vector<Agg> AllAggregates(const Rows& r) {
  std::vector<Agg> aggs = {{{AggKind::kCountStar, nullptr}, -1, false}};
  for (int a = 0; a < static_cast<int>(r.args.size()); ++a) {
    TypePtr t = r.args[static_cast<size_t>(a)]->type;
    const bool numeric = t->is_numeric();
    const bool exact_sum = a != 2;  // the NaN/1e300 column sums inexactly
    aggs.push_back({{AggKind::kCount, t}, a, false});
    aggs.push_back({{AggKind::kCountDistinct, t}, a, false});
    aggs.push_back({{AggKind::kFirst, t}, a, false});
    aggs.push_back({{AggKind::kFirst, t, true}, a, false});
    aggs.push_back({{AggKind::kLast, t}, a, false});
    aggs.push_back({{AggKind::kLast, t, true}, a, false});
    aggs.push_back({{AggKind::kCollectList, t}, a, false});
    aggs.push_back({{AggKind::kCollectSet, t}, a, false});
    if (t->id() != columnar::TypeId::kStruct) {
      aggs.push_back({{AggKind::kMin, t}, a, false});
      aggs.push_back({{AggKind::kMax, t}, a, false});
    }
    if (numeric && exact_sum) {
      aggs.push_back({{AggKind::kSum, t}, a, false});
      aggs.push_back({{AggKind::kAvg, t}, a, t->id() != columnar::TypeId::kDecimal});
      for (AggKind k :
           {AggKind::kStddevSamp, AggKind::kStddevPop, AggKind::kVarSamp, AggKind::kVarPop}) {
        aggs.push_back({{k, t}, a, true});
      }
    }
  }
  return aggs;
}

std::vector<ColumnPtr> Slice(const std::vector<ColumnPtr>& cols, int64_t from, int64_t n) {
  std::vector<ColumnPtr> out;
  for (const ColumnPtr& c : cols) out.push_back(c ? columnar::SliceColumn(*c, from, n) : nullptr);
  return out;
}

// key text -> the aggregate values' texts.
using Table = std::map<std::string, std::vector<std::string>>;

Table ToTable(const columnar::RecordBatch& b, size_t num_keys) {
  Table t;
  for (int64_t row = 0; row < b.num_rows; ++row) {
    std::string key;
    for (size_t k = 0; k < num_keys; ++k) key += CellText(*b.columns[k], row) + "|";
    std::vector<std::string> values;
    for (size_t c = num_keys; c < b.columns.size(); ++c) {
      values.push_back(CellText(*b.columns[c], row));
    }
    EXPECT_TRUE(t.emplace(key, values).second) << "duplicate group " << key;
  }
  return t;
}

std::vector<std::string> Names(size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("c" + std::to_string(i));
  return names;
}

bool Near(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (a == "NULL" || b == "NULL") return false;
  double x = std::strtod(a.c_str(), nullptr), y = std::strtod(b.c_str(), nullptr);
  return std::fabs(x - y) <= 1e-9 * std::max(1.0, std::fabs(x));
}

// Streams `r` through StreamingAggregator in random micro-batches (each in
// random chunks) over an in-memory state store and finalizes every group.
Table Stream(const Rows& r, const std::vector<Agg>& aggs, std::mt19937* rng) {
  std::vector<AggregateSpec> specs;
  for (const Agg& a : aggs) specs.push_back(a.spec);
  auto made = StreamingAggregator::Make(r.key_types, specs);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  StreamingAggregator& agg = **made;
  std::map<std::string, std::string> store;
  std::vector<ColumnPtr> arg_cols;
  for (const Agg& a : aggs)
    arg_cols.push_back(a.arg < 0 ? nullptr : r.args[static_cast<size_t>(a.arg)]);
  int64_t row = 0;
  while (row < r.n) {
    int64_t batch = std::min<int64_t>(r.n - row, 1 + static_cast<int64_t>((*rng)() % 60));
    int64_t end = row + batch;
    while (row < end) {
      int64_t chunk = std::min<int64_t>(end - row, 1 + static_cast<int64_t>((*rng)() % 25));
      EXPECT_OK(agg.Consume(Slice(r.keys, row, chunk), Slice(arg_cols, row, chunk), chunk));
      row += chunk;
    }
    for (int64_t g = 0; g < agg.num_groups(); ++g) {
      std::string key(agg.group_key(g));
      auto it = store.find(key);
      if (it != store.end()) EXPECT_OK(agg.MergeStored(g, it->second));
      std::string state;
      agg.SerializeState(g, &state);
      store[key] = std::move(state);
    }
    agg.Reset();
  }
  std::vector<std::string_view> keys, states;
  for (const auto& [k, v] : store) {
    keys.push_back(k);
    states.push_back(v);
  }
  auto out = agg.Finalize(keys, states, Names(r.key_types.size() + aggs.size()));
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_OK(columnar::ValidateBatch(**out));
  return ToTable(**out, r.key_types.size());
}

TEST(StreamingAggregatorTest, AnySplitIntoBatchesMatchesOneHashAggregatorPass) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    Rows r = MakeRows(seed, 400);
    std::vector<Agg> aggs = AllAggregates(r);
    std::vector<AggregateSpec> specs;
    std::vector<ColumnPtr> arg_cols;
    for (const Agg& a : aggs) {
      specs.push_back(a.spec);
      arg_cols.push_back(a.arg < 0 ? nullptr : r.args[static_cast<size_t>(a.arg)]);
    }
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<HashAggregator> hash,
                         HashAggregator::Make(r.key_types, specs));
    ASSERT_OK(hash->Consume(r.keys, arg_cols, r.n));
    ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr expected_batch,
                         hash->Finish(Names(r.key_types.size() + aggs.size())));
    Table expected = ToTable(*expected_batch, r.key_types.size());
    std::mt19937 rng(seed * 7919);
    for (int split = 0; split < 4; ++split) {
      Table got = Stream(r, aggs, &rng);
      ASSERT_EQ(got.size(), expected.size()) << "seed " << seed;
      for (const auto& [key, values] : expected) {
        auto it = got.find(key);
        ASSERT_NE(it, got.end()) << key;
        for (size_t a = 0; a < aggs.size(); ++a) {
          const bool ok =
              aggs[a].approximate ? Near(it->second[a], values[a]) : it->second[a] == values[a];
          EXPECT_TRUE(ok) << "seed " << seed << " group " << key << " aggregate " << a << " ("
                          << AggKindName(aggs[a].spec.kind) << " of arg " << aggs[a].arg
                          << "): streamed " << it->second[a] << ", one pass " << values[a];
        }
      }
    }
  }
}

TEST(StreamingAggregatorTest, MalformedStatesAreCorruption) {
  Rows r = MakeRows(3, 50);
  std::vector<Agg> aggs = AllAggregates(r);
  std::vector<AggregateSpec> specs;
  std::vector<ColumnPtr> arg_cols;
  for (const Agg& a : aggs) {
    specs.push_back(a.spec);
    arg_cols.push_back(a.arg < 0 ? nullptr : r.args[static_cast<size_t>(a.arg)]);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamingAggregator> agg,
                       StreamingAggregator::Make(r.key_types, specs));
  ASSERT_OK(agg->Consume(r.keys, arg_cols, r.n));
  ASSERT_GE(agg->num_groups(), 2);  // group 1 takes the merges
  std::string state;
  agg->SerializeState(0, &state);
  std::string key(agg->group_key(0));
  EXPECT_EQ(static_cast<uint8_t>(state[0]), kAggregateStateFormatV1);
  const std::vector<std::string> names = Names(r.key_types.size() + aggs.size());
  ASSERT_OK(agg->Finalize({key}, {state}, names).status());
  // Every strict prefix, trailing bytes and a foreign format byte.
  for (size_t len = 0; len < state.size(); ++len) {
    std::string_view prefix(state.data(), len);
    EXPECT_RAISES(Corruption, agg->MergeStored(1, prefix)) << "prefix " << len;
    EXPECT_RAISES(Corruption, agg->Finalize({key}, {prefix}, names)) << "prefix " << len;
  }
  EXPECT_RAISES(Corruption, agg->MergeStored(1, state + "x"));
  std::string other = state;
  other[0] = 2;
  EXPECT_RAISES(Corruption, agg->MergeStored(1, other));
  EXPECT_RAISES(Corruption, agg->Finalize({key.substr(1)}, {state}, names));
}

// Random byte flips of a valid state and key: each read is OK or Corruption,
// never a crash (run under make asan for the memory checks).
TEST(StreamingAggregatorTest, MutatedStatesAndKeysNeverCrash) {
  Rows r = MakeRows(5, 40);
  std::vector<Agg> aggs = AllAggregates(r);
  std::vector<AggregateSpec> specs;
  std::vector<ColumnPtr> arg_cols;
  for (const Agg& a : aggs) {
    specs.push_back(a.spec);
    arg_cols.push_back(a.arg < 0 ? nullptr : r.args[static_cast<size_t>(a.arg)]);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamingAggregator> agg,
                       StreamingAggregator::Make(r.key_types, specs));
  ASSERT_OK(agg->Consume(r.keys, arg_cols, r.n));
  ASSERT_GE(agg->num_groups(), 2);  // group 1 takes the merges
  std::string state;
  agg->SerializeState(0, &state);
  const std::string key(agg->group_key(0));
  const std::vector<std::string> names = Names(r.key_types.size() + aggs.size());
  std::mt19937 rng(99);
  for (int round = 0; round < 300; ++round) {
    std::string s = state, k = key;
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
      s[rng() % s.size()] = static_cast<char>(rng());
      k[rng() % k.size()] = static_cast<char>(rng());
    }
    for (const Status& st : {agg->MergeStored(1, s), agg->Finalize({k}, {s}, names).status()}) {
      EXPECT_TRUE(st.ok() || st.IsCorruption()) << st.ToString();
    }
  }
}

TEST(StreamingAggregatorTest, FirstKeepsStoredAndLastKeepsBatch) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamingAggregator> agg,
                       StreamingAggregator::Make({}, {{AggKind::kFirst, DataType::Int()},
                                                      {AggKind::kLast, DataType::Int()},
                                                      {AggKind::kCollectList, DataType::Int()},
                                                      {AggKind::kCountStar, nullptr}}));
  auto ints = [](std::vector<int32_t> v) {
    ColumnBuilder b(DataType::Int());
    for (int32_t x : v) b.Append<int32_t>(x);
    return b.Finish();
  };
  ColumnPtr first = ints({1, 2});
  ASSERT_OK(agg->Consume({}, {first, first, first, nullptr}, 2));
  ASSERT_EQ(agg->num_groups(), 1);
  EXPECT_EQ(agg->group_key(0), "");
  std::string stored;
  agg->SerializeState(0, &stored);
  agg->Reset();
  EXPECT_EQ(agg->num_groups(), 0);
  ColumnPtr second = ints({3, 4});
  ASSERT_OK(agg->Consume({}, {second, second, second, nullptr}, 2));
  ASSERT_OK(agg->MergeStored(0, stored));
  std::string merged;
  agg->SerializeState(0, &merged);
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out,
                       agg->Finalize({""}, {merged}, {"f", "l", "c", "n"}));
  EXPECT_EQ(CellText(*out->column(0), 0), "1");
  EXPECT_EQ(CellText(*out->column(1), 0), "4");
  EXPECT_EQ(CellText(*out->column(2), 0), "[1, 2, 3, 4]");
  EXPECT_EQ(CellText(*out->column(3), 0), "4");
  EXPECT_FALSE(out->schema->field(3).nullable);
}

TEST(StreamingAggregatorTest, MergeStatesPutsTheEarlierStateFirst) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamingAggregator> agg,
                       StreamingAggregator::Make({}, {{AggKind::kFirst, DataType::Int()},
                                                      {AggKind::kLast, DataType::Int()},
                                                      {AggKind::kCollectList, DataType::Int()},
                                                      {AggKind::kCountStar, nullptr},
                                                      {AggKind::kSum, DataType::Int()},
                                                      {AggKind::kMin, DataType::Int()}}));
  auto state_of = [&](std::vector<int32_t> v) {
    ColumnBuilder b(DataType::Int());
    for (int32_t x : v) b.Append<int32_t>(x);
    ColumnPtr c = b.Finish();
    EXPECT_OK(agg->Consume({}, {c, c, c, nullptr, c, c}, static_cast<int64_t>(v.size())));
    std::string out;
    agg->SerializeState(0, &out);
    agg->Reset();
    return out;
  };
  const std::string a = state_of({5, 2}), b = state_of({7}), c = state_of({1, 9});
  // Sessions [a][b][c] bridged by new rows: a then b then c, in either
  // grouping of the merges.
  std::string ab, abc, bc, a_bc;
  ASSERT_OK(agg->MergeStates(a, b, &ab));
  ASSERT_OK(agg->MergeStates(ab, c, &abc));
  ASSERT_OK(agg->MergeStates(b, c, &bc));
  ASSERT_OK(agg->MergeStates(a, bc, &a_bc));
  EXPECT_EQ(abc, a_bc);
  EXPECT_EQ(agg->num_groups(), 0);
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out,
                       agg->Finalize({""}, {abc}, {"f", "l", "c", "n", "s", "m"}));
  EXPECT_EQ(CellText(*out->column(0), 0), "5");
  EXPECT_EQ(CellText(*out->column(1), 0), "9");
  EXPECT_EQ(CellText(*out->column(2), 0), "[5, 2, 7, 1, 9]");
  EXPECT_EQ(CellText(*out->column(3), 0), "5");
  EXPECT_EQ(CellText(*out->column(4), 0), "24");
  EXPECT_EQ(CellText(*out->column(5), 0), "1");
  std::string ignored;
  EXPECT_RAISES(Corruption, agg->MergeStates(a, "", &ignored));
  EXPECT_RAISES(Corruption, agg->MergeStates(a.substr(0, a.size() - 1), b, &ignored));
  EXPECT_RAISES(Corruption, agg->MergeStates(a, b + "x", &ignored));
}

TEST(StreamingAggregatorTest, StateIsTheDocumentedOne) {
  // docs/format/aggregate-state.md, "Aggregate states".
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamingAggregator> agg,
                       StreamingAggregator::Make({}, {{AggKind::kCountStar, nullptr},
                                                      {AggKind::kSum, DataType::Int()},
                                                      {AggKind::kMax, DataType::String()}}));
  ColumnBuilder x(DataType::Int()), s(DataType::String());
  x.Append<int32_t>(3);
  x.Append<int32_t>(4);
  s.AppendString("b");
  s.AppendString("a");
  ASSERT_OK(agg->Consume({}, {nullptr, x.Finish(), s.Finish()}, 2));
  std::string state;
  agg->SerializeState(0, &state);
  std::string expected("\1", 1);
  expected += std::string("\2\0\0\0\0\0\0\0", 8);
  expected += std::string("\2\0\0\0\0\0\0\0\7\0\0\0\0\0\0\0", 16);
  expected += std::string("\1\1\0\0\0b", 6);
  EXPECT_EQ(state, expected);
}

TEST(StreamingAggregatorTest, EnsureGlobalGroupGivesTheStateOfNoRows) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamingAggregator> global,
                       StreamingAggregator::Make({}, {{AggKind::kCountStar, nullptr},
                                                      {AggKind::kMax, DataType::Long()}}));
  global->EnsureGlobalGroup();
  global->EnsureGlobalGroup();
  ASSERT_EQ(global->num_groups(), 1);
  EXPECT_EQ(global->group_key(0), "");
  std::string state;
  global->SerializeState(0, &state);
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, global->Finalize({""}, {state}, {"n", "m"}));
  ASSERT_EQ(out->num_rows, 1);
  EXPECT_EQ(out->column(0)->Value<int64_t>(0), 0);  // count(*) of no rows
  EXPECT_TRUE(out->column(1)->IsNull(0));           // max of no rows
  // With keys there is no global group to make.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<StreamingAggregator> keyed,
      StreamingAggregator::Make({DataType::String()}, {{AggKind::kCountStar, nullptr}}));
  keyed->EnsureGlobalGroup();
  EXPECT_EQ(keyed->num_groups(), 0);
}

TEST(StreamingAggregatorTest, FinalizeOfNoStatesIsAnEmptyBatchWithTheResultSchema) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<StreamingAggregator> agg,
      StreamingAggregator::Make({DataType::String()}, {{AggKind::kCountStar, nullptr},
                                                       {AggKind::kAvg, DataType::Decimal(10, 2)},
                                                       {AggKind::kCollectSet, DataType::Int()}}));
  EXPECT_EQ(agg->num_groups(), 0);
  ASSERT_EQ(agg->result_types().size(), 3u);
  EXPECT_TRUE(agg->result_types()[1]->Equals(*DataType::Decimal(14, 6)));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, agg->Finalize({}, {}, {"k", "n", "a", "s"}));
  EXPECT_EQ(out->num_rows, 0);
  ASSERT_EQ(out->num_columns(), 4);
  EXPECT_TRUE(out->schema->field(3).type->Equals(*DataType::Array(DataType::Int(), false)));
  ASSERT_OK(columnar::ValidateBatch(*out));
  EXPECT_RAISES(InvalidArgument, agg->Finalize({}, {}, {"k"}));
  EXPECT_RAISES(NotSupported, StreamingAggregator::Make({DataType::Array(DataType::Int())}, {}));
}

}  // namespace
}  // namespace silt::exec
