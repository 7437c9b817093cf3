// JobSpec: a streaming job as described by a YAML job file (DESIGN.md §3),
// parsed and validated before any work starts.
//
// Job file keys (Spark vocabulary):
//   name: <string>
//   source: { format: generator|json|text|kafka, options: {...}, schema: <DDL> }
//   transform: [ {select: [expr...]}, {withColumn: {name: expr}},
//                {withWatermark: {eventTime: col, delayThreshold: "5 minutes"}},
//                {where: expr},
//                {groupBy: {keys: [expr...], agg: ["count(*) AS n", ...]}},
//                {dropDuplicates: [col...]},
//                {dropDuplicatesWithinWatermark: [col...]} ... ]
//   sink: { format: delta, outputMode: append, path: ..., partitionBy: [...],
//           options: {...}, mode: append|merge, merge: {on: ..., targetAlias,
//           sourceAlias, whenMatched: [...], whenNotMatched: [...],
//           whenNotMatchedBySource: [...]}, dedupBy: {keys: [...],
//           orderBy: [...]} }  (format kafka: no path; options.topic, kafka.*;
//           format console: options numRows, truncate)
//   sinks: [ {name: ..., where: <expr>, select: [...], <the sink: keys>}, ... ]
//           (instead of sink:)
//   checkpointLocation: <path>
//   trigger: { processingTime: "60 seconds" } | { once: true } |
//            { availableNow: true }   (absent: next batch as soon as possible)
//   maxBatches: <n>  (optional: stop after n batches; demo and tests)
//   storage: { s3: {...} }  (later issue)
//   scaleOut: { mode: consumerGroup, groupId: ..., appId: ..., workerId: ... }
//           (optional: see ScaleOutSpec)
//   metrics: { port: 9108, host: 127.0.0.1, healthTimeout: 5 minutes,
//              lagInterval: 5 seconds, stopGrace: 0 s }  (optional: the HTTP endpoint of
//              docs/metrics.md; off without the key)
// `${NAME:-default}` and `${NAME}` expand from the environment in every
// scalar before parsing.
//
// Errors name the job-file key path ("transform[1].select[3]") and, for
// expressions, the position within the expression.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"

namespace silt::stream {

struct SourceSpec {
  std::string format;                          // "generator", "json", "text", ...
  std::map<std::string, std::string> options;  // keys as written (Spark names)
  std::string schema_ddl;                      // `schema:` or options.schema
  std::string key_path = "source";
};

// The static side of a `join` step: a Delta table, optionally filtered and
// projected before the join (Spark's spark.read.format("delta").load(path)
// .where(...).selectExpr(...)).
struct StaticTableSpec {
  std::string format = "delta";
  std::string path;
  std::string where;
  std::vector<std::string> select;
};

struct TransformStep {
  // "select", "where", "withColumn", "withWatermark", "drop",
  // "withColumnRenamed", "join" (a stream-static join: `join_with`, exprs:
  // the USING columns, `join_how`),
  // "sql" (exprs[0]: SELECT ... FROM input [JOIN ...] [WHERE ...]),
  // and the stateful ones: "groupBy" (exprs: the keys, aggs: the aggregate
  // items), "dropDuplicates" and "dropDuplicatesWithinWatermark" (exprs: the
  // column names; empty: every column).
  std::string kind;
  std::vector<std::string> exprs;  // select items / where predicate
  std::vector<std::string> aggs;   // groupBy: "avg(temp) AS t", ...
  // groupBy made from a sql step: `aggs` is the whole select list (keys are
  // not added in front) and `having` filters the groups.
  bool sql_select = false;
  std::string having;
  std::vector<std::pair<std::string, std::string>> named;  // withColumn / renames
  std::string event_time;                                  // withWatermark
  std::string delay_threshold;                             // withWatermark
  StaticTableSpec join_with;                               // join
  std::string join_how = "inner";                          // join
  std::string key_path;                                    // "transform[2]" for messages
};

// One WHEN clause of a merge sink (`sink.merge.whenMatched[0]`), as the job
// file writes it: {condition: <expr>, action: update|updateAll|delete|
// insert|insertAll, set: {col: expr} (update), values: {col: expr}
// (insert)}; the actions are delta-spark's DeltaMergeBuilder methods.
struct MergeClauseSpec {
  std::string condition;  // empty: unconditional
  std::string action;
  std::vector<std::pair<std::string, std::string>> assignments;  // set / values
  std::string key_path;                                          // for messages
};

// `sink.merge`: MERGE INTO <table> AS <target_alias> USING <batch> AS
// <source_alias> ON <on> WHEN ...
struct MergeSinkSpec {
  std::string on;
  std::string target_alias = "t";
  std::string source_alias = "s";
  std::vector<MergeClauseSpec> when_matched;
  std::vector<MergeClauseSpec> when_not_matched;
  std::vector<MergeClauseSpec> when_not_matched_by_source;
};

// `sink.dedupBy`: per key, only the latest row of a batch is merged (the
// greatest orderBy values; among equal ones, or without orderBy, the last
// row in batch order).
struct DedupSpec {
  std::vector<std::string> keys;
  std::vector<std::string> order_by;
};

struct SinkSpec {
  std::string format = "delta";
  std::string output_mode = "append";
  std::string path;
  std::vector<std::string> partition_by;
  // Liquid clustering columns (Delta's CLUSTER BY) for a table the Delta
  // sink creates; not together with partition_by.
  std::vector<std::string> cluster_by;
  // Generated columns of a table the Delta sink creates, in order: column
  // name -> generation expression (Spark's GENERATED ALWAYS AS (expr)).
  std::vector<std::pair<std::string, std::string>> generated_columns;
  // Identity columns of a table the Delta sink creates, in order: column
  // name -> "GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(START WITH n
  // INCREMENT BY n)]" (delta/generated_columns.h).
  std::vector<std::pair<std::string, std::string>> identity_columns;
  std::map<std::string, std::string> options;
  // How a Delta sink writes a batch: "append" (the default) or "merge"
  // (`merge` then holds the clauses).
  std::string mode = "append";
  std::optional<MergeSinkSpec> merge;
  std::optional<DedupSpec> dedup_by;
  // `sinks:` entries: the rows this sink takes (a predicate over the query
  // output; empty: all) and what it writes of them (empty: every column).
  std::string where;
  std::vector<std::string> select;
  // For progress and messages: `name:` or "sinks[i]"; "sink" for `sink:`.
  std::string name = "sink";
  std::string key_path = "sink";
};

// A `type: maintenance` job (stream/maintenance.h): OPTIMIZE and VACUUM of
// some tables, once or on a schedule, like the seed's jobs/optimize.py.
//   type: maintenance
//   tables: [<path>, ...]
//   optimize: { where: <partition predicate>, targetSize: 128MB,
//               minInputFiles: 2, zorderBy: [..] } | false
//   vacuum: { retain: 720 hours, retentionDurationCheck: true, dryRun: false,
//             lite: false } | false
//   schedule: { interval: 24 hours, maxRuns: <n> }  (absent: run once)
struct MaintenanceSpec {
  std::vector<std::string> tables;
  bool optimize = true;
  std::string optimize_where;
  int64_t target_file_bytes = 128LL * 1024 * 1024;
  int64_t min_input_files = 2;
  std::vector<std::string> zorder_by;
  bool vacuum = true;
  std::optional<int64_t> vacuum_retention_ms;  // absent: the table's own
  bool vacuum_retention_check = true;
  bool vacuum_dry_run = false;
  bool vacuum_lite = false;
  int64_t interval_micros = 0;  // 0: run once
  std::optional<int64_t> max_runs;
};

// `metrics:`: where the query's monitoring endpoint listens (/metrics,
// /status, /healthz, /) and its health rule.
struct MetricsSpec {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (logged)
  int64_t health_timeout_micros = 5LL * 60 * 1'000'000;
  int64_t lag_interval_micros = 5LL * 1'000'000;
  // How long the endpoint keeps answering (/healthz failing) after the query
  // stopped by itself (finished or failed); 0: it closes with the query.
  int64_t stop_grace_micros = 0;
};

// `scaleOut:`: several `silt run` processes of the same job share the
// Kafka topic through a consumer group and write one Delta table
// (docs/scale-out.md).
//   scaleOut: { mode: consumerGroup, groupId: <id>, appId: <prefix>,
//               workerId: <name> }
// Each worker records the next offset of every topic-partition it wrote in
// the table's txn actions (appId "<appId>:<topic>:<partition>") in the
// commit of the rows; checkpointLocation then holds only the workers'
// status records (who owns which partitions), no offsets or commits.
struct ScaleOutSpec {
  std::string mode = "consumerGroup";
  // The Kafka consumer group: `groupId`, else source.options
  // kafka.group.id, else "silt-<appId>".
  std::string group_id;
  // The txn appId prefix: `appId`, else the job's name.
  std::string app_id;
  // This process's name in the group (Kafka client.id) and in the status
  // records: `workerId`, else "<hostname>-<pid>" (filled in at run time).
  std::string worker_id;
};

enum class TriggerKind { kDefault, kProcessingTime, kOnce, kAvailableNow };

struct TriggerSpec {
  TriggerKind kind = TriggerKind::kDefault;
  int64_t interval_micros = 0;  // processingTime
};

struct JobSpec {
  std::string name;
  SourceSpec source;
  std::vector<TransformStep> transforms;
  // `sink:`, or with `sinks:` the first of them (its outputMode is the
  // query's, and every sink of the list has the same one).
  SinkSpec sink;
  // `sinks:`: several sinks fed from one read (empty with `sink:`).
  std::vector<SinkSpec> sinks;
  std::string checkpoint_location;
  TriggerSpec trigger;
  std::optional<int64_t> max_batches;
  // `parallelism`: threads that read, transform and write the parts of one
  // batch at once (Kafka partitions, input files); nullopt: the machine's
  // cores. 1 keeps everything on the query thread.
  std::optional<int> parallelism;
  // Expression semantics: `ansi: true` turns failed casts and overflows
  // into errors; `spark.sql.session.timeZone` (default UTC) is the zone of
  // zone-less timestamp text and of datetime functions.
  bool ansi = false;
  std::string session_time_zone = "UTC";
  // Every `spark.sql.*` key of the job file, as written (a ported job's
  // SparkSession .config(...) calls). silt honours
  // spark.sql.session.timeZone, spark.sql.ansi.enabled (= `ansi`) and
  // records the confs Spark persists in offsets/N (spark.sql.shuffle.partitions,
  // the state-store settings) as Spark records them; the others are logged
  // once as without effect.
  std::map<std::string, std::string> spark_conf;
  // `storage.s3` settings (endpoint, accessKey, ...) as written; consumed by
  // the S3 file system when it lands.
  std::map<std::string, std::string> storage_s3;
  // The monitoring endpoint; absent: none.
  std::optional<MetricsSpec> metrics;
  // `deadLetter: {path, options}`: bad rows go to this Delta table (format
  // delta, append) instead of becoming NULLs or failing the batch.
  std::optional<SinkSpec> dead_letter;
  // `scaleOut:`; absent: one process owns the checkpoint and the source.
  std::optional<ScaleOutSpec> scale_out;
  // Set for `type: maintenance` jobs, which have no source, sink or
  // checkpoint.
  std::optional<MaintenanceSpec> maintenance;
};

// Expands ${NAME:-default} / ${NAME} from the environment.
// Errors: InvalidArgument for an unset variable without default, naming it.
Result<std::string> ExpandEnv(std::string_view text);

// Parses YAML text. `source_name` (the file path) prefixes error messages.
// Unknown keys are errors naming the key path.
Result<JobSpec> ParseJobYaml(std::string_view yaml_text, std::string_view source_name);
Result<JobSpec> LoadJobFile(const std::string& path);

// "60 seconds", "5 minutes", "1 hour", "500 milliseconds", "2s", "10 min",
// "1 hour 30 minutes", "interval 5 minutes", "1.5 hours". Negative values are
// rejected.
// Errors: InvalidArgument naming the text.
Result<int64_t> ParseDurationMicros(std::string_view text);

// "128MB", "1g", "64 MiB", "512k", "1048576": a positive byte size with
// binary units, as Spark reads byte-size options ("128m").
// Errors: InvalidArgument naming the text.
Result<int64_t> ParseByteSize(std::string_view text);

}  // namespace silt::stream
