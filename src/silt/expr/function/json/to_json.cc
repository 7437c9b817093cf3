// to_json: struct, map and array values as JSON text.
#include <cmath>
#include <string>

#include "silt/base/json_writer.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;

// to_json(struct | map | array): Spark's JacksonGenerator with default
// options: NULL struct fields left out, timestamps as
// yyyy-MM-dd'T'HH:mm:ss.SSSXXX in the session time zone.
class ToJsonKernel final : public Kernel {
 public:
  explicit ToJsonKernel(TimeZonePtr zone) : zone_(std::move(zone)) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    const Datum& d = args.args[0];
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    std::string text;
    for (int64_t row = 0; row < n; ++row) {
      int64_t r = d.constant ? 0 : row;
      if (d.column->IsNull(r)) {
        builder.AppendNull();
        continue;
      }
      text.clear();
      Write(*d.column, r, &text);
      builder.AppendString(text);
    }
    return builder.Finish();
  }

 private:
  void Write(const Column& c, int64_t row, std::string* out) const {
    if (c.IsNull(row)) {
      out->append("null");
      return;
    }
    const columnar::DataType& t = *c.type;
    switch (t.id()) {
      case TypeId::kStruct: {
        out->push_back('{');
        bool first = true;
        for (int i = 0; i < t.num_fields(); ++i) {
          const Column& f = *c.children[static_cast<size_t>(i)];
          if (f.IsNull(row)) continue;
          if (!first) out->push_back(',');
          first = false;
          out->push_back('"');
          AppendJsonEscaped(out, t.field(i).name);
          out->append("\":");
          Write(f, row, out);
        }
        out->push_back('}');
        return;
      }
      case TypeId::kArray: {
        out->push_back('[');
        const int32_t* off = c.offsets();
        for (int32_t e = off[row]; e < off[row + 1]; ++e) {
          if (e > off[row]) out->push_back(',');
          Write(*c.children[0], e, out);
        }
        out->push_back(']');
        return;
      }
      case TypeId::kMap: {
        out->push_back('{');
        const int32_t* off = c.offsets();
        const Column& entries = *c.children[0];
        for (int32_t e = off[row]; e < off[row + 1]; ++e) {
          if (e > off[row]) out->push_back(',');
          std::string key;
          AppendValueText(*entries.children[0], e, CastOptions{}, &key);
          out->push_back('"');
          AppendJsonEscaped(out, key);
          out->append("\":");
          Write(*entries.children[1], e, out);
        }
        out->push_back('}');
        return;
      }
      case TypeId::kString: {
        out->push_back('"');
        AppendJsonEscaped(out, c.StringValue(row));
        out->push_back('"');
        return;
      }
      case TypeId::kDate: {
        out->push_back('"');
        AppendValueText(c, row, CastOptions{}, out);
        out->push_back('"');
        return;
      }
      case TypeId::kTimestamp: {
        int64_t micros = c.Value<int64_t>(row);
        int32_t offset = zone_->OffsetSecondsAt(micros);
        int64_t local = micros + int64_t{offset} * columnar::kMicrosPerSecond;
        int32_t days = columnar::DaysFromMicros(local);
        int64_t in_day = local - int64_t{days} * columnar::kMicrosPerDay;
        columnar::CivilDate civil = columnar::CivilFromDays(days);
        char buf[64];
        int64_t secs = in_day / 1000000;
        std::snprintf(buf, sizeof(buf), "\"%04d-%02d-%02dT%02d:%02d:%02d.%03d", civil.year,
                      civil.month, civil.day, static_cast<int>(secs / 3600),
                      static_cast<int>(secs / 60 % 60), static_cast<int>(secs % 60),
                      static_cast<int>(in_day % 1000000 / 1000));
        out->append(buf);
        if (offset == 0) {
          out->append("Z\"");
        } else {
          int32_t a = offset < 0 ? -offset : offset;
          std::snprintf(buf, sizeof(buf), "%c%02d:%02d\"", offset < 0 ? '-' : '+', a / 3600,
                        a / 60 % 60);
          out->append(buf);
        }
        return;
      }
      case TypeId::kFloat:
      case TypeId::kDouble: {
        // Jackson quotes NaN and the infinities (QUOTE_NON_NUMERIC_NUMBERS).
        const double d = t.id() == TypeId::kFloat ? static_cast<double>(c.Value<float>(row))
                                                  : c.Value<double>(row);
        if (!std::isfinite(d)) out->push_back('"');
        AppendValueText(c, row, CastOptions{}, out);
        if (!std::isfinite(d)) out->push_back('"');
        return;
      }
      default: AppendValueText(c, row, CastOptions{}, out); return;
    }
  }
  TimeZonePtr zone_;
};

Result<BoundNodePtr> BindToJson(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 2));
  if (!site.args[0]->type()->is_nested()) return ArgTypeError(site, 0, "STRUCT, MAP or ARRAY");
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  bool nullable = args[0]->nullable();
  return MakeBoundCall(site, DataType::String(), nullable, std::move(args),
                       std::make_unique<ToJsonKernel>(SessionTimeZone(site.options)),
                       std::move(sql));
}

}  // namespace

void RegisterToJsonFunction(FunctionRegistry* registry) {
  registry->Register("to_json", &BindToJson);
}

}  // namespace silt::expr
