#include "silt/stream/job.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "silt/fs/file_system.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::stream {
namespace {

constexpr char kSeedJob[] = R"(
name: sensor-stream
source:
  format: generator
  options:
    numDevices: 4
    seed: 7
    rowsPerSecond: 2.5
    startTimestamp: 2026-06-22T08:00:00Z
    maxOffsetsPerTrigger: 1000
transform:
  - select:
      - from_json(CAST(value AS STRING), 'device_id STRING, ingested_at STRING') AS e
  - select: [e.device_id, to_timestamp(e.ingested_at) AS event_time]
  - where: device_id IS NOT NULL
  - withWatermark: { eventTime: event_time, delayThreshold: 5 minutes }
  - withColumn: { event_date: to_date(event_time) }
  - withColumnRenamed: { device_id: device }
  - drop: [unused]
sink:
  format: delta
  outputMode: append
  path: /tmp/table
  partitionBy: [event_date]
  options:
    compression: zstd
checkpointLocation: /tmp/checkpoint
trigger: { processingTime: 60 seconds }
maxBatches: 3
)";

TEST(JobTest, ParsesTheSeedJobShape) {
  ASSERT_OK_AND_ASSIGN(JobSpec job, ParseJobYaml(kSeedJob, "job.yaml"));
  EXPECT_EQ(job.name, "sensor-stream");
  EXPECT_EQ(job.source.format, "generator");
  // Scalars of every YAML kind arrive as their text.
  EXPECT_EQ(job.source.options.at("numDevices"), "4");
  EXPECT_EQ(job.source.options.at("rowsPerSecond"), "2.5");
  EXPECT_EQ(job.source.options.at("startTimestamp"), "2026-06-22T08:00:00Z");
  ASSERT_EQ(job.transforms.size(), 7u);
  EXPECT_EQ(job.transforms[0].kind, "select");
  EXPECT_EQ(job.transforms[0].key_path, "transform[0]");
  ASSERT_EQ(job.transforms[1].exprs.size(), 2u);
  EXPECT_EQ(job.transforms[1].exprs[1], "to_timestamp(e.ingested_at) AS event_time");
  EXPECT_EQ(job.transforms[2].kind, "where");
  EXPECT_EQ(job.transforms[3].kind, "withWatermark");
  EXPECT_EQ(job.transforms[3].event_time, "event_time");
  EXPECT_EQ(job.transforms[3].delay_threshold, "5 minutes");
  ASSERT_EQ(job.transforms[4].named.size(), 1u);
  EXPECT_EQ(job.transforms[4].named[0].first, "event_date");
  EXPECT_EQ(job.transforms[4].named[0].second, "to_date(event_time)");
  EXPECT_EQ(job.transforms[5].named[0].second, "device");
  EXPECT_EQ(job.transforms[6].exprs, std::vector<std::string>{"unused"});
  EXPECT_EQ(job.sink.path, "/tmp/table");
  EXPECT_EQ(job.sink.partition_by, std::vector<std::string>{"event_date"});
  EXPECT_EQ(job.sink.options.at("compression"), "zstd");
  EXPECT_EQ(job.checkpoint_location, "/tmp/checkpoint");
  EXPECT_EQ(job.trigger.kind, TriggerKind::kProcessingTime);
  EXPECT_EQ(job.trigger.interval_micros, 60'000'000);
  EXPECT_EQ(job.max_batches, 3);
}

TEST(JobTest, TriggerForms) {
  auto parse = [](const std::string& trigger) {
    return ParseJobYaml(
        "source: {format: generator}\nsink: {path: /t}\ncheckpointLocation: /c\n" + trigger, "j");
  };
  ASSERT_OK_AND_ASSIGN(JobSpec none, parse(""));
  EXPECT_EQ(none.trigger.kind, TriggerKind::kDefault);
  ASSERT_OK_AND_ASSIGN(JobSpec once, parse("trigger: {once: true}"));
  EXPECT_EQ(once.trigger.kind, TriggerKind::kOnce);
  ASSERT_OK_AND_ASSIGN(JobSpec now, parse("trigger:\n  availableNow: true"));
  EXPECT_EQ(now.trigger.kind, TriggerKind::kAvailableNow);
  ASSERT_OK_AND_ASSIGN(JobSpec zero, parse("trigger: {processingTime: 0 seconds}"));
  EXPECT_EQ(zero.trigger.kind, TriggerKind::kDefault);
  Result<JobSpec> two = parse("trigger: {once: true, availableNow: true}");
  ASSERT_RAISES(InvalidArgument, two);
  Result<JobSpec> off = parse("trigger: {once: false}");
  ASSERT_RAISES(InvalidArgument, off);
  EXPECT_NE(off.status().message().find("trigger.once"), std::string::npos);
}

// A scale-out job: a Kafka source, one Delta append sink, `extra` keys
// appended at the top level and `steps` as the transform.
std::string ScaleOutJob(const std::string& scale_out, const std::string& extra = "",
                        const std::string& steps = "[{select: [CAST(value AS STRING) AS v]}]") {
  return "name: ingest\n"
         "source: {format: kafka, options: {kafka.bootstrap.servers: 'b:9092', subscribe: t}}\n"
         "transform: " +
         steps +
         "\n"
         "sink: {format: delta, path: /tmp/t}\n"
         "checkpointLocation: /tmp/c\n" +
         extra + "scaleOut: " + scale_out + "\n";
}

TEST(JobTest, ScaleOutKeysAndTheirDefaults) {
  ASSERT_OK_AND_ASSIGN(JobSpec plain, ParseJobYaml(ScaleOutJob("{mode: consumerGroup}"), "j"));
  ASSERT_TRUE(plain.scale_out.has_value());
  EXPECT_EQ(plain.scale_out->mode, "consumerGroup");
  EXPECT_EQ(plain.scale_out->app_id, "ingest");  // the job's name
  EXPECT_EQ(plain.scale_out->group_id, "");      // resolved by the worker
  EXPECT_EQ(plain.scale_out->worker_id, "");
  ASSERT_OK_AND_ASSIGN(
      JobSpec named,
      ParseJobYaml(ScaleOutJob("{mode: consumerGroup, groupId: g, appId: a, workerId: w-1}"), "j"));
  EXPECT_EQ(named.scale_out->group_id, "g");
  EXPECT_EQ(named.scale_out->app_id, "a");
  EXPECT_EQ(named.scale_out->worker_id, "w-1");
  ASSERT_OK_AND_ASSIGN(
      JobSpec single,
      ParseJobYaml(ScaleOutJob("{mode: consumerGroup}").substr(0, ScaleOutJob("").find("scaleOut")),
                   "j"));
  EXPECT_FALSE(single.scale_out.has_value());
}

TEST(JobTest, ScaleOutRefusesWhatWorkersCannotCommitExactlyOnce) {
  auto refused = [](const std::string& yaml, const std::string& expected) {
    Result<JobSpec> job = ParseJobYaml(yaml, "job.yaml");
    ASSERT_RAISES(InvalidArgument, job);
    EXPECT_NE(job.status().message().find(expected), std::string::npos) << job.status().message();
  };
  refused(ScaleOutJob("{mode: eager}"), "scaleOut.mode: expected consumerGroup");
  refused(ScaleOutJob("{}"), "scaleOut.mode: required key is missing");
  refused(ScaleOutJob("{mode: consumerGroup, partitions: 3}"), "scaleOut.partitions");
  std::string no_name = ScaleOutJob("{mode: consumerGroup}");
  no_name.erase(0, no_name.find('\n') + 1);
  refused(no_name, "scaleOut.appId: required when the job has no name");
  std::string files = ScaleOutJob("{mode: consumerGroup}");
  files.replace(files.find("{format: kafka"),
                files.find('\n', files.find("{format: kafka")) - files.find("{format: kafka"),
                "{format: json, options: {path: /in}, schema: 'a INT'}");
  refused(files, "needs a kafka source, not 'json'");
  std::string assign = ScaleOutJob("{mode: consumerGroup}");
  assign.replace(assign.find("subscribe: t"), 12, "assign: '{\"t\":[0]}'");
  refused(assign, "source.options.assign pins partitions");
  std::string kafka_sink = ScaleOutJob("{mode: consumerGroup}");
  kafka_sink.replace(kafka_sink.find("{format: delta, path: /tmp/t}"), 29,
                     "{format: kafka, options: {topic: o, kafka.bootstrap.servers: 'b:9092'}}");
  refused(kafka_sink, "needs a delta sink, not 'kafka'");
  std::string two_sinks = ScaleOutJob("{mode: consumerGroup}");
  two_sinks.replace(two_sinks.find("sink: {format: delta, path: /tmp/t}"), 35,
                    "sinks: [{name: a, format: delta, path: /tmp/a}, {name: b, format: delta, "
                    "path: /tmp/b}]");
  refused(two_sinks, "several sinks cannot be committed together");
  refused(ScaleOutJob("{mode: consumerGroup}", "deadLetter: {path: /tmp/dl}\n"),
          "deadLetter is not supported");
  refused(ScaleOutJob("{mode: consumerGroup}", "trigger: {availableNow: true}\n"),
          "trigger once and availableNow are not supported");
  refused(ScaleOutJob("{mode: consumerGroup}", "",
                      "[{select: [CAST(value AS STRING) AS v]}, {groupBy: {keys: [v], agg: "
                      "['count(*) AS n']}}]"),
          "transform[1] (groupBy) is stateful");
  refused(ScaleOutJob("{mode: consumerGroup}", "", "[{dropDuplicates: [value]}]"),
          "transform[0] (dropDuplicates) is stateful");
}

TEST(JobTest, MergeSinkClauses) {
  ASSERT_OK_AND_ASSIGN(JobSpec job, ParseJobYaml(R"(source: {format: generator}
sink:
  path: /t
  mode: merge
  merge:
    on: t.id = s.id
    whenMatched:
      - {condition: "s.op = 'd'", action: delete}
      - {action: update, set: {v: s.v, t.w: s.w + 1}}
    whenNotMatched: [{action: insertAll}]
    whenNotMatchedBySource: [{action: update, set: {stale: "true"}}]
  dedupBy: {keys: [id], orderBy: ts}
checkpointLocation: /c
)",
                                                 "j.yaml"));
  ASSERT_TRUE(job.sink.merge.has_value());
  const MergeSinkSpec& merge = *job.sink.merge;
  EXPECT_EQ(job.sink.mode, "merge");
  EXPECT_EQ(merge.on, "t.id = s.id");
  ASSERT_EQ(merge.when_matched.size(), 2u);
  EXPECT_EQ(merge.when_matched[0].action, "delete");
  EXPECT_EQ(merge.when_matched[0].condition, "s.op = 'd'");
  EXPECT_EQ(merge.when_matched[1].assignments.size(), 2u);
  EXPECT_EQ(merge.when_matched[1].assignments[1].first, "t.w");
  EXPECT_EQ(merge.when_not_matched[0].action, "insertAll");
  EXPECT_EQ(merge.when_not_matched_by_source[0].key_path, "sink.merge.whenNotMatchedBySource[0]");
  ASSERT_TRUE(job.sink.dedup_by.has_value());
  EXPECT_EQ(job.sink.dedup_by->order_by, std::vector<std::string>{"ts"});
}

TEST(JobTest, MergeSinkErrorsNameTheKey) {
  auto error = [](const std::string& sink) {
    Result<JobSpec> job = ParseJobYaml(
        "source: {format: generator}\nsink: " + sink + "\ncheckpointLocation: /c\n", "j.yaml");
    return job.ok() ? std::string("ok") : job.status().message();
  };
  auto has = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  std::string m = error("{path: /t, mode: merge}");
  EXPECT_TRUE(has(m, "sink.merge: required with mode: merge")) << m;
  m = error("{path: /t, mode: merge, merge: {on: x, whenMatched: [{action: insert}]}}");
  EXPECT_TRUE(has(m, "sink.merge.whenMatched[0].action: expected one of update")) << m;
  m = error("{path: /t, mode: merge, merge: {on: x, whenMatched: [{action: update}]}}");
  EXPECT_TRUE(has(m, "sink.merge.whenMatched[0].set: required for action update")) << m;
  m = error(
      "{path: /t, mode: merge, merge: {on: x, whenMatched: [{action: delete}, {action: "
      "updateAll}]}}");
  EXPECT_TRUE(has(m, "only the last clause of a list may omit its condition")) << m;
  m = error("{path: /t, mode: merge, merge: {on: x}}");
  EXPECT_TRUE(has(m, "needs at least one of whenMatched")) << m;
  m = error("{path: /t, dedupBy: {keys: [a]}}");
  EXPECT_TRUE(has(m, "sink.dedupBy: only a merge sink")) << m;
  m = error("{format: kafka, mode: merge, merge: {on: x, whenNotMatched: [{action: insertAll}]}}");
  EXPECT_TRUE(has(m, "sink.mode: merge needs format delta")) << m;
}

TEST(JobTest, UnknownKeyNamesItsPathLineAndTheExpectedKeys) {
  Result<JobSpec> job = ParseJobYaml(R"(source: {format: generator}
sink:
  path: /t
  partitonBy: [a]
checkpointLocation: /c
)",
                                     "jobs/sensor.yaml");
  ASSERT_RAISES(InvalidArgument, job);
  const std::string& message = job.status().message();
  EXPECT_NE(message.find("jobs/sensor.yaml:4: sink.partitonBy: unknown key; expected one of "
                         "format, outputMode, path, partitionBy, clusterBy, options"),
            std::string::npos)
      << message;
}

TEST(JobTest, GeneratedAndIdentityColumnsKeepTheirOrder) {
  ASSERT_OK_AND_ASSIGN(JobSpec job, ParseJobYaml(R"(source: {format: generator}
sink:
  path: /t
  generatedColumns: {z: upper(a), b: CAST(t AS DATE)}
  identityColumns: {id: GENERATED ALWAYS AS IDENTITY}
checkpointLocation: /c
)",
                                                 "j.yaml"));
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(job.sink.generated_columns, (Pairs{{"z", "upper(a)"}, {"b", "CAST(t AS DATE)"}}));
  EXPECT_EQ(job.sink.identity_columns, (Pairs{{"id", "GENERATED ALWAYS AS IDENTITY"}}));
  Result<JobSpec> merge = ParseJobYaml(R"(source: {format: generator}
sink:
  path: /t
  generatedColumns: {z: upper(a)}
  mode: merge
checkpointLocation: /c
)",
                                       "j.yaml");
  ASSERT_RAISES(InvalidArgument, merge);
  EXPECT_NE(merge.status().message().find("not by the merge sink"), std::string::npos)
      << merge.status().message();
}

TEST(JobTest, MetricsEndpointKeys) {
  const std::string base =
      "source: {format: generator}\nsink: {path: /t}\ncheckpointLocation: /c\n";
  ASSERT_OK_AND_ASSIGN(JobSpec plain, ParseJobYaml(base, "j.yaml"));
  EXPECT_FALSE(plain.metrics.has_value());
  ASSERT_OK_AND_ASSIGN(
      JobSpec job,
      ParseJobYaml(base + "metrics: {port: 9108, host: 0.0.0.0, healthTimeout: 30 seconds, "
                          "lagInterval: 500 ms}\n",
                   "j.yaml"));
  ASSERT_TRUE(job.metrics.has_value());
  EXPECT_EQ(job.metrics->port, 9108);
  EXPECT_EQ(job.metrics->host, "0.0.0.0");
  EXPECT_EQ(job.metrics->health_timeout_micros, 30'000'000);
  EXPECT_EQ(job.metrics->lag_interval_micros, 500'000);
  ASSERT_OK_AND_ASSIGN(JobSpec defaults, ParseJobYaml(base + "metrics: {port: 0}\n", "j.yaml"));
  EXPECT_EQ(defaults.metrics->host, "127.0.0.1");
  EXPECT_EQ(defaults.metrics->health_timeout_micros, 300'000'000);
  EXPECT_EQ(defaults.metrics->stop_grace_micros, 0);
  ASSERT_OK_AND_ASSIGN(JobSpec grace,
                       ParseJobYaml(base + "metrics: {port: 0, stopGrace: 30 s}\n", "j.yaml"));
  EXPECT_EQ(grace.metrics->stop_grace_micros, 30'000'000);
  ASSERT_OK(ParseJobYaml(base + "metrics: {port: 0, stopGrace: 0 s}\n", "j.yaml").status());

  Result<JobSpec> typo = ParseJobYaml(base + "metrics: {port: 1, healthTimout: 1s}\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, typo);
  EXPECT_NE(typo.status().message().find("j.yaml:4: metrics.healthTimout: unknown key"),
            std::string::npos)
      << typo.status().message();
  Result<JobSpec> no_port = ParseJobYaml(base + "metrics: {host: 127.0.0.1}\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, no_port);
  EXPECT_NE(no_port.status().message().find("metrics.port: required key is missing"),
            std::string::npos);
  Result<JobSpec> big = ParseJobYaml(base + "metrics: {port: 70000}\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, big);
  EXPECT_NE(big.status().message().find("metrics.port: expected a port from 0 to 65535"),
            std::string::npos);
  Result<JobSpec> zero = ParseJobYaml(base + "metrics: {port: 1, healthTimeout: 0 s}\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, zero);
  Result<JobSpec> negative = ParseJobYaml(base + "metrics: {port: 1, stopGrace: -1 s}\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, negative);
}

TEST(JobTest, DeadLetterTableKeys) {
  const std::string base =
      "source: {format: generator}\nsink: {path: /t}\ncheckpointLocation: /c\n";
  ASSERT_OK_AND_ASSIGN(JobSpec plain, ParseJobYaml(base, "j.yaml"));
  EXPECT_FALSE(plain.dead_letter.has_value());
  ASSERT_OK_AND_ASSIGN(
      JobSpec job,
      ParseJobYaml(base + "deadLetter: {path: s3://b/dead, options: {compression: zstd}}\n",
                   "j.yaml"));
  ASSERT_TRUE(job.dead_letter.has_value());
  EXPECT_EQ(job.dead_letter->path, "s3://b/dead");
  EXPECT_EQ(job.dead_letter->format, "delta");
  EXPECT_EQ(job.dead_letter->output_mode, "append");
  EXPECT_EQ(job.dead_letter->options.at("compression"), "zstd");
  Result<JobSpec> no_path = ParseJobYaml(base + "deadLetter: {options: {}}\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, no_path);
  EXPECT_NE(no_path.status().message().find("deadLetter.path: required key is missing"),
            std::string::npos)
      << no_path.status().message();
  Result<JobSpec> typo = ParseJobYaml(base + "deadLetter: {path: /d, mode: merge}\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, typo);
  EXPECT_NE(typo.status().message().find("deadLetter.mode: unknown key"), std::string::npos)
      << typo.status().message();
}

TEST(JobTest, UnknownTransformStepNamesItsIndex) {
  Result<JobSpec> job = ParseJobYaml(R"(source: {format: generator}
transform:
  - select: [a]
  - selcet: [b]
sink: {path: /t}
checkpointLocation: /c
)",
                                     "j.yaml");
  ASSERT_RAISES(InvalidArgument, job);
  EXPECT_NE(job.status().message().find("transform[1].selcet: unknown step"), std::string::npos)
      << job.status().message();
}

TEST(JobTest, StatefulSteps) {
  ASSERT_OK_AND_ASSIGN(JobSpec job, ParseJobYaml(R"yaml(source: {format: generator}
transform:
  - withWatermark: { eventTime: ts, delayThreshold: 10 seconds }
  - groupBy:
      keys: ["window(ts, '1 minute')", device]
      agg: ["count(*) AS n", "avg(temp)"]
  - dropDuplicates: [id, ts]
  - dropDuplicates:
  - dropDuplicatesWithinWatermark: [id]
sink: {path: /t, outputMode: complete}
checkpointLocation: /c
)yaml",
                                                 "j.yaml"));
  ASSERT_EQ(job.transforms.size(), 5u);
  EXPECT_EQ(job.transforms[1].kind, "groupBy");
  EXPECT_EQ(job.transforms[1].exprs,
            (std::vector<std::string>{"window(ts, '1 minute')", "device"}));
  EXPECT_EQ(job.transforms[1].aggs, (std::vector<std::string>{"count(*) AS n", "avg(temp)"}));
  EXPECT_EQ(job.transforms[2].kind, "dropDuplicates");
  EXPECT_EQ(job.transforms[2].exprs, (std::vector<std::string>{"id", "ts"}));
  EXPECT_TRUE(job.transforms[3].exprs.empty());  // every column
  EXPECT_EQ(job.transforms[4].kind, "dropDuplicatesWithinWatermark");
  EXPECT_EQ(job.sink.output_mode, "complete");

  Result<JobSpec> no_agg = ParseJobYaml(R"(source: {format: generator}
transform:
  - groupBy: { keys: [a] }
sink: {path: /t}
checkpointLocation: /c
)",
                                        "j.yaml");
  ASSERT_RAISES(InvalidArgument, no_agg);
  EXPECT_NE(no_agg.status().message().find("transform[0].groupBy.agg: required key is missing"),
            std::string::npos)
      << no_agg.status().message();
  Result<JobSpec> typo = ParseJobYaml(R"(source: {format: generator}
transform:
  - groupBy: { keys: [a], aggs: [count(*)] }
sink: {path: /t}
checkpointLocation: /c
)",
                                      "j.yaml");
  ASSERT_RAISES(InvalidArgument, typo);
  EXPECT_NE(typo.status().message().find("aggs"), std::string::npos) << typo.status().message();
}

TEST(JobTest, BadWatermarkDelayNamesTheKey) {
  Result<JobSpec> job = ParseJobYaml(R"(source: {format: generator}
transform:
  - withWatermark: {eventTime: t, delayThreshold: 5 fortnights}
sink: {path: /t}
checkpointLocation: /c
)",
                                     "j.yaml");
  ASSERT_RAISES(InvalidArgument, job);
  EXPECT_NE(job.status().message().find("transform[0].withWatermark.delayThreshold"),
            std::string::npos)
      << job.status().message();
  EXPECT_NE(job.status().message().find("fortnights"), std::string::npos);
}

TEST(JobTest, MissingRequiredKeysAreNamed) {
  Result<JobSpec> no_sink =
      ParseJobYaml("source: {format: generator}\ncheckpointLocation: /c\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, no_sink);
  EXPECT_NE(no_sink.status().message().find("sink"), std::string::npos);
  Result<JobSpec> no_checkpoint =
      ParseJobYaml("source: {format: generator}\nsink: {path: /t}\n", "j.yaml");
  ASSERT_RAISES(InvalidArgument, no_checkpoint);
  EXPECT_NE(no_checkpoint.status().message().find("checkpointLocation"), std::string::npos);
}

TEST(JobTest, YamlSyntaxErrorsNameFileAndLine) {
  Result<JobSpec> job = ParseJobYaml("source: {format: generator\nsink: [\n", "broken.yaml");
  ASSERT_RAISES(InvalidArgument, job);
  EXPECT_EQ(job.status().message().rfind("broken.yaml:", 0), 0u) << job.status().message();
  EXPECT_NE(job.status().message().find("invalid YAML"), std::string::npos);
}

TEST(JobTest, DuplicateKeysAreErrorsNamingBothLines) {
  Result<JobSpec> job = ParseJobYaml(R"(source:
  format: kafka
  options:
    startingOffsets: latest
    subscribe: t
    startingOffsets: earliest
sink: {format: delta, path: /t}
checkpointLocation: /c
)",
                                     "dup.yaml");
  ASSERT_RAISES(InvalidArgument, job);
  EXPECT_EQ(job.status().message(),
            "dup.yaml:6: source.options.startingOffsets: duplicate key (first set at line 4)");
  Result<JobSpec> top = ParseJobYaml(
      "source: {format: generator}\nsink: {format: delta, path: /t}\ncheckpointLocation: /a\n"
      "checkpointLocation: /b\n",
      "dup.yaml");
  ASSERT_RAISES(InvalidArgument, top);
  EXPECT_NE(top.status().message().find("dup.yaml:4: checkpointLocation: duplicate key"),
            std::string::npos)
      << top.status().message();
}

TEST(JobTest, SparkSqlConfKeysAreAcceptedAndRecorded) {
  ASSERT_OK_AND_ASSIGN(JobSpec job, ParseJobYaml(R"(source: {format: generator}
sink: {format: delta, path: /t}
checkpointLocation: /c
spark.sql.shuffle.partitions: 2
spark.sql.ansi.enabled: true
spark.sql.session.timeZone: Europe/Berlin
spark.sql.adaptive.enabled: false
)",
                                                 "conf.yaml"));
  EXPECT_TRUE(job.ansi);
  EXPECT_EQ(job.session_time_zone, "Europe/Berlin");
  EXPECT_EQ(job.spark_conf.at("spark.sql.shuffle.partitions"), "2");
  EXPECT_EQ(job.spark_conf.at("spark.sql.adaptive.enabled"), "false");
  EXPECT_EQ(job.spark_conf.size(), 4u);

  Result<JobSpec> zero = ParseJobYaml(
      "source: {format: generator}\nsink: {format: delta, path: /t}\ncheckpointLocation: /c\n"
      "spark.sql.shuffle.partitions: 0\n",
      "conf.yaml");
  ASSERT_RAISES(InvalidArgument, zero);
  EXPECT_NE(zero.status().message().find("spark.sql.shuffle.partitions: must be at least 1"),
            std::string::npos);
  // Other spark.* keys are not SQL confs and stay unknown.
  ASSERT_RAISES(InvalidArgument,
                ParseJobYaml("source: {format: generator}\nsink: {format: delta, path: /t}\n"
                             "checkpointLocation: /c\nspark.default.parallelism: 2\n",
                             "conf.yaml"));
}

TEST(JobTest, WrongNodeKindIsAnErrorNotAnException) {
  Result<JobSpec> job = ParseJobYaml(R"(source: {format: [generator]}
sink: {path: /t}
checkpointLocation: /c
)",
                                     "j.yaml");
  ASSERT_RAISES(InvalidArgument, job);
  EXPECT_NE(job.status().message().find("source.format"), std::string::npos);
}

TEST(JobTest, SchemaMayBeInOptionsOrBesideThem) {
  ASSERT_OK_AND_ASSIGN(JobSpec a, ParseJobYaml(R"(source:
  format: json
  options: {path: /in, schema: "a INT"}
sink: {path: /t}
checkpointLocation: /c
)",
                                               "j"));
  EXPECT_EQ(a.source.schema_ddl, "a INT");
  EXPECT_EQ(a.source.options.count("schema"), 0u);
  ASSERT_OK_AND_ASSIGN(JobSpec b, ParseJobYaml(R"(source:
  format: json
  schema: "a INT, b STRING"
  options: {path: /in}
sink: {path: /t}
checkpointLocation: /c
)",
                                               "j"));
  EXPECT_EQ(b.source.schema_ddl, "a INT, b STRING");
  Result<JobSpec> both = ParseJobYaml(R"(source:
  format: json
  schema: "a INT"
  options: {schema: "a INT"}
sink: {path: /t}
checkpointLocation: /c
)",
                                      "j");
  ASSERT_RAISES(InvalidArgument, both);
}

TEST(JobTest, EnvironmentVariablesExpandInScalars) {
  ::setenv("SILT_JOB_TEST_TABLE", "/data/table", 1);
  ::unsetenv("SILT_JOB_TEST_UNSET");
  ASSERT_OK_AND_ASSIGN(JobSpec job, ParseJobYaml(R"(source:
  format: generator
  options:
    topic: ${SILT_JOB_TEST_UNSET:-fallback-topic}
sink: {path: "${SILT_JOB_TEST_TABLE}/events"}
checkpointLocation: ${SILT_JOB_TEST_TABLE}/_checkpoint
)",
                                                 "j"));
  EXPECT_EQ(job.sink.path, "/data/table/events");
  EXPECT_EQ(job.checkpoint_location, "/data/table/_checkpoint");
  EXPECT_EQ(job.source.options.at("topic"), "fallback-topic");

  Result<JobSpec> unset = ParseJobYaml(R"(source: {format: generator}
sink: {path: "${SILT_JOB_TEST_UNSET}"}
checkpointLocation: /c
)",
                                       "env.yaml");
  ASSERT_RAISES(InvalidArgument, unset);
  EXPECT_NE(unset.status().message().find("env.yaml:2: sink.path: environment variable "
                                          "SILT_JOB_TEST_UNSET is not set"),
            std::string::npos)
      << unset.status().message();
}

TEST(JobTest, LoadJobFileNamesTheFileInErrors) {
  testing::TempDir dir;
  std::string path = dir.path() + "/job.yaml";
  fs::FileSystemPtr local = fs::MakeLocalFileSystem();
  ASSERT_OK(local->WriteFile(path,
                             "source: {format: generator}\nsink: {path: /t}\n"
                             "checkpointLocation: /c\nmaxBatches: 0\n"));
  Result<JobSpec> job = LoadJobFile(path);
  ASSERT_RAISES(InvalidArgument, job);
  EXPECT_EQ(job.status().message(), path + ":4: maxBatches: must be at least 1");
  Result<JobSpec> missing = LoadJobFile(dir.path() + "/nope.yaml");
  ASSERT_RAISES(NotFound, missing);
  EXPECT_NE(missing.status().message().find("nope.yaml"), std::string::npos);
}

TEST(JobTest, ExpandEnvForms) {
  ::setenv("SILT_JOB_TEST_A", "x", 1);
  ::setenv("SILT_JOB_TEST_EMPTY", "", 1);
  ::unsetenv("SILT_JOB_TEST_UNSET");
  ASSERT_OK_AND_ASSIGN(std::string a, ExpandEnv("a-${SILT_JOB_TEST_A}-b"));
  EXPECT_EQ(a, "a-x-b");
  ASSERT_OK_AND_ASSIGN(std::string d, ExpandEnv("${SILT_JOB_TEST_UNSET:-localhost:9092}"));
  EXPECT_EQ(d, "localhost:9092");
  ASSERT_OK_AND_ASSIGN(std::string e, ExpandEnv("${SILT_JOB_TEST_EMPTY:-dflt}"));
  EXPECT_EQ(e, "dflt");
  ASSERT_OK_AND_ASSIGN(std::string plain, ExpandEnv("no variables $HOME here"));
  EXPECT_EQ(plain, "no variables $HOME here");
  ASSERT_RAISES(InvalidArgument, ExpandEnv("${SILT_JOB_TEST_UNSET}"));
  ASSERT_RAISES(InvalidArgument, ExpandEnv("${unterminated"));
  ASSERT_RAISES(InvalidArgument, ExpandEnv("${9bad}"));
}

TEST(JobTest, ParseDurationMicros) {
  EXPECT_EQ(*ParseDurationMicros("60 seconds"), 60'000'000);
  EXPECT_EQ(*ParseDurationMicros("5 minutes"), 300'000'000);
  EXPECT_EQ(*ParseDurationMicros("1 hour"), 3'600'000'000);
  EXPECT_EQ(*ParseDurationMicros("500 milliseconds"), 500'000);
  EXPECT_EQ(*ParseDurationMicros("2s"), 2'000'000);
  EXPECT_EQ(*ParseDurationMicros("10 min"), 600'000'000);
  EXPECT_EQ(*ParseDurationMicros("interval 1 hour 30 minutes"), 5'400'000'000);
  EXPECT_EQ(*ParseDurationMicros("1.5 hours"), 5'400'000'000);
  EXPECT_EQ(*ParseDurationMicros("0 seconds"), 0);
  ASSERT_RAISES(InvalidArgument, ParseDurationMicros(""));
  ASSERT_RAISES(InvalidArgument, ParseDurationMicros("60"));
  ASSERT_RAISES(InvalidArgument, ParseDurationMicros("-5 seconds"));
  ASSERT_RAISES(InvalidArgument, ParseDurationMicros("5 parsecs"));
  Result<int64_t> bad = ParseDurationMicros("ten minutes");
  ASSERT_RAISES(InvalidArgument, bad);
  EXPECT_NE(bad.status().message().find("ten minutes"), std::string::npos);
}

}  // namespace
}  // namespace silt::stream
