// A test-only timing tool (not a benchmark gate): evaluates the seed job's
// second select list over generated seed-shaped rows, in batches of
// columnar::kTargetBatchRows, with each item bound alone and with all items
// sharing one BindSession, and prints rows/s for both. It asserts nothing
// about time.
//
//   silt_expr_seed_timing [rows] [select|mix|first|kernels [expression]]
//   (default 1000000 rows, select and mix; `first` times the first select
//   list, from_json of the Kafka value; `kernels` runs the one expression
//   given, every one without it)
//
// Also times the filter + projection mix of bench/expr/run.py, and with
// `kernels` single element-wise expressions (arithmetic, math, comparison,
// date parts, hashes, strings, casts) over generated typed columns with 10%
// nulls, one line each in ns per row of thread CPU time, for comparing two
// builds of the kernels side by side.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "silt/columnar/builder.h"
#include "silt/expr/expression.h"
#include "silt/expr/filter.h"
#include "silt/expr/seed_select_lists.h"

namespace silt::expr {
namespace {

using seed::kFirstSelect;
using seed::kSecondSelect;

std::string SeedMessage(int64_t row_idx) {
  if (row_idx % 2 == 0) {
    return fmt::format(R"({{"device_id": "smart-plug-{:02d}", "device_type": "smart_plug", )"
                       R"("ingested_at": "2026-06-22T08:{:02d}:{:02d}.{:06d}+00:00", )"
                       R"("payload": "{{\"power\": {}.{}, \"voltage\": 230.1, \"current\": 0.37, )"
                       R"(\"energy\": 12.5, \"state\": \"ON\", \"linkquality\": {}}}"}})",
                       row_idx % 7, (row_idx / 60) % 60, row_idx % 60, row_idx % 1000000,
                       row_idx % 100, row_idx % 10, row_idx % 255);
  }
  return fmt::format(
      R"({{"device_id": "door-{:02d}", "device_type": "door_window", )"
      R"("ingested_at": "2026-06-22T08:21:10.441+00:00", )"
      R"("payload": "{{\"contact\": false, \"battery\": {}, \"linkquality\": {}}}"}})",
      row_idx % 5, row_idx % 100, row_idx % 255);
}

Result<std::vector<columnar::RecordBatchPtr>> ParsedBatches(int64_t rows) {
  SILT_ASSIGN_OR_RETURN(ExpressionPtr first, ParseExpression(kFirstSelect));
  std::vector<columnar::RecordBatchPtr> out;
  for (int64_t start = 0; start < rows; start += columnar::kTargetBatchRows) {
    int64_t n = std::min(columnar::kTargetBatchRows, rows - start);
    columnar::ColumnBuilder builder(columnar::DataType::Binary());
    for (int64_t row_idx = start; row_idx < start + n; ++row_idx) {
      builder.AppendString(SeedMessage(row_idx));
    }
    auto input = std::make_shared<columnar::RecordBatch>();
    input->schema = columnar::DataType::Struct({{"value", columnar::DataType::Binary(), true}});
    input->num_rows = n;
    input->columns.push_back(builder.Finish());
    SILT_ASSIGN_OR_RETURN(BoundExpressionPtr bound, Bind(*first, input->schema));
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr e, bound->Evaluate(*input, EvalContext{}));
    auto parsed = std::make_shared<columnar::RecordBatch>();
    parsed->schema = columnar::DataType::Struct({{"e", bound->type(), bound->nullable()}});
    parsed->num_rows = n;
    parsed->columns.push_back(std::move(e));
    out.push_back(std::move(parsed));
  }
  return out;
}

// The first select list (from_json of the Kafka value) over the raw seed
// messages, timed as the second one is.
struct Timing;
Result<Timing> TimeFirstSelect(int64_t rows);

// CPU seconds this thread has used (the machine may be shared, so wall time
// would count other processes' work).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double cpu = 0;
  double wall = 0;
};

Result<Timing> TimeFirstSelect(int64_t rows) {
  SILT_ASSIGN_OR_RETURN(ExpressionPtr first, ParseExpression(kFirstSelect));
  std::vector<columnar::RecordBatchPtr> inputs;
  for (int64_t start = 0; start < rows; start += columnar::kTargetBatchRows) {
    const int64_t n = std::min(columnar::kTargetBatchRows, rows - start);
    columnar::ColumnBuilder builder(columnar::DataType::Binary());
    for (int64_t row_idx = start; row_idx < start + n; ++row_idx) {
      builder.AppendString(SeedMessage(row_idx));
    }
    auto input = std::make_shared<columnar::RecordBatch>();
    input->schema = columnar::DataType::Struct({{"value", columnar::DataType::Binary(), true}});
    input->num_rows = n;
    input->columns.push_back(builder.Finish());
    inputs.push_back(std::move(input));
  }
  SILT_ASSIGN_OR_RETURN(BoundExpressionPtr bound, Bind(*first, inputs[0]->schema));
  const double cpu_begin = ThreadCpuSeconds();
  const auto wall_begin = std::chrono::steady_clock::now();
  for (const columnar::RecordBatchPtr& input : inputs) {
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr e, bound->Evaluate(*input, EvalContext{}));
    if (e->length != input->num_rows) return Status::Internal("wrong length");
  }
  Timing t;
  t.cpu = ThreadCpuSeconds() - cpu_begin;
  t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_begin).count();
  return t;
}

// Times the second select over every batch.
Result<Timing> TimeSecondSelect(const std::vector<columnar::RecordBatchPtr>& batches, bool shared) {
  BindSession session;
  std::vector<BoundExpressionPtr> bound;
  for (const std::string& text : kSecondSelect) {
    SILT_ASSIGN_OR_RETURN(ExpressionPtr parsed, ParseExpression(text));
    SILT_ASSIGN_OR_RETURN(BoundExpressionPtr b,
                          Bind(*parsed, batches[0]->schema, {}, shared ? &session : nullptr));
    bound.push_back(std::move(b));
  }
  const double cpu_begin = ThreadCpuSeconds();
  const auto wall_begin = std::chrono::steady_clock::now();
  EvalContext ctx;
  for (const columnar::RecordBatchPtr& batch : batches) {
    for (BoundExpressionPtr& b : bound) {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, b->Evaluate(*batch, ctx));
      if (column->length != batch->num_rows) return Status::Internal("wrong length");
    }
  }
  Timing out;
  out.cpu = ThreadCpuSeconds() - cpu_begin;
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_begin).count();
  return out;
}

// The filter + projection mix of bench/expr: keep smart plugs drawing more
// than 5 W, then project three columns.
const char* const kMixPredicate =
    "e.device_type = 'smart_plug' AND CAST(get_json_object(e.payload, '$.power') AS DOUBLE) > 5.0";
const std::vector<std::string> kMixSelect = {
    "e.device_id",
    "CAST(get_json_object(e.payload, '$.power') AS DOUBLE) * 2 AS double_power",
    "upper(e.device_type) AS kind",
};

// Times filtering every batch and projecting the kept rows; *kept counts
// them. `shared`: as the stream transform runs a where step followed by a
// select step — the predicate bound as a BoundFilter with the select list's
// BindSession (cheap conjuncts first, one JSON parse per kept row). Else the
// predicate and the select list bound apart (each parses the JSON).
Result<Timing> TimeMix(const std::vector<columnar::RecordBatchPtr>& batches, bool shared,
                       int64_t* kept) {
  BindSession session;
  SILT_ASSIGN_OR_RETURN(ExpressionPtr pred_parsed, ParseExpression(kMixPredicate));
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<BoundFilter> filter,
                        BoundFilter::Make(*pred_parsed, batches[0]->schema, {}, &session));
  SILT_ASSIGN_OR_RETURN(BoundExpressionPtr whole, Bind(*pred_parsed, batches[0]->schema));
  std::vector<int64_t> rows;
  std::vector<BoundExpressionPtr> bound;
  for (const std::string& text : kMixSelect) {
    SILT_ASSIGN_OR_RETURN(ExpressionPtr parsed, ParseExpression(text));
    SILT_ASSIGN_OR_RETURN(BoundExpressionPtr b,
                          Bind(*parsed, batches[0]->schema, {}, shared ? &session : nullptr));
    bound.push_back(std::move(b));
  }
  *kept = 0;
  const double cpu_begin = ThreadCpuSeconds();
  const auto wall_begin = std::chrono::steady_clock::now();
  EvalContext ctx;
  for (const columnar::RecordBatchPtr& batch : batches) {
    columnar::RecordBatchPtr selected;
    if (shared) {
      SILT_ASSIGN_OR_RETURN(selected, filter->Filter(batch, ctx));
    } else {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr mask, whole->Evaluate(*batch, ctx));
      rows.clear();
      for (int64_t row = 0; row < batch->num_rows; ++row) {
        if (mask->IsValid(row) && mask->BoolValue(row)) rows.push_back(row);
      }
      selected = columnar::TakeBatch(*batch, rows);
    }
    *kept += selected->num_rows;
    for (BoundExpressionPtr& b : bound) {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, b->Evaluate(*selected, ctx));
      if (column->length != selected->num_rows) return Status::Internal("wrong length");
    }
  }
  Timing out;
  out.cpu = ThreadCpuSeconds() - cpu_begin;
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_begin).count();
  return out;
}

// The columns of the `kernels` workload: every 10th row NULL in a, x, s.
Result<std::vector<columnar::RecordBatchPtr>> TypedBatches(int64_t rows) {
  using columnar::DataType;
  std::vector<columnar::RecordBatchPtr> out;
  for (int64_t start = 0; start < rows; start += columnar::kTargetBatchRows) {
    const int64_t n = std::min(columnar::kTargetBatchRows, rows - start);
    columnar::ColumnBuilder a(DataType::Int()), b(DataType::Int()), l(DataType::Long()),
        x(DataType::Double()), y(DataType::Double()), d(DataType::Date()),
        ts(DataType::Timestamp()), s(DataType::String());
    for (int64_t row_idx = start; row_idx < start + n; ++row_idx) {
      const bool null = row_idx % 10 == 3;
      const int32_t v = static_cast<int32_t>((row_idx * 2654435761u) % 100000) - 50000;
      if (null) {
        a.AppendNull();
        x.AppendNull();
        s.AppendNull();
      } else {
        a.Append<int32_t>(v);
        x.Append<double>(v * 0.37);
        s.AppendString(fmt::format(" Device-{} ", v % 977));
      }
      b.Append<int32_t>(static_cast<int32_t>(row_idx % 97) - 3);
      l.Append<int64_t>(row_idx * 1000003);
      y.Append<double>(1.5 + static_cast<double>(row_idx % 13));
      d.Append<int32_t>(static_cast<int32_t>(18000 + row_idx % 4000));
      ts.Append<int64_t>(int64_t{1750000000} * 1000000 + row_idx * 7777777);
    }
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->schema = DataType::Struct({{"a", DataType::Int(), true},
                                      {"b", DataType::Int(), false},
                                      {"l", DataType::Long(), false},
                                      {"x", DataType::Double(), true},
                                      {"y", DataType::Double(), false},
                                      {"d", DataType::Date(), false},
                                      {"ts", DataType::Timestamp(), false},
                                      {"s", DataType::String(), true}});
    batch->num_rows = n;
    for (columnar::ColumnBuilder* c : {&a, &b, &l, &x, &y, &d, &ts, &s}) {
      batch->columns.push_back(c->Finish());
    }
    out.push_back(std::move(batch));
  }
  return out;
}

const std::vector<std::string> kKernelExprs = {
    "a + b",
    "a * 3",
    "l - l",
    "x * y",
    "x + 1.5",
    "a % 7",
    "x / y",
    "a div b",
    "-a",
    "abs(x)",
    "sqrt(y)",
    "ln(x)",
    "pow(y, 2)",
    "floor(x)",
    "a < b",
    "x = 1.5",
    "s = ' Device-5 '",
    "a & b",
    "year(d)",
    "month(d)",
    "dayofweek(d)",
    "hour(ts)",
    "date_add(d, 3)",
    "datediff(d, d)",
    "last_day(d)",
    "weekofyear(d)",
    "hash(a)",
    "xxhash64(s)",
    "md5(s)",
    "length(s)",
    "upper(s)",
    "lower(s)",
    "trim(s)",
    "CAST(a AS DOUBLE)",
    "CAST(x AS INT)",
    "CAST(a AS STRING)",
    "CAST(s AS INT)",
    "hex(l)",
};

// Times each of kKernelExprs alone over every batch, best of `reps`.
Status TimeKernels(const std::vector<columnar::RecordBatchPtr>& batches, int64_t rows, int reps,
                   const std::string& only) {
  EvalContext ctx;
  for (const std::string& text : kKernelExprs) {
    if (!only.empty() && text != only) continue;
    SILT_ASSIGN_OR_RETURN(ExpressionPtr parsed, ParseExpression(text));
    SILT_ASSIGN_OR_RETURN(BoundExpressionPtr bound, Bind(*parsed, batches[0]->schema));
    double best = 0;
    for (int rep = 0; rep < reps; ++rep) {
      const double cpu_begin = ThreadCpuSeconds();
      for (const columnar::RecordBatchPtr& batch : batches) {
        SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, bound->Evaluate(*batch, ctx));
        if (column->length != batch->num_rows) return Status::Internal("wrong length");
      }
      const double cpu = ThreadCpuSeconds() - cpu_begin;
      if (rep == 0 || cpu < best) best = cpu;
    }
    std::printf("kernel %-20s %8.2f ns/row\n", text.c_str(),
                best * 1e9 / static_cast<double>(rows));
  }
  return Status::OK();
}

void Print(const char* what, int64_t rows, const Timing& t, const std::string& extra = "") {
  std::printf("%s: %lld rows%s in %.4f s CPU (%.4f s wall) = %.0f rows/s\n", what,
              static_cast<long long>(rows), extra.c_str(), t.cpu, t.wall,
              static_cast<double>(rows) / t.cpu);
}

int Main(int argc, char** argv) {
  int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1000000;
  if (rows <= 0) rows = 1;
  const std::string only = argc > 2 ? argv[2] : "";
  if (only == "kernels") {
    Result<std::vector<columnar::RecordBatchPtr>> typed = TypedBatches(rows);
    Status st = typed.ok() ? TimeKernels(*typed, rows, 5, argc > 3 ? argv[3] : "") : typed.status();
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
    return 0;
  }
  if (only == "first") {
    for (int run = 0; run < 4; ++run) {
      Result<Timing> t = TimeFirstSelect(rows);
      if (!t.ok()) {
        std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
        return 1;
      }
      Print("seed first select (from_json of the value)", rows, *t);
    }
    return 0;
  }
  Result<std::vector<columnar::RecordBatchPtr>> batches = ParsedBatches(rows);
  if (!batches.ok()) {
    std::fprintf(stderr, "%s\n", batches.status().ToString().c_str());
    return 1;
  }
  for (bool shared : {false, true, false, true}) {
    if (only == "mix") break;
    Result<Timing> t = TimeSecondSelect(*batches, shared);
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
      return 1;
    }
    Print(shared ? "seed select list, shared JSON parse (BindSession)"
                 : "seed select list, one parse per call",
          rows, *t);
  }
  for (bool shared : {false, true, false, true}) {
    if (only == "select") break;
    int64_t kept = 0;
    Result<Timing> t = TimeMix(*batches, shared, &kept);
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
      return 1;
    }
    Print(shared ? "filter + projection mix, BoundFilter + shared session"
                 : "filter + projection mix, bound apart + TakeBatch",
          rows, *t, " (" + std::to_string(kept) + " kept)");
  }
  return 0;
}

}  // namespace
}  // namespace silt::expr

int main(int argc, char** argv) { return silt::expr::Main(argc, argv); }
