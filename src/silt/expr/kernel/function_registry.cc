#include "silt/expr/kernel/function_registry.h"

#include <algorithm>

#include "silt/expr/kernel/type_util.h"

namespace silt::expr {

void FunctionRegistry::Register(std::string name, FunctionBinder binder) {
  binders_[std::move(name)] = binder;
}

FunctionBinder FunctionRegistry::Find(std::string_view name) const {
  std::string lower(name);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  auto it = binders_.find(lower);
  return it == binders_.end() ? nullptr : it->second;
}

std::vector<std::string> FunctionRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, binder] : binders_) {
    if (!name.empty() && name[0] >= 'a' && name[0] <= 'z' && name.find(' ') == std::string::npos) {
      out.push_back(name);
    }
  }
  // Sorted, so that suggestions between equally close names are stable.
  std::sort(out.begin(), out.end());
  return out;
}

Status ArgCountError(const CallSite& site, std::string_view expected) {
  return Status::InvalidArgument("Function ", site.name, " takes ", expected, " argument(s) but ",
                                 site.args.size(), " were given in '", site.text, "'");
}

Status ArgTypeError(const CallSite& site, size_t index, std::string_view expected) {
  return Status::InvalidArgument("Cannot resolve '", site.text, "': argument ", index + 1, " (",
                                 site.args[index]->sql(), ") must be ", expected, " but is ",
                                 TypeName(*site.args[index]->type()));
}

Status CheckArgCount(const CallSite& site, size_t min, size_t max) {
  size_t n = site.args.size();
  if (n >= min && n <= max) return Status::OK();
  std::string expected =
      min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
  return ArgCountError(site, expected);
}

Result<columnar::ColumnPtr> ConstantArg(const CallSite& site, size_t index, std::string_view what) {
  BoundNode& arg = *site.args[index];
  if (!arg.foldable()) {
    return Status::InvalidArgument("Cannot resolve '", site.text, "': ", what, " (argument ",
                                   index + 1, ") must be a constant, not ", arg.sql());
  }
  SILT_ASSIGN_OR_RETURN(Datum d, EvaluateConstant(arg));
  return d.column;
}

std::vector<std::string> ArgSqls(const std::vector<BoundNodePtr>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  for (const BoundNodePtr& a : args) out.push_back(a->sql());
  return out;
}

BoundNodePtr MakeBoundCall(const CallSite& site, TypePtr type, bool nullable,
                           std::vector<BoundNodePtr> args, std::unique_ptr<Kernel> kernel,
                           std::string sql, bool context_dependent) {
  KernelInfo info;
  info.type = std::move(type);
  for (const BoundNodePtr& a : args) info.arg_types.push_back(a->type());
  info.options = site.options;
  info.sql = std::move(sql);
  return std::make_unique<BoundCall>(std::move(info), nullable, std::move(args), std::move(kernel),
                                     context_dependent);
}

bool AnyNullable(const std::vector<BoundNodePtr>& args) {
  for (const BoundNodePtr& a : args) {
    if (a->nullable()) return true;
  }
  return false;
}

}  // namespace silt::expr
