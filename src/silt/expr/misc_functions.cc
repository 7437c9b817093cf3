// Misc functions: hash (Spark's Murmur3 x86_32, seed 42), xxhash64 (XXH64,
// seed 42), uuid, monotonically_increasing_id, input_file_name, window
// (tumbling) and to_json.
//
// hash and xxhash64 reproduce Spark's HashExpression exactly: each argument
// (NULLs skipped) is hashed with the previous result as its seed; ints,
// dates, booleans (0/1), bytes and shorts hash as a 4-byte int, longs and
// timestamps as 8 bytes, -0.0 as 0, floats/doubles by their canonical bits,
// decimals of precision <= 18 by their unscaled long and others by the
// BigInteger's two's-complement bytes, strings by their UTF-8 bytes (with
// Spark's legacy tail handling for Murmur3), arrays and structs element by
// element, maps key then value.
// Header-only use of Debian's libxxhash (no link dependency).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "silt/base/json_writer.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/decimal_util.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/time_zone.h"
#include "silt/expr/type_util.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;

// Spark's Murmur3_x86_32.
struct Murmur3 {
  static uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
  static uint32_t MixK1(uint32_t k1) {
    k1 *= 0xcc9e2d51u;
    k1 = Rotl(k1, 15);
    return k1 * 0x1b873593u;
  }
  static uint32_t MixH1(uint32_t h1, uint32_t k1) {
    h1 ^= k1;
    h1 = Rotl(h1, 13);
    return h1 * 5 + 0xe6546b64u;
  }
  static uint32_t Fmix(uint32_t h1, uint32_t length) {
    h1 ^= length;
    h1 ^= h1 >> 16;
    h1 *= 0x85ebca6bu;
    h1 ^= h1 >> 13;
    h1 *= 0xc2b2ae35u;
    h1 ^= h1 >> 16;
    return h1;
  }
  using Seed = uint32_t;
  static Seed Int(int32_t v, Seed seed) {
    return Fmix(MixH1(seed, MixK1(static_cast<uint32_t>(v))), 4);
  }
  static Seed Long(int64_t v, Seed seed) {
    uint64_t u = static_cast<uint64_t>(v);
    uint32_t h1 = MixH1(seed, MixK1(static_cast<uint32_t>(u)));
    h1 = MixH1(h1, MixK1(static_cast<uint32_t>(u >> 32)));
    return Fmix(h1, 8);
  }
  static Seed Bytes(std::string_view b, Seed seed) {
    const size_t aligned = b.size() - b.size() % 4;
    uint32_t h1 = seed;
    for (size_t i = 0; i < aligned; i += 4) {
      uint32_t word;
      std::memcpy(&word, b.data() + i, 4);
      h1 = MixH1(h1, MixK1(word));
    }
    // Spark's legacy hashUnsafeBytes: every trailing byte (sign-extended)
    // is mixed on its own.
    for (size_t i = aligned; i < b.size(); ++i) {
      int32_t half = static_cast<int8_t>(b[i]);
      h1 = MixH1(h1, MixK1(static_cast<uint32_t>(half)));
    }
    return Fmix(h1, static_cast<uint32_t>(b.size()));
  }
};

struct XxHash64 {
  using Seed = uint64_t;
  static Seed Int(int32_t v, Seed seed) { return XXH64(&v, 4, seed); }
  static Seed Long(int64_t v, Seed seed) { return XXH64(&v, 8, seed); }
  static Seed Bytes(std::string_view b, Seed seed) { return XXH64(b.data(), b.size(), seed); }
};

// java.math.BigInteger.toByteArray of `v`: minimal big-endian two's
// complement.
std::string BigIntegerBytes(int128 v) {
  std::string out;
  for (int i = 15; i >= 0; --i)
    out.push_back(static_cast<char>(static_cast<uint8_t>(v >> (i * 8))));
  size_t start = 0;
  while (start + 1 < out.size()) {
    uint8_t b0 = static_cast<uint8_t>(out[start]);
    uint8_t b1 = static_cast<uint8_t>(out[start + 1]);
    if ((b0 == 0x00 && (b1 & 0x80) == 0) || (b0 == 0xff && (b1 & 0x80) != 0)) {
      ++start;
    } else {
      break;
    }
  }
  return out.substr(start);
}

template <typename H>
typename H::Seed HashValue(const Column& c, int64_t row, typename H::Seed seed) {
  if (c.IsNull(row)) return seed;
  const columnar::DataType& t = *c.type;
  switch (t.id()) {
    case TypeId::kBoolean: return H::Int(c.BoolValue(row) ? 1 : 0, seed);
    case TypeId::kByte: return H::Int(c.Value<int8_t>(row), seed);
    case TypeId::kShort: return H::Int(c.Value<int16_t>(row), seed);
    case TypeId::kInt:
    case TypeId::kDate: return H::Int(c.Value<int32_t>(row), seed);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return H::Long(c.Value<int64_t>(row), seed);
    case TypeId::kFloat: {
      float f = c.Value<float>(row);
      if (f == 0.0f) return H::Int(0, seed);
      int32_t bits;
      if (std::isnan(f)) {
        bits = 0x7fc00000;
      } else {
        std::memcpy(&bits, &f, 4);
      }
      return H::Int(bits, seed);
    }
    case TypeId::kDouble: {
      double d = c.Value<double>(row);
      if (d == 0.0) return H::Long(0, seed);
      int64_t bits;
      if (std::isnan(d)) {
        bits = 0x7ff8000000000000LL;
      } else {
        std::memcpy(&bits, &d, 8);
      }
      return H::Long(bits, seed);
    }
    case TypeId::kDecimal: {
      int128 v = c.Value<int128>(row);
      if (t.precision() <= 18) return H::Long(static_cast<int64_t>(v), seed);
      return H::Bytes(BigIntegerBytes(v), seed);
    }
    case TypeId::kString:
    case TypeId::kBinary: return H::Bytes(c.StringValue(row), seed);
    case TypeId::kStruct:
      for (size_t i = 0; i < c.children.size(); ++i) seed = HashValue<H>(*c.children[i], row, seed);
      return seed;
    case TypeId::kArray: {
      const int32_t* off = c.offsets();
      for (int32_t e = off[row]; e < off[row + 1]; ++e)
        seed = HashValue<H>(*c.children[0], e, seed);
      return seed;
    }
    case TypeId::kMap: {
      const int32_t* off = c.offsets();
      const Column& entries = *c.children[0];
      for (int32_t e = off[row]; e < off[row + 1]; ++e) {
        seed = HashValue<H>(*entries.children[0], e, seed);
        seed = HashValue<H>(*entries.children[1], e, seed);
      }
      return seed;
    }
    default: return seed;
  }
}

template <typename H>
Result<ColumnPtr> HashKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  ValidityOut validity(n);
  if constexpr (std::is_same_v<H, Murmur3>) {
    FixedWriter<int32_t> out(n);
    for (int64_t row = 0; row < n; ++row) {
      uint32_t seed = 42;
      for (const Datum& d : args.args) seed = HashValue<H>(*d.column, d.constant ? 0 : row, seed);
      out.Set(row, static_cast<int32_t>(seed));
    }
    return out.Finish(info.type, &validity);
  } else {
    FixedWriter<int64_t> out(n);
    for (int64_t row = 0; row < n; ++row) {
      uint64_t seed = 42;
      for (const Datum& d : args.args) seed = HashValue<H>(*d.column, d.constant ? 0 : row, seed);
      out.Set(row, static_cast<int64_t>(seed));
    }
    return out.Finish(info.type, &validity);
  }
}

bool ContainsMap(const columnar::DataType& t) {
  if (t.id() == TypeId::kMap) return true;
  if (t.id() == TypeId::kArray) return ContainsMap(*t.element_type());
  for (const columnar::Field& f : t.fields()) {
    if (ContainsMap(*f.type)) return true;
  }
  return false;
}

template <typename H>
Result<BoundNodePtr> BindHash(CallSite& site) {
  if (site.args.empty()) return ArgCountError(site, "at least 1");
  for (size_t i = 0; i < site.args.size(); ++i) {
    // Spark: equal maps may hash differently (entry order), so it refuses.
    if (ContainsMap(*site.args[i]->type())) return ArgTypeError(site, i, "free of MAP values");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  TypePtr type = std::is_same_v<H, Murmur3> ? DataType::Int() : DataType::Long();
  return MakeBoundCall(site, type, false, std::move(site.args), &HashKernel<H>, std::move(sql));
}

// uuid(): a random version-4 UUID per row; never folded.
class UuidKernel final : public Kernel {
 public:
  UuidKernel() : rng_(std::random_device{}()) {}
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    ColumnBuilder builder(info.type);
    builder.Reserve(args.num_rows);
    char text[37];
    static constexpr char kHex[] = "0123456789abcdef";
    for (int64_t row = 0; row < args.num_rows; ++row) {
      uint64_t hi = rng_();
      uint64_t lo = rng_();
      hi = (hi & ~0xF000ULL) | 0x4000ULL;
      lo = (lo & ~(0xC000000000000000ULL)) | 0x8000000000000000ULL;
      int pos = 0;
      for (int i = 0; i < 32; ++i) {
        if (i == 8 || i == 12 || i == 16 || i == 20) text[pos++] = '-';
        uint64_t word = i < 16 ? hi : lo;
        int shift = (15 - (i % 16)) * 4;
        text[pos++] = kHex[(word >> shift) & 0xF];
      }
      builder.AppendString(std::string_view(text, 36));
    }
    return builder.Finish();
  }

 private:
  std::mt19937_64 rng_;
};

Result<BoundNodePtr> BindUuid(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 0, 0));
  return MakeBoundCall(site, DataType::String(), false, {}, std::make_unique<UuidKernel>(),
                       "uuid()", /*context_dependent=*/true);
}

// monotonically_increasing_id(): unique and increasing over the query's
// rows (one partition: a counter kept across batches).
class IncreasingIdKernel final : public Kernel {
 public:
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    FixedWriter<int64_t> out(args.num_rows);
    for (int64_t row = 0; row < args.num_rows; ++row) out.Set(row, next_++);
    ValidityOut validity(args.num_rows);
    return out.Finish(info.type, &validity);
  }

 private:
  int64_t next_ = 0;
};

Result<BoundNodePtr> BindIncreasingId(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 0, 0));
  return MakeBoundCall(site, DataType::Long(), false, {}, std::make_unique<IncreasingIdKernel>(),
                       "monotonically_increasing_id()", /*context_dependent=*/true);
}

// input_file_name(): the file the batch came from (EvalContext), "" when
// unknown, as in Spark.
Result<ColumnPtr> InputFileKernel(const KernelInfo& info, const ExecArgs& args) {
  ColumnBuilder builder(info.type);
  builder.Reserve(args.num_rows);
  for (int64_t row = 0; row < args.num_rows; ++row) {
    builder.AppendString(args.eval->input_file_name);
  }
  return builder.Finish();
}

Result<BoundNodePtr> BindInputFile(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 0, 0));
  return MakeBoundCall(site, DataType::String(), false, {},
                       std::make_unique<FunctionKernel>(&InputFileKernel), "input_file_name()",
                       /*context_dependent=*/true);
}

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

void RegisterMiscFunctions(FunctionRegistry* registry) {
  registry->Register("hash", &BindHash<Murmur3>);
  registry->Register("xxhash64", &BindHash<XxHash64>);
  registry->Register("uuid", &BindUuid);
  registry->Register("monotonically_increasing_id", &BindIncreasingId);
  registry->Register("input_file_name", &BindInputFile);
  registry->Register("window", &BindWindow);
  // Not callable by name (the space): WindowExpansion's form of window().
  registry->Register(std::string(kWindowListFunction), &BindWindowList);
  registry->Register("to_json", &BindToJson);
}

}  // namespace silt::expr
