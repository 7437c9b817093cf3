#include "silt/stream/ops/transform.h"

#include <gtest/gtest.h>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/fs/file_system.h"
#include "silt/state/state_store.h"
#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;

// A batch of (id INT, name STRING, ts TIMESTAMP) rows; negative ids are NULL.
columnar::RecordBatchPtr MakeInput(const std::vector<int32_t>& ids,
                                   const std::vector<std::string>& names,
                                   const std::vector<int64_t>& ts_micros) {
  auto schema = DataType::Struct({{"id", DataType::Int(), true},
                                  {"name", DataType::String(), true},
                                  {"ts", DataType::Timestamp(), true}});
  ColumnBuilder id(DataType::Int());
  ColumnBuilder name(DataType::String());
  ColumnBuilder ts(DataType::Timestamp());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0) {
      id.AppendNull();
    } else {
      id.Append<int32_t>(ids[i]);
    }
    name.AppendString(names[i]);
    ts.Append<int64_t>(ts_micros[i]);
  }
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = schema;
  batch->num_rows = static_cast<int64_t>(ids.size());
  batch->columns = {id.Finish(), name.Finish(), ts.Finish()};
  return batch;
}

TransformStep Step(std::string kind, std::vector<std::string> exprs, int index = 0) {
  TransformStep step;
  step.kind = std::move(kind);
  step.exprs = std::move(exprs);
  step.key_path = "transform[" + std::to_string(index) + "]";
  return step;
}

TransformStep Named(std::string kind, std::vector<std::pair<std::string, std::string>> named,
                    int index = 0) {
  TransformStep step;
  step.kind = std::move(kind);
  step.named = std::move(named);
  step.key_path = "transform[" + std::to_string(index) + "]";
  return step;
}

std::string Names(const columnar::Schema& schema) {
  std::string out;
  for (const columnar::Field& field : schema.fields()) {
    if (!out.empty()) out += ",";
    out += field.name;
  }
  return out;
}

const int64_t kT0 = *columnar::ParseTimestamp("2026-06-22T08:00:00Z");

TEST(TransformTest, SelectExpandsStarsAndNamesColumnsLikeSpark) {
  auto input = MakeInput({1, 2}, {R"({"x":10,"y":"a"})", "not json"}, {kT0, kT0 + 1});
  std::vector<TransformStep> steps = {
      Step("select", {"from_json(name, 'x INT, y STRING') AS s", "*"}, 0),
      Step("select", {"s.*", "id + 1 AS next", "name"}, 1),
  };
  ASSERT_OK_AND_ASSIGN(auto transform, Transform::Make(steps, input->schema));
  EXPECT_EQ(Names(*transform->output_schema()), "x,y,next,name");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  ASSERT_EQ(out->num_rows, 2);
  EXPECT_EQ(out->column(0)->Value<int32_t>(0), 10);
  EXPECT_EQ(out->column(1)->StringValue(0), "a");
  // A null struct (unparseable JSON) makes its expanded fields null.
  EXPECT_TRUE(out->column(0)->IsNull(1));
  EXPECT_TRUE(out->column(1)->IsNull(1));
  EXPECT_EQ(out->column(2)->Value<int32_t>(1), 3);
  EXPECT_EQ(out->column(3)->StringValue(1), "not json");
}

TEST(TransformTest, ExplodeMakesOneRowPerElementAndRepeatsTheOthers) {
  auto input = MakeInput({1, 2, 3}, {"a,b", "", "c"}, {kT0, kT0, kT0});
  // Row 2 splits '' into [''] (one element); NULL arrays come from id 3.
  ASSERT_OK_AND_ASSIGN(
      auto transform,
      Transform::Make({Step("select", {"id", "explode(split(nullif(name, 'c'), ',')) AS part"})},
                      input->schema));
  EXPECT_EQ(Names(*transform->output_schema()), "id,part");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  ASSERT_EQ(out->num_rows, 3);
  EXPECT_EQ(out->column(0)->Value<int32_t>(0), 1);
  EXPECT_EQ(out->column(1)->StringValue(0), "a");
  EXPECT_EQ(out->column(0)->Value<int32_t>(1), 1);
  EXPECT_EQ(out->column(1)->StringValue(1), "b");
  EXPECT_EQ(out->column(0)->Value<int32_t>(2), 2);
  EXPECT_EQ(out->column(1)->StringValue(2), "");

  ASSERT_OK_AND_ASSIGN(
      auto outer,
      Transform::Make({Step("select", {"id", "posexplode_outer(split(nullif(name, 'c'), ','))"})},
                      input->schema));
  EXPECT_EQ(Names(*outer->output_schema()), "id,pos,col");
  ASSERT_OK_AND_ASSIGN(out, outer->Process(input, {}));
  ASSERT_EQ(out->num_rows, 4);
  EXPECT_EQ(out->column(1)->Value<int32_t>(1), 1);
  EXPECT_EQ(out->column(0)->Value<int32_t>(3), 3);
  EXPECT_TRUE(out->column(1)->IsNull(3));
  EXPECT_TRUE(out->column(2)->IsNull(3));
}

TEST(TransformTest, ExplodeOfAMapGivesKeyAndValue) {
  auto input = MakeInput({1}, {"x"}, {kT0});
  ASSERT_OK_AND_ASSIGN(
      auto transform,
      Transform::Make({Step("select", {"explode(map('a', 1, 'b', 2))", "name"})}, input->schema));
  EXPECT_EQ(Names(*transform->output_schema()), "key,value,name");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  ASSERT_EQ(out->num_rows, 2);
  EXPECT_EQ(out->column(0)->StringValue(1), "b");
  EXPECT_EQ(out->column(1)->Value<int32_t>(1), 2);
  EXPECT_EQ(out->column(2)->StringValue(1), "x");
}

TEST(TransformTest, JsonTupleGivesOneColumnPerKey) {
  auto input =
      MakeInput({1, 2}, {R"({"a": 1, "b.c": "x", "d": {"e": [1]}})", "not json"}, {kT0, kT0});
  ASSERT_OK_AND_ASSIGN(
      auto transform, Transform::Make({Step("select", {"id", "json_tuple(name, 'a', 'b.c', 'd')"})},
                                      input->schema));
  EXPECT_EQ(Names(*transform->output_schema()), "id,c0,c1,c2");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  ASSERT_EQ(out->num_rows, 2);
  EXPECT_EQ(out->column(1)->StringValue(0), "1");
  EXPECT_EQ(out->column(2)->StringValue(0), "x");
  EXPECT_EQ(out->column(3)->StringValue(0), R"({"e":[1]})");
  EXPECT_TRUE(out->column(1)->IsNull(1));
}

// Times as text in `name` ('' casts to a NULL time).
int64_t At(const char* text) { return *columnar::ParseTimestamp(text); }

TEST(TransformTest, WindowAnywhereInASelectExpandsRowsBeforeTheGenerator) {
  auto input =
      MakeInput({1, 2, 3}, {"2026-06-22 08:07:00", "", "2026-06-22 08:13:00"}, {kT0, kT0, kT0});
  ASSERT_OK_AND_ASSIGN(
      auto transform,
      Transform::Make({Step("select", {"window(CAST(name AS TIMESTAMP), '10 minutes', "
                                       "'5 minutes').start AS s",
                                       "explode(array(id, id + 100)) AS e", "*"})},
                      input->schema));
  // `*` is the input's columns only.
  EXPECT_EQ(Names(*transform->output_schema()), "s,e,id,name,ts");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  // Two windows per row with a time (latest first), none for the NULL
  // time; each window row then explodes into two.
  ASSERT_EQ(out->num_rows, 8);
  const std::vector<int32_t> ids = {1, 1, 1, 1, 3, 3, 3, 3};
  const std::vector<int64_t> starts = {At("2026-06-22T08:05:00Z"), At("2026-06-22T08:05:00Z"),
                                       At("2026-06-22T08:00:00Z"), At("2026-06-22T08:00:00Z"),
                                       At("2026-06-22T08:10:00Z"), At("2026-06-22T08:10:00Z"),
                                       At("2026-06-22T08:05:00Z"), At("2026-06-22T08:05:00Z")};
  for (int64_t row = 0; row < 8; ++row) {
    const size_t k = static_cast<size_t>(row);
    EXPECT_EQ(out->column(0)->Value<int64_t>(row), starts[k]) << row;
    EXPECT_EQ(out->column(1)->Value<int32_t>(row), row % 2 == 0 ? ids[k] : ids[k] + 100) << row;
    EXPECT_EQ(out->column(2)->Value<int32_t>(row), ids[k]) << row;
  }
}

TEST(TransformTest, TumblingWindowDropsRowsWithoutATimeInSelectSqlAndWithColumn) {
  auto input =
      MakeInput({1, 2, 3}, {"2026-06-22 08:07:00", "", "2026-06-22 09:13:00"}, {kT0, kT0, kT0});
  const int64_t ends[] = {At("2026-06-22T09:00:00Z"), At("2026-06-22T10:00:00Z")};
  ASSERT_OK_AND_ASSIGN(auto sql,
                       Transform::Make({Step("sql", {"SELECT id, window(CAST(name AS TIMESTAMP), "
                                                     "'1 hour').end FROM input WHERE id > 0"})},
                                       input->schema));
  EXPECT_EQ(Names(*sql->output_schema()), "id,window.end");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, sql->Process(input, {}));
  ASSERT_EQ(out->num_rows, 2);
  EXPECT_EQ(out->column(0)->Value<int32_t>(1), 3);
  EXPECT_EQ(out->column(1)->Value<int64_t>(0), ends[0]);
  EXPECT_EQ(out->column(1)->Value<int64_t>(1), ends[1]);

  ASSERT_OK_AND_ASSIGN(
      auto with_column,
      Transform::Make({Named("withColumn", {{"e", "window(CAST(name AS TIMESTAMP), '1 hour').end"},
                                            {"twice", "id * 2"}})},
                      input->schema));
  EXPECT_EQ(Names(*with_column->output_schema()), "id,name,ts,e,twice");
  ASSERT_OK_AND_ASSIGN(out, with_column->Process(input, {}));
  ASSERT_EQ(out->num_rows, 2);
  EXPECT_EQ(out->column(0)->Value<int32_t>(1), 3);
  EXPECT_EQ(out->column(3)->Value<int64_t>(1), ends[1]);
  EXPECT_EQ(out->column(4)->Value<int32_t>(1), 6);
}

TEST(TransformTest, TwoDifferentWindowsInOneSelectAreRejected) {
  auto input = MakeInput({1}, {"2026-06-22 08:07:00"}, {kT0});
  // The same window written twice is one window.
  ASSERT_OK_AND_ASSIGN(
      auto same, Transform::Make({Step("select", {"window(ts, '10 minutes').start",
                                                  "window(ts, '600 seconds', '10 minutes').end"})},
                                 input->schema));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, same->Process(input, {}));
  EXPECT_EQ(out->num_rows, 1);

  Result<std::unique_ptr<Transform>> two = Transform::Make(
      {Step("select", {"id", "window(ts, '10 minutes')", "window(ts, '5 minutes').end"}, 2)},
      input->schema);
  ASSERT_FALSE(two.ok());
  const std::string& message = two.status().message();
  EXPECT_NE(message.find("transform[2].select"), std::string::npos) << message;
  EXPECT_NE(message.find("window(ts, '5 minutes')"), std::string::npos) << message;
  EXPECT_NE(message.find("cartesian product"), std::string::npos) << message;
}

TEST(TransformTest, SqlStepFiltersThenSelects) {
  auto input = MakeInput({1, 2, 3}, {"a", "b", "c"}, {kT0, kT0, kT0});
  TransformStep sql = Step(
      "sql", {"SELECT id * 10 AS tens, upper(name) AS up, 'x, y' AS lit FROM input WHERE id >= 2"},
      0);
  ASSERT_OK_AND_ASSIGN(auto transform, Transform::Make({sql}, input->schema));
  EXPECT_EQ(Names(*transform->output_schema()), "tens,up,lit");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  ASSERT_EQ(out->num_rows, 2);
  EXPECT_EQ(out->column(0)->Value<int32_t>(0), 20);
  EXPECT_EQ(out->column(1)->StringValue(1), "C");
  EXPECT_EQ(out->column(2)->StringValue(0), "x, y");

  Result<std::unique_ptr<Transform>> other_table =
      Transform::Make({Step("sql", {"SELECT id FROM events"}, 3)}, input->schema);
  ASSERT_FALSE(other_table.ok());
  EXPECT_NE(other_table.status().message().find("transform[3].sql"), std::string::npos);
  Result<std::unique_ptr<Transform>> bad_column =
      Transform::Make({Step("sql", {"SELECT nme FROM input"}, 1)}, input->schema);
  ASSERT_FALSE(bad_column.ok());
  EXPECT_NE(bad_column.status().message().find("name"), std::string::npos);
}

TEST(TransformTest, SqlStepErrorsNameTheProblem) {
  auto input = MakeInput({1, 2}, {"a", "b"}, {kT0, kT0});
  auto message = [&](const std::string& q) {
    Result<std::unique_ptr<Transform>> t = Transform::Make({Step("sql", {q}, 0)}, input->schema);
    return t.ok() ? std::string() : t.status().message();
  };
  EXPECT_EQ(message("id FROM input"),
            "transform[0].sql: expected 'SELECT <columns> FROM input [WHERE ...]' but got 'id "
            "FROM input'");
  EXPECT_EQ(message("SELECT id"),
            "transform[0].sql: missing FROM in 'SELECT id' (write FROM input)");
  EXPECT_EQ(message("SELECT id FROM events LIMIT 1"),
            "transform[0].sql: the query reads 'events'; a sql step reads the previous "
            "step's rows as 'input'");
  EXPECT_EQ(message("SELECT id FROM input WHERE  "),
            "transform[0].sql: empty WHERE in 'SELECT id FROM input WHERE  '");
  EXPECT_EQ(message("SELECT id, FROM input"),
            "transform[0].sql: empty select item in 'SELECT id, FROM input'");
  EXPECT_EQ(message("SELECT id FROM input ORDER BY id"),
            "transform[0].sql: ORDER BY and LIMIT are not supported yet in a streaming sql step, "
            "in 'SELECT id FROM input ORDER BY id'");
  EXPECT_EQ(message("SELECT id, count(*) FROM input GROUP BY id"),
            "transform[0].sql.groupBy: a stateful step needs a streaming query");
  EXPECT_EQ(message("select id, (1) from Input where (id > 1)"), "");
}

TEST(TransformTest, WhereThenSelectOverJsonKeepsAndProjectsTheMatchingRows) {
  // The select after a WHERE reuses the WHERE's JSON parses of the kept
  // rows; the values must be those of evaluating it over the kept rows.
  auto input = MakeInput({1, 2, 3, 4, 5},
                         {R"({"kind": "plug", "power": 84.5, "state": "ON"})",
                          R"({"kind": "door", "power": 99})", R"({"kind": "plug", "power": 1})",
                          "not json", R"({"kind": "plug", "power": "12", "state": null})"},
                         {kT0, kT0, kT0, kT0, kT0});
  for (const std::vector<TransformStep>& steps : std::vector<std::vector<TransformStep>>{
           {Step("sql", {"SELECT id, get_json_object(name, '$.state') AS state, "
                         "CAST(get_json_object(name, '$.power') AS DOUBLE) * 2 AS twice "
                         "FROM input WHERE CAST(get_json_object(name, '$.power') AS DOUBLE) > 5 "
                         "AND get_json_object(name, '$.kind') = 'plug' AND id > 0"})},
           {Step("where",
                 {"CAST(get_json_object(name, '$.power') AS DOUBLE) > 5 AND "
                  "get_json_object(name, '$.kind') = 'plug' AND id > 0"},
                 0),
            Step("select",
                 {"id", "get_json_object(name, '$.state') AS state",
                  "CAST(get_json_object(name, '$.power') AS DOUBLE) * 2 AS twice"},
                 1)}}) {
    ASSERT_OK_AND_ASSIGN(auto transform, Transform::Make(steps, input->schema));
    for (int batch_idx = 0; batch_idx < 2; ++batch_idx) {
      ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
      ASSERT_EQ(out->num_rows, 2);
      EXPECT_EQ(out->column(0)->Value<int32_t>(0), 1);
      EXPECT_EQ(out->column(0)->Value<int32_t>(1), 5);
      EXPECT_EQ(out->column(1)->StringValue(0), "ON");
      EXPECT_TRUE(out->column(1)->IsNull(1));
      EXPECT_EQ(out->column(2)->Value<double>(0), 169.0);
      EXPECT_EQ(out->column(2)->Value<double>(1), 24.0);
    }
  }
}

TEST(TransformTest, JobOptionsSetAnsiAndTheSessionTimeZone) {
  JobSpec job;
  job.ansi = true;
  job.session_time_zone = "America/Los_Angeles";
  ASSERT_OK_AND_ASSIGN(expr::EvalOptions options, EvalOptionsForJob(job, SystemClock()));
  auto input = MakeInput({1}, {"x"}, {*columnar::ParseTimestamp("2021-03-14T10:00:00Z")});
  ASSERT_OK_AND_ASSIGN(
      auto transform,
      Transform::Make({Step("select", {"date_format(ts, 'yyyy-MM-dd HH:mm XXX') AS local"})},
                      input->schema, options));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  EXPECT_EQ(out->column(0)->StringValue(0), "2021-03-14 03:00 -07:00");
  ASSERT_OK_AND_ASSIGN(auto ansi, Transform::Make({Step("select", {"CAST(name AS INT) AS n"})},
                                                  input->schema, options));
  EXPECT_FALSE(ansi->Process(input, {}).ok());
  job.session_time_zone = "Mars/Olympus";
  EXPECT_FALSE(EvalOptionsForJob(job, SystemClock()).ok());
}

TEST(TransformTest, WhereKeepsRowsWhosePredicateIsTrue) {
  auto input = MakeInput({1, -1, 3, 4}, {"a", "b", "c", "d"}, {kT0, kT0, kT0, kT0});
  ASSERT_OK_AND_ASSIGN(auto transform, Transform::Make({Step("where", {"id > 1"})}, input->schema));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  ASSERT_EQ(out->num_rows, 2);  // NULL > 1 is NULL: dropped
  EXPECT_EQ(out->column(1)->StringValue(0), "c");
  EXPECT_EQ(out->column(1)->StringValue(1), "d");
}

TEST(TransformTest, WithColumnReplacesInPlaceOrAppends) {
  auto input = MakeInput({1, 2}, {"a", "b"}, {kT0, kT0});
  ASSERT_OK_AND_ASSIGN(
      auto transform,
      Transform::Make({Named("withColumn", {{"id", "id * 10"}, {"twice", "id * 2"}})},
                      input->schema));
  EXPECT_EQ(Names(*transform->output_schema()), "id,name,ts,twice");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  EXPECT_EQ(out->column(0)->Value<int32_t>(1), 20);
  // Later entries see earlier ones, as chained withColumn calls do.
  EXPECT_EQ(out->column(3)->Value<int32_t>(1), 40);
}

TEST(TransformTest, RenameAndDrop) {
  auto input = MakeInput({1}, {"a"}, {kT0});
  ASSERT_OK_AND_ASSIGN(auto transform,
                       Transform::Make({Named("withColumnRenamed", {{"name", "label"}}, 0),
                                        Step("drop", {"ts", "not_there"}, 1)},
                                       input->schema));
  EXPECT_EQ(Names(*transform->output_schema()), "id,label");
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  EXPECT_EQ(out->num_columns(), 2);
  EXPECT_EQ(out->column(1)->StringValue(0), "a");
}

TEST(TransformTest, BindErrorsNameTheKeyPath) {
  auto input = MakeInput({1}, {"a"}, {kT0});
  Result<std::unique_ptr<Transform>> unknown = Transform::Make(
      {Step("select", {"id"}, 0), Step("select", {"id", "nope + 1"}, 1)}, input->schema);
  ASSERT_RAISES(InvalidArgument, unknown);
  EXPECT_EQ(unknown.status().message().rfind("transform[1].select[1]: ", 0), 0u)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("nope"), std::string::npos);

  Result<std::unique_ptr<Transform>> syntax =
      Transform::Make({Step("select", {"id +* 2"}, 0)}, input->schema);
  ASSERT_RAISES(InvalidArgument, syntax);
  EXPECT_EQ(syntax.status().message().rfind("transform[0].select[0]: ", 0), 0u);
  EXPECT_NE(syntax.status().message().find("position"), std::string::npos)
      << syntax.status().message();

  Result<std::unique_ptr<Transform>> not_boolean =
      Transform::Make({Step("where", {"id + 1"}, 2)}, input->schema);
  ASSERT_RAISES(InvalidArgument, not_boolean);
  EXPECT_NE(not_boolean.status().message().find("transform[2].where"), std::string::npos);

  Result<std::unique_ptr<Transform>> duplicate =
      Transform::Make({Step("select", {"id", "name AS id"}, 0)}, input->schema);
  ASSERT_RAISES(InvalidArgument, duplicate);

  TransformStep watermark;
  watermark.kind = "withWatermark";
  watermark.key_path = "transform[3]";
  watermark.event_time = "name";
  watermark.delay_threshold = "1 minute";
  Result<std::unique_ptr<Transform>> bad_watermark = Transform::Make({watermark}, input->schema);
  ASSERT_RAISES(InvalidArgument, bad_watermark);
  EXPECT_NE(bad_watermark.status().message().find("transform[3].withWatermark.eventTime"),
            std::string::npos);
}

TEST(TransformTest, WatermarkIsMaxEventTimeMinusDelayAndNeverGoesBack) {
  TransformStep watermark;
  watermark.kind = "withWatermark";
  watermark.key_path = "transform[0]";
  watermark.event_time = "ts";
  watermark.delay_threshold = "5 minutes";
  auto first = MakeInput({1, 2, 3}, {"a", "b", "c"}, {kT0 + 60'000'000, kT0, kT0 + 1'500});
  ASSERT_OK_AND_ASSIGN(auto transform, Transform::Make({watermark}, first->schema));
  EXPECT_TRUE(transform->has_watermark());

  transform->StartBatch();
  ASSERT_OK(transform->Process(first, {}));
  std::optional<EventTimeStats> stats = transform->batch_event_time_stats();
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->max_ms, (kT0 + 60'000'000) / 1000);
  EXPECT_EQ(stats->min_ms, kT0 / 1000);
  EXPECT_EQ(stats->count, 3);
  int64_t watermark_ms = transform->AdvanceWatermark(0);
  EXPECT_EQ(watermark_ms, (kT0 + 60'000'000) / 1000 - 300'000);

  // Older data does not move the watermark back.
  auto late = MakeInput({4}, {"d"}, {kT0});
  transform->StartBatch();
  ASSERT_OK(transform->Process(late, {}));
  EXPECT_EQ(transform->AdvanceWatermark(watermark_ms), watermark_ms);
  // A batch without rows keeps it too.
  transform->StartBatch();
  EXPECT_FALSE(transform->batch_event_time_stats().has_value());
  EXPECT_EQ(transform->AdvanceWatermark(watermark_ms), watermark_ms);
}

TEST(TransformTest, TwoWatermarksCombineByThePolicy) {
  // withWatermark on ts (5 minutes), then on a copy of ts (1 hour): min
  // takes the second, max the first.
  TransformStep first;
  first.kind = "withWatermark";
  first.key_path = "transform[0]";
  first.event_time = "ts";
  first.delay_threshold = "5 minutes";
  TransformStep shifted;
  shifted.kind = "withColumn";
  shifted.key_path = "transform[1]";
  shifted.named = {{"early", "ts"}};
  TransformStep second = first;
  second.key_path = "transform[2]";
  second.event_time = "early";
  second.delay_threshold = "1 hour";
  auto input = MakeInput({1}, {"a"}, {kT0 + 7'200'000'000});
  for (bool max_policy : {false, true}) {
    ASSERT_OK_AND_ASSIGN(auto transform, Transform::Make({first, shifted, second}, input->schema));
    transform->StartBatch();
    ASSERT_OK(transform->Process(input, {}));
    const int64_t max_ms = (kT0 + 7'200'000'000) / 1000;
    EXPECT_EQ(transform->AdvanceWatermark(0, max_policy),
              max_policy ? max_ms - 300'000 : max_ms - 3'600'000);
  }
}

TEST(TransformTest, NoStepsPassesBatchesThrough) {
  auto input = MakeInput({1}, {"a"}, {kT0});
  ASSERT_OK_AND_ASSIGN(auto transform, Transform::Make({}, input->schema));
  EXPECT_FALSE(transform->has_watermark());
  EXPECT_EQ(transform->AdvanceWatermark(7), 7);
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, {}));
  EXPECT_EQ(out->num_rows, 1);
}

TEST(TransformTest, DeadLetterModeTracesBadRowsToTheirSourceRows) {
  // Source rows: 0 good, 1 not JSON, 2 filtered out, 3 a bad INT, 4 good.
  auto input =
      MakeInput({1, 2, 3, 4, 5},
                {R"({"x":"10"})", "not json", R"({"x":"-1"})", R"({"x":"4q"})", R"({"x":"7"})"},
                {kT0, kT0, kT0, kT0, kT0});
  expr::EvalOptions options;
  options.ansi = true;
  options.dead_letter = true;
  ASSERT_OK_AND_ASSIGN(auto transform,
                       Transform::Make({Step("select", {"id",
                                                        "from_json(name, 'x STRING', map('mode', "
                                                        "'DEADLETTER')) AS e"}),
                                        Step("where", {"id <> 3"}, 1),
                                        Step("select", {"id", "CAST(e.x AS INT) AS x"}, 2)},
                                       input->schema, options));
  expr::RowErrors errors;
  expr::EvalContext ctx;
  ctx.row_errors = &errors;
  transform->StartBatch();
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr out, transform->Process(input, ctx));
  ASSERT_EQ(out->num_rows, 2);
  EXPECT_EQ(out->columns[0]->Value<int32_t>(0), 1);
  EXPECT_EQ(out->columns[1]->Value<int32_t>(0), 10);
  EXPECT_EQ(out->columns[0]->Value<int32_t>(1), 5);
  // Row 3 of the source is row 2 of the last step's input.
  EXPECT_EQ(errors.rows, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(errors.kinds[0], expr::RowErrorKind::kMalformedJson);
  EXPECT_EQ(errors.kinds[1], expr::RowErrorKind::kAnsiCast);
  std::optional<const std::vector<int64_t>*> lineage = transform->last_lineage();
  ASSERT_TRUE(lineage.has_value());
  ASSERT_NE(*lineage, nullptr);
  EXPECT_EQ(**lineage, (std::vector<int64_t>{0, 4}));
}

}  // namespace
}  // namespace silt::stream

namespace silt::stream {
namespace {

// Stateful steps over state stores in a memory file system; records which
// operator ids were opened.
struct StatefulHarness {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  std::vector<int> opened;
  StatefulOptions options;

  explicit StatefulHarness(OutputMode mode = OutputMode::kAppend) {
    options.output_mode = mode;
    options.make_store = [this](int id) -> Result<std::unique_ptr<state::StateStore>> {
      opened.push_back(id);
      state::StateStoreOptions store;
      store.file_system = fs;
      store.dir = "/checkpoint/state/" + std::to_string(id) + "/0";
      return state::StateStore::Open(store);
    };
  }

  Result<std::unique_ptr<Transform>> Make(const std::vector<TransformStep>& steps) {
    auto input = MakeInput({}, {}, {});
    return Transform::Make(steps, input->schema, {}, &options);
  }
};

TransformStep Watermark(int index, std::string column = "ts", std::string delay = "10 seconds") {
  TransformStep step;
  step.kind = "withWatermark";
  step.key_path = "transform[" + std::to_string(index) + "]";
  step.event_time = std::move(column);
  step.delay_threshold = std::move(delay);
  return step;
}

TransformStep GroupBy(std::vector<std::string> keys, std::vector<std::string> aggs, int index) {
  TransformStep step = Step("groupBy", std::move(keys), index);
  step.aggs = std::move(aggs);
  return step;
}

// One batch: every chunk through Process, then FinishBatch and the commit;
// the rows out of both, as "name@seconds" (for the windowed count below:
// "<window start seconds>:<n>").
Result<std::vector<std::string>> RunBatch(Transform* transform, int64_t batch_id, int64_t late_sec,
                                          int64_t evict_sec,
                                          const columnar::RecordBatchPtr& input) {
  transform->StartBatch();
  StatefulBatch batch;
  batch.batch_id = batch_id;
  batch.late_watermark_ms = late_sec * 1000;
  batch.eviction_watermark_ms = evict_sec * 1000;
  batch.has_watermark = true;
  SILT_RETURN_NOT_OK(transform->StartStatefulBatch(batch));
  std::vector<columnar::RecordBatchPtr> outputs;
  SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr now, transform->Process(input, {}));
  outputs.push_back(now);
  SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr at_end, transform->FinishBatch({}));
  outputs.push_back(at_end);
  SILT_RETURN_NOT_OK(transform->CommitState());
  std::vector<std::string> rows;
  for (const columnar::RecordBatchPtr& out : outputs) {
    if (out == nullptr) continue;
    for (int64_t row = 0; row < out->num_rows; ++row) {
      const int64_t start = out->column(0)->children[0]->Value<int64_t>(row);
      rows.push_back(std::to_string((start - kT0) / 1'000'000) + ":" +
                     std::to_string(out->column(1)->Value<int64_t>(row)));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

constexpr int64_t kSec = 1'000'000;

TEST(TransformTest, ChainedStatefulStepsAreNumberedFromTheSink) {
  StatefulHarness h;
  ASSERT_OK_AND_ASSIGN(auto transform,
                       h.Make({Watermark(0), Step("dropDuplicates", {"id"}, 1),
                               GroupBy({"window(ts, '1 minute')"}, {"count(*) AS n"}, 2)}));
  ASSERT_EQ(transform->num_stateful(), 2);
  // Spark's IncrementalExecution: the last stateful step is operator 0.
  EXPECT_EQ(transform->stateful_step(0).operator_id, 1);
  EXPECT_EQ(transform->stateful_step(0).step.kind, "dropDuplicates");
  EXPECT_EQ(transform->stateful_step(1).operator_id, 0);
  EXPECT_EQ(h.opened, (std::vector<int>{1, 0}));
  // Both see the event time: ts for the deduplication, the window for the
  // count, whose output keeps the mark for a step after it.
  ASSERT_TRUE(transform->stateful_step(0).watermark.has_value());
  EXPECT_EQ(transform->stateful_step(0).watermark->name, "ts");
  EXPECT_EQ(transform->stateful_step(1).watermark->name, "ts");
  EXPECT_EQ(transform->output_schema()->field(0).metadata_json,
            R"({"spark.watermarkDelayMs":10000})");
}

TEST(TransformTest, DeduplicationFeedsAWindowedCountInTheSameBatch) {
  StatefulHarness h;
  ASSERT_OK_AND_ASSIGN(auto transform,
                       h.Make({Watermark(0), Step("dropDuplicates", {"id"}, 1),
                               GroupBy({"window(ts, '1 minute')"}, {"count(*) AS n"}, 2)}));
  // Batch 0: ids 1, 1, 2 in [0, 60); nothing closes.
  ASSERT_OK_AND_ASSIGN(auto out,
                       RunBatch(transform.get(), 0, 0, 0,
                                MakeInput({1, 1, 2}, {"a", "a", "b"},
                                          {kT0 + 5 * kSec, kT0 + 5 * kSec, kT0 + 10 * kSec})));
  EXPECT_TRUE(out.empty());
  // Batch 1, watermark 70 s: id 2 again at 10 s and id 3 at 20 s are late
  // at the deduplication (<= the previous watermark, 30 s; late rows go
  // before duplicates, as in Spark), id 4 at 80 s opens [60, 120); [0, 60)
  // closes with 2 rows.
  const int64_t wm0 = (kT0 / 1000 + 30'000) / 1000;  // seconds
  ASSERT_OK_AND_ASSIGN(out,
                       RunBatch(transform.get(), 1, wm0, (kT0 / kSec) + 70,
                                MakeInput({2, 3, 4}, {"b", "c", "d"},
                                          {kT0 + 10 * kSec, kT0 + 20 * kSec, kT0 + 80 * kSec})));
  EXPECT_EQ(out, (std::vector<std::string>{"0:2"}));
  std::vector<StateOperatorProgress> progress = transform->state_progress();
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_EQ(progress[0].operator_name, "stateStoreSave");  // operator 0 first
  EXPECT_EQ(progress[0].num_rows_total, 1);
  EXPECT_EQ(progress[1].operator_name, "dedupe");
  EXPECT_EQ(progress[1].num_rows_dropped_by_watermark, 2);
  EXPECT_EQ(progress[1].num_rows_total, 3);
  // The deduplication asks for a no-data batch when the watermark moves,
  // and so does the count, which would close [60, 120).
  EXPECT_TRUE(transform->WantsNoDataBatch((kT0 / kSec + 200) * 1000));
}

TEST(TransformTest, AWindowOverAnEarlierWindowsTimeKeepsTheEventTime) {
  // Spark's chained time windows: window(window_time(window), ...).
  StatefulHarness h;
  ASSERT_OK_AND_ASSIGN(
      auto transform,
      h.Make({Watermark(0), GroupBy({"window(ts, '10 seconds')"}, {"count(*) AS n"}, 1),
              GroupBy({"window(window_time(window), '1 minute')"}, {"sum(n) AS n"}, 2)}));
  ASSERT_OK_AND_ASSIGN(auto out,
                       RunBatch(transform.get(), 0, 0, 0,
                                MakeInput({1, 2, 3}, {"a", "b", "c"},
                                          {kT0 + 5 * kSec, kT0 + 15 * kSec, kT0 + 16 * kSec})));
  EXPECT_TRUE(out.empty());
  // Watermark 65 s: the 10-second windows close and reach the minute
  // window in the same batch, which closes at 60 s too.
  ASSERT_OK_AND_ASSIGN(out, RunBatch(transform.get(), 1, 0, kT0 / kSec + 65,
                                     MakeInput({4}, {"d"}, {kT0 + 75 * kSec})));
  EXPECT_EQ(out, (std::vector<std::string>{"0:3"}));
  // window.end carries no event time: append mode refuses the second step.
  StatefulHarness other;
  Result<std::unique_ptr<Transform>> refused =
      other.Make({Watermark(0), GroupBy({"window(ts, '10 seconds')"}, {"count(*) AS n"}, 1),
                  GroupBy({"window(window.end, '1 minute')"}, {"sum(n) AS n"}, 2)});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "Append output mode not supported when there are streaming aggregations on "
                "streaming DataFrames/DataSets without watermark"),
            std::string::npos)
      << refused.status().message();
}

TEST(TransformTest, RefusesWhatSparkRefusesBetweenStatefulSteps) {
  {
    // An aggregation in complete mode before another stateful step.
    StatefulHarness h(OutputMode::kComplete);
    Result<std::unique_ptr<Transform>> made = h.Make(
        {GroupBy({"name", "id"}, {"count(*) AS n"}, 0), GroupBy({"name"}, {"count(*) AS ids"}, 1)});
    ASSERT_FALSE(made.ok());
    EXPECT_TRUE(made.status().message().starts_with(
        "transform[1].groupBy: Detected pattern of possible 'correctness' issue due to global "
        "watermark."))
        << made.status().message();
    EXPECT_TRUE(h.opened.size() <= 1u);
    // spark.sql.streaming.statefulOperator.checkCorrectness.enabled=false
    StatefulHarness unchecked(OutputMode::kComplete);
    unchecked.options.check_correctness = false;
    EXPECT_OK(unchecked
                  .Make({GroupBy({"name", "id"}, {"count(*) AS n"}, 0),
                         GroupBy({"name"}, {"count(*) AS ids"}, 1)})
                  .status());
    // A deduplication without the event time in its keys may follow.
    StatefulHarness dedup(OutputMode::kComplete);
    EXPECT_OK(
        dedup.Make({GroupBy({"name"}, {"count(*) AS n"}, 0), Step("dropDuplicates", {"name"}, 1)})
            .status());
  }
  {
    // A second withWatermark, after a stateful step or not.
    StatefulHarness h;
    Result<std::unique_ptr<Transform>> made =
        h.Make({Watermark(0), Step("dropDuplicates", {"id"}, 1),
                Named("withColumn", {{"t2", "ts"}}, 2), Watermark(3, "t2")});
    ASSERT_FALSE(made.ok());
    EXPECT_TRUE(made.status().message().starts_with(
        "transform[3].withWatermark: Redefining watermark is disallowed."))
        << made.status().message();
    // allowMultiple false takes it.
    StatefulHarness single;
    single.options.allow_multiple = false;
    EXPECT_OK(single
                  .Make({Watermark(0), Step("dropDuplicates", {"id"}, 1),
                         Named("withColumn", {{"t2", "ts"}}, 2), Watermark(3, "t2")})
                  .status());
  }
  {
    // A watermark after a deduplication without one: the deduplication has
    // no event time, the count after the watermark has.
    StatefulHarness h;
    ASSERT_OK_AND_ASSIGN(auto transform,
                         h.Make({Step("dropDuplicates", {"id"}, 0), Watermark(1),
                                 GroupBy({"window(ts, '1 minute')"}, {"count(*) AS n"}, 2)}));
    EXPECT_FALSE(transform->stateful_step(0).watermark.has_value());
    EXPECT_TRUE(transform->stateful_step(1).watermark.has_value());
  }
}

TEST(TransformTest, ADeduplicationWhoseEventTimeNobodyReadsDropsNoLateRows) {
  // Spark's optimizer prunes ts below dropDuplicates(id) when only name is
  // read after it: the deduplication then has no event-time column.
  StatefulHarness h(OutputMode::kComplete);
  ASSERT_OK_AND_ASSIGN(auto pruned, h.Make({Watermark(0), Step("dropDuplicates", {"id"}, 1),
                                            GroupBy({"name"}, {"count(*) AS n"}, 2)}));
  EXPECT_FALSE(pruned->stateful_step(0).watermark.has_value());
  StatefulHarness read(OutputMode::kComplete);
  ASSERT_OK_AND_ASSIGN(auto kept,
                       read.Make({Watermark(0), Step("dropDuplicates", {"id"}, 1),
                                  GroupBy({"name"}, {"count(*) AS n", "max(ts) AS last"}, 2)}));
  EXPECT_TRUE(kept->stateful_step(0).watermark.has_value());
}

}  // namespace
}  // namespace silt::stream
