// Nondeterministic functions: uuid, monotonically_increasing_id and
// input_file_name (their results depend on the evaluation, not only on the
// arguments, so the binder never folds them).
#include <random>
#include <string>

#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;

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

}  // namespace

void RegisterNondeterministicFunctions(FunctionRegistry* registry) {
  registry->Register("uuid", &BindUuid);
  registry->Register("monotonically_increasing_id", &BindIncreasingId);
  registry->Register("input_file_name", &BindInputFile);
}

}  // namespace silt::expr
