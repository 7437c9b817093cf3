// The seed job's transform (DESIGN.md §3) evaluated end to end over a batch
// of Kafka records shaped like the seed producer's messages.
#include <gtest/gtest.h>

#include "silt/columnar/temporal.h"
#include "silt/expr/seed_select_lists.h"
#include "silt/expr/test_util.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

using columnar::DataType;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;
using seed::kFirstSelect;
using seed::kSecondSelect;
using testing::Render;
using testing::Rows;

// Kafka values are bytes.
RecordBatchPtr KafkaBatch() {
  return testing::MakeBatch(
      {{"value", testing::StringColumn(
                     {
                         R"({"device_id": "smart-plug-01", "device_type": "smart_plug", )"
                         R"("ingested_at": "2026-06-22T08:16:00.000000+00:00", )"
                         R"("payload": "{\"power\": 84.3, \"voltage\": 230.1, )"
                         R"(\"current\": 0.37, \"energy\": 12.5, \"state\": \"ON\", )"
                         R"(\"linkquality\": 248}"})",
                         R"({"device_id": "door-01", "device_type": "door_window", )"
                         R"("ingested_at": "2026-06-22T08:21:10.441+00:00", )"
                         R"("payload": "{\"contact\": false, \"battery\": 97, )"
                         R"(\"linkquality\": 159}"})",
                         "this is not json",
                         R"({"device_id": "smart-plug-01", "device_type": "smart_plug", )"
                         R"("ingested_at": "2026-06-22T08:16:10.123456+00:00", )"
                         R"("payload": "{\"power\": 83.9, \"linkquality\": \"251\", )"
                         R"(\"state\": \"OFF\"}"})",
                         std::nullopt,
                     },
                     DataType::Binary())}});
}

// Binds and evaluates a select list; returns the output batch.
// Items bound with `session` (when not null) share common work.
Result<RecordBatchPtr> Select(const RecordBatch& input, const std::vector<std::string>& items,
                              const EvalContext& ctx, BindSession* session = nullptr) {
  auto out = std::make_shared<RecordBatch>();
  out->num_rows = input.num_rows;
  std::vector<columnar::Field> fields;
  for (const std::string& text : items) {
    SILT_ASSIGN_OR_RETURN(ExpressionPtr parsed, ParseExpression(text));
    SILT_ASSIGN_OR_RETURN(std::vector<BoundExpressionPtr> bound,
                          BindSelectItem(*parsed, input.schema, {}, session));
    for (BoundExpressionPtr& b : bound) {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column, b->Evaluate(input, ctx));
      SILT_RETURN_NOT_OK(columnar::ValidateColumn(*column));
      fields.push_back(columnar::Field{b->name(), b->type(), b->nullable()});
      out->columns.push_back(std::move(column));
    }
  }
  out->schema = DataType::Struct(std::move(fields));
  return RecordBatchPtr(std::move(out));
}

class SeedSelectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_.current_timestamp_micros = *columnar::ParseTimestamp("2026-06-22 09:16:00.5");
    ASSERT_OK_AND_ASSIGN(parsed_, Select(*KafkaBatch(), {kFirstSelect}, ctx_));
    // As the job's select step binds it: one session for the list.
    BindSession session;
    ASSERT_OK_AND_ASSIGN(flat_, Select(*parsed_, kSecondSelect, ctx_, &session));
  }

  Rows Column(std::string_view name) const {
    columnar::ColumnPtr c = flat_->GetColumn(name);
    EXPECT_NE(c, nullptr) << name;
    return c == nullptr ? Rows{} : Render(*c);
  }

  EvalContext ctx_;
  RecordBatchPtr parsed_;
  RecordBatchPtr flat_;
};

TEST_F(SeedSelectTest, FirstSelectProducesTheEventStruct) {
  ASSERT_EQ(parsed_->num_columns(), 1);
  EXPECT_EQ(parsed_->schema->field(0).name, "e");
  EXPECT_EQ(parsed_->schema->field(0).type->ToDdl(),
            "STRUCT<device_id: STRING, device_type: STRING, ingested_at: STRING, payload: STRING>");
}

TEST_F(SeedSelectTest, OutputSchemaMatchesTheSeedTable) {
  std::vector<std::pair<std::string, std::string>> expected = {
      {"device_id", "STRING"},      {"device_type", "STRING"}, {"event_time", "TIMESTAMP"},
      {"linkquality", "INT"},       {"contact", "BOOLEAN"},    {"battery", "INT"},
      {"power", "DOUBLE"},          {"voltage", "DOUBLE"},     {"current", "DOUBLE"},
      {"energy", "DOUBLE"},         {"plug_state", "STRING"},  {"raw_payload", "STRING"},
      {"processed_at", "TIMESTAMP"}};
  ASSERT_EQ(flat_->schema->num_fields(), static_cast<int>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    const columnar::Field& f = flat_->schema->field(static_cast<int>(i));
    EXPECT_EQ(f.name, expected[i].first);
    EXPECT_EQ(f.type->ToDdl(), expected[i].second) << f.name;
    // Spark: everything is nullable except current_timestamp().
    EXPECT_EQ(f.nullable, f.name != "processed_at") << f.name;
  }
}

TEST_F(SeedSelectTest, ValuesAreTypedLikeSpark) {
  EXPECT_EQ(Column("device_id"),
            (Rows{"smart-plug-01", "door-01", "NULL", "smart-plug-01", "NULL"}));
  EXPECT_EQ(Column("device_type"),
            (Rows{"smart_plug", "door_window", "NULL", "smart_plug", "NULL"}));
  EXPECT_EQ(Column("event_time"), (Rows{"2026-06-22 08:16:00", "2026-06-22 08:21:10.441", "NULL",
                                        "2026-06-22 08:16:10.123456", "NULL"}));
  EXPECT_EQ(Column("linkquality"), (Rows{"248", "159", "NULL", "251", "NULL"}));
  EXPECT_EQ(Column("contact"), (Rows{"NULL", "false", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(Column("battery"), (Rows{"NULL", "97", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(Column("power"), (Rows{"84.3", "NULL", "NULL", "83.9", "NULL"}));
  EXPECT_EQ(Column("voltage"), (Rows{"230.1", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(Column("current"), (Rows{"0.37", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(Column("energy"), (Rows{"12.5", "NULL", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(Column("plug_state"), (Rows{"ON", "NULL", "NULL", "OFF", "NULL"}));
  EXPECT_EQ(Column("raw_payload")[1], R"({"contact": false, "battery": 97, "linkquality": 159})");
  EXPECT_EQ(Column("processed_at"),
            (Rows{"2026-06-22 09:16:00.5", "2026-06-22 09:16:00.5", "2026-06-22 09:16:00.5",
                  "2026-06-22 09:16:00.5", "2026-06-22 09:16:00.5"}));
}

TEST_F(SeedSelectTest, EventDateColumnDerivesFromEventTime) {
  ASSERT_OK_AND_ASSIGN(ExpressionPtr parsed, ParseExpression("to_date(event_time)"));
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, Bind(*parsed, flat_->schema));
  EXPECT_TRUE(bound->type()->Equals(*DataType::Date()));
  EXPECT_EQ(bound->name(), "to_date(event_time)");
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr dates, bound->Evaluate(*flat_, ctx_));
  EXPECT_EQ(Render(*dates), (Rows{"2026-06-22", "2026-06-22", "NULL", "2026-06-22", "NULL"}));
}

TEST_F(SeedSelectTest, SharedSessionGivesTheSameValuesAsSeparateBinding) {
  ASSERT_OK_AND_ASSIGN(RecordBatchPtr alone, Select(*parsed_, kSecondSelect, ctx_));
  ASSERT_EQ(alone->num_columns(), flat_->num_columns());
  for (int col_idx = 0; col_idx < alone->num_columns(); ++col_idx) {
    EXPECT_EQ(Render(*alone->column(col_idx)), Render(*flat_->column(col_idx)))
        << alone->schema->field(col_idx).name;
  }
}

TEST_F(SeedSelectTest, SharedJsonPathsFollowEachNewBatch) {
  // The same bound list over two different batches, then the first again:
  // cached results must never leak from one batch into the next.
  BindSession session;
  std::vector<BoundExpressionPtr> bound;
  for (const char* text : {"get_json_object(e.payload, '$.power') AS p",
                           "get_json_object(e.payload, '$.state') AS s"}) {
    ASSERT_OK_AND_ASSIGN(ExpressionPtr parsed, ParseExpression(text));
    ASSERT_OK_AND_ASSIGN(BoundExpressionPtr b, Bind(*parsed, parsed_->schema, {}, &session));
    bound.push_back(std::move(b));
  }
  RecordBatchPtr tail = columnar::SliceBatch(*parsed_, 3, 2);
  for (const RecordBatchPtr& batch : {parsed_, tail, parsed_}) {
    ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr power, bound[0]->Evaluate(*batch, ctx_));
    ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr state, bound[1]->Evaluate(*batch, ctx_));
    if (batch == tail) {
      EXPECT_EQ(Render(*power), (Rows{"83.9", "NULL"}));
      EXPECT_EQ(Render(*state), (Rows{"OFF", "NULL"}));
    } else {
      EXPECT_EQ(Render(*power), (Rows{"84.3", "NULL", "NULL", "83.9", "NULL"}));
      EXPECT_EQ(Render(*state), (Rows{"ON", "NULL", "NULL", "OFF", "NULL"}));
    }
  }
}

TEST_F(SeedSelectTest, BoundExpressionsAreReusableAcrossBatches) {
  ASSERT_OK_AND_ASSIGN(ExpressionPtr parsed, ParseExpression(kFirstSelect));
  RecordBatchPtr input = KafkaBatch();
  ASSERT_OK_AND_ASSIGN(BoundExpressionPtr bound, Bind(*parsed, input->schema));
  for (int round = 0; round < 3; ++round) {
    ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr out, bound->Evaluate(*input, ctx_));
    ASSERT_OK(columnar::ValidateColumn(*out));
    EXPECT_EQ(out->length, input->num_rows);
    EXPECT_EQ(out->null_count, 1);  // only the NULL message
  }
  // An empty batch gives an empty column.
  RecordBatchPtr empty = columnar::SliceBatch(*input, 0, 0);
  ASSERT_OK_AND_ASSIGN(columnar::ColumnPtr none, bound->Evaluate(*empty, ctx_));
  EXPECT_EQ(none->length, 0);
}

}  // namespace
}  // namespace silt::expr
