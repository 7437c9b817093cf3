// Date/time functions: to_timestamp, to_date, current_timestamp / now,
// current_date / curdate.
//
// to_timestamp(s) and to_date(s) without a pattern are CAST(s AS TIMESTAMP /
// DATE), as in Spark. With a pattern they parse with a compiled
// DateTimeFormat; non-matching text is NULL (ANSI: an error). Zone-less text
// is in the session time zone. current_timestamp() is fixed per batch (the
// EvalContext's value), as Spark fixes it per micro-batch.
#include "silt/columnar/temporal.h"
#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/datetime_format.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/type_util.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

// Parses strings with a pattern into TIMESTAMP micros, or DATE days.
class ParseWithFormatKernel final : public Kernel {
 public:
  ParseWithFormatKernel(DateTimeFormat format, bool to_date)
      : format_(std::move(format)), to_date_(to_date) {}

  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    int64_t n = args.num_rows;
    StringReader in(args.args[0]);
    ValidityOut validity(n);
    validity.InitFromArgs(args.args);
    int64_t offset = info.options.session_zone_offset_micros;
    if (to_date_) {
      FixedWriter<int32_t> out(n);
      for (int64_t row = 0; row < n; ++row) {
        if (!validity.IsValid(row)) continue;
        std::optional<int64_t> micros = format_.ParseTimestamp(in[row], offset);
        if (!micros) {
          SILT_RETURN_NOT_OK(Fail(info, in[row], row));
          validity.SetNull(row);
          continue;
        }
        out.Set(row, columnar::DaysFromMicros(*micros + offset));
      }
      return out.Finish(info.type, &validity);
    }
    FixedWriter<int64_t> out(n);
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) continue;
      std::optional<int64_t> micros = format_.ParseTimestamp(in[row], offset);
      if (!micros) {
        SILT_RETURN_NOT_OK(Fail(info, in[row], row));
        validity.SetNull(row);
        continue;
      }
      out.Set(row, *micros);
    }
    return out.Finish(info.type, &validity);
  }

 private:
  Status Fail(const KernelInfo& info, std::string_view value, int64_t row) const {
    if (!info.options.ansi) return Status::OK();
    return Status::InvalidArgument("Cannot parse '", value, "' with pattern '", format_.pattern(),
                                   "' (row ", row, ") in '", info.sql, "'");
  }

  DateTimeFormat format_;
  bool to_date_;
};

Result<ColumnPtr> CurrentTimestampKernel(const KernelInfo& info, const ExecArgs& args) {
  FixedWriter<int64_t> out(args.num_rows);
  for (int64_t row = 0; row < args.num_rows; ++row) {
    out.Set(row, args.eval->current_timestamp_micros);
  }
  ValidityOut validity(args.num_rows);
  return out.Finish(info.type, &validity);
}

Result<ColumnPtr> CurrentDateKernel(const KernelInfo& info, const ExecArgs& args) {
  FixedWriter<int32_t> out(args.num_rows);
  int32_t days = columnar::DaysFromMicros(args.eval->current_timestamp_micros +
                                          info.options.session_zone_offset_micros);
  for (int64_t row = 0; row < args.num_rows; ++row) out.Set(row, days);
  ValidityOut validity(args.num_rows);
  return out.Finish(info.type, &validity);
}

template <bool kDate>
Result<BoundNodePtr> BindCurrent(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 0, 0));
  TypePtr type = kDate ? DataType::Date() : DataType::Timestamp();
  KernelFn fn = kDate ? &CurrentDateKernel : &CurrentTimestampKernel;
  std::string sql = PrettyCall(site.name, {});
  return MakeBoundCall(site, type, /*nullable=*/false, {}, std::make_unique<FunctionKernel>(fn),
                       std::move(sql), /*context_dependent=*/true);
}

// to_timestamp(x [, fmt]) and to_date(x [, fmt]).
template <bool kDate>
Result<BoundNodePtr> BindParse(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 2));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  TypePtr type = kDate ? DataType::Date() : DataType::Timestamp();
  TypeId in = site.args[0]->type()->id();
  bool is_datetime = in == TypeId::kDate || in == TypeId::kTimestamp || in == TypeId::kTimestampNtz;
  if (!is_datetime && in != TypeId::kString) {
    // Spark's implicit cast to the first accepted type: other atomic values
    // are read as text.
    if (!IsAtomic(*site.args[0]->type()) && in != TypeId::kNull) {
      return ArgTypeError(site, 0, "STRING, DATE or TIMESTAMP");
    }
    SILT_ASSIGN_OR_RETURN(site.args[0],
                          ImplicitCast(std::move(site.args[0]), DataType::String(), site.options));
  }
  bool has_format = site.args.size() == 2;
  bool is_text = !is_datetime;
  if (!has_format || !is_text) {
    // Spark replaces these by a cast (the pattern is ignored for dates and
    // timestamps).
    SILT_ASSIGN_OR_RETURN(BoundNodePtr cast,
                          ImplicitCast(std::move(site.args[0]), type, site.options));
    // Re-wrap so the generated name is the function's.
    std::vector<BoundNodePtr> args;
    args.push_back(std::move(cast));
    KernelFn identity = [](const KernelInfo&, const ExecArgs& a) -> Result<ColumnPtr> {
      return a.args[0].column;
    };
    return MakeBoundCall(site, type, /*nullable=*/true, std::move(args), identity, std::move(sql));
  }
  if (!IsString(*site.args[1]->type())) return ArgTypeError(site, 1, "a STRING pattern");
  SILT_ASSIGN_OR_RETURN(ColumnPtr pattern, ConstantArg(site, 1, "the datetime pattern"));
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  if (pattern->IsNull(0)) {
    // A NULL pattern makes every row NULL.
    KernelFn all_null = [](const KernelInfo& info, const ExecArgs& a) -> Result<ColumnPtr> {
      return NullColumn(info.type, a.num_rows);
    };
    return MakeBoundCall(site, type, true, std::move(args), all_null, std::move(sql));
  }
  Result<DateTimeFormat> format = DateTimeFormat::Compile(pattern->StringValue(0));
  if (!format.ok()) {
    return format.status().WithContextParts("in '", site.text, "'");
  }
  return MakeBoundCall(
      site, type, /*nullable=*/true, std::move(args),
      std::make_unique<ParseWithFormatKernel>(std::move(format).MoveValueUnsafe(), kDate),
      std::move(sql));
}

}  // namespace

void RegisterDatetimeFunctions(FunctionRegistry* registry) {
  registry->Register("current_timestamp", &BindCurrent<false>);
  registry->Register("now", &BindCurrent<false>);
  registry->Register("current_date", &BindCurrent<true>);
  registry->Register("curdate", &BindCurrent<true>);
  registry->Register("to_timestamp", &BindParse<false>);
  registry->Register("to_date", &BindParse<true>);
}

}  // namespace silt::expr
