// Regular-expression functions: RLIKE / REGEXP / regexp_like, regexp_extract,
// regexp_replace and split, on RE2 (Debian's libre2).
//
// Spark uses java.util.regex; RE2 accepts the same syntax for everything but
// backreferences, lookaround, possessive quantifiers and atomic groups (RE2
// guarantees linear time and rejects those). A pattern RE2 rejects is an
// error naming the pattern (at bind time when the pattern is a constant).
// See docs/decisions.md "Regular expressions".
//
// Patterns that are constant are compiled once at bind time; per-row
// patterns are compiled when they change from the previous row.
#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;

// Compiles `pattern` as Java would read it. Errors: InvalidArgument naming the
// pattern and RE2's reason.
Result<std::unique_ptr<RE2>> CompileRegex(std::string_view pattern, const std::string& sql) {
  RE2::Options options;
  options.set_log_errors(false);
  // Java's '.' does not match line terminators by default; RE2's default
  // (never_nl=false, dot_nl=false) matches that.
  auto re = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    return Status::InvalidArgument("Invalid regular expression '", pattern, "': ", re->error(),
                                   " (silt uses RE2, which lacks backreferences and lookaround)",
                                   " in '", sql, "'");
  }
  return re;
}

// Caches the last compiled pattern, so a constant pattern compiles once.
class RegexCache {
 public:
  Result<const RE2*> Get(std::string_view pattern, const std::string& sql) {
    if (re_ == nullptr || pattern != pattern_) {
      SILT_ASSIGN_OR_RETURN(re_, CompileRegex(pattern, sql));
      pattern_.assign(pattern);
    }
    return re_.get();
  }

 private:
  std::string pattern_;
  std::unique_ptr<RE2> re_;
};

Status CoerceToInt(CallSite& site, size_t index) {
  const DataType& t = *site.args[index]->type();
  if (t.id() == TypeId::kInt) return Status::OK();
  if (!t.is_integral() && t.id() != TypeId::kNull) return ArgTypeError(site, index, "INT");
  SILT_ASSIGN_OR_RETURN(site.args[index],
                        ImplicitCast(std::move(site.args[index]), DataType::Int(), site.options));
  return Status::OK();
}

// Checks a constant pattern at bind time, so a bad pattern fails the job at
// start rather than at the first row.
Status CheckConstantPattern(CallSite& site, size_t index) {
  if (!site.args[index]->foldable()) return Status::OK();
  SILT_ASSIGN_OR_RETURN(ColumnPtr pattern, ConstantArg(site, index, "the pattern"));
  if (pattern->IsNull(0)) return Status::OK();
  return CompileRegex(pattern->StringValue(0), site.text).status();
}

class RlikeKernel final : public Kernel {
 public:
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    return BinaryExecutor<std::string_view, std::string_view, bool>::ExecuteChecked(
        info, args, [&](std::string_view t, std::string_view pattern, RowContext& ctx) {
          Result<const RE2*> re = cache_.Get(pattern, info.sql);
          if (!re.ok()) {
            ctx.Fail(re.status());
            return false;
          }
          return RE2::PartialMatch(re2::StringPiece(t.data(), t.size()), **re);
        });
  }

 private:
  RegexCache cache_;
};

Result<BoundNodePtr> BindRlike(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 2));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToString(site, 1));
  SILT_RETURN_NOT_OK(CheckConstantPattern(site, 1));
  std::vector<std::string> sqls = ArgSqls(site.args);
  std::string sql =
      site.name == "regexp_like" ? PrettyCall("regexp_like", sqls) : sqls[0] + " RLIKE " + sqls[1];
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Boolean(), nullable, std::move(site.args),
                       std::make_unique<RlikeKernel>(), std::move(sql));
}

// regexp_extract(str, regexp[, idx]): group idx of the first match; "" when
// nothing matches or the group did not take part.
class ExtractKernel final : public Kernel {
 public:
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    StringReader text(args.args[0]);
    StringReader pattern(args.args[1]);
    const bool has_idx = args.args.size() > 2;
    FixedReader<int32_t> idx(args.args[has_idx ? 2 : 0]);
    ValidityOut validity(n);
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    if (!validity.InitFromArgs(args.args)) {
      builder.AppendNulls(n);
      return builder.Finish();
    }
    std::vector<re2::StringPiece> groups;
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      SILT_ASSIGN_OR_RETURN(const RE2* re, cache_.Get(pattern[row], info.sql));
      const int group = has_idx ? idx[row] : 1;
      const int count = re->NumberOfCapturingGroups();
      if (group < 0) {
        return Status::InvalidArgument("The specified group index ", group,
                                       " cannot be less than zero in '", info.sql, "'");
      }
      if (group > count) {
        return Status::InvalidArgument("Regex group count is ", count,
                                       ", but the specified group index is ", group, " in '",
                                       info.sql, "'");
      }
      std::string_view t = text[row];
      groups.assign(static_cast<size_t>(group) + 1, re2::StringPiece());
      bool hit = re->Match(re2::StringPiece(t.data(), t.size()), 0, t.size(), RE2::UNANCHORED,
                           groups.data(), group + 1);
      if (!hit || groups[static_cast<size_t>(group)].data() == nullptr) {
        builder.AppendString("");
      } else {
        const re2::StringPiece& g = groups[static_cast<size_t>(group)];
        builder.AppendString(std::string_view(g.data(), g.size()));
      }
    }
    return builder.Finish();
  }

 private:
  RegexCache cache_;
};

Result<BoundNodePtr> BindExtract(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToString(site, 1));
  if (site.args.size() > 2) SILT_RETURN_NOT_OK(CoerceToInt(site, 2));
  SILT_RETURN_NOT_OK(CheckConstantPattern(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       std::make_unique<ExtractKernel>(), std::move(sql));
}

// Appends Java's Matcher.appendReplacement expansion of `rep`: $n and ${name}
// are groups, \x is a literal x.
Status AppendReplacement(std::string_view rep, const std::vector<re2::StringPiece>& groups,
                         const std::string& sql, std::string* out) {
  for (size_t i = 0; i < rep.size(); ++i) {
    char c = rep[i];
    if (c == '\\') {
      if (i + 1 == rep.size()) {
        return Status::InvalidArgument("character to be escaped is missing in replacement '", rep,
                                       "' in '", sql, "'");
      }
      out->push_back(rep[++i]);
    } else if (c == '$') {
      if (i + 1 == rep.size() || rep[i + 1] < '0' || rep[i + 1] > '9') {
        return Status::InvalidArgument("Illegal group reference in replacement '", rep, "' in '",
                                       sql, "'");
      }
      // Java reads digits greedily while the group number stays valid.
      size_t group = static_cast<size_t>(rep[++i] - '0');
      if (group >= groups.size()) {
        return Status::InvalidArgument("No group ", group, " in replacement '", rep, "' in '", sql,
                                       "'");
      }
      while (i + 1 < rep.size() && rep[i + 1] >= '0' && rep[i + 1] <= '9') {
        size_t next = group * 10 + static_cast<size_t>(rep[i + 1] - '0');
        if (next >= groups.size()) break;
        group = next;
        ++i;
      }
      const re2::StringPiece& g = groups[group];
      if (g.data() != nullptr) out->append(g.data(), g.size());
    } else {
      out->push_back(c);
    }
  }
  return Status::OK();
}

// Bytes in the UTF-8 sequence starting with `lead`.
inline size_t Utf8Width(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// regexp_replace(str, regexp, rep[, position]): every match from code point
// `position` (1-based) on is replaced.
class ReplaceKernel final : public Kernel {
 public:
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    StringReader text(args.args[0]);
    StringReader pattern(args.args[1]);
    StringReader rep(args.args[2]);
    const bool has_pos = args.args.size() > 3;
    FixedReader<int32_t> pos(args.args[has_pos ? 3 : 0]);
    ValidityOut validity(n);
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    if (!validity.InitFromArgs(args.args)) {
      builder.AppendNulls(n);
      return builder.Finish();
    }
    std::vector<re2::StringPiece> groups;
    std::string out;
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      SILT_ASSIGN_OR_RETURN(const RE2* re, cache_.Get(pattern[row], info.sql));
      int32_t position = has_pos ? pos[row] : 1;
      if (position <= 0) {
        return Status::InvalidArgument(
            "The position argument of regexp_replace must be > 0 but is ", position, " in '",
            info.sql, "'");
      }
      std::string_view t = text[row];
      size_t start = 0;
      for (int32_t i = 1; i < position && start < t.size(); ++i) {
        start += Utf8Width(static_cast<unsigned char>(t[start]));
      }
      if (start >= t.size() && position > 1) {
        builder.AppendString(t);
        continue;
      }
      const int ngroups = re->NumberOfCapturingGroups() + 1;
      groups.assign(static_cast<size_t>(ngroups), re2::StringPiece());
      out.assign(t.substr(0, start));
      size_t at = start;
      re2::StringPiece input(t.data(), t.size());
      while (at <= t.size() &&
             re->Match(input, at, t.size(), RE2::UNANCHORED, groups.data(), ngroups)) {
        size_t match_begin = static_cast<size_t>(groups[0].data() - t.data());
        size_t match_end = match_begin + groups[0].size();
        out.append(t.substr(at, match_begin - at));
        SILT_RETURN_NOT_OK(AppendReplacement(rep[row], groups, info.sql, &out));
        if (match_end == match_begin) {
          // An empty match: copy one code point and move past it (Java's
          // find() does the same to make progress).
          if (match_end >= t.size()) {
            at = t.size() + 1;
            break;
          }
          size_t w = Utf8Width(static_cast<unsigned char>(t[match_end]));
          out.append(t.substr(match_end, w));
          at = match_end + w;
        } else {
          at = match_end;
        }
      }
      if (at < t.size()) out.append(t.substr(at));
      builder.AppendString(out);
    }
    return builder.Finish();
  }

 private:
  RegexCache cache_;
};

Result<BoundNodePtr> BindReplace(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 3, 4));
  for (size_t i = 0; i < 3; ++i) SILT_RETURN_NOT_OK(CoerceToString(site, i));
  if (site.args.size() > 3) SILT_RETURN_NOT_OK(CoerceToInt(site, 3));
  SILT_RETURN_NOT_OK(CheckConstantPattern(site, 1));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       std::make_unique<ReplaceKernel>(), std::move(sql));
}

// split(str, regex[, limit]): java.lang.String.split semantics as Spark's
// UTF8String.split uses them (limit <= 0 keeps trailing empty strings).
class SplitKernel final : public Kernel {
 public:
  Result<ColumnPtr> Exec(const KernelInfo& info, const ExecArgs& args) override {
    const int64_t n = args.num_rows;
    StringReader text(args.args[0]);
    StringReader pattern(args.args[1]);
    const bool has_limit = args.args.size() > 2;
    FixedReader<int32_t> limit_in(args.args[has_limit ? 2 : 0]);
    ValidityOut validity(n);
    ColumnBuilder builder(info.type);
    builder.Reserve(n);
    ColumnBuilder* elems = builder.child(0);
    if (!validity.InitFromArgs(args.args)) {
      builder.AppendNulls(n);
      return builder.Finish();
    }
    re2::StringPiece match;
    for (int64_t row = 0; row < n; ++row) {
      if (!validity.IsValid(row)) {
        builder.AppendNull();
        continue;
      }
      SILT_ASSIGN_OR_RETURN(const RE2* re, cache_.Get(pattern[row], info.sql));
      int32_t limit = has_limit ? limit_in[row] : -1;
      std::string_view t = text[row];
      if (t.empty()) {
        elems->AppendString("");
        builder.CloseList();
        continue;
      }
      re2::StringPiece input(t.data(), t.size());
      size_t piece_begin = 0;
      size_t search = 0;
      int32_t pieces = 0;
      while (search <= t.size() && (limit <= 0 || pieces + 1 < limit) &&
             re->Match(input, search, t.size(), RE2::UNANCHORED, &match, 1)) {
        size_t mb = static_cast<size_t>(match.data() - t.data());
        size_t me = mb + match.size();
        if (me == 0) {
          // A zero-width match at the start never gives a leading empty
          // string (Java 8+).
          search = t.empty() ? 1 : Utf8Width(static_cast<unsigned char>(t[0]));
          continue;
        }
        if (mb == me && mb >= t.size()) break;
        elems->AppendString(t.substr(piece_begin, mb - piece_begin));
        ++pieces;
        piece_begin = me;
        search = mb == me ? me + Utf8Width(static_cast<unsigned char>(t[me])) : me;
      }
      elems->AppendString(t.substr(piece_begin));
      ++pieces;
      builder.CloseList();
    }
    return builder.Finish();
  }

 private:
  RegexCache cache_;
};

Result<BoundNodePtr> BindSplit(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 2, 3));
  SILT_RETURN_NOT_OK(CoerceToString(site, 0));
  SILT_RETURN_NOT_OK(CoerceToString(site, 1));
  if (site.args.size() > 2) SILT_RETURN_NOT_OK(CoerceToInt(site, 2));
  SILT_RETURN_NOT_OK(CheckConstantPattern(site, 1));
  std::vector<std::string> sqls = ArgSqls(site.args);
  if (sqls.size() == 2) sqls.push_back("-1");
  std::string sql = PrettyCall(site.name, sqls);
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Array(DataType::String(), true), nullable,
                       std::move(site.args), std::make_unique<SplitKernel>(), std::move(sql));
}

}  // namespace

void RegisterRegexFunctions(FunctionRegistry* registry) {
  registry->Register("rlike", &BindRlike);
  registry->Register("regexp", &BindRlike);
  registry->Register("regexp_like", &BindRlike);
  registry->Register("regexp_extract", &BindExtract);
  registry->Register("regexp_replace", &BindReplace);
  registry->Register("split", &BindSplit);
}

}  // namespace silt::expr
