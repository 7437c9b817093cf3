#include "silt/kafka/consumer.h"

#include <gtest/gtest.h>

namespace silt::kafka {
namespace {

TEST(RecordSchemaTest, MatchesSparkKafkaColumns) {
  columnar::SchemaPtr schema = RecordSchema(false);
  ASSERT_EQ(schema->num_fields(), 7);
  EXPECT_EQ(schema->field(0).name, "key");
  EXPECT_EQ(schema->field(6).name, "timestampType");
  columnar::SchemaPtr with_headers = RecordSchema(true);
  ASSERT_EQ(with_headers->num_fields(), 8);
  EXPECT_EQ(with_headers->field(7).name, "headers");
  EXPECT_EQ(with_headers->field(7).type->ToDdl(), "ARRAY<STRUCT<key: STRING, value: BINARY>>");
}

TEST(RecordColumnsTest, AppendsRecordsWithNullKeysTimestampsAndHeaders) {
  RecordColumns columns(true);
  columns.Append(std::nullopt, "v0", "t", 1, 7, 1000, 0);
  columns.AddHeader("h", "x");
  columns.AddHeader("n", std::nullopt);
  columns.EndHeaders();
  columns.Append("k", std::nullopt, "t", 1, 8, -1, -1);
  columns.NoHeaders();
  columnar::RecordBatchPtr batch = columns.Finish();
  ASSERT_EQ(batch->num_rows, 2);
  ASSERT_EQ(batch->columns.size(), 8u);
  EXPECT_FALSE(batch->columns[0]->IsValid(0));
  EXPECT_TRUE(batch->columns[0]->IsValid(1));
  EXPECT_FALSE(batch->columns[1]->IsValid(1));
  EXPECT_EQ(batch->columns[4]->Value<int64_t>(1), 8);
  EXPECT_EQ(batch->columns[5]->Value<int64_t>(0), 1'000'000);
  EXPECT_FALSE(batch->columns[5]->IsValid(1));
  EXPECT_TRUE(batch->columns[7]->IsValid(0));
  EXPECT_FALSE(batch->columns[7]->IsValid(1));
  EXPECT_EQ(batch->columns[7]->children[0]->length, 2);
  EXPECT_EQ(columns.num_rows(), 0);
  EXPECT_EQ(columns.Finish()->num_rows, 0);
}

// A chunk sized up front gets its key/value/topic bytes in one allocation
// each (the reservation, not the builders' doubling: 64, 128, ... 1024).
TEST(RecordColumnsTest, ReservedChunkKeepsItsBytesInTheReservation) {
  RecordColumns columns(false);
  EXPECT_FALSE(columns.reserved());
  columns.Reserve(100, 0, 1000, 100);
  EXPECT_TRUE(columns.reserved());
  for (int64_t offset = 0; offset < 100; ++offset) {
    columns.Append(std::nullopt, "0123456789", "t", 0, offset, 1, 0);
  }
  columnar::RecordBatchPtr batch = columns.Finish();
  EXPECT_FALSE(columns.reserved());
  ASSERT_EQ(batch->num_rows, 100);
  EXPECT_EQ(batch->columns[1]->data->size(), 1000);
  EXPECT_EQ(batch->columns[1]->data->capacity(), 1000);
  EXPECT_EQ(batch->columns[2]->data->capacity(), 100);
  EXPECT_EQ(batch->columns[1]->StringValue(99), "0123456789");
  EXPECT_EQ(batch->columns[4]->Value<int64_t>(99), 99);
}

}  // namespace
}  // namespace silt::kafka
