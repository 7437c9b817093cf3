// Data skipping: decides from a file's log entry alone — partition values
// and add.stats (minValues / maxValues / nullCount / numRecords) — whether
// the file can hold a row satisfying a Conjunction (columnar/predicate.h).
//
// Conservative by construction: a file is skipped only when some predicate
// is false (or null) for every row the metadata allows. Missing or
// unparsable stats keep the file; so do predicates on columns without stats
// (nested, binary, decimal, boolean) and bounds that may be inexact:
// timestamps are stored truncated to milliseconds (the max is widened by
// 999 us), strings truncated to a prefix (still valid bounds), and
// float/double maxima ignore NaN (which sorts above every number in Spark),
// so only their minimum is used.
//
// Thread safety: a FileSkipper is immutable after Make; share freely.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/columnar/predicate.h"
#include "silt/delta/actions.h"

namespace silt::delta {

enum class SkipDecision : uint8_t {
  kKeep,
  kSkipByPartition,  // partition values rule the file out
  kSkipByStats,      // add.stats rule the file out
};

class FileSkipper {
 public:
  // `metadata` gives the schema, partition columns and column mapping (stats
  // and partitionValues are keyed by physical names). Predicates naming
  // columns the schema lacks are ignored.
  static FileSkipper Make(const Metadata& metadata, const columnar::Conjunction& predicate);

  SkipDecision Decide(const AddFile& file) const;
  bool empty() const { return partition_.empty() && data_.empty(); }

 private:
  struct Bound {
    columnar::ColumnPredicate predicate;
    std::string physical_name;  // partition key, or dotted stats path
  };
  std::vector<Bound> partition_;
  std::vector<Bound> data_;
};

// Row `row` of `column` as a predicate value (columnar/predicate.h
// encoding); nullopt for a null row or a type predicates do not cover
// (nested types). REQUIRES: row < column.length.
std::optional<columnar::PredicateValue> PredicateValueAt(const columnar::Column& column,
                                                         int64_t row);

// Orders two values of `type` as Spark does (strings and binary by unsigned
// bytes, NaN above every other float/double): <0, 0, >0.
int ComparePredicateValues(const columnar::DataType& type, const columnar::PredicateValue& a,
                           const columnar::PredicateValue& b);

// True when a non-null value `v` satisfies `predicate` (kIsNull: false;
// kIsNotNull: true).
bool PredicateMatches(const columnar::ColumnPredicate& predicate,
                      const columnar::PredicateValue& v);

}  // namespace silt::delta
