// HashAggregator: per batch, the key columns are encoded column by column
// into one byte string per row, each row is mapped to a group id through a
// hash map, and every aggregate runs one typed loop over (value, group id).

#include "silt/exec/aggregate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "silt/columnar/builder.h"
#include "silt/exec/value_access.h"

namespace silt::exec {

namespace {

using columnar::Column;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypeId;
using columnar::TypePtr;

__int128 Pow10(int n) {
  __int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

enum class Domain { kInt, kDouble, kDecimal, kBytes };

std::optional<Domain> DomainOf(TypeId id) {
  switch (id) {
    case TypeId::kBoolean:
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return Domain::kInt;
    case TypeId::kFloat:
    case TypeId::kDouble: return Domain::kDouble;
    case TypeId::kDecimal: return Domain::kDecimal;
    case TypeId::kString:
    case TypeId::kBinary: return Domain::kBytes;
    default: return std::nullopt;
  }
}

// Spark's ordering of doubles for min/max: NaN above everything.
bool DoubleLess(double a, double b) {
  if (std::isnan(b)) return !std::isnan(a);
  if (std::isnan(a)) return false;
  return a < b;
}

// Appends row `i` of `c` (not null) to `out` in a form that groups equal
// values together.
void EncodeValue(const Column& c, Domain domain, int64_t i, std::string* out) {
  switch (domain) {
    case Domain::kInt: {
      int64_t v = IntAt(c, i);
      out->append(reinterpret_cast<const char*>(&v), sizeof(v));
      break;
    }
    case Domain::kDouble: {
      double v = DoubleAt(c, i);
      if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
      if (v == 0) v = 0;  // -0.0 groups with 0.0
      out->append(reinterpret_cast<const char*>(&v), sizeof(v));
      break;
    }
    case Domain::kDecimal:
      out->append(reinterpret_cast<const char*>(c.values->data() + i * 16), 16);
      break;
    case Domain::kBytes: {
      std::string_view s = c.StringValue(i);
      uint32_t n = static_cast<uint32_t>(s.size());
      out->append(reinterpret_cast<const char*>(&n), sizeof(n));
      out->append(s);
      break;
    }
  }
}

struct AggState {
  AggregateSpec spec;
  TypePtr result_type;
  Domain domain = Domain::kInt;
  std::vector<int64_t> counts;  // count*, count, distinct, avg counts
  std::vector<uint8_t> seen;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<__int128> decimals;
  std::vector<std::string> strings;
  // count(DISTINCT): group id + encoded value.
  std::unordered_set<std::string> distinct;

  void Resize(size_t groups) {
    counts.resize(groups, 0);
    seen.resize(groups, 0);
    switch (spec.kind) {
      case AggKind::kSum:
      case AggKind::kAvg:
      case AggKind::kMin:
      case AggKind::kMax:
        // avg of integers accumulates in doubles (as Spark's Average).
        if (domain == Domain::kInt) ints.resize(groups, 0);
        if (domain == Domain::kDouble || domain == Domain::kInt) doubles.resize(groups, 0);
        if (domain == Domain::kDecimal) decimals.resize(groups, 0);
        if (domain == Domain::kBytes) strings.resize(groups);
        break;
      default: break;
    }
  }

  void Update(const Column* arg, const std::vector<int32_t>& gids, int64_t rows) {
    if (spec.kind == AggKind::kCountStar) {
      for (int64_t i = 0; i < rows; ++i) ++counts[static_cast<size_t>(gids[i])];
      return;
    }
    const Column& c = *arg;
    const bool has_nulls = c.null_count > 0;
    switch (spec.kind) {
      case AggKind::kCount:
        for (int64_t i = 0; i < rows; ++i) {
          if (!has_nulls || c.IsValid(i)) ++counts[static_cast<size_t>(gids[i])];
        }
        return;
      case AggKind::kCountDistinct: {
        std::string key;
        for (int64_t i = 0; i < rows; ++i) {
          if (has_nulls && c.IsNull(i)) continue;
          key.assign(reinterpret_cast<const char*>(&gids[i]), sizeof(int32_t));
          EncodeValue(c, domain, i, &key);
          if (distinct.insert(key).second) ++counts[static_cast<size_t>(gids[i])];
        }
        return;
      }
      case AggKind::kSum:
      case AggKind::kAvg: UpdateSum(c, has_nulls, gids, rows); return;
      case AggKind::kMin:
      case AggKind::kMax: UpdateExtreme(c, has_nulls, gids, rows); return;
      default: return;
    }
  }

  void UpdateSum(const Column& c, bool has_nulls, const std::vector<int32_t>& gids, int64_t rows) {
    // avg of non-decimals sums in double, as Spark's Average does.
    const bool as_double =
        domain == Domain::kDouble || (spec.kind == AggKind::kAvg && domain == Domain::kInt);
    for (int64_t i = 0; i < rows; ++i) {
      if (has_nulls && c.IsNull(i)) continue;
      size_t g = static_cast<size_t>(gids[i]);
      seen[g] = 1;
      ++counts[g];
      if (domain == Domain::kDecimal) {
        decimals[g] += DecimalAt(c, i);
      } else if (as_double) {
        doubles[g] += domain == Domain::kDouble ? DoubleAt(c, i) : static_cast<double>(IntAt(c, i));
      } else {
        // Two's-complement wrap-around, as Spark's non-ANSI long addition.
        ints[g] = static_cast<int64_t>(static_cast<uint64_t>(ints[g]) +
                                       static_cast<uint64_t>(IntAt(c, i)));
      }
    }
  }

  void UpdateExtreme(const Column& c, bool has_nulls, const std::vector<int32_t>& gids,
                     int64_t rows) {
    const bool is_min = spec.kind == AggKind::kMin;
    for (int64_t i = 0; i < rows; ++i) {
      if (has_nulls && c.IsNull(i)) continue;
      size_t g = static_cast<size_t>(gids[i]);
      const bool first = !seen[g];
      seen[g] = 1;
      switch (domain) {
        case Domain::kInt: {
          int64_t v = IntAt(c, i);
          if (first || (is_min ? v < ints[g] : v > ints[g])) ints[g] = v;
          break;
        }
        case Domain::kDouble: {
          double v = DoubleAt(c, i);
          if (first || (is_min ? DoubleLess(v, doubles[g]) : DoubleLess(doubles[g], v))) {
            doubles[g] = v;
          }
          break;
        }
        case Domain::kDecimal: {
          __int128 v = DecimalAt(c, i);
          if (first || (is_min ? v < decimals[g] : v > decimals[g])) decimals[g] = v;
          break;
        }
        case Domain::kBytes: {
          std::string_view v = c.StringValue(i);
          int cmp = first ? 0 : v.compare(strings[g]);
          if (first || (is_min ? cmp < 0 : cmp > 0)) strings[g].assign(v);
          break;
        }
      }
    }
  }

  ColumnPtr Finish(size_t groups) {
    columnar::ColumnBuilder b(result_type);
    b.Reserve(static_cast<int64_t>(groups));
    const TypeId out = result_type->id();
    for (size_t g = 0; g < groups; ++g) {
      switch (spec.kind) {
        case AggKind::kCountStar:
        case AggKind::kCount:
        case AggKind::kCountDistinct: b.Append<int64_t>(counts[g]); continue;
        default: break;
      }
      if (!seen[g]) {
        b.AppendNull();
        continue;
      }
      if (spec.kind == AggKind::kSum) {
        if (domain == Domain::kDecimal) {
          __int128 v = decimals[g];
          __int128 bound = Pow10(result_type->precision());
          if (v >= bound || v <= -bound) {
            b.AppendNull();  // overflow: null without ANSI
          } else {
            b.Append<__int128>(v);
          }
        } else if (domain == Domain::kDouble) {
          b.Append<double>(doubles[g]);
        } else {
          b.Append<int64_t>(ints[g]);
        }
        continue;
      }
      if (spec.kind == AggKind::kAvg) {
        if (domain == Domain::kDecimal) {
          int shift = result_type->scale() - spec.arg_type->scale();
          __int128 num = decimals[g] * Pow10(shift);
          __int128 n = counts[g];
          __int128 q = num / n;
          __int128 r = num % n;
          if (r < 0) r = -r;
          if (2 * r >= n) q += num < 0 ? -1 : 1;  // HALF_UP
          b.Append<__int128>(q);
        } else {
          b.Append<double>(doubles[g] / static_cast<double>(counts[g]));
        }
        continue;
      }
      // min / max: back to the argument's physical type.
      switch (out) {
        case TypeId::kBoolean: b.AppendBool(ints[g] != 0); break;
        case TypeId::kByte: b.Append<int8_t>(static_cast<int8_t>(ints[g])); break;
        case TypeId::kShort: b.Append<int16_t>(static_cast<int16_t>(ints[g])); break;
        case TypeId::kInt:
        case TypeId::kDate: b.Append<int32_t>(static_cast<int32_t>(ints[g])); break;
        case TypeId::kFloat: b.Append<float>(static_cast<float>(doubles[g])); break;
        case TypeId::kDouble: b.Append<double>(doubles[g]); break;
        case TypeId::kDecimal: b.Append<__int128>(decimals[g]); break;
        case TypeId::kString:
        case TypeId::kBinary: b.AppendString(strings[g]); break;
        default: b.Append<int64_t>(ints[g]); break;
      }
    }
    return b.Finish();
  }
};

const char* AggName(AggKind kind) {
  switch (kind) {
    case AggKind::kCountStar:
    case AggKind::kCount:
    case AggKind::kCountDistinct: return "count";
    case AggKind::kSum: return "sum";
    case AggKind::kAvg: return "avg";
    case AggKind::kMin: return "min";
    case AggKind::kMax: return "max";
  }
  return "";
}

class HashAggregatorImpl final : public HashAggregator {
 public:
  HashAggregatorImpl(std::vector<TypePtr> key_types, std::vector<Domain> key_domains,
                     std::vector<AggState> aggs)
      : key_types_(std::move(key_types)),
        key_domains_(std::move(key_domains)),
        aggs_(std::move(aggs)) {
    if (key_types_.empty()) NewGroups(1);
  }

  Status Consume(const std::vector<ColumnPtr>& keys, const std::vector<ColumnPtr>& args,
                 int64_t rows) override {
    if (rows == 0) return Status::OK();
    gids_.assign(static_cast<size_t>(rows), 0);
    if (!key_types_.empty()) AssignGroups(keys, rows);
    for (size_t a = 0; a < aggs_.size(); ++a) aggs_[a].Update(args[a].get(), gids_, rows);
    return Status::OK();
  }

  Result<columnar::RecordBatchPtr> Finish(const std::vector<std::string>& names) override {
    auto out = std::make_shared<columnar::RecordBatch>();
    std::vector<columnar::Field> fields;
    for (size_t k = 0; k < key_types_.size(); ++k) {
      fields.push_back({names[k], key_types_[k], true, "{}"});
      std::vector<ColumnPtr>& chunks = key_chunks_[k];
      out->columns.push_back(chunks.empty() ? columnar::MakeNullColumn(key_types_[k], 0)
                                            : columnar::ConcatColumns(chunks));
    }
    for (size_t a = 0; a < aggs_.size(); ++a) {
      bool nullable = aggs_[a].spec.kind != AggKind::kCountStar &&
                      aggs_[a].spec.kind != AggKind::kCount &&
                      aggs_[a].spec.kind != AggKind::kCountDistinct;
      fields.push_back({names[key_types_.size() + a], aggs_[a].result_type, nullable, "{}"});
      out->columns.push_back(aggs_[a].Finish(num_groups_));
    }
    out->schema = DataType::Struct(std::move(fields));
    out->num_rows = static_cast<int64_t>(num_groups_);
    return columnar::RecordBatchPtr(std::move(out));
  }

 private:
  void NewGroups(size_t n) {
    num_groups_ += n;
    for (AggState& agg : aggs_) agg.Resize(num_groups_);
  }

  void AssignGroups(const std::vector<ColumnPtr>& keys, int64_t rows) {
    if (row_keys_.size() < static_cast<size_t>(rows)) row_keys_.resize(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) row_keys_[static_cast<size_t>(i)].clear();
    for (size_t k = 0; k < keys.size(); ++k) {
      const Column& c = *keys[k];
      const Domain domain = key_domains_[k];
      for (int64_t i = 0; i < rows; ++i) {
        std::string& key = row_keys_[static_cast<size_t>(i)];
        if (c.IsNull(i)) {
          key.push_back('\0');
          continue;
        }
        key.push_back('\1');
        EncodeValue(c, domain, i, &key);
      }
    }
    std::vector<int64_t> first_rows;
    for (int64_t i = 0; i < rows; ++i) {
      const std::string& key = row_keys_[static_cast<size_t>(i)];
      auto it = groups_.find(key);
      if (it == groups_.end()) {
        it = groups_.emplace(key, static_cast<int32_t>(num_groups_ + first_rows.size())).first;
        first_rows.push_back(i);
      }
      gids_[static_cast<size_t>(i)] = it->second;
    }
    if (first_rows.empty()) return;
    NewGroups(first_rows.size());
    if (key_chunks_.size() < keys.size()) key_chunks_.resize(keys.size());
    for (size_t k = 0; k < keys.size(); ++k) {
      key_chunks_[k].push_back(columnar::TakeColumn(*keys[k], first_rows));
    }
  }

  std::vector<TypePtr> key_types_;
  std::vector<Domain> key_domains_;
  std::vector<AggState> aggs_;
  size_t num_groups_ = 0;
  std::unordered_map<std::string, int32_t> groups_;
  std::vector<std::string> row_keys_;
  std::vector<int32_t> gids_;
  std::vector<std::vector<ColumnPtr>> key_chunks_;
};

}  // namespace

Result<TypePtr> AggregateResultType(const AggregateSpec& spec) {
  switch (spec.kind) {
    case AggKind::kCountStar:
    case AggKind::kCount:
    case AggKind::kCountDistinct: return DataType::Long();
    default: break;
  }
  const DataType& t = *spec.arg_type;
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
    default:
      if (DomainOf(t.id())) return spec.arg_type;
      break;
  }
  return Status::InvalidArgument(AggName(spec.kind), " does not take an argument of type ",
                                 t.ToDdl());
}

Result<std::unique_ptr<HashAggregator>> HashAggregator::Make(
    std::vector<TypePtr> key_types, std::vector<AggregateSpec> aggregates) {
  std::vector<Domain> key_domains;
  for (const TypePtr& type : key_types) {
    std::optional<Domain> domain = DomainOf(type->id());
    if (!domain) {
      return Status::NotSupported("GROUP BY a value of type ", type->ToDdl(),
                                  " is not supported yet");
    }
    key_domains.push_back(*domain);
  }
  std::vector<AggState> states;
  for (const AggregateSpec& spec : aggregates) {
    AggState state;
    state.spec = spec;
    SILT_ASSIGN_OR_RETURN(state.result_type, AggregateResultType(spec));
    if (spec.arg_type != nullptr && spec.kind != AggKind::kCount) {
      std::optional<Domain> domain = DomainOf(spec.arg_type->id());
      if (!domain) {
        return Status::NotSupported(AggName(spec.kind), " of a value of type ",
                                    spec.arg_type->ToDdl(), " is not supported yet");
      }
      state.domain = *domain;
    }
    states.push_back(std::move(state));
  }
  return std::unique_ptr<HashAggregator>(
      new HashAggregatorImpl(std::move(key_types), std::move(key_domains), std::move(states)));
}

}  // namespace silt::exec
