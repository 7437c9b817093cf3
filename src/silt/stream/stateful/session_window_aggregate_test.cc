#include "silt/stream/stateful/session_window_aggregate.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "silt/columnar/builder.h"
#include "silt/exec/column_text_test_util.h"
#include "silt/stream/stateful/stateful_aggregate.h"
#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::RecordBatchPtr;

constexpr int64_t kSecond = 1000000;

struct Event {
  int64_t sec;
  std::string device;
  double temp = 0;
  std::string gap = "30 seconds";  // "NULL": null
};

// `watermark`: ts carries withWatermark's mark (10 s), as after the step.
columnar::SchemaPtr InputSchema(bool watermark = true) {
  return DataType::Struct({{"ts", DataType::Timestamp(), true,
                            watermark ? R"({"spark.watermarkDelayMs":10000})" : "{}"},
                           {"device", DataType::String(), true},
                           {"temp", DataType::Double(), true},
                           {"gap", DataType::String(), true}});
}

RecordBatchPtr Batch(const std::vector<Event>& events) {
  ColumnBuilder ts(DataType::Timestamp()), device(DataType::String()), temp(DataType::Double()),
      gap(DataType::String());
  for (const Event& e : events) {
    ts.Append<int64_t>(e.sec * kSecond);
    device.AppendString(e.device);
    temp.Append<double>(e.temp);
    if (e.gap == "NULL") {
      gap.AppendNull();
    } else {
      gap.AppendString(e.gap);
    }
  }
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = InputSchema();
  batch->num_rows = static_cast<int64_t>(events.size());
  batch->columns = {ts.Finish(), device.Finish(), temp.Finish(), gap.Finish()};
  return batch;
}

// "[start, end) device n total" per row (seconds), sorted.
std::vector<std::string> Rows(const RecordBatchPtr& batch) {
  std::vector<std::string> out;
  if (batch == nullptr) return out;
  for (int64_t r = 0; r < batch->num_rows; ++r) {
    std::string row;
    for (const columnar::ColumnPtr& c : batch->columns) {
      if (!row.empty()) row += " ";
      if (c->type->id() == columnar::TypeId::kStruct) {
        row += "[" + std::to_string(c->children[0]->Value<int64_t>(r) / kSecond) + ", " +
               std::to_string(c->children[1]->Value<int64_t>(r) / kSecond) + ")";
      } else {
        row += exec::testing::CellText(*c, r);
      }
    }
    out.push_back(row);
  }
  std::sort(out.begin(), out.end());
  return out;
}

using Strings = std::vector<std::string>;

struct Harness {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  std::string gap = "'30 seconds'";
  std::vector<std::string> aggs = {"count(*) AS n", "sum(temp) AS total"};
  OutputMode mode = OutputMode::kAppend;
  bool watermark = true;
  std::unique_ptr<StatefulOperator> op;

  TransformStep Step() const {
    TransformStep step;
    step.kind = "groupBy";
    step.exprs = {"session_window(ts, " + gap + ")", "device"};
    step.aggs = aggs;
    step.key_path = "transform[1]";
    return step;
  }

  Status Open() {
    state::StateStoreOptions options;
    options.file_system = fs;
    options.dir = "/checkpoint/state/0/0";
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<state::StateStore> store,
                          state::StateStore::Open(options));
    SILT_ASSIGN_OR_RETURN(
        op, MakeStatefulAggregate(Step(), InputSchema(watermark), {}, mode, std::move(store)));
    return Status::OK();
  }

  // One batch; watermarks in seconds.
  Result<Strings> Run(int64_t batch_id, const std::vector<Event>& events, int64_t late_sec,
                      int64_t evict_sec) {
    StatefulBatch batch;
    batch.batch_id = batch_id;
    batch.late_watermark_ms = late_sec * 1000;
    batch.eviction_watermark_ms = evict_sec * 1000;
    batch.has_watermark = watermark;
    SILT_RETURN_NOT_OK(op->StartBatch(batch));
    if (!events.empty()) {
      SILT_ASSIGN_OR_RETURN(RecordBatchPtr passed, op->Process(Batch(events), {}));
      EXPECT_EQ(passed, nullptr);
    }
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr out, op->FinishBatch());
    SILT_RETURN_NOT_OK(op->Commit());
    return Rows(out);
  }
};

TEST(SessionWindowAggregateTest, RowsMergeIntoSessionsWithinAndAcrossBatches) {
  Harness h;
  h.mode = OutputMode::kComplete;
  h.watermark = false;
  ASSERT_OK(h.Open());
  EXPECT_EQ(h.op->output_schema()->field(0).name, "session_window");
  // [0, 30) and [10, 40) merge (touching counts: [40, 70) joins too);
  // [100, 130) stays apart; d2 is its own group.
  ASSERT_OK_AND_ASSIGN(
      Strings out,
      h.Run(0, {{0, "d1", 1}, {10, "d1", 2}, {40, "d1", 4}, {100, "d1", 8}, {5, "d2", 16}}, 0, 0));
  EXPECT_EQ(out, (Strings{"[0, 70) 'd1' 3 7", "[100, 130) 'd1' 1 8", "[5, 35) 'd2' 1 16"}));
  EXPECT_EQ(h.op->progress().operator_name, "sessionWindowStateStoreSaveExec");
  EXPECT_EQ(h.op->progress().num_rows_total, 3);
  EXPECT_EQ(h.op->progress().num_rows_updated, 3);
  // A row at 70 ([70, 100)) bridges the two stored sessions of d1: one
  // session is left, the other removed.
  ASSERT_OK_AND_ASSIGN(out, h.Run(1, {{70, "d1", 32}}, 0, 0));
  EXPECT_EQ(out, (Strings{"[0, 130) 'd1' 5 47", "[5, 35) 'd2' 1 16"}));
  EXPECT_EQ(h.op->progress().num_rows_total, 2);
  EXPECT_EQ(h.op->progress().num_rows_updated, 1);
  EXPECT_EQ(h.op->progress().num_rows_removed, 1);
  // A row of d2 far away: d1's session is untouched, d2 has two now.
  ASSERT_OK_AND_ASSIGN(out, h.Run(2, {{500, "d2", 64}}, 0, 0));
  EXPECT_EQ(out, (Strings{"[0, 130) 'd1' 5 47", "[5, 35) 'd2' 1 16", "[500, 530) 'd2' 1 64"}));
  EXPECT_EQ(h.op->progress().num_rows_updated, 2);  // every session of the touched key
}

TEST(SessionWindowAggregateTest, AppendEmitsSessionsWhenTheWatermarkPassesTheirEnd) {
  Harness h;
  ASSERT_OK(h.Open());
  ASSERT_OK_AND_ASSIGN(Strings out, h.Run(0, {{0, "d1", 1}, {20, "d1", 2}, {60, "d2", 4}}, 0, 0));
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(h.op->WantsNoDataBatch(50000));
  // Eviction watermark 50: [0, 50) ends at 50, leaves and is emitted.
  ASSERT_OK_AND_ASSIGN(out, h.Run(1, {{70, "d2", 8}}, 0, 50));
  EXPECT_EQ(out, (Strings{"[0, 50) 'd1' 2 3"}));
  EXPECT_EQ(h.op->progress().num_rows_total, 1);
  EXPECT_EQ(h.op->progress().num_rows_removed, 1);
  // Late watermark 50: a d1 row at 15 ([15, 45)) is dropped, as is a d2
  // batch session [10, 30) + [25, 55) = [10, 55) (ends after 50: kept).
  ASSERT_OK_AND_ASSIGN(out, h.Run(2, {{15, "d1", 16}, {10, "d2", 32}, {25, "d2", 64}}, 50, 50));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(h.op->progress().num_rows_dropped_by_watermark, 1);
  // [10, 55) and [60, 100) stay apart; the watermark closes both.
  ASSERT_OK_AND_ASSIGN(out, h.Run(3, {}, 50, 100));
  EXPECT_EQ(out, (Strings{"[10, 55) 'd2' 2 96", "[60, 100) 'd2' 2 12"}));
  EXPECT_EQ(h.op->progress().num_rows_total, 0);
}

TEST(SessionWindowAggregateTest, DynamicGapDropsRowsWithoutAPositiveGap) {
  Harness h;
  h.mode = OutputMode::kComplete;
  h.watermark = false;
  h.gap = "gap";
  ASSERT_OK(h.Open());
  ASSERT_OK_AND_ASSIGN(Strings out, h.Run(0,
                                          {{0, "d1", 1, "10 seconds"},
                                           {5, "d1", 2, "interval 1 minute"},
                                           {7, "d1", 4, "NULL"},
                                           {8, "d1", 8, "0 seconds"},
                                           {9, "d1", 16, "-5 seconds"},
                                           {3, "d1", 32, "soon"},
                                           {200, "d2", 64, "1 minute 30 seconds"}},
                                          0, 0));
  EXPECT_EQ(out, (Strings{"[0, 65) 'd1' 2 3", "[200, 290) 'd2' 1 64"}));
}

TEST(SessionWindowAggregateTest, AnIntervalGapIsACastToIntervalNotAnAnsiLiteral) {
  // CAST(<text> AS INTERVAL) is a CalendarIntervalType gap, as Spark takes
  // it: the same sessions as the text.
  Harness h;
  h.mode = OutputMode::kComplete;
  h.watermark = false;
  h.gap =
      "CASE WHEN device = 'd1' THEN CAST(gap AS INTERVAL) ELSE CAST('1 minute' AS interval) END";
  ASSERT_OK(h.Open());
  ASSERT_OK_AND_ASSIGN(
      Strings out,
      h.Run(0, {{0, "d1", 1, "10 seconds"}, {5, "d1", 2, "interval 1 minute"}, {200, "d2", 64}}, 0,
            0));
  EXPECT_EQ(out, (Strings{"[0, 65) 'd1' 2 3", "[200, 260) 'd2' 1 64"}));
  // ANSI interval literals are day-time (or year-month) intervals in Spark
  // 3.5, which refuses them as a gap.
  for (const auto& [gap, type] : std::vector<std::pair<std::string, std::string>>{
           {"CASE WHEN device = 'd1' THEN INTERVAL 5 SECONDS ELSE INTERVAL 1 MINUTE END",
            "DayTimeIntervalType(2,3)"},
           {"INTERVAL '30' SECOND", "DayTimeIntervalType(3,3)"},
           {"INTERVAL '2 hours'", "DayTimeIntervalType(1,1)"},
           {"INTERVAL 1 MONTH", "YearMonthIntervalType(1,1)"}}) {
    Harness literal;
    literal.gap = gap;
    Status opened = literal.Open();
    ASSERT_FALSE(opened.ok()) << gap;
    EXPECT_NE(opened.message().find("Gap duration expression used in session window must be "
                                    "CalendarIntervalType, but got " +
                                    type + "."),
              std::string::npos)
        << opened.message();
  }
}

TEST(SessionWindowAggregateTest, RestartFromTheCheckpointEqualsTheUninterruptedRun) {
  const std::vector<std::vector<Event>> batches = {
      {{0, "d1", 1}, {50, "d1", 2}, {5, "d2", 4}},
      {{25, "d1", 8}, {100, "d2", 16}},  // bridges [0, 30) and [50, 80)
      {{160, "d1", 32}, {170, "d2", 64}},
      {{250, "d1", 128}},
  };
  // (late, eviction) of batch b: the watermark (max event - 10 s) before
  // batch b-1 and before batch b.
  auto watermarks = [](size_t b) {
    const int64_t wm[] = {0, 40, 90, 160};
    return std::pair<int64_t, int64_t>{b == 0 ? 0 : wm[b - 1], wm[b]};
  };
  Harness straight;
  ASSERT_OK(straight.Open());
  std::vector<Strings> want;
  std::vector<int64_t> want_total;
  for (size_t b = 0; b < batches.size(); ++b) {
    ASSERT_OK_AND_ASSIGN(Strings out, straight.Run(static_cast<int64_t>(b), batches[b],
                                                   watermarks(b).first, watermarks(b).second));
    want.push_back(out);
    want_total.push_back(straight.op->progress().num_rows_total);
  }
  EXPECT_EQ(want[1], (Strings{"[5, 35) 'd2' 1 4"}));
  EXPECT_EQ(want[2], (Strings{"[0, 80) 'd1' 3 11"}));
  for (size_t stop = 1; stop < batches.size(); ++stop) {
    Harness restarted;
    ASSERT_OK(restarted.Open());
    for (size_t b = 0; b < batches.size(); ++b) {
      if (b == stop) ASSERT_OK(restarted.Open());  // a new process over the same checkpoint
      ASSERT_OK_AND_ASSIGN(Strings out, restarted.Run(static_cast<int64_t>(b), batches[b],
                                                      watermarks(b).first, watermarks(b).second));
      EXPECT_EQ(out, want[b]) << "restarted before batch " << b;
      EXPECT_EQ(restarted.op->progress().num_rows_total, want_total[b]);
    }
  }
}

TEST(SessionWindowAggregateTest, DecodeStateGivesOneRowPerSession) {
  Harness h;
  h.mode = OutputMode::kComplete;
  h.watermark = false;
  ASSERT_OK(h.Open());
  ASSERT_OK(h.Run(0, {{0, "d1", 1}, {10, "d1", 2}, {100, "d1", 4}, {5, "d2", 8}}, 0, 0).status());
  state::StateStoreOptions options;
  options.file_system = h.fs;
  options.dir = "/checkpoint/state/0/0";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<state::StateStore> store, state::StateStore::Open(options));
  ASSERT_OK(store->Load(1));
  std::vector<std::string> keys, values;
  ASSERT_OK(store->Scan("", "", [&](std::string_view k, std::string_view v) -> Result<bool> {
    keys.emplace_back(k);
    values.emplace_back(v);
    return true;
  }));
  EXPECT_EQ(keys.size(), 6u);  // a session entry and an index entry each
  std::vector<std::string_view> kv(keys.begin(), keys.end()), vv(values.begin(), values.end());
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr rows, h.op->DecodeState(kv, vv));
  EXPECT_EQ(Rows(rows), (Strings{"[0, 40) 'd1' 2 3", "[100, 130) 'd1' 1 4", "[5, 35) 'd2' 1 8"}));
  kv[0] = "X";
  EXPECT_RAISES(Corruption, h.op->DecodeState(kv, vv).status());
}

TEST(SessionWindowAggregateTest, ChecksTheStep) {
  Harness h;
  h.watermark = false;
  EXPECT_RAISES(InvalidArgument, h.Open());  // append without a watermark
  h.watermark = true;
  h.gap = "temp";
  EXPECT_RAISES(InvalidArgument, h.Open());  // not an interval string
  h.gap = "'30 seconds'";
  h.mode = OutputMode::kUpdate;  // Spark 3.5 refuses it for session windows
  EXPECT_RAISES(InvalidArgument, h.Open());
  h.mode = OutputMode::kComplete;
  ASSERT_OK(h.Open());
}

}  // namespace
}  // namespace silt::stream
