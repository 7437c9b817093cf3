// Unix time and formatting in the session time zone: date_format,
// from_unixtime, unix_timestamp / to_unix_timestamp, timestamp_seconds /
// _millis / _micros and unix_seconds / _millis / _micros. Semantics of
// Spark 3.5's DateTimeUtils (non-ANSI: unparsable text is NULL).
#include <cmath>
#include <limits>
#include <string>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/function/datetime/datetime_args.h"
#include "silt/expr/function/datetime/datetime_format.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::kMicrosPerDay;
using columnar::kMicrosPerSecond;
using datetime_args::CoerceTo;
using datetime_args::FloorDiv;

constexpr const char* kDefaultPattern = "yyyy-MM-dd HH:mm:ss";

// A constant pattern argument compiled at bind time; nullopt for NULL.
Result<std::optional<DateTimeFormat>> PatternArg(CallSite& site, size_t index) {
  SILT_RETURN_NOT_OK(CoerceTo(site, index, DataType::String(), "a STRING pattern"));
  SILT_ASSIGN_OR_RETURN(ColumnPtr pattern, ConstantArg(site, index, "the datetime pattern"));
  if (pattern->IsNull(0)) return std::optional<DateTimeFormat>();
  Result<DateTimeFormat> format = DateTimeFormat::Compile(pattern->StringValue(0));
  if (!format.ok()) return format.status().WithContextParts("in '", site.text, "'");
  return std::optional<DateTimeFormat>(std::move(format).MoveValueUnsafe());
}

// date_format(ts, fmt) and from_unixtime(secs, fmt): TIMESTAMP micros or
// BIGINT seconds to text in the session time zone.
class FormatKernel final : public Kernel {
 public:
  FormatKernel(std::optional<DateTimeFormat> format, TimeZonePtr zone, bool seconds)
      : format_(std::move(format)), zone_(std::move(zone)), seconds_(seconds) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    FixedReader<int64_t> in(args.args[0]);
    ValidityOut validity(n);
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    if (!validity.InitFromArgs(args.args.subspan(0, 1)) || !format_) {
      builder.AppendNulls(n);
      return builder.Finish();
    }
    std::string text;
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      int64_t micros = in[row];
      if (seconds_) {
        if (micros > std::numeric_limits<int64_t>::max() / kMicrosPerSecond ||
            micros < std::numeric_limits<int64_t>::min() / kMicrosPerSecond) {
          builder.AppendNull();
          continue;
        }
        micros *= kMicrosPerSecond;
      }
      int32_t offset = zone_->OffsetSecondsAt(micros);
      text.clear();
      format_->Format(micros + int64_t{offset} * kMicrosPerSecond, offset, &text);
      builder.AppendString(text);
    }
    return builder.Finish();
  }

 private:
  std::optional<DateTimeFormat> format_;
  TimeZonePtr zone_;
  bool seconds_;
};

Result<BoundNodePtr> BindDateFormat(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Timestamp(), "TIMESTAMP"));
  SILT_ASSIGN_OR_RETURN(std::optional<DateTimeFormat> format, PatternArg(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(
      site, DataType::String(), true, std::move(args),
      std::make_unique<FormatKernel>(std::move(format), SessionTimeZone(site.options), false),
      std::move(sql));
}

Result<BoundNodePtr> BindFromUnixtime(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 2));
  SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Long(), "BIGINT"));
  std::optional<DateTimeFormat> format;
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (site.args.size() == 2) {
    SILT_ASSIGN_OR_RETURN(format, PatternArg(site, 1));
  } else {
    SILT_ASSIGN_OR_RETURN(DateTimeFormat f, DateTimeFormat::Compile(kDefaultPattern));
    format = std::move(f);
    sqls.push_back(kDefaultPattern);
  }
  std::string sql = PrettyCall(site.name, sqls);
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(
      site, DataType::String(), true, std::move(args),
      std::make_unique<FormatKernel>(std::move(format), SessionTimeZone(site.options), true),
      std::move(sql));
}

// unix_timestamp / to_unix_timestamp: seconds since the epoch of a
// timestamp, a date (its local midnight) or text parsed with the pattern.
class UnixTimestampKernel final : public Kernel {
 public:
  UnixTimestampKernel(std::optional<DateTimeFormat> format, TimeZonePtr zone)
      : format_(std::move(format)), zone_(std::move(zone)) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    ValidityOut validity(n);
    FixedWriter<int64_t> out(n);
    if (args.args.empty()) {
      for (int64_t row = 0; row < n; ++row) {
        out.Set(row, FloorDiv(args.eval->current_timestamp_micros, kMicrosPerSecond));
      }
      return out.Finish(info.type, &validity);
    }
    if (!validity.InitFromArgs(args.args.subspan(0, 1))) return out.Finish(info.type, &validity);
    switch (info.arg_types[0]->id()) {
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz: {
        FixedReader<int64_t> in(args.args[0]);
        // Spark divides with truncation (1969-12-31 23:59:59.5 gives 0).
        for (int64_t row = 0; row < n; ++row) out.Set(row, in[row] / kMicrosPerSecond);
        break;
      }
      case TypeId::kDate: {
        FixedReader<int32_t> in(args.args[0]);
        for (int64_t row = 0; row < n; ++row) {
          out.Set(row,
                  FloorDiv(zone_->LocalToUtc(int64_t{in[row]} * kMicrosPerDay), kMicrosPerSecond));
        }
        break;
      }
      default: {
        StringReader in(args.args[0]);
        if (!format_) {
          validity.SetAllNull();
          break;
        }
        for (int64_t row = 0; row < n; ++row) {
          if (!validity.IsValid(row)) continue;
          std::optional<int64_t> local = format_->ParseTimestamp(in[row], 0);
          if (!local) {
            SILT_RETURN_NOT_OK(CheckLegacyParser(*format_, in[row], row, info.sql));
            if (info.options.ansi) {
              return Status::InvalidArgument("Cannot parse '", in[row], "' with pattern '",
                                             format_->pattern(), "' (row ", row, ") in '", info.sql,
                                             "'");
            }
            validity.SetNull(row);
            continue;
          }
          // Text with its own offset parses to UTC directly; zone-less text
          // is local time in the session zone.
          std::optional<int64_t> with_offset =
              format_->ParseTimestamp(in[row], int64_t{1} * kMicrosPerSecond);
          int64_t utc =
              (with_offset && *with_offset == *local) ? *local : zone_->LocalToUtc(*local);
          out.Set(row, utc / kMicrosPerSecond);
        }
        break;
      }
    }
    return out.Finish(info.type, &validity);
  }

 private:
  std::optional<DateTimeFormat> format_;
  TimeZonePtr zone_;
};

Result<BoundNodePtr> BindUnixTimestamp(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, site.name == "unix_timestamp" ? 0 : 1, 2));
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (site.args.empty()) {
    sqls = {"current_timestamp()", kDefaultPattern};
    std::string sql = PrettyCall(site.name, sqls);
    return MakeBoundCall(site, DataType::Long(), false, {},
                         std::make_unique<UnixTimestampKernel>(std::nullopt, TimeZone::Utc()),
                         std::move(sql), /*context_dependent=*/true);
  }
  TypeId in = site.args[0]->type()->id();
  if (in != TypeId::kTimestamp && in != TypeId::kTimestampNtz && in != TypeId::kDate) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::String(), "STRING, DATE or TIMESTAMP"));
  }
  std::optional<DateTimeFormat> format;
  if (site.args.size() == 2) {
    SILT_ASSIGN_OR_RETURN(format, PatternArg(site, 1));
  } else {
    SILT_ASSIGN_OR_RETURN(DateTimeFormat f, DateTimeFormat::Compile(kDefaultPattern));
    format = std::move(f);
    sqls.push_back(kDefaultPattern);
  }
  std::string sql = PrettyCall(site.name, sqls);
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(
      site, DataType::Long(), true, std::move(args),
      std::make_unique<UnixTimestampKernel>(std::move(format), SessionTimeZone(site.options)),
      std::move(sql));
}

// timestamp_seconds / _millis / _micros: numbers to TIMESTAMP.
template <int64_t kUnit>
Result<ColumnPtr> FromEpochKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  ValidityOut validity(n);
  FixedWriter<int64_t> out(n);
  if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
  if (info.arg_types[0]->id() == TypeId::kDouble) {
    FixedReader<double> in(args.args[0]);
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) continue;
      double v = in[row];
      if (!std::isfinite(v)) {
        validity.SetNull(row);
        continue;
      }
      // Spark: (d * MICROS_PER_SECOND).toLong, which saturates.
      double m = v * static_cast<double>(kUnit);
      int64_t r = m >= 9.2233720368547758e18    ? std::numeric_limits<int64_t>::max()
                  : m <= -9.2233720368547758e18 ? std::numeric_limits<int64_t>::min()
                                                : static_cast<int64_t>(m);
      out.Set(row, r);
    }
    return out.Finish(info.type, &validity);
  }
  FixedReader<int64_t> in(args.args[0]);
  for (int64_t row = 0; row < n; ++row) {
    if (!validity.IsValid(row)) continue;
    int64_t r;
    if (__builtin_mul_overflow(in[row], kUnit, &r)) {
      return Status::InvalidArgument("long overflow converting ", in[row], " (row ", row,
                                     ") to a timestamp in '", info.sql, "'");
    }
    out.Set(row, r);
  }
  return out.Finish(info.type, &validity);
}

template <int64_t kUnit>
Result<BoundNodePtr> BindFromEpoch(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const DataType& t = *site.args[0]->type();
  if (kUnit == kMicrosPerSecond &&
      (t.id() == TypeId::kFloat || t.id() == TypeId::kDouble || t.id() == TypeId::kDecimal)) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Double(), "numeric"));
  } else if (t.is_integral() || t.id() == TypeId::kNull) {
    SILT_RETURN_NOT_OK(CoerceTo(site, 0, DataType::Long(), "integral"));
  } else {
    return ArgTypeError(site, 0, kUnit == kMicrosPerSecond ? "numeric" : "integral");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args) || kUnit == kMicrosPerSecond;
  return MakeBoundCall(site, DataType::Timestamp(), nullable, std::move(site.args),
                       &FromEpochKernel<kUnit>, std::move(sql));
}

// unix_seconds / _millis / _micros: TIMESTAMP to BIGINT (floor).
template <int64_t kUnit>
Result<ColumnPtr> ToEpochKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  ValidityOut validity(n);
  FixedWriter<int64_t> out(n);
  validity.InitFromArgs(args.args);
  FixedReader<int64_t> in(args.args[0]);
  for (int64_t row = 0; row < n; ++row) out.Set(row, FloorDiv(in[row], kMicrosPerSecond / kUnit));
  return out.Finish(info.type, &validity);
}

template <int64_t kUnit>
Result<BoundNodePtr> BindToEpoch(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  if (site.args[0]->type()->id() != TypeId::kTimestamp) {
    return ArgTypeError(site, 0, "TIMESTAMP");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Long(), nullable, std::move(site.args),
                       &ToEpochKernel<kUnit>, std::move(sql));
}

}  // namespace

void RegisterUnixTimeFunctions(FunctionRegistry* registry) {
  registry->Register("date_format", &BindDateFormat);
  registry->Register("from_unixtime", &BindFromUnixtime);
  registry->Register("unix_timestamp", &BindUnixTimestamp);
  registry->Register("to_unix_timestamp", &BindUnixTimestamp);
  registry->Register("timestamp_seconds", &BindFromEpoch<kMicrosPerSecond>);
  registry->Register("timestamp_millis", &BindFromEpoch<1000>);
  registry->Register("timestamp_micros", &BindFromEpoch<1>);
  registry->Register("unix_seconds", &BindToEpoch<1>);
  registry->Register("unix_millis", &BindToEpoch<1000>);
  registry->Register("unix_micros", &BindToEpoch<kMicrosPerSecond>);
}

}  // namespace silt::expr
