#include "silt/stream/pyspark_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "silt/stream/job.h"
#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Result<std::string> Export(const std::string& yaml) {
  SILT_ASSIGN_OR_RETURN(JobSpec job, ParseJobYaml(yaml, "job.yaml"));
  PySparkExportOptions options;
  options.job_file = "job.yaml";
  options.raw_yaml = yaml;
  options.silt_version = "0.0.0-test";
  return ExportPySpark(job, options);
}

// The export's error for `yaml` (which must parse).
std::string Refusal(const std::string& yaml) {
  Result<std::string> program = Export(yaml);
  EXPECT_FALSE(program.ok()) << *program;
  if (program.ok()) return "";
  EXPECT_TRUE(program.status().IsInvalidArgument()) << program.status().ToString();
  return program.status().message();
}

constexpr char kSeedJob[] = R"y(
name: sensor-stream
source:
  format: kafka
  options:
    kafka.bootstrap.servers: broker:9092
    subscribe: sensor-events
    startingOffsets: earliest
    maxOffsetsPerTrigger: 1000
transform:
  - select:
      - from_json(CAST(value AS STRING), 'device_id STRING NOT NULL, ingested_at STRING') AS e
  - select: [e.device_id, "to_timestamp(e.ingested_at) AS event_time"]
  - withWatermark: { eventTime: event_time, delayThreshold: 5 minutes }
  - withColumn: { event_date: to_date(event_time), day: "date_format(event_date, 'E')" }
sink:
  format: delta
  outputMode: append
  path: s3://sensor-data/delta/sensor_events
  partitionBy: [device_type, event_date]
checkpointLocation: s3://sensor-data/checkpoints/sensor_stream
spark.sql.shuffle.partitions: 2
trigger: { processingTime: 60 seconds }
storage:
  s3:
    endpoint: http://minio:9000
    accessKey: ${SILT_EXPORT_TEST_ACCESS:-minioadmin}
    secretKey: ${SILT_EXPORT_TEST_SECRET:-s3cret}
    sessionToken: literal-token
    pathStyleAccess: true
)y";

TEST(PySparkExportTest, SeedJobBecomesTheSameReadTransformAndWrite) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(kSeedJob));
  EXPECT_THAT(program, HasSubstr("spark.readStream.format(\"kafka\")"));
  EXPECT_THAT(program, HasSubstr(".option(\"subscribe\", \"sensor-events\")"));
  EXPECT_THAT(program, HasSubstr(".option(\"maxOffsetsPerTrigger\", \"1000\")"));
  EXPECT_THAT(program, HasSubstr(".option(\"kafka.bootstrap.servers\", \"broker:9092\")"));
  EXPECT_THAT(program, HasSubstr("\"from_json(CAST(value AS STRING), 'device_id STRING NOT NULL, "
                                 "ingested_at STRING') AS e\","));
  EXPECT_THAT(program, HasSubstr("df = df.withWatermark(\"event_time\", \"5 minutes\")"));
  // withColumn entries in order, each seeing the one before.
  EXPECT_THAT(program,
              HasSubstr("df = df.withColumn(\"event_date\", F.expr(\"to_date(event_time)\"))\n"
                        "    df = df.withColumn(\"day\", F.expr(\"date_format(event_date, "
                        "'E')\"))"));
  EXPECT_THAT(program, HasSubstr("writer = writer.partitionBy(\"device_type\", \"event_date\")"));
  EXPECT_THAT(program, HasSubstr("writer.trigger(processingTime=\"1 minute\")"));
  EXPECT_THAT(program, HasSubstr("CHECKPOINT = \"s3://sensor-data/checkpoints/sensor_stream\""));
  EXPECT_THAT(program, HasSubstr("\"spark.sql.shuffle.partitions\": \"2\""));
  EXPECT_THAT(program, HasSubstr("\"spark.sql.session.timeZone\": \"UTC\""));
  EXPECT_THAT(program, HasSubstr("\"spark.sql.ansi.enabled\": \"false\""));
  EXPECT_THAT(program, HasSubstr("QUERY_NAME = \"sensor-stream\""));
  // Packages for Delta, Kafka and S3A; s3:// served by S3A.
  EXPECT_THAT(program, HasSubstr("io.delta:delta-spark_2.12:3.2.1"));
  EXPECT_THAT(program, HasSubstr("org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.3"));
  EXPECT_THAT(program, HasSubstr("org.apache.hadoop:hadoop-aws:3.3.4"));
  EXPECT_THAT(program, HasSubstr("\"spark.hadoop.fs.s3.impl\": "
                                 "\"org.apache.hadoop.fs.s3a.S3AFileSystem\""));
  EXPECT_THAT(program, HasSubstr("\"spark.hadoop.fs.s3a.endpoint\": \"http://minio:9000\""));
  EXPECT_THAT(program, HasSubstr("\"spark.hadoop.fs.s3a.path.style.access\": \"true\""));
  // A secret from the environment stays an environment lookup; a literal
  // one is the job file's.
  EXPECT_THAT(program, HasSubstr("\"spark.hadoop.fs.s3a.access.key\": "
                                 "os.environ.get(\"SILT_EXPORT_TEST_ACCESS\", \"minioadmin\")"));
  EXPECT_THAT(program, HasSubstr("\"spark.hadoop.fs.s3a.secret.key\": "
                                 "os.environ.get(\"SILT_EXPORT_TEST_SECRET\", \"s3cret\")"));
  EXPECT_THAT(program, HasSubstr("\"spark.hadoop.fs.s3a.session.token\": \"literal-token\""));
  // The S3 log store differs, and the program says so.
  EXPECT_THAT(program, HasSubstr("S3SingleDriverLogStore"));
  EXPECT_THAT(program, HasSubstr("def build(spark):"));
  EXPECT_THAT(program, HasSubstr("if __name__ == \"__main__\":"));
}

TEST(PySparkExportTest, StringsAreValidPythonLiterals) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
source: {format: json, schema: 'a STRING', options: {path: /in}}
transform:
  - where: 'a <> "x\y"'
  - select: ["concat(a, '\t') AS b"]
sink: {format: delta, path: /out}
checkpointLocation: /cp
)y"));
  EXPECT_THAT(program, HasSubstr("df = df.where(\"a <> \\\"x\\\\y\\\"\")"));
  EXPECT_THAT(program, HasSubstr("\"concat(a, '\\t') AS b\","));
}

TEST(PySparkExportTest, DurationsBecomeSparkIntervals) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
source: {format: json, schema: 'ts TIMESTAMP', options: {path: /in}}
transform:
  - withWatermark: { eventTime: ts, delayThreshold: 1 hour 30 minutes }
sink: {format: delta, path: /out}
checkpointLocation: /cp
trigger: { processingTime: 2s }
)y"));
  EXPECT_THAT(program, HasSubstr("df.withWatermark(\"ts\", \"90 minutes\")"));
  EXPECT_THAT(program, HasSubstr("trigger(processingTime=\"2 seconds\")"));
}

TEST(PySparkExportTest, EveryStatelessStepTranslates) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
source: {format: text, options: {path: /in, maxFilesPerTrigger: 2}}
transform:
  - select: [value, "explode(split(value, ',')) AS part"]
  - filter: part <> ''
  - withColumnRenamed: { part: p, value: v }
  - drop: [v, missing]
  - sql: "SELECT upper(p) AS p FROM input WHERE p IS NOT NULL"
  - join: {with: {path: /dim, where: active, select: [p, site]}, on: [p], how: left}
sink: {format: console, options: {numRows: 5, truncate: false}}
checkpointLocation: /cp
trigger: {availableNow: true}
maxBatches: 3
)y"));
  EXPECT_THAT(program, HasSubstr("spark.readStream.format(\"text\")"));
  EXPECT_THAT(program, HasSubstr(".option(\"maxFilesPerTrigger\", \"2\")"));
  EXPECT_THAT(program, HasSubstr(".load(\"/in\")"));
  EXPECT_THAT(program, HasSubstr("df = df.where(\"part <> ''\")"));
  EXPECT_THAT(program, HasSubstr("df = df.withColumnRenamed(\"part\", \"p\")"));
  EXPECT_THAT(program, HasSubstr("df = df.drop(\"v\", \"missing\")"));
  EXPECT_THAT(program, HasSubstr("df.createOrReplaceTempView(\"input\")\n"
                                 "    df = spark.sql(\"SELECT upper(p) AS p FROM input WHERE p IS "
                                 "NOT NULL\")"));
  EXPECT_THAT(program, HasSubstr("static = spark.read.format(\"delta\").load(\"/dim\")"));
  EXPECT_THAT(program, HasSubstr("static = static.where(\"active\")"));
  EXPECT_THAT(program, HasSubstr("static = static.selectExpr(\"p\", \"site\")"));
  EXPECT_THAT(program, HasSubstr("df = df.join(static, [\"p\"], \"left\")"));
  EXPECT_THAT(program, HasSubstr("writeStream.format(\"console\")"));
  EXPECT_THAT(program, HasSubstr("writer.option(\"truncate\", \"false\")"));
  EXPECT_THAT(program, HasSubstr("writer.trigger(availableNow=True)"));
  EXPECT_THAT(program, HasSubstr("MAX_BATCHES = 3"));
  EXPECT_THAT(program, HasSubstr("stop_after_batches(query, MAX_BATCHES)"));
}

TEST(PySparkExportTest, StatefulStepsTranslate) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
source: {format: json, schema: 'ts TIMESTAMP, d STRING, t DOUBLE', options: {path: /in}}
transform:
  - withWatermark: { eventTime: ts, delayThreshold: 10 minutes }
  - dropDuplicatesWithinWatermark: [d]
  - groupBy:
      keys: ["window(ts, '5 minutes')", d]
      agg: ["count(*) AS n", "avg(t)"]
sink: {format: delta, path: /out, outputMode: complete}
checkpointLocation: /cp
)y"));
  EXPECT_THAT(program, HasSubstr("df = df.dropDuplicatesWithinWatermark([\"d\"])"));
  EXPECT_THAT(program, HasSubstr("df = df.groupBy(\n        F.expr(\"window(ts, '5 minutes')\"),\n"
                                 "        F.expr(\"d\"),\n    ).agg(\n        F.expr(\"count(*) AS "
                                 "n\"),\n        F.expr(\"avg(t)\"),\n    )"));
  EXPECT_THAT(program, HasSubstr("outputMode(\"complete\")"));
}

TEST(PySparkExportTest, UpdateModeOnDeltaIsAnUpsertOnTheGroupKeys) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
source: {format: json, schema: 'd STRING', options: {path: /in}}
transform:
  - groupBy: {keys: [d], agg: ["count(*) AS n"]}
sink: {format: delta, path: /out, outputMode: update}
checkpointLocation: /cp
)y"));
  EXPECT_THAT(program, HasSubstr("group_keys = df.columns[:1]"));
  EXPECT_THAT(program, HasSubstr("foreachBatch(_upsert_sink(group_keys))"));
  EXPECT_THAT(program, HasSubstr("t.`{k}` <=> s.`{k}`"));
  EXPECT_THAT(program, HasSubstr("_idempotent(spark, batch_id, merge.execute)"));
  EXPECT_THAT(program, HasSubstr("spark.databricks.delta.write.txnAppId"));
}

TEST(PySparkExportTest, UpdateModeWithASqlAggregationIsRefusedAsSiltRefusesIt) {
  std::string message = Refusal(R"y(
source: {format: json, schema: 'd STRING', options: {path: /in}}
transform:
  - sql: "SELECT d, count(*) AS n FROM input GROUP BY d"
sink: {format: delta, path: /out, outputMode: update}
checkpointLocation: /cp
)y");
  EXPECT_THAT(message, HasSubstr("transform[0].sql"));
  EXPECT_THAT(message, HasSubstr("groupBy"));
}

TEST(PySparkExportTest, MergeSinkIsAForeachBatchMerge) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
source: {format: json, schema: 'id BIGINT, op STRING, ts BIGINT, v BIGINT', options: {path: /in}}
sink:
  format: delta
  path: /out
  partitionBy: [op]
  mode: merge
  options: {delta.appendOnly: false}
  merge:
    on: "t.id = s.id"
    whenMatched:
      - {condition: "s.op = 'delete'", action: delete}
      - {action: update, set: {v: s.v, ts: s.ts}}
    whenNotMatched:
      - {condition: "s.op <> 'delete'", action: insertAll}
    whenNotMatchedBySource:
      - {action: delete}
  dedupBy: {keys: [id], orderBy: [ts]}
checkpointLocation: /cp
)y"));
  EXPECT_THAT(program, HasSubstr("foreachBatch(_merge_sink)"));
  EXPECT_THAT(program, HasSubstr(".merge(source.alias(\"s\"), \"t.id = s.id\")"));
  EXPECT_THAT(program, HasSubstr(".whenMatchedDelete(condition=\"s.op = 'delete'\")"));
  EXPECT_THAT(program, HasSubstr(".whenMatchedUpdate(set={\"v\": \"s.v\", \"ts\": \"s.ts\"})"));
  EXPECT_THAT(program, HasSubstr(".whenNotMatchedInsertAll(condition=\"s.op <> 'delete'\")"));
  EXPECT_THAT(program, HasSubstr(".whenNotMatchedBySourceDelete()"));
  EXPECT_THAT(program,
              HasSubstr("Window.partitionBy(F.expr(\"id\")).orderBy("
                        "F.expr(\"ts\").desc_nulls_last(), F.col(\"__silt_seq\").desc())"));
  EXPECT_THAT(program, HasSubstr("_create_table(spark, \"/out\", batch_df.schema, [\"op\"], "
                                 "{\"delta.appendOnly\": \"false\"})"));
  EXPECT_THAT(program, HasSubstr("from pyspark.sql import SparkSession, Window"));
}

TEST(PySparkExportTest, RoutedSinksWriteIdempotentlyFromOneForeachBatch) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
source: {format: json, schema: 'type STRING, id BIGINT', options: {path: /in}}
sinks:
  - name: clicks
    where: "type = 'click'"
    select: [id]
    path: /clicks
  - name: alerts
    format: kafka
    select: ["CAST(id AS STRING) AS value"]
    options: {kafka.bootstrap.servers: "b:9092", topic: alerts}
checkpointLocation: /cp
)y"));
  EXPECT_THAT(program, HasSubstr("foreachBatch(_write_sinks(None))"));
  EXPECT_THAT(program, HasSubstr("out = batch_df.where(\"type = 'click'\").selectExpr(\"id\")"));
  EXPECT_THAT(program, HasSubstr("writer = writer.option(\"txnAppId\", _query_id(spark))"));
  EXPECT_THAT(program, HasSubstr("writer = writer.option(\"txnVersion\", batch_id)"));
  EXPECT_THAT(program, HasSubstr("writer.save(\"/clicks\")"));
  EXPECT_THAT(program, HasSubstr("writer = out.write.format(\"kafka\")"));
  EXPECT_THAT(program, HasSubstr("CHECKPOINT.rstrip(\"/\") + \"/metadata\""));
}

TEST(PySparkExportTest, KafkaSaslBecomesAJaasLineWithThePasswordFromTheEnvironment) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
source:
  format: kafka
  options:
    kafka.bootstrap.servers: b:9093
    kafka.security.protocol: SASL_SSL
    kafka.sasl.mechanism: SCRAM-SHA-512
    kafka.sasl.username: alice
    kafka.sasl.password: ${SILT_EXPORT_TEST_KAFKA_PASSWORD:-pw}
    kafka.ssl.ca.location: /etc/ca.pem
    kafka.fetch.wait.max.ms: "50"
    kafka.socket.timeout.ms: "1000"
    subscribe: t
sink: {format: kafka, options: {kafka.bootstrap.servers: "b:9092", topic: out}}
checkpointLocation: /cp
)y"));
  EXPECT_THAT(program,
              HasSubstr(".option(\"kafka.sasl.jaas.config\", _jaas(\"org.apache.kafka.common."
                        "security.scram.ScramLoginModule\", \"alice\", os.environ.get(\"SILT_"
                        "EXPORT_TEST_KAFKA_PASSWORD\", \"pw\")))"));
  EXPECT_THAT(program, HasSubstr(".option(\"kafka.ssl.truststore.type\", \"PEM\")"));
  EXPECT_THAT(program, HasSubstr(".option(\"kafka.ssl.truststore.location\", \"/etc/ca.pem\")"));
  EXPECT_THAT(program, HasSubstr(".option(\"kafka.fetch.max.wait.ms\", \"50\")"));
  EXPECT_THAT(program, Not(HasSubstr("\"kafka.socket.timeout.ms\"")));
  EXPECT_THAT(program, HasSubstr("def _jaas(module, username, password):"));
  EXPECT_THAT(program, HasSubstr("writeStream.format(\"kafka\")"));
}

TEST(PySparkExportTest, FeaturesWithoutSparkCounterpartAreRefusedByKey) {
  EXPECT_THAT(Refusal(R"y(
source: {format: generator}
sink: {format: delta, path: /out}
checkpointLocation: /cp
)y"),
              HasSubstr("source.format: cannot be exported to PySpark: generator"));
  EXPECT_THAT(Refusal(R"y(
source: {format: mqtt, options: {brokerUrl: "tcp://h:1883", topic: "a/+"}}
sink: {format: delta, path: /out}
checkpointLocation: /cp
)y"),
              HasSubstr("source.format: cannot be exported to PySpark: mqtt"));
  EXPECT_THAT(Refusal(R"y(
source: {format: json, schema: 'a STRING', options: {path: /in}}
sink: {format: delta, path: /out}
deadLetter: {path: /dead}
checkpointLocation: /cp
)y"),
              HasSubstr("deadLetter: cannot be exported to PySpark"));
  EXPECT_THAT(Refusal(R"y(
source:
  format: kafka
  options: {kafka.bootstrap.servers: b, subscribe: t, kafka.ssl.key.location: /k.pem}
sink: {format: delta, path: /out}
checkpointLocation: /cp
)y"),
              HasSubstr("source.options.kafka.ssl.key.location: cannot be exported"));
  EXPECT_THAT(Refusal(R"y(
source:
  format: kafka
  options: {kafka.bootstrap.servers: b, subscribe: t, endingOffsets: latest}
sink: {format: delta, path: /out}
checkpointLocation: /cp
)y"),
              HasSubstr("source.options.endingOffsets: cannot be exported"));
  EXPECT_THAT(Refusal(R"y(
source: {format: json, schema: 'a STRING', options: {path: /in}}
sink: {format: delta, path: /out, options: {userMetadata: x}}
checkpointLocation: /cp
)y"),
              HasSubstr("sink.options.userMetadata: cannot be exported"));
  EXPECT_THAT(Refusal(R"y(
source: {format: json, schema: 'a STRING', options: {path: /in}}
sink: {format: delta, path: /out, clusterBy: [a]}
checkpointLocation: /cp
)y"),
              HasSubstr("sink.clusterBy: cannot be exported"));
  EXPECT_THAT(Refusal(R"y(
source: {format: json, schema: 'a STRING', options: {path: /in}}
sink: {format: delta, path: /out, generatedColumns: {b: upper(a)}}
checkpointLocation: /cp
)y"),
              HasSubstr("sink.generatedColumns: cannot be exported"));
  EXPECT_THAT(Refusal(R"y(
source: {format: json, schema: 'a STRING', options: {path: /in}}
sink: {format: delta, path: /out}
checkpointLocation: /cp
storage: {s3: {flavour: x}}
)y"),
              HasSubstr("storage.s3.flavour: cannot be exported"));
}

TEST(PySparkExportTest, SourceOptionsAreCheckedAsSiltRunChecksThem) {
  Result<std::string> program = Export(R"y(
source: {format: kafka, options: {kafka.bootstrap.servers: b, subscribe: t, startingOffset: earliest}}
sink: {format: delta, path: /out}
checkpointLocation: /cp
)y");
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("startingOffsets"));
  program = Export(R"y(
source: {format: json, options: {path: /in}}
sink: {format: delta, path: /out}
checkpointLocation: /cp
)y");
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("schema"));
}

TEST(PySparkExportTest, ScaleOutBecomesOneQueryWithACommentOnOffsets) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
name: workers
source: {format: kafka, options: {kafka.bootstrap.servers: b, subscribe: t}}
sink: {format: delta, path: /out}
checkpointLocation: /status
scaleOut: {mode: consumerGroup, groupId: g}
)y"));
  EXPECT_THAT(program, HasSubstr("# scaleOut (consumerGroup): silt runs several workers"));
  EXPECT_THAT(program, HasSubstr("does not read the workers' txns"));
  EXPECT_THAT(program, HasSubstr("spark.readStream.format(\"kafka\")"));
}

TEST(PySparkExportTest, MaintenanceJobBecomesOptimizeAndVacuum) {
  ASSERT_OK_AND_ASSIGN(std::string program, Export(R"y(
name: m
type: maintenance
tables: [/t1, /t2]
optimize: {targetSize: 64MB, zorderBy: [a, b], where: "d = 1"}
vacuum: {retain: 36 hours, retentionDurationCheck: false}
schedule: {interval: 24 hours, maxRuns: 3}
)y"));
  EXPECT_THAT(program, HasSubstr("TABLES = [\n    \"/t1\",\n    \"/t2\",\n]"));
  EXPECT_THAT(program, HasSubstr("\"spark.databricks.delta.optimize.maxFileSize\": \"67108864\""));
  EXPECT_THAT(program,
              HasSubstr("\"spark.databricks.delta.retentionDurationCheck.enabled\": \"false\""));
  EXPECT_THAT(program, HasSubstr("DeltaTable.forPath(spark, table).optimize().where(\"d = 1\")"
                                 ".executeZOrderBy(\"a\", \"b\")"));
  EXPECT_THAT(program, HasSubstr("DeltaTable.forPath(spark, table).vacuum(36)"));
  EXPECT_THAT(program, HasSubstr("if runs >= 3:"));
  EXPECT_THAT(program, HasSubstr("time.sleep(86400)"));
  EXPECT_THAT(Refusal(R"y(
type: maintenance
tables: [/t1]
vacuum: {lite: true}
)y"),
              HasSubstr("vacuum.lite: cannot be exported"));
}

}  // namespace
}  // namespace silt::stream
