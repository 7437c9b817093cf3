// FunctionRegistry: maps function names (case-insensitive, as Spark) to
// binder functions. A binder checks the argument types of one call, inserts
// Spark's implicit casts, and returns the bound node with its kernel.
// Operators are registered under Spark's names for them ("+", "=", "and",
// "not", "isnull", ...), so the parser's operator nodes bind through the same
// path as calls.
//
// Adding a function: write its binder and kernel in the family's .cc file and
// register it from that family's Register*Functions.
//
// Thread safety: the builtin registry is immutable after first use; bind
// from any thread.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "silt/base/result.h"
#include "silt/expr/kernel/bind_session.h"
#include "silt/expr/kernel/bound.h"
#include "silt/expr/kernel/type_util.h"

namespace silt::expr {

// One call being bound.
struct CallSite {
  // Lower-case function or operator name.
  std::string name;
  // The call as written, for messages ("to_timestamp(e.ts, 'yyyy')").
  std::string text;
  std::vector<BoundNodePtr> args;
  // f(*): only count accepts it.
  bool star_arg = false;
  EvalOptions options;
  // Shared work between expressions; null when binding alone.
  BindSession* session = nullptr;
};

using FunctionBinder = Result<BoundNodePtr> (*)(CallSite& site);

class FunctionRegistry {
 public:
  // The builtin functions. Built once, on first use (defined in
  // bind/builtin_functions.cc, above every family).
  static const FunctionRegistry& Builtin();

  // REQUIRES: `name` is lower case.
  void Register(std::string name, FunctionBinder binder);
  // Null when unknown.
  FunctionBinder Find(std::string_view name) const;
  // The registered function names that are identifiers (operators such as
  // "+" left out), for "did you mean" suggestions.
  std::vector<std::string> Names() const;

 private:
  std::unordered_map<std::string, FunctionBinder> binders_;
};

// The internal function expr::WindowExpansion binds a projection's
// window(ts, ...) as: the array of the windows containing ts. Its name has
// a space, so no expression can call it and no suggestion names it.
inline constexpr std::string_view kWindowListFunction = "window list";

// Registration per family (each in its kernel file).
void RegisterCastFunctions(FunctionRegistry* registry);
void RegisterArithmeticFunctions(FunctionRegistry* registry);
void RegisterComparisonFunctions(FunctionRegistry* registry);
void RegisterLogicalFunctions(FunctionRegistry* registry);
void RegisterConditionalFunctions(FunctionRegistry* registry);
void RegisterStringFunctions(FunctionRegistry* registry);
void RegisterCollectionFunctions(FunctionRegistry* registry);
void RegisterJsonFunctions(FunctionRegistry* registry);
void RegisterDatetimeFunctions(FunctionRegistry* registry);
void RegisterMathFunctions(FunctionRegistry* registry);
void RegisterHashFunctions(FunctionRegistry* registry);
void RegisterRegexFunctions(FunctionRegistry* registry);
void RegisterUnixTimeFunctions(FunctionRegistry* registry);
void RegisterCalendarFunctions(FunctionRegistry* registry);
void RegisterWindowFunctions(FunctionRegistry* registry);
void RegisterToJsonFunction(FunctionRegistry* registry);
void RegisterSparkHashFunctions(FunctionRegistry* registry);
void RegisterNondeterministicFunctions(FunctionRegistry* registry);
void RegisterVariantFunctions(FunctionRegistry* registry);

// Helpers for binders.

// InvalidArgument: "Function <name> takes <expected> argument(s) but <n> were
// given in '<text>'".
Status ArgCountError(const CallSite& site, std::string_view expected);
// InvalidArgument: "Cannot resolve '<text>': argument <i+1> (<sql>) must be
// <expected> but is <TYPE>".
Status ArgTypeError(const CallSite& site, size_t index, std::string_view expected);
// Checks the argument count is within [min, max].
Status CheckArgCount(const CallSite& site, size_t min, size_t max);
// Requires argument `index` to be constant and returns its value (a
// one-row column). Errors: InvalidArgument when it reads columns.
Result<columnar::ColumnPtr> ConstantArg(const CallSite& site, size_t index, std::string_view what);

// The SQL texts of the arguments.
std::vector<std::string> ArgSqls(const std::vector<BoundNodePtr>& args);

// Builds a bound call. `sql` is Spark's pretty form of the call.
BoundNodePtr MakeBoundCall(const CallSite& site, TypePtr type, bool nullable,
                           std::vector<BoundNodePtr> args, std::unique_ptr<Kernel> kernel,
                           std::string sql, bool context_dependent = false);
inline BoundNodePtr MakeBoundCall(const CallSite& site, TypePtr type, bool nullable,
                                  std::vector<BoundNodePtr> args, KernelFn fn, std::string sql) {
  return MakeBoundCall(site, std::move(type), nullable, std::move(args),
                       std::make_unique<FunctionKernel>(fn), std::move(sql));
}

// True when any argument is nullable.
bool AnyNullable(const std::vector<BoundNodePtr>& args);

}  // namespace silt::expr
