#include "silt/stream/ops/transform.h"

#include <gtest/gtest.h>

#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
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
