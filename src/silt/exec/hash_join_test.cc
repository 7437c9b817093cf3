#include "silt/exec/hash_join.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <utility>

#include "silt/columnar/builder.h"
#include "silt/testing/gtest_util.h"

namespace silt::exec {
namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;

// A key of (long, double): nullopt is NULL.
struct Key {
  std::optional<int64_t> id;
  std::optional<double> value;
};

std::vector<ColumnPtr> Columns(const std::vector<Key>& keys) {
  ColumnBuilder ids(DataType::Long());
  ColumnBuilder values(DataType::Double());
  for (const Key& k : keys) {
    if (k.id)
      ids.Append<int64_t>(*k.id);
    else
      ids.AppendNull();
    if (k.value)
      values.Append<double>(*k.value);
    else
      values.AppendNull();
  }
  return {ids.Finish(), values.Finish()};
}

// Spark's join-key equality, one pair at a time: NULL never matches, NaN
// matches NaN, -0.0 matches 0.0.
bool SparkJoinEqual(const Key& a, const Key& b) {
  if (!a.id || !b.id || !a.value || !b.value) return false;
  if (*a.id != *b.id) return false;
  if (std::isnan(*a.value) || std::isnan(*b.value)) {
    return std::isnan(*a.value) && std::isnan(*b.value);
  }
  return *a.value == *b.value;
}

// The nested-loop join the hash join must equal, pair for pair and in order.
JoinMatches NestedLoop(const std::vector<Key>& probe, const std::vector<Key>& build,
                       JoinType type) {
  JoinMatches out;
  for (size_t p = 0; p < probe.size(); ++p) {
    std::vector<int64_t> matches;
    for (size_t b = 0; b < build.size(); ++b) {
      if (SparkJoinEqual(probe[p], build[b])) matches.push_back(static_cast<int64_t>(b));
    }
    const auto row = static_cast<int64_t>(p);
    switch (type) {
      case JoinType::kLeftSemi:
        if (!matches.empty()) out.probe_rows.push_back(row);
        break;
      case JoinType::kLeftAnti:
        if (matches.empty()) out.probe_rows.push_back(row);
        break;
      case JoinType::kLeftOuter:
        if (matches.empty()) matches.push_back(JoinMatches::kNoMatch);
        [[fallthrough]];
      case JoinType::kInner:
        for (int64_t b : matches) {
          out.probe_rows.push_back(row);
          out.build_rows.push_back(b);
        }
        break;
    }
  }
  return out;
}

std::vector<Key> RandomKeys(std::mt19937* rng, int n) {
  const double specials[] = {0.0, -0.0, std::nan(""), 1.5, -2.25};
  std::vector<Key> keys;
  for (int i = 0; i < n; ++i) {
    Key k;
    if ((*rng)() % 11 != 0) k.id = static_cast<int64_t>((*rng)() % 7);
    if ((*rng)() % 13 != 0) k.value = specials[(*rng)() % 5];
    keys.push_back(k);
  }
  return keys;
}

TEST(JoinHashTableTest, EqualsANestedLoopJoinWithSparksKeyEquality) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<Key> build = RandomKeys(&rng, static_cast<int>(rng() % 40));
    std::vector<Key> probe = RandomKeys(&rng, static_cast<int>(rng() % 60));
    ASSERT_OK_AND_ASSIGN(JoinHashTable table,
                         JoinHashTable::Build(Columns(build), static_cast<int64_t>(build.size())));
    EXPECT_EQ(table.num_build_rows(), static_cast<int64_t>(build.size()));
    for (JoinType type :
         {JoinType::kInner, JoinType::kLeftOuter, JoinType::kLeftSemi, JoinType::kLeftAnti}) {
      JoinMatches got;
      table.Probe(Columns(probe), static_cast<int64_t>(probe.size()), type, &got);
      JoinMatches want = NestedLoop(probe, build, type);
      EXPECT_EQ(got.probe_rows, want.probe_rows) << "round " << round;
      EXPECT_EQ(got.build_rows, want.build_rows) << "round " << round;
    }
  }
}

TEST(JoinHashTableTest, AnEmptyBuildSideMatchesNothing) {
  ASSERT_OK_AND_ASSIGN(JoinHashTable table, JoinHashTable::Build(Columns({}), 0));
  std::vector<Key> probe = {{1, 1.0}, {std::nullopt, 2.0}};
  JoinMatches inner;
  table.Probe(Columns(probe), 2, JoinType::kInner, &inner);
  EXPECT_TRUE(inner.probe_rows.empty());
  JoinMatches left;
  table.Probe(Columns(probe), 2, JoinType::kLeftOuter, &left);
  EXPECT_EQ(left.probe_rows, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(left.build_rows, (std::vector<int64_t>{JoinMatches::kNoMatch, JoinMatches::kNoMatch}));
}

TEST(JoinHashTableTest, AKeyTypeWithoutAnEncodingIsNotSupported) {
  ColumnBuilder list(DataType::Array(DataType::Long()));
  list.AppendNull();
  Result<JoinHashTable> table = JoinHashTable::Build({list.Finish()}, 1);
  EXPECT_TRUE(table.status().IsNotSupported()) << table.status().ToString();
}

}  // namespace
}  // namespace silt::exec
