// String functions. concat(a, b, ...) (and the || operator): NULL when any
// argument is NULL; other atomic types are cast to STRING first; all-BINARY
// arguments give BINARY.
//
// Also lower/upper, length, trim/ltrim/rtrim, reverse, repeat, substring,
// instr, startswith/endswith/contains, LIKE/ILIKE and typeof. Positions and
// lengths count Unicode code points of the UTF-8 text, as Spark's
// UTF8String does. lower/upper/ILIKE map ASCII letters only (Spark maps all
// of Unicode): a known gap for non-ASCII text.
#include <algorithm>
#include <limits>
#include <string>
#include <string_view>

#include "silt/columnar/builder.h"
#include "silt/expr/ast.h"
#include "silt/expr/cast.h"
#include "silt/expr/function_registry.h"
#include "silt/expr/kernel_util.h"
#include "silt/expr/type_util.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

Result<ColumnPtr> ConcatKernel(const KernelInfo& info, const ExecArgs& args) {
  int64_t n = args.num_rows;
  std::vector<StringReader> readers;
  readers.reserve(args.args.size());
  for (const Datum& d : args.args) readers.emplace_back(d);
  ValidityOut validity(n);
  validity.InitFromArgs(args.args);
  columnar::ColumnBuilder builder(info.type);
  builder.Reserve(n);
  std::string text;
  for (int64_t row = 0; row < n; ++row) {
    if (!validity.IsValid(row)) {
      builder.AppendNull();
      continue;
    }
    text.clear();
    for (const StringReader& r : readers) text.append(r[row]);
    builder.AppendString(text);
  }
  return builder.Finish();
}

Result<BoundNodePtr> BindConcat(CallSite& site) {
  bool all_binary = !site.args.empty();
  for (const BoundNodePtr& arg : site.args) {
    if (arg->type()->id() != TypeId::kBinary) all_binary = false;
  }
  TypePtr type = all_binary ? DataType::Binary() : DataType::String();
  for (size_t i = 0; i < site.args.size(); ++i) {
    const DataType& t = *site.args[i]->type();
    if (t.is_nested()) return ArgTypeError(site, i, "STRING or BINARY");
    SILT_ASSIGN_OR_RETURN(site.args[i], ImplicitCast(std::move(site.args[i]), type, site.options));
  }
  std::string sql;
  if (site.name == "||") {
    sql = PrettyBinary(BinaryOp::kConcat, site.args[0]->sql(), site.args[1]->sql());
  } else {
    sql = PrettyCall("concat", ArgSqls(site.args));
  }
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, type, nullable, std::move(site.args), &ConcatKernel, std::move(sql));
}

// Bytes in the UTF-8 sequence starting with `lead` (1 for stray bytes).
inline size_t Utf8Width(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

int64_t NumChars(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// Byte offset of code point `index` (clamped to the end).
size_t ByteOffsetOfChar(std::string_view s, int64_t index) {
  size_t pos = 0;
  for (int64_t i = 0; i < index && pos < s.size(); ++i) pos += Utf8Width(s[pos]);
  return std::min(pos, s.size());
}

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
char AsciiUpper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// A STRING argument: other atomic types are cast, as Spark's implicit casts
// do for functions expecting strings.
Status CoerceToString(CallSite& site, size_t index) {
  const DataType& t = *site.args[index]->type();
  if (t.id() == TypeId::kString) return Status::OK();
  if (t.is_nested()) return ArgTypeError(site, index, "STRING");
  SILT_ASSIGN_OR_RETURN(site.args[index], ImplicitCast(std::move(site.args[index]),
                                                       DataType::String(), site.options));
  return Status::OK();
}

Status CoerceToInt(CallSite& site, size_t index) {
  const DataType& t = *site.args[index]->type();
  if (t.id() == TypeId::kInt) return Status::OK();
  if (!t.is_integral() && t.id() != TypeId::kNull && t.id() != TypeId::kString) {
    return ArgTypeError(site, index, "INT");
  }
  SILT_ASSIGN_OR_RETURN(site.args[index],
                        ImplicitCast(std::move(site.args[index]), DataType::Int(), site.options));
  return Status::OK();
}

// String -> string, NULL in, NULL out. Op::Apply(in, row, args, &out).
template <typename Op>
Result<ColumnPtr> StringToStringKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  StringReader in(args.args[0]);
  ValidityOut validity(n);
  validity.InitFromArgs(args.args);
  columnar::ColumnBuilder builder(info.type);
  builder.Reserve(n);
  std::string out;
  Op op(args);
  for (int64_t row = 0; row < n; ++row) {
    if (!validity.IsValid(row)) {
      builder.AppendNull();
      continue;
    }
    out.clear();
    op.Apply(in[row], row, &out);
    builder.AppendString(out);
  }
  return builder.Finish();
}

struct LowerOp {
  explicit LowerOp(const ExecArgs&) {}
  void Apply(std::string_view in, int64_t, std::string* out) const {
    out->resize(in.size());
    std::transform(in.begin(), in.end(), out->begin(), AsciiLower);
  }
};
struct UpperOp {
  explicit UpperOp(const ExecArgs&) {}
  void Apply(std::string_view in, int64_t, std::string* out) const {
    out->resize(in.size());
    std::transform(in.begin(), in.end(), out->begin(), AsciiUpper);
  }
};
template <bool kLeft, bool kRight>
struct TrimOp {
  explicit TrimOp(const ExecArgs&) {}
  void Apply(std::string_view in, int64_t, std::string* out) const {
    size_t begin = 0;
    size_t end = in.size();
    if (kLeft) {
      while (begin < end && in[begin] == ' ') ++begin;
    }
    if (kRight) {
      while (end > begin && in[end - 1] == ' ') --end;
    }
    out->assign(in.substr(begin, end - begin));
  }
};
struct ReverseOp {
  explicit ReverseOp(const ExecArgs&) {}
  void Apply(std::string_view in, int64_t, std::string* out) const {
    out->resize(in.size());
    size_t pos = 0;
    while (pos < in.size()) {
      size_t width = std::min(Utf8Width(in[pos]), in.size() - pos);
      std::copy(in.begin() + static_cast<std::ptrdiff_t>(pos),
                in.begin() + static_cast<std::ptrdiff_t>(pos + width),
                out->begin() + static_cast<std::ptrdiff_t>(in.size() - pos - width));
      pos += width;
    }
  }
};
struct RepeatOp {
  explicit RepeatOp(const ExecArgs& args) : times(args.args[1]) {}
  void Apply(std::string_view in, int64_t row, std::string* out) const {
    for (int32_t i = 0; i < times[row]; ++i) out->append(in);
  }
  FixedReader<int32_t> times;
};
// Spark's UTF8String.substringSQL(pos, len).
struct SubstringOp {
  explicit SubstringOp(const ExecArgs& args)
      : pos(args.args[1]), has_len(args.args.size() > 2),
        len(args.args[args.args.size() > 2 ? 2 : 1]) {}
  void Apply(std::string_view in, int64_t row, std::string* out) const {
    const int64_t num_chars = NumChars(in);
    const int64_t p = pos[row];
    const int64_t length = has_len ? len[row] : std::numeric_limits<int32_t>::max();
    int64_t start = p > 0 ? p - 1 : (p < 0 ? num_chars + p : 0);
    int64_t end = std::clamp<int64_t>(start + length, std::numeric_limits<int32_t>::min(),
                                      std::numeric_limits<int32_t>::max());
    start = std::max<int64_t>(start, 0);
    if (start >= end) return;
    end = std::min(end, num_chars);
    if (start >= end) return;
    size_t begin_byte = ByteOffsetOfChar(in, start);
    size_t end_byte = ByteOffsetOfChar(in, end);
    out->assign(in.substr(begin_byte, end_byte - begin_byte));
  }
  FixedReader<int32_t> pos;
  bool has_len;
  FixedReader<int32_t> len;
};

template <typename Op>
Result<BoundNodePtr> BindStringToString(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       &StringToStringKernel<Op>, std::move(sql));
}

Result<BoundNodePtr> BindRepeat(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToInt(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       &StringToStringKernel<RepeatOp>, std::move(sql));
}

Result<BoundNodePtr> BindSubstring(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  for (size_t i = 1; i < site.args.size(); ++i) SILT_RETURN_NOT_OK(CoerceToInt(site, i));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       &StringToStringKernel<SubstringOp>, std::move(sql));
}

Result<ColumnPtr> LengthKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  StringReader in(args.args[0]);
  const bool bytes = info.arg_types[0]->id() == TypeId::kBinary;
  ValidityOut validity(n);
  validity.InitFromArgs(args.args);
  FixedWriter<int32_t> out(n);
  for (int64_t row = 0; row < n; ++row) {
    std::string_view s = in[row];
    out.Set(row, static_cast<int32_t>(bytes ? static_cast<int64_t>(s.size()) : NumChars(s)));
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindLength(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  if (site.args[0]->type()->id() != TypeId::kBinary) SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Int(), nullable, std::move(site.args), &LengthKernel,
                       std::move(sql));
}

// LIKE matching with `%`, `_` (one code point) and `\` escapes; `fold`
// compares ASCII letters case-insensitively (ILIKE).
bool LikeMatch(std::string_view text, std::string_view pattern, bool fold) {
  size_t t = 0;
  size_t p = 0;
  size_t star_p = std::string_view::npos;
  size_t star_t = 0;
  auto same = [fold](char a, char b) { return fold ? AsciiLower(a) == AsciiLower(b) : a == b; };
  while (t < text.size()) {
    if (p < pattern.size()) {
      char c = pattern[p];
      if (c == '%') {
        star_p = ++p;
        star_t = t;
        continue;
      }
      if (c == '_') {
        t += std::min(Utf8Width(text[t]), text.size() - t);
        ++p;
        continue;
      }
      if (c == '\\' && p + 1 < pattern.size()) {
        c = pattern[p + 1];
        if (same(text[t], c)) {
          ++t;
          p += 2;
          continue;
        }
      } else if (same(text[t], c)) {
        ++t;
        ++p;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    // Let the last % absorb one more code point.
    star_t += std::min(Utf8Width(text[star_t]), text.size() - star_t);
    t = star_t;
    p = star_p;
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

// Spark rejects an escape character followed by anything but _, % or itself.
Status CheckLikePattern(const CallSite& site, std::string_view pattern) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\') continue;
    if (i + 1 == pattern.size() ||
        (pattern[i + 1] != '_' && pattern[i + 1] != '%' && pattern[i + 1] != '\\')) {
      return Status::InvalidArgument("The LIKE pattern '", pattern,
                                     "' has an invalid escape at position ", i + 1, " in '",
                                     site.text, "'");
    }
    ++i;
  }
  return Status::OK();
}

template <bool kFold>
Result<ColumnPtr> LikeKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  StringReader text(args.args[0]);
  StringReader pattern(args.args[1]);
  ValidityOut validity(n);
  BoolWriter out(n);
  if (!validity.InitFromArgs(args.args)) return out.Finish(info.type, &validity);
  for (int64_t row = 0; row < n; ++row) {
    out.Set(row, validity.IsValid(row) && LikeMatch(text[row], pattern[row], kFold));
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindLike(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToString(site, 1));
  if (site.args[1]->foldable()) {
    SILT_ASSIGN_OR_RETURN(ColumnPtr pattern, ConstantArg(site, 1, "the pattern"));
    if (pattern->IsValid(0)) SILT_RETURN_NOT_OK(CheckLikePattern(site, pattern->StringValue(0)));
  }
  const bool fold = site.name == "ilike";
  std::vector<std::string> sqls = ArgSqls(site.args);
  std::string sql = sqls[0] + (fold ? " ILIKE " : " LIKE ") + sqls[1];
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Boolean(), nullable, std::move(site.args),
                       fold ? &LikeKernel<true> : &LikeKernel<false>, std::move(sql));
}

enum class Find { kStartsWith, kEndsWith, kContains, kInstr };

template <Find kFind>
Result<ColumnPtr> FindKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  StringReader text(args.args[0]);
  StringReader needle(args.args[1]);
  ValidityOut validity(n);
  validity.InitFromArgs(args.args);
  if constexpr (kFind == Find::kInstr) {
    FixedWriter<int32_t> out(n);
    for (int64_t row = 0; row < n; ++row) {
      std::string_view t = text[row];
      size_t at = t.find(needle[row]);
      out.Set(row, at == std::string_view::npos
                       ? 0
                       : static_cast<int32_t>(NumChars(t.substr(0, at)) + 1));
    }
    return out.Finish(info.type, &validity);
  } else {
    BoolWriter out(n);
    for (int64_t row = 0; row < n; ++row) {
      std::string_view t = text[row];
      std::string_view x = needle[row];
      bool hit = kFind == Find::kStartsWith ? t.starts_with(x)
                 : kFind == Find::kEndsWith ? t.ends_with(x)
                                            : t.find(x) != std::string_view::npos;
      out.Set(row, hit);
    }
    return out.Finish(info.type, &validity);
  }
}

template <Find kFind>
Result<BoundNodePtr> BindFind(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToString(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  TypePtr type = kFind == Find::kInstr ? DataType::Int() : DataType::Boolean();
  return MakeBoundCall(site, type, nullable, std::move(site.args), &FindKernel<kFind>,
                       std::move(sql));
}

// typeof(x): Spark's simpleString of x's type, a constant.
Result<BoundNodePtr> BindTypeof(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  columnar::ColumnBuilder builder(DataType::String());
  builder.AppendString(SimpleTypeString(*site.args[0]->type()));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return BoundNodePtr(
      std::make_unique<BoundLiteral>(builder.Finish(), /*is_null=*/false, sql, /*written=*/false));
}

}  // namespace

void RegisterStringFunctions(FunctionRegistry* registry) {
  registry->Register("concat", &BindConcat);
  registry->Register("lower", &BindStringToString<LowerOp>);
  registry->Register("lcase", &BindStringToString<LowerOp>);
  registry->Register("upper", &BindStringToString<UpperOp>);
  registry->Register("ucase", &BindStringToString<UpperOp>);
  registry->Register("trim", &BindStringToString<TrimOp<true, true>>);
  registry->Register("ltrim", &BindStringToString<TrimOp<true, false>>);
  registry->Register("rtrim", &BindStringToString<TrimOp<false, true>>);
  registry->Register("reverse", &BindStringToString<ReverseOp>);
  registry->Register("repeat", &BindRepeat);
  registry->Register("substring", &BindSubstring);
  registry->Register("substr", &BindSubstring);
  registry->Register("length", &BindLength);
  registry->Register("char_length", &BindLength);
  registry->Register("character_length", &BindLength);
  registry->Register("like", &BindLike);
  registry->Register("ilike", &BindLike);
  registry->Register("startswith", &BindFind<Find::kStartsWith>);
  registry->Register("endswith", &BindFind<Find::kEndsWith>);
  registry->Register("contains", &BindFind<Find::kContains>);
  registry->Register("instr", &BindFind<Find::kInstr>);
  registry->Register("typeof", &BindTypeof);
}

}  // namespace silt::expr
