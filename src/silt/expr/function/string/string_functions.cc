// String functions. concat(a, b, ...) (and the || operator): NULL when any
// argument is NULL; other atomic types are cast to STRING first; all-BINARY
// arguments give BINARY.
//
// Also lower/upper, length, trim/ltrim/rtrim, reverse, repeat, substring,
// instr, startswith/endswith/contains, LIKE/ILIKE and typeof. Positions and
// lengths count Unicode code points of the UTF-8 text, as Spark's
// UTF8String does. lower/upper map all of Unicode (glibc's C.UTF-8
// tables); ILIKE and initcap fold ASCII letters only.
#include <locale.h>
#include <wctype.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

#include "silt/base/strings.h"
#include "silt/base/utf8.h"
#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/value/decimal_util.h"

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

// Unicode case mapping through glibc's C.UTF-8 tables (towupper_l /
// towlower_l), as Java's String.toUpperCase/toLowerCase map code points; the
// one-to-many mapping ß -> SS is special-cased as Java does. ASCII text
// takes the byte loop.
locale_t Utf8Locale() {
  static locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return loc;
}

template <bool kUpper>
void MapCase(std::string_view in, StringAppender& out, std::string* scratch) {
  bool ascii = std::all_of(in.begin(), in.end(), [](char c) { return (c & 0x80) == 0; });
  if (ascii || Utf8Locale() == static_cast<locale_t>(nullptr)) {
    std::transform(in.begin(), in.end(), out.Extend(static_cast<int64_t>(in.size())),
                   [](char c) { return kUpper ? AsciiUpper(c) : AsciiLower(c); });
    return;
  }
  scratch->clear();
  size_t pos = 0;
  while (pos < in.size()) {
    unsigned char lead = static_cast<unsigned char>(in[pos]);
    size_t width = std::min(Utf8Width(lead), in.size() - pos);
    uint32_t cp = width == 1 ? lead : (lead & (0xFF >> (width + 1)));
    for (size_t k = 1; k < width; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(in[pos + k]) & 0x3F);
    if (width == 1 && lead >= 0x80) {
      scratch->push_back(static_cast<char>(lead));  // a stray byte passes through
    } else if (kUpper && cp == 0xDF) {
      scratch->append("SS");
    } else {
      wint_t mapped = kUpper ? towupper_l(static_cast<wint_t>(cp), Utf8Locale())
                             : towlower_l(static_cast<wint_t>(cp), Utf8Locale());
      AppendUtf8(static_cast<uint32_t>(mapped), scratch);
    }
    pos += width;
  }
  out.Append(*scratch);
}

// One-argument string -> string functions: Op::Apply(in, out, scratch),
// `scratch` a string kept across the batch's rows.
template <typename Op>
Result<ColumnPtr> UnaryStringKernel(const KernelInfo& info, const ExecArgs& args) {
  std::string scratch;
  return UnaryExecutor<std::string_view, std::string_view>::Execute(
      info, args,
      [&scratch](std::string_view in, StringAppender& out) { Op::Apply(in, out, &scratch); });
}

struct LowerOp {
  static void Apply(std::string_view in, StringAppender& out, std::string* scratch) {
    MapCase<false>(in, out, scratch);
  }
};
struct UpperOp {
  static void Apply(std::string_view in, StringAppender& out, std::string* scratch) {
    MapCase<true>(in, out, scratch);
  }
};
template <bool kLeft, bool kRight>
struct TrimOp {
  static void Apply(std::string_view in, StringAppender& out, std::string*) {
    size_t begin = 0;
    size_t end = in.size();
    if (kLeft) {
      while (begin < end && in[begin] == ' ') ++begin;
    }
    if (kRight) {
      while (end > begin && in[end - 1] == ' ') --end;
    }
    out.Append(in.substr(begin, end - begin));
  }
};
struct ReverseOp {
  static void Apply(std::string_view in, StringAppender& out, std::string*) {
    char* dst = out.Extend(static_cast<int64_t>(in.size()));
    size_t pos = 0;
    while (pos < in.size()) {
      size_t width = std::min(Utf8Width(in[pos]), in.size() - pos);
      std::copy(in.begin() + static_cast<std::ptrdiff_t>(pos),
                in.begin() + static_cast<std::ptrdiff_t>(pos + width),
                dst + (in.size() - pos - width));
      pos += width;
    }
  }
};
Result<ColumnPtr> RepeatKernel(const KernelInfo& info, const ExecArgs& args) {
  return BinaryExecutor<std::string_view, int32_t, std::string_view>::Execute(
      info, args, [](std::string_view in, int32_t times, StringAppender& out) {
        for (int32_t i = 0; i < times; ++i) out.Append(in);
      });
}

// Spark's UTF8String.substringSQL(pos, len).
struct SubstringOp {
  explicit SubstringOp(const ExecArgs& args)
      : pos(args.args[1]),
        has_len(args.args.size() > 2),
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
                       &UnaryStringKernel<Op>, std::move(sql));
}

Result<BoundNodePtr> BindRepeat(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToInt(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args), &RepeatKernel,
                       std::move(sql));
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
  using Exec = UnaryExecutor<std::string_view, int32_t>;
  if (info.arg_types[0]->id() == TypeId::kBinary) {
    return Exec::Execute(info, args,
                         [](std::string_view s) { return static_cast<int32_t>(s.size()); });
  }
  return Exec::Execute(info, args,
                       [](std::string_view s) { return static_cast<int32_t>(NumChars(s)); });
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
  return BinaryExecutor<std::string_view, std::string_view, bool>::Execute(
      info, args, [](std::string_view text, std::string_view pattern) {
        return LikeMatch(text, pattern, kFold);
      });
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
  if constexpr (kFind == Find::kInstr) {
    return BinaryExecutor<std::string_view, std::string_view, int32_t>::Execute(
        info, args, [](std::string_view t, std::string_view needle) {
          size_t at = t.find(needle);
          return at == std::string_view::npos ? 0
                                              : static_cast<int32_t>(NumChars(t.substr(0, at)) + 1);
        });
  } else {
    return BinaryExecutor<std::string_view, std::string_view, bool>::Execute(
        info, args, [](std::string_view t, std::string_view x) {
          return kFind == Find::kStartsWith ? t.starts_with(x)
                 : kFind == Find::kEndsWith ? t.ends_with(x)
                                            : t.find(x) != std::string_view::npos;
        });
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

// lpad/rpad(str, len[, pad]): Spark's UTF8String.lpad/rpad.
template <bool kLeft>
struct PadOp {
  explicit PadOp(const ExecArgs& args)
      : len(args.args[1]), has_pad(args.args.size() > 2), pad(args.args[has_pad ? 2 : 0]) {}
  void Apply(std::string_view in, int64_t row, std::string* out) const {
    const int64_t target = len[row];
    std::string_view p = has_pad ? pad[row] : std::string_view(" ");
    const int64_t chars = NumChars(in);
    const int64_t spaces = target - chars;
    if (target <= 0) return;
    if (spaces <= 0 || p.empty()) {
      out->assign(in.substr(0, ByteOffsetOfChar(in, target)));
      return;
    }
    std::string fill;
    const int64_t pad_chars = NumChars(p);
    int64_t remaining = spaces;
    while (remaining >= pad_chars) {
      fill.append(p);
      remaining -= pad_chars;
    }
    fill.append(p.substr(0, ByteOffsetOfChar(p, remaining)));
    if (kLeft) {
      out->assign(fill);
      out->append(in);
    } else {
      out->assign(in);
      out->append(fill);
    }
  }
  FixedReader<int32_t> len;
  bool has_pad;
  StringReader pad;
};

template <bool kLeft>
Result<BoundNodePtr> BindPad(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToInt(site, 1));
  std::vector<std::string> sqls;
  if (site.args.size() > 2) {
    SILT_RETURN_NOT_OK(CoerceToString(site, 2));
  }
  sqls = ArgSqls(site.args);
  if (sqls.size() == 2) sqls.push_back(" ");
  std::string sql = PrettyCall(site.name, sqls);
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       &StringToStringKernel<PadOp<kLeft>>, std::move(sql));
}

// replace(str, search[, replace]): every occurrence; an empty search string
// leaves str as is.
struct ReplaceOp {
  explicit ReplaceOp(const ExecArgs& args)
      : search(args.args[1]), has_rep(args.args.size() > 2), rep(args.args[has_rep ? 2 : 1]) {}
  void Apply(std::string_view in, int64_t row, std::string* out) const {
    std::string_view s = search[row];
    std::string_view r = has_rep ? rep[row] : std::string_view();
    if (s.empty()) {
      out->assign(in);
      return;
    }
    size_t at = 0;
    while (true) {
      size_t hit = in.find(s, at);
      if (hit == std::string_view::npos) break;
      out->append(in.substr(at, hit - at));
      out->append(r);
      at = hit + s.size();
    }
    out->append(in.substr(at));
  }
  StringReader search;
  bool has_rep;
  StringReader rep;
};

Result<BoundNodePtr> BindReplaceString(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  for (size_t i = 0; i < site.args.size(); ++i) SILT_RETURN_NOT_OK(CoerceToString(site, i));
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (sqls.size() == 2) sqls.push_back("");
  std::string sql = PrettyCall(site.name, sqls);
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       &StringToStringKernel<ReplaceOp>, std::move(sql));
}

// initcap: lower case, then the first letter of every space-separated word
// upper case (UTF8String.toLowerCase().toTitleCase(); ASCII letters only).
struct InitcapOp {
  static void Apply(std::string_view in, StringAppender& out, std::string*) {
    char* dst = out.Extend(static_cast<int64_t>(in.size()));
    char prev = ' ';
    for (size_t i = 0; i < in.size(); ++i) {
      char c = AsciiLower(in[i]);
      dst[i] = prev == ' ' ? AsciiUpper(c) : c;
      prev = in[i];
    }
  }
};

// substring_index(str, delim, count).
struct SubstringIndexOp {
  explicit SubstringIndexOp(const ExecArgs& args) : delim(args.args[1]), count(args.args[2]) {}
  void Apply(std::string_view in, int64_t row, std::string* out) const {
    std::string_view d = delim[row];
    int32_t c = count[row];
    if (d.empty() || c == 0) return;
    // UTF8String.subStringIndex: occurrences may overlap.
    if (c > 0) {
      size_t idx = 0;
      for (int32_t i = 0; i < c; ++i) {
        size_t hit = in.find(d, i == 0 ? 0 : idx + 1);
        if (hit == std::string_view::npos) {
          out->assign(in);
          return;
        }
        idx = hit;
      }
      out->assign(in.substr(0, idx));
      return;
    }
    if (in.size() < d.size()) {
      out->assign(in);
      return;
    }
    size_t idx = in.size() - d.size() + 1;
    for (int64_t i = 0; i < -static_cast<int64_t>(c); ++i) {
      if (idx == 0) {
        out->assign(in);
        return;
      }
      size_t hit = in.rfind(d, idx - 1);
      if (hit == std::string_view::npos) {
        out->assign(in);
        return;
      }
      idx = hit;
    }
    out->assign(in.substr(idx + d.size()));
  }
  StringReader delim;
  FixedReader<int32_t> count;
};

Result<BoundNodePtr> BindSubstringIndex(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 3, 3));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToString(site, 1));
  SILT_RETURN_NOT_OK(CoerceToInt(site, 2));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       &StringToStringKernel<SubstringIndexOp>, std::move(sql));
}

// locate(substr, str[, pos]): 1-based code point position of substr in str
// at or after pos; 0 when absent or pos < 1. A NULL pos gives 0 (Spark).
Result<ColumnPtr> LocateKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  StringReader needle(args.args[0]);
  StringReader text(args.args[1]);
  const bool has_pos = args.args.size() > 2;
  FixedReader<int32_t> pos(args.args[has_pos ? 2 : 0]);
  ValidityOut validity(n);
  FixedWriter<int32_t> out(n);
  for (int64_t row = 0; row < n; ++row) {
    if (has_pos && !pos.IsValid(row)) {
      out.Set(row, 0);
      continue;
    }
    if (!needle.IsValid(row) || !text.IsValid(row)) {
      validity.SetNull(row);
      continue;
    }
    int32_t start = has_pos ? pos[row] : 1;
    if (start < 1) {
      out.Set(row, 0);
      continue;
    }
    std::string_view t = text[row];
    size_t from = ByteOffsetOfChar(t, start - 1);
    if (NumChars(t) < start - 1) {
      out.Set(row, 0);
      continue;
    }
    size_t at = t.find(needle[row], from);
    out.Set(row,
            at == std::string_view::npos ? 0 : static_cast<int32_t>(NumChars(t.substr(0, at)) + 1));
  }
  return out.Finish(info.type, &validity);
}

Result<BoundNodePtr> BindLocate(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToString(site, 1));
  if (site.args.size() > 2) SILT_RETURN_NOT_OK(CoerceToInt(site, 2));
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (sqls.size() == 2) sqls.push_back("1");
  std::string sql = PrettyCall(site.name, sqls);
  bool nullable = site.args[0]->nullable() || site.args[1]->nullable();
  return MakeBoundCall(site, DataType::Int(), nullable, std::move(site.args), &LocateKernel,
                       std::move(sql));
}

// concat_ws(sep, ...): NULL only when sep is NULL; NULL arguments and NULL
// array elements are skipped; arrays of strings are flattened.
Result<ColumnPtr> ConcatWsKernel(const KernelInfo& info, const ExecArgs& args) {
  const int64_t n = args.num_rows;
  StringReader sep(args.args[0]);
  columnar::ColumnBuilder builder(info.type);
  builder.Reserve(n);
  std::string text;
  for (int64_t row = 0; row < n; ++row) {
    if (!sep.IsValid(row)) {
      builder.AppendNull();
      continue;
    }
    text.clear();
    bool first = true;
    auto add = [&](std::string_view v) {
      if (!first) text.append(sep[row]);
      text.append(v);
      first = false;
    };
    for (size_t i = 1; i < args.args.size(); ++i) {
      const Datum& d = args.args[i];
      int64_t r = d.constant ? 0 : row;
      if (d.column->IsNull(r)) continue;
      if (info.arg_types[i]->id() == TypeId::kArray) {
        const columnar::Column& elems = *d.column->children[0];
        const int32_t* off = d.column->offsets();
        for (int32_t e = off[r]; e < off[r + 1]; ++e) {
          if (elems.IsValid(e)) add(elems.StringValue(e));
        }
      } else {
        add(d.column->StringValue(r));
      }
    }
    builder.AppendString(text);
  }
  return builder.Finish();
}

Result<BoundNodePtr> BindConcatWs(CallSite& site) {
  if (site.args.empty()) return ArgCountError(site, "at least 1");
  for (size_t i = 0; i < site.args.size(); ++i) {
    const DataType& t = *site.args[i]->type();
    if (i > 0 && t.id() == TypeId::kArray) {
      if (t.element_type()->id() != TypeId::kString) {
        return ArgTypeError(site, i, "STRING or ARRAY<STRING>");
      }
      continue;
    }
    SILT_RETURN_NOT_OK(CoerceToString(site, i));
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = site.args[0]->nullable();
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args), &ConcatWsKernel,
                       std::move(sql));
}

// Rounds the decimal text `digits` (no sign, "123.4567") half up to `prec`
// fraction digits, as java.util.Formatter does for %f over the shortest
// decimal form of a double.
std::string RoundDecimalText(std::string digits, int prec) {
  size_t dot = digits.find('.');
  if (dot == std::string::npos) {
    digits.push_back('.');
    dot = digits.size() - 1;
  }
  size_t frac = digits.size() - dot - 1;
  if (static_cast<int>(frac) <= prec) {
    digits.append(static_cast<size_t>(prec) - frac, '0');
  } else {
    bool up = digits[dot + 1 + static_cast<size_t>(prec)] >= '5';
    digits.resize(dot + 1 + static_cast<size_t>(prec));
    if (up) {
      int i = static_cast<int>(digits.size()) - 1;
      while (i >= 0) {
        char& c = digits[static_cast<size_t>(i)];
        if (c == '.') {
          --i;
          continue;
        }
        if (c == '9') {
          c = '0';
          --i;
          continue;
        }
        ++c;
        break;
      }
      if (i < 0) digits.insert(digits.begin(), '1');
    }
  }
  if (prec == 0 && !digits.empty() && digits.back() == '.') digits.pop_back();
  return digits;
}

// format_string / printf: java.util.Formatter over Spark's values, for the
// conversions s S d x X o f e E b c % n with flags - 0 + space and width /
// precision. Errors: InvalidArgument for other conversions or a missing
// argument.
class FormatStringKernel final : public Kernel {
 public:
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    StringReader fmt(args.args[0]);
    columnar::ColumnBuilder builder(info.type);
    builder.Reserve(n);
    std::string out;
    for (int64_t row = 0; row < n; ++row) {
      if (!fmt.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      out.clear();
      SILT_RETURN_NOT_OK(FormatRow(info, args, row, fmt[row], &out));
      builder.AppendString(out);
    }
    return builder.Finish();
  }

 private:
  static Status FormatRow(const KernelInfo& info, const ExecArgs& args, int64_t row,
                          std::string_view f, std::string* out) {
    size_t next_arg = 1;
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i] != '%') {
        out->push_back(f[i]);
        continue;
      }
      size_t j = i + 1;
      // argument_index$
      size_t arg_index = 0;
      size_t k = j;
      while (k < f.size() && f[k] >= '0' && f[k] <= '9') ++k;
      if (k < f.size() && f[k] == '$' && k > j) {
        arg_index = static_cast<size_t>(std::stoi(std::string(f.substr(j, k - j))));
        j = k + 1;
      }
      std::string flags;
      while (j < f.size() && std::string_view("-0+ ,#(").find(f[j]) != std::string_view::npos) {
        flags.push_back(f[j++]);
      }
      int width = -1;
      if (j < f.size() && f[j] >= '1' && f[j] <= '9') {
        width = 0;
        while (j < f.size() && f[j] >= '0' && f[j] <= '9') width = width * 10 + (f[j++] - '0');
      }
      int prec = -1;
      if (j < f.size() && f[j] == '.') {
        ++j;
        prec = 0;
        while (j < f.size() && f[j] >= '0' && f[j] <= '9') prec = prec * 10 + (f[j++] - '0');
      }
      if (j >= f.size()) {
        return Status::InvalidArgument("Incomplete format specifier '", f.substr(i), "' in '",
                                       info.sql, "'");
      }
      char conv = f[j];
      i = j;
      if (conv == '%') {
        Pad("%", flags, width, out);
        continue;
      }
      if (conv == 'n') {
        out->push_back('\n');
        continue;
      }
      size_t index = arg_index > 0 ? arg_index : next_arg++;
      if (index >= args.args.size()) {
        return Status::InvalidArgument("Format specifier '%", std::string(1, conv),
                                       "' has no argument in '", info.sql, "'");
      }
      const Datum& d = args.args[index];
      const columnar::Column& c = *d.column;
      int64_t r = d.constant ? 0 : row;
      const columnar::DataType& t = *info.arg_types[index];
      bool null = c.IsNull(r);
      std::string text;
      switch (conv) {
        case 's':
        case 'S': {
          if (null) {
            text = "null";
          } else {
            CastOptions options;
            AppendValueText(c, r, options, &text);
          }
          if (prec >= 0 && static_cast<int>(text.size()) > prec) {
            text.resize(static_cast<size_t>(prec));
          }
          if (conv == 'S') AsciiUpperInPlace(&text);
          Pad(text, flags, width, out);
          break;
        }
        case 'b':
        case 'B': {
          text = null ? "false"
                      : (t.id() == TypeId::kBoolean ? (c.BoolValue(r) ? "true" : "false") : "true");
          if (conv == 'B') AsciiUpperInPlace(&text);
          Pad(text, flags, width, out);
          break;
        }
        case 'd':
        case 'x':
        case 'X':
        case 'o':
        case 'c': {
          if (null) {
            Pad("null", flags, width, out);
            break;
          }
          if (!t.is_integral()) {
            return Status::InvalidArgument("%", std::string(1, conv), " != ", TypeName(t), " in '",
                                           info.sql, "'");
          }
          int64_t v = IntegralValue(c, r, t);
          if (conv == 'c') {
            text.push_back(static_cast<char>(v));
            Pad(text, flags, width, out);
            break;
          }
          std::string spec = "%";
          for (char fl : flags) {
            if (fl == '-' || fl == '0' || fl == '+' || fl == ' ' || fl == '#') spec.push_back(fl);
          }
          if (width > 0) spec += std::to_string(width);
          char buf[128];
          if (conv == 'd') {
            spec += "lld";
            std::snprintf(buf, sizeof(buf), spec.c_str(), static_cast<long long>(v));
          } else {
            // Java prints negative values of x/o as two's complement of the
            // argument's own width.
            uint64_t u = static_cast<uint64_t>(v);
            if (t.id() == TypeId::kInt) u &= 0xFFFFFFFFull;
            if (t.id() == TypeId::kShort) u &= 0xFFFFull;
            if (t.id() == TypeId::kByte) u &= 0xFFull;
            spec += std::string("ll") + conv;
            std::snprintf(buf, sizeof(buf), spec.c_str(), static_cast<unsigned long long>(u));
          }
          out->append(buf);
          break;
        }
        case 'f':
        case 'e':
        case 'E': {
          if (null) {
            Pad("null", flags, width, out);
            break;
          }
          if (!t.is_numeric() || t.is_integral()) {
            return Status::InvalidArgument("%", std::string(1, conv), " != ", TypeName(t), " in '",
                                           info.sql, "'");
          }
          int p = prec < 0 ? 6 : prec;
          if (conv == 'f') {
            std::string digits;
            bool negative = false;
            if (t.id() == TypeId::kDecimal) {
              std::string plain;
              AppendDecimalPlainText(c.Value<__int128>(r), t.scale(), &plain);
              negative = !plain.empty() && plain[0] == '-';
              digits = negative ? plain.substr(1) : plain;
            } else {
              double v = t.id() == TypeId::kFloat ? static_cast<double>(c.Value<float>(r))
                                                  : c.Value<double>(r);
              if (!std::isfinite(v)) {
                Pad(std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity"), flags, width, out);
                break;
              }
              negative = std::signbit(v);
              char buf[512];
              auto res =
                  std::to_chars(buf, buf + sizeof(buf), std::fabs(v), std::chars_format::fixed);
              digits.assign(buf, res.ptr);
            }
            text = RoundDecimalText(digits, p);
            if (negative) {
              text.insert(text.begin(), '-');
            } else if (flags.find('+') != std::string::npos) {
              text.insert(text.begin(), '+');
            } else if (flags.find(' ') != std::string::npos) {
              text.insert(text.begin(), ' ');
            }
            if (flags.find('0') != std::string::npos && width > 0 &&
                static_cast<int>(text.size()) < width) {
              size_t sign = (text[0] == '-' || text[0] == '+' || text[0] == ' ') ? 1 : 0;
              text.insert(sign, static_cast<size_t>(width) - text.size(), '0');
            }
            Pad(text, flags, width, out);
          } else {
            double v = t.id() == TypeId::kDecimal ? 0 : c.Value<double>(r);
            char buf[128];
            std::string spec = "%." + std::to_string(p) + conv;
            std::snprintf(buf, sizeof(buf), spec.c_str(), v);
            Pad(buf, flags, width, out);
          }
          break;
        }
        default:
          return Status::InvalidArgument("Unsupported format conversion '%", std::string(1, conv),
                                         "' in '", info.sql, "'");
      }
    }
    return Status::OK();
  }

  static int64_t IntegralValue(const columnar::Column& c, int64_t r, const columnar::DataType& t) {
    switch (t.id()) {
      case TypeId::kByte: return c.Value<int8_t>(r);
      case TypeId::kShort: return c.Value<int16_t>(r);
      case TypeId::kInt: return c.Value<int32_t>(r);
      default: return c.Value<int64_t>(r);
    }
  }

  static void Pad(std::string_view text, const std::string& flags, int width, std::string* out) {
    int fill = width - static_cast<int>(NumChars(text));
    bool left = flags.find('-') != std::string::npos;
    if (left) out->append(text);
    for (int i = 0; i < fill; ++i) out->push_back(' ');
    if (!left) out->append(text);
  }

  static void AppendDecimalPlainText(__int128 v, int scale, std::string* out);
};

Result<BoundNodePtr> BindFormatString(CallSite& site) {
  if (site.args.empty()) return ArgCountError(site, "at least 1");
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  for (size_t i = 1; i < site.args.size(); ++i) {
    if (site.args[i]->type()->is_nested()) return ArgTypeError(site, i, "an atomic value");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = site.args[0]->nullable();
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       std::make_unique<FormatStringKernel>(), std::move(sql));
}

void FormatStringKernel::AppendDecimalPlainText(__int128 v, int scale, std::string* out) {
  AppendDecimalPlain(v, scale, out);
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
  registry->Register("lpad", &BindPad<true>);
  registry->Register("rpad", &BindPad<false>);
  registry->Register("replace", &BindReplaceString);
  registry->Register("initcap", &BindStringToString<InitcapOp>);
  registry->Register("substring_index", &BindSubstringIndex);
  registry->Register("locate", &BindLocate);
  registry->Register("position", &BindLocate);
  registry->Register("concat_ws", &BindConcatWs);
  registry->Register("format_string", &BindFormatString);
  registry->Register("printf", &BindFormatString);
}

}  // namespace silt::expr
