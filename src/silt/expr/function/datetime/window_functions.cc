// window(ts, duration[, slide[, start]]): Spark's time windows (tumbling
// and sliding), and the window list a projection's WindowExpansion expands.
#include <string>

#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;

// "10 minutes", "1 hour 30 minutes", "interval 5 seconds" -> micros.
Result<int64_t> ParseIntervalText(std::string_view text, const std::string& sql) {
  std::string lower;
  for (char c : text) lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  std::string_view s = lower;
  auto skip_ws = [&] {
    while (!s.empty() && s[0] == ' ') s.remove_prefix(1);
  };
  skip_ws();
  if (s.substr(0, 9) == "interval ") s.remove_prefix(9);
  int64_t total = 0;
  bool any = false;
  while (true) {
    skip_ws();
    if (s.empty()) break;
    size_t i = 0;
    bool neg = false;
    if (s[0] == '-') {
      neg = true;
      i = 1;
    }
    int64_t v = 0;
    size_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      v = v * 10 + (s[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) break;
    s.remove_prefix(i);
    skip_ws();
    size_t j = 0;
    while (j < s.size() && s[j] >= 'a' && s[j] <= 'z') ++j;
    std::string unit(s.substr(0, j));
    s.remove_prefix(j);
    if (unit.size() > 1 && unit.back() == 's') unit.pop_back();
    int64_t mult = 0;
    if (unit == "week") mult = 7 * 86400000000LL;
    if (unit == "day") mult = 86400000000LL;
    if (unit == "hour") mult = 3600000000LL;
    if (unit == "minute") mult = 60000000LL;
    if (unit == "second") mult = 1000000LL;
    if (unit == "millisecond") mult = 1000LL;
    if (unit == "microsecond") mult = 1LL;
    if (mult == 0) break;
    total += (neg ? -v : v) * mult;
    any = true;
  }
  skip_ws();
  if (!any || !s.empty()) {
    return Status::InvalidArgument("Cannot parse the interval '", text,
                                   "' (expected e.g. '10 minutes') in '", sql, "'");
  }
  return total;
}

struct WindowSpec {
  int64_t duration = 0;
  int64_t slide = 0;
  int64_t start = 0;
};

// The start of the latest window containing `ts` (Spark's TimeWindowing:
// ts - ((ts - startTime) mod slide), wrapping as Java's long arithmetic).
int64_t LastWindowStart(int64_t ts, const WindowSpec& spec) {
  auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
  int64_t rem = wrap(static_cast<uint64_t>(ts) - static_cast<uint64_t>(spec.start)) % spec.slide;
  if (rem < 0) rem += spec.slide;
  return wrap(static_cast<uint64_t>(ts) - static_cast<uint64_t>(rem));
}

void AppendWindow(ColumnBuilder* builder, int64_t start, int64_t duration) {
  builder->child(0)->Append<int64_t>(start);
  builder->child(1)->Append<int64_t>(
      static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(duration)));
  builder->AppendValid();
}

// window(ts, duration[, slide[, start]]) outside a projection that
// WindowExpansion expands (e.g. in a where predicate): the tumbling window
// containing ts as struct<start: timestamp, end: timestamp> (NULL for a NULL
// ts).
class WindowKernel final : public Kernel {
 public:
  explicit WindowKernel(WindowSpec spec) : spec_(spec) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    FixedReader<int64_t> in(args.args[0]);
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    for (int64_t row = 0; row < n; ++row) {
      if (!in.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      AppendWindow(&builder, LastWindowStart(in[row], spec_), spec_.duration);
    }
    return builder.Finish();
  }

 private:
  WindowSpec spec_;
};

// The window list WindowExpansion expands a projection's rows by: every window that
// contains ts, latest start first, as Spark's TimeWindowing expands a row
// (ceil(duration / slide) candidates; those not containing ts are filtered
// out); NULL for a NULL ts, which Spark's filter drops.
class WindowListKernel final : public Kernel {
 public:
  explicit WindowListKernel(WindowSpec spec) : spec_(spec) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    FixedReader<int64_t> in(args.args[0]);
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    ColumnBuilder* windows = builder.child(0);
    const int64_t candidates = (spec_.duration + spec_.slide - 1) / spec_.slide;
    const bool exact = spec_.duration % spec_.slide == 0;
    for (int64_t row = 0; row < n; ++row) {
      if (!in.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      const int64_t ts = in[row];
      const int64_t last = LastWindowStart(ts, spec_);
      for (int64_t i = 0; i < candidates; ++i) {
        int64_t start = static_cast<int64_t>(static_cast<uint64_t>(last) -
                                             static_cast<uint64_t>(i * spec_.slide));
        int64_t end = static_cast<int64_t>(static_cast<uint64_t>(start) +
                                           static_cast<uint64_t>(spec_.duration));
        if (!exact && !(ts >= start && ts < end)) continue;
        AppendWindow(windows, start, spec_.duration);
      }
      builder.CloseList();
    }
    return builder.Finish();
  }

 private:
  WindowSpec spec_;
};

TypePtr WindowStructType() {
  std::vector<columnar::Field> fields(2);
  fields[0].name = "start";
  fields[0].type = DataType::Timestamp();
  fields[1].name = "end";
  fields[1].type = DataType::Timestamp();
  return DataType::Struct(std::move(fields));
}

Result<WindowSpec> BindWindowSpec(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 4));
  if (site.args[0]->type()->id() != TypeId::kTimestamp) {
    SILT_ASSIGN_OR_RETURN(
        site.args[0], ImplicitCast(std::move(site.args[0]), DataType::Timestamp(), site.options));
  }
  int64_t values[3] = {0, 0, 0};
  for (size_t i = 1; i < site.args.size(); ++i) {
    if (!IsString(*site.args[i]->type())) return ArgTypeError(site, i, "an interval STRING");
    SILT_ASSIGN_OR_RETURN(ColumnPtr text, ConstantArg(site, i, "the interval"));
    if (text->IsNull(0)) return ArgTypeError(site, i, "a non-NULL interval");
    SILT_ASSIGN_OR_RETURN(values[i - 1], ParseIntervalText(text->StringValue(0), site.text));
  }
  WindowSpec spec;
  spec.duration = values[0];
  spec.slide = site.args.size() > 2 ? values[1] : values[0];
  spec.start = site.args.size() > 3 ? values[2] : 0;
  if (spec.duration <= 0 || spec.slide <= 0) {
    return Status::InvalidArgument("The window duration and slide must be positive in '", site.text,
                                   "'");
  }
  if (spec.slide > spec.duration) {
    // Spark: "The slide duration ... must be less than or equal to the
    // windowDuration".
    return Status::InvalidArgument("The window slide must not be longer than the window in '",
                                   site.text, "'");
  }
  if (spec.start < 0 ? -spec.start >= spec.slide : spec.start >= spec.slide) {
    return Status::InvalidArgument(
        "The window start time must be shorter than the slide (an absolute value) in '", site.text,
        "'");
  }
  return spec;
}

Result<BoundNodePtr> BindWindow(CallSite& site) {
  SILT_ASSIGN_OR_RETURN(WindowSpec spec, BindWindowSpec(site));
  if (site.options.window_column >= 0) {
    // In a projection that WindowExpansion expanded: the row's window.
    columnar::Field field;
    field.name = "window";
    field.type = WindowStructType();
    field.nullable = false;
    return BoundNodePtr(std::make_unique<BoundColumn>(site.options.window_column, field));
  }
  if (spec.slide != spec.duration) {
    return Status::NotSupported(
        "A sliding window (a slide shorter than the window) gives several rows per input row: "
        "window() expands rows only in a select item or a withColumn entry, not in '",
        site.text, "'");
  }
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(site, WindowStructType(), true, std::move(args),
                       std::make_unique<WindowKernel>(spec), "window");
}

// The window list's name is Spark's canonical TimeWindow text,
// "window(<time>, <duration>, <slide>, <start>)" in microseconds: two
// window() calls are the same window exactly when these are equal.
Result<BoundNodePtr> BindWindowList(CallSite& site) {
  // Messages quote the call as written: window(...).
  if (site.text.starts_with(kWindowListFunction)) {
    site.text = "window" + site.text.substr(kWindowListFunction.size());
  }
  SILT_ASSIGN_OR_RETURN(WindowSpec spec, BindWindowSpec(site));
  std::string sql = "window(" + site.args[0]->sql() + ", " + std::to_string(spec.duration) + ", " +
                    std::to_string(spec.slide) + ", " + std::to_string(spec.start) + ")";
  std::vector<BoundNodePtr> args;
  args.push_back(std::move(site.args[0]));
  return MakeBoundCall(site, DataType::Array(WindowStructType(), /*contains_null=*/true), true,
                       std::move(args), std::make_unique<WindowListKernel>(spec), std::move(sql));
}

// window_time(w): the event time of a window row (Spark's WindowTime), its
// end minus one microsecond, so that a window [s, e) gets a time inside it;
// NULL for a NULL window.
class WindowTimeKernel final : public Kernel {
 public:
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    const Column& window = *args.args[0].column;
    const bool constant = args.args[0].constant;
    FixedReader<int64_t> ends(*window.children[1], constant);
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    for (int64_t row = 0; row < n; ++row) {
      const int64_t at = constant ? 0 : row;
      if (!window.IsValid(at) || !ends.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      builder.Append<int64_t>(ends[row] - 1);
    }
    return builder.Finish();
  }
};

// Spark accepts the window column of window() or session_window(): a
// struct<start, end> of timestamps.
Result<BoundNodePtr> BindWindowTime(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const columnar::DataType& type = *site.args[0]->type();
  const bool window_struct = type.id() == TypeId::kStruct && type.num_fields() == 2 &&
                             type.field(0).name == "start" && type.field(1).name == "end" &&
                             type.field(0).type->id() == type.field(1).type->id() &&
                             (type.field(1).type->id() == TypeId::kTimestamp ||
                              type.field(1).type->id() == TypeId::kTimestampNtz);
  if (!window_struct) {
    return ArgTypeError(site, 0,
                        "a window column (struct<start, end> of window() or "
                        "session_window())");
  }
  const columnar::TypePtr result = type.field(1).type;
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  const bool nullable = site.args[0]->nullable();
  return MakeBoundCall(site, result, nullable, std::move(site.args),
                       std::make_unique<WindowTimeKernel>(), std::move(sql));
}

}  // namespace

void RegisterWindowFunctions(FunctionRegistry* registry) {
  registry->Register("window", &BindWindow);
  registry->Register("window_time", &BindWindowTime);
  // Not callable by name (the space): WindowExpansion's form of window().
  registry->Register(std::string(kWindowListFunction), &BindWindowList);
}

}  // namespace silt::expr
