// HashAggregator: per batch, the key columns are encoded column by column
// into one byte string per row (Grouper, KeyCodec), each row is mapped to a
// group id through a hash map, and every aggregate runs one typed loop over
// (value, group id) (Accumulator).

#include "silt/exec/aggregate.h"

#include <algorithm>
#include <array>

#include "silt/exec/accumulator_internal.h"
#include "silt/exec/grouper_internal.h"
#include "silt/exec/spark_hash.h"
#include "silt/exec/value_access.h"
#include "silt/exec/value_codec_internal.h"

namespace silt::exec {

namespace {

using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypeId;
using columnar::TypePtr;
using internal::Accumulator;

class HashAggregatorImpl final : public HashAggregator {
 public:
  HashAggregatorImpl(KeyCodec codec, std::vector<Accumulator> aggs)
      : grouper_(std::move(codec)), aggs_(std::move(aggs)) {
    if (grouper_.codec().types().empty()) NewGroups(1);
  }

  Status Consume(const std::vector<ColumnPtr>& keys, const std::vector<ColumnPtr>& args,
                 int64_t rows) override {
    if (rows == 0) return Status::OK();
    if (grouper_.codec().types().empty()) {
      gids_.assign(static_cast<size_t>(rows), 0);
    } else {
      AssignGroups(keys, rows);
    }
    for (size_t a = 0; a < aggs_.size(); ++a) aggs_[a].Update(args[a].get(), gids_.data(), rows);
    return Status::OK();
  }

  Result<columnar::RecordBatchPtr> Finish(const std::vector<std::string>& names) override {
    auto out = std::make_shared<columnar::RecordBatch>();
    std::vector<columnar::Field> fields;
    const std::vector<TypePtr>& key_types = grouper_.codec().types();
    if (!key_types.empty()) {
      // Decoded from the group keys, so float keys come out normalized as
      // Spark's (0.0 for a group of -0.0 and 0.0).
      std::vector<std::string_view> encoded;
      encoded.reserve(grouper_.num_groups());
      for (size_t g = 0; g < grouper_.num_groups(); ++g) encoded.push_back(grouper_.key(g));
      SILT_ASSIGN_OR_RETURN(std::vector<ColumnPtr> key_columns, grouper_.codec().Decode(encoded));
      for (size_t k = 0; k < key_types.size(); ++k) {
        fields.push_back({names[k], key_types[k], true, "{}"});
        out->columns.push_back(std::move(key_columns[k]));
      }
    }
    for (size_t a = 0; a < aggs_.size(); ++a) {
      fields.push_back(
          {names[key_types.size() + a], aggs_[a].result_type(), aggs_[a].nullable(), "{}"});
      SILT_ASSIGN_OR_RETURN(ColumnPtr column, aggs_[a].Finish(num_groups_));
      out->columns.push_back(std::move(column));
    }
    out->schema = DataType::Struct(std::move(fields));
    out->num_rows = static_cast<int64_t>(num_groups_);
    return columnar::RecordBatchPtr(std::move(out));
  }

 private:
  void NewGroups(size_t n) {
    num_groups_ += n;
    for (Accumulator& agg : aggs_) agg.Resize(num_groups_);
  }

  void AssignGroups(const std::vector<ColumnPtr>& keys, int64_t rows) {
    first_rows_.clear();
    grouper_.Assign(keys, rows, &gids_, &first_rows_);
    if (first_rows_.empty()) return;
    NewGroups(first_rows_.size());
  }

  internal::Grouper grouper_;
  std::vector<Accumulator> aggs_;
  size_t num_groups_ = 0;
  std::vector<int32_t> gids_;
  std::vector<int64_t> first_rows_;
};

struct NamedKind {
  std::string_view name;
  AggKind kind;
};

// Spark's names and aliases (FunctionRegistry) of the aggregates silt has.
constexpr std::array<NamedKind, 24> kNames = {{
    {"count", AggKind::kCount},
    {"sum", AggKind::kSum},
    {"avg", AggKind::kAvg},
    {"mean", AggKind::kAvg},
    {"min", AggKind::kMin},
    {"max", AggKind::kMax},
    {"first", AggKind::kFirst},
    {"first_value", AggKind::kFirst},
    {"last", AggKind::kLast},
    {"last_value", AggKind::kLast},
    {"stddev", AggKind::kStddevSamp},
    {"std", AggKind::kStddevSamp},
    {"stddev_samp", AggKind::kStddevSamp},
    {"stddev_pop", AggKind::kStddevPop},
    {"variance", AggKind::kVarSamp},
    {"var_samp", AggKind::kVarSamp},
    {"var_pop", AggKind::kVarPop},
    {"collect_list", AggKind::kCollectList},
    {"array_agg", AggKind::kCollectList},
    {"collect_set", AggKind::kCollectSet},
    {"any_value", AggKind::kFirst},
    {"approx_count_distinct", AggKind::kApproxCountDistinct},
    {"percentile_approx", AggKind::kPercentileApprox},
    {"approx_percentile", AggKind::kPercentileApprox},
}};

// Spark aggregates silt does not have yet: named as such rather than as
// unknown functions.
constexpr std::array<std::string_view, 24> kMissing = {"percentile",
                                                       "median",
                                                       "mode",
                                                       "corr",
                                                       "covar_pop",
                                                       "covar_samp",
                                                       "skewness",
                                                       "kurtosis",
                                                       "bool_and",
                                                       "bool_or",
                                                       "every",
                                                       "some",
                                                       "any",
                                                       "bit_and",
                                                       "bit_or",
                                                       "bit_xor",
                                                       "count_if",
                                                       "max_by",
                                                       "min_by",
                                                       "regr_count",
                                                       "try_sum",
                                                       "try_avg",
                                                       "count_min_sketch",
                                                       "histogram_numeric"};

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const char* AggKindName(AggKind kind) {
  switch (kind) {
    case AggKind::kCountStar:
    case AggKind::kCount:
    case AggKind::kCountDistinct: return "count";
    case AggKind::kSum: return "sum";
    case AggKind::kAvg: return "avg";
    case AggKind::kMin: return "min";
    case AggKind::kMax: return "max";
    case AggKind::kFirst: return "first";
    case AggKind::kLast: return "last";
    case AggKind::kStddevSamp: return "stddev_samp";
    case AggKind::kStddevPop: return "stddev_pop";
    case AggKind::kVarSamp: return "var_samp";
    case AggKind::kVarPop: return "var_pop";
    case AggKind::kCollectList: return "collect_list";
    case AggKind::kCollectSet: return "collect_set";
    case AggKind::kApproxCountDistinct: return "approx_count_distinct";
    case AggKind::kPercentileApprox: return "percentile_approx";
  }
  return "";
}

Result<AggKind> AggKindFromName(std::string_view spark_name, bool distinct) {
  std::string name(spark_name);
  for (char& ch : name) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  for (const NamedKind& entry : kNames) {
    if (entry.name != name) continue;
    if (!distinct) return entry.kind;
    switch (entry.kind) {
      case AggKind::kCount: return AggKind::kCountDistinct;
      case AggKind::kMin:
      case AggKind::kMax:
      case AggKind::kCollectSet: return entry.kind;
      default: return Status::NotSupported(spark_name, "(DISTINCT ...) is not supported yet");
    }
  }
  for (std::string_view missing : kMissing) {
    if (missing == name) {
      return Status::NotSupported("aggregate function ", spark_name, " is not supported yet");
    }
  }
  std::string_view best;
  size_t best_distance = 3;  // suggest only near misses
  for (const NamedKind& entry : kNames) {
    size_t d = EditDistance(name, entry.name);
    if (d < best_distance) {
      best_distance = d;
      best = entry.name;
    }
  }
  if (!best.empty()) {
    return Status::NotFound("unknown aggregate function ", spark_name, "; did you mean ", best,
                            "?");
  }
  return Status::NotFound("unknown aggregate function ", spark_name);
}

Result<TypePtr> AggregateResultType(const AggregateSpec& spec) {
  switch (spec.kind) {
    case AggKind::kCountStar:
    case AggKind::kCount:
    case AggKind::kCountDistinct: return DataType::Long();
    default: break;
  }
  const DataType& t = *spec.arg_type;
  if (spec.kind == AggKind::kApproxCountDistinct) {
    if (SparkHashableType(t)) return DataType::Long();
    return Status::NotSupported("approx_count_distinct of a value of type ", t.ToDdl(),
                                " is not supported yet");
  }
  if (spec.kind == AggKind::kPercentileApprox) {
    switch (t.id()) {
      case TypeId::kBoolean:
      case TypeId::kString:
      case TypeId::kBinary: break;
      default:
        if (t.is_numeric() || t.id() == TypeId::kDate || t.id() == TypeId::kTimestamp ||
            t.id() == TypeId::kTimestampNtz) {
          return spec.percentages_array ? DataType::Array(spec.arg_type, /*contains_null=*/false)
                                        : spec.arg_type;
        }
    }
    return Status::InvalidArgument(
        "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] the first parameter of percentile_approx "
        "requires a numeric, date or timestamp type, however it has the type ",
        t.ToDdl());
  }
  switch (spec.kind) {
    case AggKind::kSum:
    case AggKind::kAvg:
      if (t.is_integral()) {
        return spec.kind == AggKind::kSum ? DataType::Long() : DataType::Double();
      }
      if (t.id() == TypeId::kFloat || t.id() == TypeId::kDouble) return DataType::Double();
      if (t.id() == TypeId::kDecimal) {
        if (spec.kind == AggKind::kSum) {
          return DataType::Decimal(std::min(38, t.precision() + 10), t.scale());
        }
        return DataType::Decimal(std::min(38, t.precision() + 4), std::min(38, t.scale() + 4));
      }
      break;
    case AggKind::kMin:
    case AggKind::kMax:
      if (IsOrderable(t.id())) return spec.arg_type;
      break;
    case AggKind::kFirst:
    case AggKind::kLast: return spec.arg_type;
    case AggKind::kStddevSamp:
    case AggKind::kStddevPop:
    case AggKind::kVarSamp:
    case AggKind::kVarPop:
      // Spark casts the argument to double.
      if (t.is_numeric()) return DataType::Double();
      break;
    case AggKind::kCollectList:
    case AggKind::kCollectSet:
      if (t.id() != TypeId::kMap || spec.kind == AggKind::kCollectList) {
        return DataType::Array(spec.arg_type, /*contains_null=*/false);
      }
      break;
    default: break;
  }
  return Status::InvalidArgument(AggKindName(spec.kind), " does not take an argument of type ",
                                 t.ToDdl());
}

Result<std::unique_ptr<HashAggregator>> HashAggregator::Make(
    std::vector<TypePtr> key_types, std::vector<AggregateSpec> aggregates) {
  SILT_ASSIGN_OR_RETURN(KeyCodec codec, KeyCodec::Make(std::move(key_types)));
  std::vector<Accumulator> accumulators;
  for (const AggregateSpec& spec : aggregates) {
    SILT_ASSIGN_OR_RETURN(Accumulator acc, Accumulator::Make(spec));
    accumulators.push_back(std::move(acc));
  }
  return std::unique_ptr<HashAggregator>(
      new HashAggregatorImpl(std::move(codec), std::move(accumulators)));
}

}  // namespace silt::exec
