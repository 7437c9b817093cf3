// Accumulator: typed update loops per aggregate kind and argument family,
// and the per-group state format of docs/format/aggregate-state.md.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include "silt/columnar/builder.h"
#include "silt/exec/accumulator_internal.h"
#include "silt/exec/spark_hash.h"
#include "silt/exec/value_access.h"
#include "silt/exec/value_codec_internal.h"

namespace silt::exec::internal {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::TypeId;
using columnar::TypePtr;

__int128 Pow10(int n) {
  __int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

// Spark's ordering of doubles for min/max: NaN above everything.
bool DoubleLess(double a, double b) {
  if (std::isnan(b)) return !std::isnan(a);
  if (std::isnan(a)) return false;
  return a < b;
}

// The JVM's double-to-integer conversions (d2i, d2l): NaN to 0, saturating.
int32_t JavaDoubleToInt(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483647.0) return 2147483647;
  if (v <= -2147483648.0) return -2147483647 - 1;
  return static_cast<int32_t>(v);
}

int64_t JavaDoubleToLong(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// Spark's Decimal(double) at a decimal type's scale: the double's shortest
// decimal text (Scala's BigDecimal(double) goes through Double.toString),
// rounded half up to `scale` digits; nullopt when it needs more than
// `precision` digits or is not finite.
std::optional<__int128> DoubleToDecimal(double v, int precision, int scale) {
  if (!std::isfinite(v)) return std::nullopt;
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), v, std::chars_format::scientific);
  if (ec != std::errc()) return std::nullopt;
  std::string_view s(text, static_cast<size_t>(end - text));
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  const size_t e_pos = s.find('e');
  const int exponent = std::atoi(std::string(s.substr(e_pos + 1)).c_str());
  std::string digits;
  for (char ch : s.substr(0, e_pos)) {
    if (ch != '.') digits.push_back(ch);
  }
  // value = 0.digits... * 10^(exponent + 1); keep `scale` fractional digits.
  const int integer_digits = exponent + 1;
  const int keep = integer_digits + scale;  // digits before the rounding point
  __int128 unscaled = 0;
  bool round_up = false;
  for (int i = 0; i < keep; ++i) {
    const int digit =
        i < static_cast<int>(digits.size()) ? digits[static_cast<size_t>(i)] - '0' : 0;
    unscaled = unscaled * 10 + digit;
    if (unscaled >= Pow10(38)) return std::nullopt;
  }
  if (keep >= 0 && keep < static_cast<int>(digits.size())) {
    round_up = digits[static_cast<size_t>(keep)] >= '5';
  } else if (keep < 0) {
    round_up = false;  // |v| < 0.5 * 10^-scale
  }
  if (round_up) ++unscaled;
  if (unscaled >= Pow10(precision)) return std::nullopt;
  return negative ? -unscaled : unscaled;
}

bool ArgDomain(const columnar::DataType& t, uint8_t* domain) {
  switch (t.id()) {
    case TypeId::kBoolean:
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: *domain = 0; return true;
    case TypeId::kFloat:
    case TypeId::kDouble: *domain = 1; return true;
    case TypeId::kDecimal: *domain = 2; return true;
    case TypeId::kString:
    case TypeId::kBinary: *domain = 3; return true;
    default: return false;
  }
}

// True when `bytes` is exactly one encoded value of `type` (not null when
// `non_null`).
bool IsEncodedValue(const TypePtr& type, std::string_view bytes, bool non_null) {
  if (bytes.empty() || (non_null && bytes.front() == 0)) return false;
  ColumnBuilder scratch(type);
  return DecodeValue(*type, &bytes, &scratch) && bytes.empty();
}

}  // namespace

Result<Accumulator> Accumulator::Make(const AggregateSpec& spec) {
  Accumulator acc;
  acc.spec_ = spec;
  SILT_ASSIGN_OR_RETURN(acc.result_type_, AggregateResultType(spec));
  switch (spec.kind) {
    case AggKind::kCountStar:
    case AggKind::kCount: break;
    case AggKind::kApproxCountDistinct: {
      SILT_ASSIGN_OR_RETURN(acc.hll_p_, HyperLogLogPlusPlus::PrecisionFor(spec.relative_sd));
      break;
    }
    case AggKind::kPercentileApprox: {
      if (spec.accuracy <= 0 || spec.accuracy > 2147483647) {
        return Status::InvalidArgument("the accuracy of percentile_approx must be in (0, ",
                                       "2147483647], got ", spec.accuracy);
      }
      for (double q : spec.percentages) {
        if (!(q >= 0.0 && q <= 1.0)) {
          return Status::InvalidArgument("the percentage of percentile_approx must be in ",
                                         "[0.0, 1.0], got ", q);
        }
      }
      uint8_t d = 0;
      if (!ArgDomain(*spec.arg_type, &d)) {
        return Status::NotSupported("percentile_approx of a value of type ", spec.arg_type->ToDdl(),
                                    " is not supported");
      }
      acc.domain_ = static_cast<Domain>(d);
      break;
    }
    case AggKind::kCountDistinct:
    case AggKind::kFirst:
    case AggKind::kLast:
    case AggKind::kCollectList:
    case AggKind::kCollectSet:
      if (!EncodableType(*spec.arg_type)) {
        return Status::NotSupported(AggKindName(spec.kind), " of a value of type ",
                                    spec.arg_type->ToDdl(), " is not supported yet");
      }
      acc.domain_ = Domain::kEncoded;
      break;
    default: {
      uint8_t d = 0;
      if (!ArgDomain(*spec.arg_type, &d)) {
        return Status::NotSupported(AggKindName(spec.kind), " of a value of type ",
                                    spec.arg_type->ToDdl(), " is not supported yet");
      }
      acc.domain_ = static_cast<Domain>(d);
      if (acc.domain_ == Domain::kDecimal) {
        // The sum buffer of sum and avg: DECIMAL(min(38, p + 10), s).
        acc.sum_bound_ = Pow10(std::min(38, spec.arg_type->precision() + 10));
      }
      break;
    }
  }
  return acc;
}

bool Accumulator::nullable() const {
  return spec_.kind != AggKind::kCountStar && spec_.kind != AggKind::kCount &&
         spec_.kind != AggKind::kCountDistinct && spec_.kind != AggKind::kCollectList &&
         spec_.kind != AggKind::kCollectSet && spec_.kind != AggKind::kApproxCountDistinct;
}

bool Accumulator::IsMoment() const {
  switch (spec_.kind) {
    case AggKind::kStddevSamp:
    case AggKind::kStddevPop:
    case AggKind::kVarSamp:
    case AggKind::kVarPop: return true;
    default: return false;
  }
}

void Accumulator::Resize(size_t groups) {
  groups_ = groups;
  counts_.resize(groups, 0);
  seen_.resize(groups, 0);
  switch (spec_.kind) {
    case AggKind::kSum:
    case AggKind::kAvg:
    case AggKind::kMin:
    case AggKind::kMax:
      // avg of integers accumulates in doubles (as Spark's Average).
      if (domain_ == Domain::kInt) ints_.resize(groups, 0);
      if (domain_ == Domain::kDouble || domain_ == Domain::kInt) doubles_.resize(groups, 0);
      if (domain_ == Domain::kDecimal) {
        decimals_.resize(groups, 0);
        overflowed_.resize(groups, 0);
      }
      if (domain_ == Domain::kBytes) strings_.resize(groups);
      break;
    case AggKind::kFirst:
    case AggKind::kLast:
      values_.resize(groups);
      last_row_.resize(groups, -1);
      break;
    case AggKind::kCountDistinct:
    case AggKind::kCollectList:
    case AggKind::kCollectSet: lists_.resize(groups); break;
    case AggKind::kApproxCountDistinct:
      if (groups < hlls_.size()) {
        hlls_.erase(hlls_.begin() + static_cast<std::ptrdiff_t>(groups), hlls_.end());
      }
      while (hlls_.size() < groups) hlls_.emplace_back(hll_p_);
      break;
    case AggKind::kPercentileApprox: {
      const double relative_error = 1.0 / static_cast<double>(spec_.accuracy);
      if (groups < digests_.size()) {
        digests_.erase(digests_.begin() + static_cast<std::ptrdiff_t>(groups), digests_.end());
      }
      while (digests_.size() < groups) digests_.emplace_back(relative_error);
      break;
    }
    default:
      if (IsMoment()) {
        n_.resize(groups, 0);
        avg_.resize(groups, 0);
        m2_.resize(groups, 0);
      }
      break;
  }
}

void Accumulator::Clear() {
  counts_.clear();
  seen_.clear();
  ints_.clear();
  doubles_.clear();
  decimals_.clear();
  overflowed_.clear();
  strings_.clear();
  n_.clear();
  avg_.clear();
  m2_.clear();
  values_.clear();
  lists_.clear();
  members_.clear();
  last_row_.clear();
  hlls_.clear();
  digests_.clear();
  groups_ = 0;
}

void Accumulator::Update(const Column* arg, const int32_t* gids, int64_t rows) {
  if (spec_.kind == AggKind::kCountStar) {
    for (int64_t i = 0; i < rows; ++i) ++counts_[static_cast<size_t>(gids[i])];
    return;
  }
  const Column& c = *arg;
  switch (spec_.kind) {
    case AggKind::kCount:
      if (c.null_count == 0) {
        for (int64_t i = 0; i < rows; ++i) ++counts_[static_cast<size_t>(gids[i])];
      } else {
        for (int64_t i = 0; i < rows; ++i) {
          if (c.IsValid(i)) ++counts_[static_cast<size_t>(gids[i])];
        }
      }
      return;
    case AggKind::kSum:
    case AggKind::kAvg: UpdateSum(c, gids, rows); return;
    case AggKind::kMin:
    case AggKind::kMax: UpdateExtreme(c, gids, rows); return;
    case AggKind::kFirst:
    case AggKind::kLast: UpdateFirstLast(c, gids, rows); return;
    case AggKind::kCountDistinct:
    case AggKind::kCollectList:
    case AggKind::kCollectSet: UpdateCollect(c, gids, rows); return;
    case AggKind::kApproxCountDistinct:
    case AggKind::kPercentileApprox: UpdateSketch(c, gids, rows); return;
    default: UpdateMoments(c, gids, rows); return;
  }
}

void Accumulator::UpdateSum(const Column& c, const int32_t* gids, int64_t rows) {
  const bool has_nulls = c.null_count > 0;
  // avg of non-decimals sums in double, as Spark's Average does.
  const bool as_double =
      domain_ == Domain::kDouble || (spec_.kind == AggKind::kAvg && domain_ == Domain::kInt);
  for (int64_t i = 0; i < rows; ++i) {
    if (has_nulls && c.IsNull(i)) continue;
    size_t g = static_cast<size_t>(gids[i]);
    seen_[g] = 1;
    ++counts_[g];
    if (domain_ == Domain::kDecimal) {
      AddDecimal(g, DecimalAt(c, i));
    } else if (as_double) {
      doubles_[g] += domain_ == Domain::kDouble ? DoubleAt(c, i) : static_cast<double>(IntAt(c, i));
    } else {
      // Two's-complement wrap-around, as Spark's non-ANSI long addition.
      ints_[g] = static_cast<int64_t>(static_cast<uint64_t>(ints_[g]) +
                                      static_cast<uint64_t>(IntAt(c, i)));
    }
  }
}

void Accumulator::AddDecimal(size_t g, __int128 v) {
  if (overflowed_[g]) return;
  // Spark checks every addition against the sum type's precision; past it
  // the sum is null for good (non-ANSI).
  __int128 r;
  if (__builtin_add_overflow(decimals_[g], v, &r) || r >= sum_bound_ || r <= -sum_bound_) {
    overflowed_[g] = 1;
    decimals_[g] = 0;
    return;
  }
  decimals_[g] = r;
}

void Accumulator::UpdateExtreme(const Column& c, const int32_t* gids, int64_t rows) {
  const bool has_nulls = c.null_count > 0;
  const bool is_min = spec_.kind == AggKind::kMin;
  for (int64_t i = 0; i < rows; ++i) {
    if (has_nulls && c.IsNull(i)) continue;
    size_t g = static_cast<size_t>(gids[i]);
    const bool first = !seen_[g];
    seen_[g] = 1;
    switch (domain_) {
      case Domain::kInt: {
        int64_t v = IntAt(c, i);
        if (first || (is_min ? v < ints_[g] : v > ints_[g])) ints_[g] = v;
        break;
      }
      case Domain::kDouble: {
        double v = DoubleAt(c, i);
        if (first || (is_min ? DoubleLess(v, doubles_[g]) : DoubleLess(doubles_[g], v))) {
          doubles_[g] = v;
        }
        break;
      }
      case Domain::kDecimal: {
        __int128 v = DecimalAt(c, i);
        if (first || (is_min ? v < decimals_[g] : v > decimals_[g])) decimals_[g] = v;
        break;
      }
      case Domain::kBytes: {
        std::string_view v = c.StringValue(i);
        int cmp = first ? 0 : v.compare(strings_[g]);
        if (first || (is_min ? cmp < 0 : cmp > 0)) strings_[g].assign(v);
        break;
      }
      case Domain::kEncoded: break;
    }
  }
}

void Accumulator::UpdateMoments(const Column& c, const int32_t* gids, int64_t rows) {
  const bool has_nulls = c.null_count > 0;
  const int scale = c.type->scale();
  for (int64_t i = 0; i < rows; ++i) {
    if (has_nulls && c.IsNull(i)) continue;
    size_t g = static_cast<size_t>(gids[i]);
    double x;
    switch (domain_) {
      case Domain::kDouble: x = DoubleAt(c, i); break;
      case Domain::kDecimal: x = DecimalToDouble(DecimalAt(c, i), scale); break;
      default: x = static_cast<double>(IntAt(c, i)); break;
    }
    // Spark's CentralMomentAgg update, operation for operation.
    const double n = n_[g] + 1.0;
    const double delta = x - avg_[g];
    const double delta_n = delta / n;
    avg_[g] += delta_n;
    m2_[g] += delta * (delta - delta_n);
    n_[g] = n;
  }
}

void Accumulator::UpdateFirstLast(const Column& c, const int32_t* gids, int64_t rows) {
  const bool skip_nulls = spec_.ignore_nulls && c.null_count > 0;
  const bool is_first = spec_.kind == AggKind::kFirst;
  // Pick one row per group, then encode only the picked rows.
  std::vector<uint8_t> picked(static_cast<size_t>(rows), 0);
  std::vector<size_t> touched;
  for (int64_t i = 0; i < rows; ++i) {
    if (skip_nulls && c.IsNull(i)) continue;
    size_t g = static_cast<size_t>(gids[i]);
    if (is_first) {
      if (seen_[g]) continue;
      seen_[g] = 1;
      picked[static_cast<size_t>(i)] = 1;
    } else {
      if (last_row_[g] < 0) touched.push_back(g);
      last_row_[g] = i;
    }
  }
  if (!is_first) {
    for (size_t g : touched) picked[static_cast<size_t>(last_row_[g])] = 1;
  }
  encoded_.assign(static_cast<size_t>(rows), std::string());
  EncodeColumn(c, /*normalize=*/false, picked.data(), rows, encoded_.data());
  for (int64_t i = 0; i < rows; ++i) {
    if (!picked[static_cast<size_t>(i)]) continue;
    size_t g = static_cast<size_t>(gids[i]);
    values_[g] = std::move(encoded_[static_cast<size_t>(i)]);
    seen_[g] = 1;
  }
  for (size_t g : touched) last_row_[g] = -1;
}

bool Accumulator::MemberKey(size_t g, std::string_view element, std::string* key) const {
  key->assign(reinterpret_cast<const char*>(&g), sizeof(g));
  if (spec_.kind == AggKind::kCountDistinct) {
    key->append(element);  // normalized already: grouping equality
    return true;
  }
  const TypeId id = spec_.arg_type->id();
  if (id == TypeId::kFloat || id == TypeId::kDouble) {
    // Spark 3.5's collect_set keeps boxed floats in a Scala HashSet, whose ==
    // is numeric: -0.0 equals 0.0 (the first one stays) and NaN equals
    // nothing, so every NaN is kept.
    double v;
    if (id == TypeId::kFloat) {
      float f = 0;
      std::memcpy(&f, element.data() + 1, sizeof(f));
      v = f;
    } else {
      std::memcpy(&v, element.data() + 1, sizeof(v));
    }
    if (std::isnan(v)) return false;
  }
  // Otherwise (structs too, where Spark's row equality has NaN equal NaN and
  // -0.0 equal 0.0) values compare normalized.
  std::string_view in = element;
  return NormalizeValue(*spec_.arg_type, &in, key);
}

bool Accumulator::AddMember(size_t g, std::string_view element) {
  std::string key;
  if (MemberKey(g, element, &key) && !members_.insert(std::move(key)).second) return false;
  ++counts_[g];
  lists_[g].emplace_back(element);
  return true;
}

void Accumulator::UpdateCollect(const Column& c, const int32_t* gids, int64_t rows) {
  const bool has_nulls = c.null_count > 0;
  // count(DISTINCT) compares values as Spark groups them; the collected
  // values keep their bits.
  const bool normalize = spec_.kind == AggKind::kCountDistinct;
  encoded_.assign(static_cast<size_t>(rows), std::string());
  EncodeColumn(c, normalize, nullptr, rows, encoded_.data());
  for (int64_t i = 0; i < rows; ++i) {
    if (has_nulls && c.IsNull(i)) continue;
    size_t g = static_cast<size_t>(gids[i]);
    std::string& value = encoded_[static_cast<size_t>(i)];
    if (spec_.kind == AggKind::kCollectList) {
      ++counts_[g];
      lists_[g].push_back(std::move(value));
    } else {
      AddMember(g, value);
    }
  }
}

void Accumulator::UpdateSketch(const Column& c, const int32_t* gids, int64_t rows) {
  const bool has_nulls = c.null_count > 0;
  if (spec_.kind == AggKind::kApproxCountDistinct) {
    // Spark's xxhash64 with seed 42 (HyperLogLogPlusPlusHelper.update).
    hashes_.resize(static_cast<size_t>(rows));
    SparkXxHash64(c, 42, rows, hashes_.data());
    for (int64_t i = 0; i < rows; ++i) {
      if (has_nulls && c.IsNull(i)) continue;
      hlls_[static_cast<size_t>(gids[i])].Add(hashes_[static_cast<size_t>(i)]);
    }
    return;
  }
  // percentile_approx works on doubles (ApproximatePercentile.update).
  const int scale = c.type->scale();
  for (int64_t i = 0; i < rows; ++i) {
    if (has_nulls && c.IsNull(i)) continue;
    double x;
    switch (domain_) {
      case Domain::kDouble: x = DoubleAt(c, i); break;
      case Domain::kDecimal: x = DecimalToDouble(DecimalAt(c, i), scale); break;
      default: x = static_cast<double>(IntAt(c, i)); break;
    }
    digests_[static_cast<size_t>(gids[i])].Insert(x);
  }
}

// ---- State format (docs/format/aggregate-state.md, "Aggregate states").

void Accumulator::PutDomainValue(size_t g, std::string* out) const {
  switch (domain_) {
    case Domain::kInt:
      // avg of integers sums in doubles.
      if (spec_.kind == AggKind::kAvg) {
        PutFixed(out, doubles_[g]);
      } else {
        PutFixed(out, ints_[g]);
      }
      break;
    case Domain::kDouble: PutFixed(out, doubles_[g]); break;
    case Domain::kDecimal: PutFixed(out, decimals_[g]); break;
    case Domain::kBytes: PutBytes(out, strings_[g]); break;
    case Domain::kEncoded: break;
  }
}

bool Accumulator::GetDomainValue(std::string_view* in, int64_t* i, double* d, __int128* dec,
                                 std::string_view* s) const {
  switch (domain_) {
    case Domain::kInt:
      if (spec_.kind == AggKind::kAvg) return GetFixed(in, d);
      return GetFixed(in, i);
    case Domain::kDouble: return GetFixed(in, d);
    case Domain::kDecimal: return GetFixed(in, dec);
    case Domain::kBytes: return GetBytes(in, s);
    case Domain::kEncoded: return false;
  }
  return false;
}

void Accumulator::Serialize(size_t g, std::string* out) const {
  switch (spec_.kind) {
    case AggKind::kCountStar:
    case AggKind::kCount: PutFixed(out, counts_[g]); return;
    case AggKind::kSum:
    case AggKind::kAvg:
      PutFixed(out, counts_[g]);
      if (counts_[g] == 0) return;
      if (domain_ == Domain::kDecimal) PutFixed<uint8_t>(out, overflowed_[g]);
      PutDomainValue(g, out);
      return;
    case AggKind::kMin:
    case AggKind::kMax:
      PutFixed<uint8_t>(out, seen_[g]);
      if (seen_[g]) PutDomainValue(g, out);
      return;
    case AggKind::kFirst:
    case AggKind::kLast:
      PutFixed<uint8_t>(out, seen_[g]);
      if (seen_[g]) PutBytes(out, values_[g]);
      return;
    case AggKind::kCountDistinct:
    case AggKind::kCollectList:
    case AggKind::kCollectSet:
      PutFixed<uint32_t>(out, static_cast<uint32_t>(lists_[g].size()));
      for (const std::string& v : lists_[g]) PutBytes(out, v);
      return;
    case AggKind::kApproxCountDistinct:
      PutFixed<uint8_t>(out, static_cast<uint8_t>(hll_p_));
      hlls_[g].AppendRegisters(out);
      return;
    case AggKind::kPercentileApprox:
      // Spark serializes the compressed summary (compressing only once).
      if (!digests_[g].compressed()) digests_[g].Compress();
      digests_[g].AppendState(out);
      return;
    default:
      PutFixed(out, n_[g]);
      PutFixed(out, avg_[g]);
      PutFixed(out, m2_[g]);
      return;
  }
}

Status Accumulator::Merge(size_t g, std::string_view* in) {
  auto corrupt = [&] {
    return Status::Corruption("malformed ", AggKindName(spec_.kind), " state");
  };
  switch (spec_.kind) {
    case AggKind::kCountStar:
    case AggKind::kCount: {
      int64_t n;
      if (!GetFixed(in, &n) || n < 0) return corrupt();
      counts_[g] += n;
      return Status::OK();
    }
    case AggKind::kSum:
    case AggKind::kAvg: {
      int64_t n;
      if (!GetFixed(in, &n) || n < 0) return corrupt();
      if (n == 0) return Status::OK();
      uint8_t overflow = 0;
      if (domain_ == Domain::kDecimal && (!GetFixed(in, &overflow) || overflow > 1)) {
        return corrupt();
      }
      int64_t iv = 0;
      double dv = 0;
      __int128 decv = 0;
      std::string_view sv;
      if (!GetDomainValue(in, &iv, &dv, &decv, &sv)) return corrupt();
      counts_[g] += n;
      seen_[g] = 1;
      if (domain_ == Domain::kDecimal) {
        if (overflow) {
          overflowed_[g] = 1;
        } else {
          AddDecimal(g, decv);
        }
      } else if (domain_ == Domain::kDouble || spec_.kind == AggKind::kAvg) {
        doubles_[g] = dv + doubles_[g];
      } else {
        ints_[g] =
            static_cast<int64_t>(static_cast<uint64_t>(ints_[g]) + static_cast<uint64_t>(iv));
      }
      return Status::OK();
    }
    case AggKind::kMin:
    case AggKind::kMax: {
      uint8_t has;
      if (!GetFixed(in, &has) || has > 1) return corrupt();
      if (!has) return Status::OK();
      int64_t iv = 0;
      double dv = 0;
      __int128 decv = 0;
      std::string_view sv;
      if (!GetDomainValue(in, &iv, &dv, &decv, &sv)) return corrupt();
      // The stored value came first, so it wins ties (-0.0 against 0.0).
      const bool is_min = spec_.kind == AggKind::kMin;
      const bool empty = !seen_[g];
      seen_[g] = 1;
      switch (domain_) {
        case Domain::kInt:
          if (empty || !(is_min ? ints_[g] < iv : ints_[g] > iv)) ints_[g] = iv;
          break;
        case Domain::kDouble:
          if (empty || !(is_min ? DoubleLess(doubles_[g], dv) : DoubleLess(dv, doubles_[g]))) {
            doubles_[g] = dv;
          }
          break;
        case Domain::kDecimal:
          if (empty || !(is_min ? decimals_[g] < decv : decimals_[g] > decv)) decimals_[g] = decv;
          break;
        case Domain::kBytes: {
          int cmp = empty ? 0 : std::string_view(strings_[g]).compare(sv);
          if (empty || !(is_min ? cmp < 0 : cmp > 0)) strings_[g].assign(sv);
          break;
        }
        case Domain::kEncoded: break;
      }
      return Status::OK();
    }
    case AggKind::kFirst:
    case AggKind::kLast: {
      uint8_t has;
      if (!GetFixed(in, &has) || has > 1) return corrupt();
      if (!has) return Status::OK();
      std::string_view v;
      if (!GetBytes(in, &v) || !IsEncodedValue(spec_.arg_type, v, false)) return corrupt();
      // The stored rows came first: first() prefers them, last() only fills
      // a group that has no value of its own.
      if (spec_.kind == AggKind::kFirst || !seen_[g]) values_[g].assign(v);
      seen_[g] = 1;
      return Status::OK();
    }
    case AggKind::kCountDistinct:
    case AggKind::kCollectList:
    case AggKind::kCollectSet: {
      uint32_t n;
      if (!GetFixed(in, &n)) return corrupt();
      std::vector<std::string> stored;
      for (uint32_t e = 0; e < n; ++e) {
        std::string_view v;
        if (!GetBytes(in, &v) || !IsEncodedValue(spec_.arg_type, v, true)) return corrupt();
        stored.emplace_back(v);
      }
      if (spec_.kind == AggKind::kCollectList) {
        counts_[g] += n;
        for (std::string& v : lists_[g]) stored.push_back(std::move(v));
        lists_[g] = std::move(stored);
        return Status::OK();
      }
      // Stored values first, then this group's new ones, each once.
      std::vector<std::string> own = std::move(lists_[g]);
      lists_[g].clear();
      counts_[g] = 0;
      std::string key;
      for (const std::string& v : own) {
        if (MemberKey(g, v, &key)) members_.erase(key);
      }
      for (const std::string& v : stored) AddMember(g, v);
      for (const std::string& v : own) AddMember(g, v);
      return Status::OK();
    }
    case AggKind::kApproxCountDistinct: {
      uint8_t p;
      if (!GetFixed(in, &p) || p != hll_p_ || in->size() < (size_t{1} << p)) return corrupt();
      SILT_RETURN_NOT_OK(hlls_[g].MergeRegisters(in->substr(0, size_t{1} << p)));
      in->remove_prefix(size_t{1} << p);
      return Status::OK();
    }
    case AggKind::kPercentileApprox: {
      // Spark's streaming merge: the stored summary on the left, this
      // batch's (compressed, as Spark's shuffle serializes it) on the right.
      QuantileSummary stored(1.0 / static_cast<double>(spec_.accuracy));
      SILT_RETURN_NOT_OK(stored.ReadState(in));
      if (!digests_[g].compressed()) digests_[g].Compress();
      stored.Merge(digests_[g]);
      digests_[g] = std::move(stored);
      return Status::OK();
    }
    default: {
      double n1, avg1, m21;
      if (!GetFixed(in, &n1) || !GetFixed(in, &avg1) || !GetFixed(in, &m21) || !(n1 >= 0)) {
        return corrupt();
      }
      if (n1 == 0) return Status::OK();
      if (n_[g] == 0) {
        n_[g] = n1;
        avg_[g] = avg1;
        m2_[g] = m21;
        return Status::OK();
      }
      // Spark's CentralMomentAgg merge, stored state on the left.
      const double n2 = n_[g];
      const double n = n1 + n2;
      const double delta = avg_[g] - avg1;
      const double delta_n = n == 0.0 ? 0.0 : delta / n;
      avg_[g] = avg1 + delta_n * n2;
      m2_[g] = m21 + m2_[g] + delta * delta_n * n1 * n2;
      n_[g] = n;
      return Status::OK();
    }
  }
}

Status Accumulator::AppendPercentiles(size_t g, ColumnBuilder* b) const {
  std::optional<std::vector<double>> values = digests_[g].Query(spec_.percentages);
  // Spark: null without values, and for an empty array of percentages.
  if (!values || values->empty()) {
    b->AppendNull();
    return Status::OK();
  }
  ColumnBuilder* target = spec_.percentages_array ? b->child(0) : b;
  const columnar::DataType& type = *spec_.arg_type;
  for (double v : *values) {
    // Back to the argument's type as Spark's eval does (d.toInt, d.toLong,
    // ...; the values are input values, so in range).
    switch (type.id()) {
      case TypeId::kByte: target->Append<int8_t>(static_cast<int8_t>(JavaDoubleToInt(v))); break;
      case TypeId::kShort: target->Append<int16_t>(static_cast<int16_t>(JavaDoubleToInt(v))); break;
      case TypeId::kInt:
      case TypeId::kDate: target->Append<int32_t>(JavaDoubleToInt(v)); break;
      case TypeId::kFloat: target->Append<float>(static_cast<float>(v)); break;
      case TypeId::kDouble: target->Append<double>(v); break;
      case TypeId::kDecimal: {
        std::optional<__int128> d = DoubleToDecimal(v, type.precision(), type.scale());
        if (!d)
          return Status::Corruption("percentile_approx value ", v, " does not fit ", type.ToDdl());
        target->Append<__int128>(*d);
        break;
      }
      default: target->Append<int64_t>(JavaDoubleToLong(v)); break;
    }
  }
  if (spec_.percentages_array) b->CloseList();
  return Status::OK();
}

Result<ColumnPtr> Accumulator::Finish(size_t groups) const {
  ColumnBuilder b(result_type_);
  b.Reserve(static_cast<int64_t>(groups));
  const TypeId out = result_type_->id();
  auto corrupt = [&] {
    return Status::Corruption("malformed value in a ", AggKindName(spec_.kind), " state");
  };
  for (size_t g = 0; g < groups; ++g) {
    switch (spec_.kind) {
      case AggKind::kCountStar:
      case AggKind::kCount:
      case AggKind::kCountDistinct: b.Append<int64_t>(counts_[g]); continue;
      case AggKind::kApproxCountDistinct: b.Append<int64_t>(hlls_[g].Estimate()); continue;
      case AggKind::kPercentileApprox: SILT_RETURN_NOT_OK(AppendPercentiles(g, &b)); continue;
      case AggKind::kCollectList:
      case AggKind::kCollectSet: {
        const columnar::DataType& element = *result_type_->element_type();
        for (const std::string& v : lists_[g]) {
          std::string_view in = v;
          // Elements are never null (nulls are skipped on the way in).
          if (in.empty() || in.front() == 0 || !DecodeValue(element, &in, b.child(0)) ||
              !in.empty()) {
            return corrupt();
          }
        }
        b.CloseList();
        continue;
      }
      case AggKind::kFirst:
      case AggKind::kLast: {
        if (!seen_[g]) {
          b.AppendNull();
          continue;
        }
        std::string_view in = values_[g];
        if (!DecodeValue(*result_type_, &in, &b) || !in.empty()) return corrupt();
        continue;
      }
      default: break;
    }
    if (IsMoment()) {
      const double n = n_[g];
      const bool samp = spec_.kind == AggKind::kStddevSamp || spec_.kind == AggKind::kVarSamp;
      // Spark 3.5: null without rows, and null for one row in the sample
      // variants (spark.sql.legacy.statisticalAggregate=false).
      if (n == 0.0 || (samp && n == 1.0)) {
        b.AppendNull();
        continue;
      }
      double v = m2_[g] / (samp ? n - 1.0 : n);
      if (spec_.kind == AggKind::kStddevSamp || spec_.kind == AggKind::kStddevPop) {
        v = std::sqrt(v);
      }
      b.Append<double>(v);
      continue;
    }
    if (!seen_[g]) {
      b.AppendNull();
      continue;
    }
    if (spec_.kind == AggKind::kSum) {
      if (domain_ == Domain::kDecimal) {
        if (overflowed_[g]) {
          b.AppendNull();  // overflow: null without ANSI
        } else {
          b.Append<__int128>(decimals_[g]);
        }
      } else if (domain_ == Domain::kDouble) {
        b.Append<double>(doubles_[g]);
      } else {
        b.Append<int64_t>(ints_[g]);
      }
      continue;
    }
    if (spec_.kind == AggKind::kAvg) {
      if (domain_ == Domain::kDecimal && overflowed_[g]) {
        b.AppendNull();  // the sum overflowed: null without ANSI
      } else if (domain_ == Domain::kDecimal) {
        int shift = result_type_->scale() - spec_.arg_type->scale();
        __int128 num = decimals_[g] * Pow10(shift);
        __int128 n = counts_[g];
        __int128 q = num / n;
        __int128 r = num % n;
        if (r < 0) r = -r;
        if (2 * r >= n) q += num < 0 ? -1 : 1;  // HALF_UP
        b.Append<__int128>(q);
      } else {
        b.Append<double>(doubles_[g] / static_cast<double>(counts_[g]));
      }
      continue;
    }
    // min / max: back to the argument's physical type.
    switch (out) {
      case TypeId::kBoolean: b.AppendBool(ints_[g] != 0); break;
      case TypeId::kByte: b.Append<int8_t>(static_cast<int8_t>(ints_[g])); break;
      case TypeId::kShort: b.Append<int16_t>(static_cast<int16_t>(ints_[g])); break;
      case TypeId::kInt:
      case TypeId::kDate: b.Append<int32_t>(static_cast<int32_t>(ints_[g])); break;
      case TypeId::kFloat: b.Append<float>(static_cast<float>(doubles_[g])); break;
      case TypeId::kDouble: b.Append<double>(doubles_[g]); break;
      case TypeId::kDecimal: b.Append<__int128>(decimals_[g]); break;
      case TypeId::kString:
      case TypeId::kBinary: b.AppendString(strings_[g]); break;
      default: b.Append<int64_t>(ints_[g]); break;
    }
  }
  return b.Finish();
}

}  // namespace silt::exec::internal
