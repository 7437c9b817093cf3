// A test-only timing tool (not a benchmark gate): evaluates the seed job's
// second select list over generated seed-shaped rows, in batches of
// columnar::kTargetBatchRows, with each item bound alone and with all items
// sharing one BindSession, and prints rows/s for both. It asserts nothing
// about time.
//
//   silt_expr_seed_timing [rows] [select|mix]   (default 1000000, both)
//
// Also times the filter + projection mix of bench/expr/run.py.
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

namespace silt::expr {
namespace {

const char* const kFirstSelect =
    "from_json(CAST(value AS STRING), 'device_id STRING NOT NULL, device_type STRING NOT NULL, "
    "ingested_at STRING NOT NULL, payload STRING') AS e";

const std::vector<std::string> kSecondSelect = {
    "e.device_id",
    "e.device_type",
    "to_timestamp(e.ingested_at) AS event_time",
    "CAST(get_json_object(e.payload, '$.linkquality') AS INT) AS linkquality",
    "CAST(get_json_object(e.payload, '$.contact') AS BOOLEAN) AS contact",
    "CAST(get_json_object(e.payload, '$.battery') AS INT) AS battery",
    "CAST(get_json_object(e.payload, '$.power') AS DOUBLE) AS power",
    "CAST(get_json_object(e.payload, '$.voltage') AS DOUBLE) AS voltage",
    "CAST(get_json_object(e.payload, '$.current') AS DOUBLE) AS current",
    "CAST(get_json_object(e.payload, '$.energy') AS DOUBLE) AS energy",
    "get_json_object(e.payload, '$.state') AS plug_state",
    "e.payload AS raw_payload",
    "current_timestamp() AS processed_at",
};

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

void Print(const char* what, int64_t rows, const Timing& t, const std::string& extra = "") {
  std::printf("%s: %lld rows%s in %.4f s CPU (%.4f s wall) = %.0f rows/s\n", what,
              static_cast<long long>(rows), extra.c_str(), t.cpu, t.wall,
              static_cast<double>(rows) / t.cpu);
}

int Main(int argc, char** argv) {
  int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1000000;
  if (rows <= 0) rows = 1;
  const std::string only = argc > 2 ? argv[2] : "";
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
