// FunctionRegistry::Builtin(): the registry of every builtin function. It is
// defined here, in the layer above every family, so that kernel/ (where the
// registry lives) does not include the families that register into it.
#include "silt/expr/kernel/function_registry.h"

namespace silt::expr {

const FunctionRegistry& FunctionRegistry::Builtin() {
  static const FunctionRegistry* registry = [] {
    auto* r = new FunctionRegistry();
    RegisterCastFunctions(r);
    RegisterArithmeticFunctions(r);
    RegisterComparisonFunctions(r);
    RegisterLogicalFunctions(r);
    RegisterConditionalFunctions(r);
    RegisterStringFunctions(r);
    RegisterCollectionFunctions(r);
    RegisterJsonFunctions(r);
    RegisterDatetimeFunctions(r);
    RegisterMathFunctions(r);
    RegisterHashFunctions(r);
    RegisterRegexFunctions(r);
    RegisterUnixTimeFunctions(r);
    RegisterCalendarFunctions(r);
    RegisterSparkHashFunctions(r);
    RegisterNondeterministicFunctions(r);
    RegisterWindowFunctions(r);
    RegisterToJsonFunction(r);
    RegisterVariantFunctions(r);
    return r;
  }();
  return *registry;
}

}  // namespace silt::expr
