// The PySpark export's sinks: the writeStream of the console, Kafka or Delta
// sink, `sinks:` as one foreachBatch, the trigger and checkpoint.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/stream/export/exporter_internal.h"
#include "silt/stream/export/python_internal.h"

namespace silt::stream::pyspark {

Status Exporter::Sink() {
  const std::string& mode = job_.sink.output_mode;
  Line(0, "");
  if (!job_.sinks.empty()) return RoutedSinks();
  const SinkSpec& sink = job_.sink;
  std::string writer_mode = mode;
  if (sink.format == "console") {
    SILT_RETURN_NOT_OK(CheckOnly(sink, {"numRows", "truncate"}));
    Line(1, "# " + sink.key_path + ": Spark's console sink");
    Line(1, "writer = df.writeStream.format(\"console\").outputMode(" + Py(mode) + ")");
    for (const auto& [key, value] : sink.options) {
      Line(1, "writer = writer.option(" + Py(key) + ", " + Py(value) + ")");
    }
  } else if (sink.format == "kafka") {
    std::vector<PyOption> options;
    SILT_RETURN_NOT_OK(KafkaSinkOptions(sink, &options));
    Line(1, "# " + sink.key_path + ": Spark's Kafka sink (at least once, as silt's)");
    Line(1, "writer = df.writeStream.format(\"kafka\").outputMode(" + Py(mode) + ")");
    for (const PyOption& option : options) {
      Line(1, "writer = writer.option(" + Py(option.key) + ", " + option.value_expr + ")");
    }
  } else if (sink.format == "delta") {
    SILT_ASSIGN_OR_RETURN(DeltaOptions options, DeltaSinkOptions(sink));
    if (sink.mode == "merge") {
      SILT_ASSIGN_OR_RETURN(std::string fn, MergeFunction(sink, options));
      Line(1, "# " + sink.key_path + ": mode merge, as foreachBatch MERGE (" + fn + ")");
      Line(1, "writer = df.writeStream.outputMode(" + Py(mode) + ").foreachBatch(" + fn + ")");
    } else if (mode == "update" && (group_by_index_ >= 0 || !sql_aggregation_.empty())) {
      if (group_by_index_ < 0) {
        return Refuse(sql_aggregation_,
                      "outputMode update on a Delta sink needs the group keys, and an "
                      "aggregation written as a sql step has none (as `silt run` says): write "
                      "it as a groupBy step, or use mode: merge");
      }
      SILT_ASSIGN_OR_RETURN(std::string fn, UpsertFunction(sink, options));
      Line(1, "# " + sink.key_path +
                  ": outputMode update. delta-spark refuses update mode on a Delta sink; silt");
      Line(1, "# upserts the changed groups with a MERGE on the group keys, which is this");
      Line(1, "# foreachBatch (" + fn + ").");
      Line(1,
           "writer = df.writeStream.outputMode(\"update\").foreachBatch(" + fn + "(group_keys))");
    } else {
      if (mode == "update") {
        writer_mode = "append";
        Comment(1,
                "outputMode update without an aggregation appends (in silt and in Spark); "
                "delta-spark only takes it spelled append.");
      }
      if (!options.properties.empty()) {
        need_create_table_ = true;
        Comment(1,
                "The table properties (delta.*) apply when the table is created: silt's sink "
                "creates it at the first batch, here it is created before the query starts.");
        Line(1, "_create_table(spark, " + Py(sink.path) + ", df.schema, " +
                    PyList(sink.partition_by) + ", " + PyDict(options.properties) + ")");
      }
      Line(1, "# " + sink.key_path + ": delta-spark's streaming sink (txn: query id, batch id)");
      for (const std::string& note : options.notes) Comment(1, note);
      Line(1, "writer = df.writeStream.format(\"delta\").outputMode(" + Py(writer_mode) + ")");
      if (!sink.partition_by.empty()) {
        Line(1, "writer = writer.partitionBy(" + PyArgs(sink.partition_by) + ")");
      }
      for (const PyOption& option : options.writer) {
        Line(1, "writer = writer.option(" + Py(option.key) + ", " + option.value_expr + ")");
      }
      Line(1, "writer = writer.option(\"path\", " + Py(sink.path) + ")");
    }
  } else {
    return Refuse(sink.key_path + ".format", "unknown sink format '", sink.format, "'");
  }
  return WriterTail();
}

Status Exporter::WriterTail() {
  if (!job_.name.empty()) Line(1, "writer = writer.queryName(QUERY_NAME)");
  Line(1, "writer = writer.option(\"checkpointLocation\", CHECKPOINT)");
  switch (job_.trigger.kind) {
    case TriggerKind::kDefault:
      Comment(1, "No trigger: the next batch starts when the previous one ends (both engines).");
      break;
    case TriggerKind::kProcessingTime:
      Line(1, "writer = writer.trigger(processingTime=" +
                  Py(SparkInterval(job_.trigger.interval_micros)) + ")");
      break;
    case TriggerKind::kOnce: Line(1, "writer = writer.trigger(once=True)"); break;
    case TriggerKind::kAvailableNow: Line(1, "writer = writer.trigger(availableNow=True)"); break;
  }
  Line(1, "return writer");
  return Status::OK();
}

Status Exporter::CheckOnly(const SinkSpec& sink, std::initializer_list<std::string_view> known) {
  for (const auto& option : sink.options) {
    // Not a structured binding: clang 14 (the TSan and fuzz builds) does
    // not let a lambda capture one.
    const std::string& key = option.first;
    bool ok = std::any_of(known.begin(), known.end(),
                          [&](std::string_view k) { return EqualsIgnoreCase(k, key); });
    if (!ok) {
      return Refuse(sink.key_path + ".options." + key, "unknown option of the ", sink.format,
                    " sink");
    }
  }
  return Status::OK();
}

Status Exporter::KafkaSinkOptions(const SinkSpec& sink, std::vector<PyOption>* options) {
  packages_.insert(std::string(kKafkaPackage));
  std::vector<std::string> notes;
  for (const auto& [key, value] : sink.options) {
    if (StartsWithIgnoreCase(key, "kafka.")) continue;
    if (!EqualsIgnoreCase(key, "topic")) {
      return Refuse(sink.key_path + ".options." + key, "unknown option of the Kafka sink");
    }
    options->push_back({key, Py(value)});
  }
  std::vector<std::string> raw = RawPath(sink.key_path);
  raw.push_back("options");
  SILT_RETURN_NOT_OK(KafkaOptions(sink.options, sink.key_path + ".options", raw, options, &notes));
  for (const std::string& note : notes) Comment(1, note);
  return Status::OK();
}

Result<Exporter::DeltaOptions> Exporter::DeltaSinkOptions(const SinkSpec& sink) {
  if (!sink.cluster_by.empty()) {
    // The program targets delta-spark 3.2, whose streaming writer has no
    // clusterBy; a table clustered beforehand is appended to as it is.
    return Refuse(sink.key_path + ".clusterBy",
                  "delta-spark 3.2's streaming writer cannot create a clustered table: "
                  "create it first (CREATE TABLE ... CLUSTER BY) and drop clusterBy from the job");
  }
  if (!sink.generated_columns.empty() || !sink.identity_columns.empty()) {
    // A streaming writer cannot declare them; a table created with them
    // beforehand computes them on every append.
    return Refuse(
        sink.key_path + (sink.generated_columns.empty() ? ".identityColumns" : ".generatedColumns"),
        "Spark's streaming writer cannot create generated or identity columns: "
        "create the table first (CREATE TABLE ... GENERATED ...) and drop the key "
        "from the job");
  }
  DeltaOptions out;
  const std::string prefix = sink.key_path + ".options.";
  for (const auto& [key, value] : sink.options) {
    const std::string lower = AsciiLower(key);
    if (lower.starts_with("delta.")) {
      out.properties.emplace_back(key, value);
    } else if (lower == "mergeschema" || lower == "overwriteschema" ||
               lower.starts_with("parquet.bloom.filter.")) {
      out.writer.push_back({key, Py(value)});
    } else if (lower == "maxrecordsperfile" || lower == "optimizewrite") {
      out.writer.push_back({key, Py(value)});
    } else if (lower == "compression") {
      std::string codec = AsciiLower(value);
      if (codec == "none") codec = "uncompressed";
      std::string expr = Py(codec);
      auto [it, inserted] = sql_conf_.emplace("spark.sql.parquet.compression.codec", expr);
      if (!inserted && it->second != expr) {
        return Refuse(prefix + key,
                      "Spark sets the Parquet codec for the session "
                      "(spark.sql.parquet.compression.codec), and another sink sets another");
      }
      out.notes.push_back("compression " + value +
                          ": set for the session as spark.sql.parquet.compression.codec.");
    } else if (lower == "autocompact") {
      sql_conf_["spark.databricks.delta.autoCompact.enabled"] = Py(AsciiLower(value));
      sql_conf_["spark.databricks.delta.properties.defaults.autoOptimize.autoCompact"] =
          Py(AsciiLower(value));
      out.notes.push_back(
          "autoCompact: delta-spark's auto compaction runs after a commit, in the writing "
          "query, where silt's runs beside the stream. delta-spark 3.2.1 honours the table "
          "property delta.autoOptimize.autoCompact (set for new tables through "
          "spark.databricks.delta.properties.defaults.*; ALTER TABLE an existing one), not "
          "the session switch alone (delta-io/delta#3967).");
    } else if (lower == "autocompact.minnumfiles") {
      sql_conf_["spark.databricks.delta.autoCompact.minNumFiles"] = Py(value);
    } else if (lower == "autocompact.maxfilesize") {
      SILT_ASSIGN_OR_RETURN(int64_t bytes, ParseByteSize(value));
      sql_conf_["spark.databricks.delta.autoCompact.maxFileSize"] = Py(std::to_string(bytes));
    } else if (lower == "autocompact.minfilesize") {
      SILT_ASSIGN_OR_RETURN(int64_t bytes, ParseByteSize(value));
      sql_conf_["spark.databricks.delta.autoCompact.minFileSize"] = Py(std::to_string(bytes));
    } else if (lower == "autocompact.everyncommits") {
      out.notes.push_back("autoCompact.everyNCommits " + value +
                          ": delta-spark checks for compaction after every commit.");
    } else {
      return Refuse(prefix + key, "unknown option of the Delta sink");
    }
  }
  return out;
}

Status Exporter::RoutedSinks() {
  const std::string& mode = job_.sink.output_mode;
  const bool upsert = mode == "update" && group_by_index_ >= 0;
  std::vector<std::string> body;
  std::vector<std::string> sink_notes;
  for (const SinkSpec& sink : job_.sinks) {
    if (!body.empty()) body.push_back("");
    body.push_back("        # " + sink.key_path + " (" + sink.name + ")");
    std::string out = "batch_df";
    if (!sink.where.empty()) out += ".where(" + Py(sink.where) + ")";
    if (!sink.select.empty()) out += ".selectExpr(" + PyArgs(sink.select) + ")";
    body.push_back("        out = " + out);
    if (sink.format == "delta") {
      SILT_ASSIGN_OR_RETURN(DeltaOptions options, DeltaSinkOptions(sink));
      if (sink.mode == "merge") {
        SILT_ASSIGN_OR_RETURN(std::string fn, MergeFunction(sink, options));
        body.push_back("        " + fn + "(out, batch_id)");
        continue;
      }
      if (mode == "update" && !sql_aggregation_.empty() && group_by_index_ < 0) {
        return Refuse(sql_aggregation_,
                      "outputMode update on a Delta sink needs the group keys, and an "
                      "aggregation written as a sql step has none: write it as a groupBy "
                      "step, or use mode: merge");
      }
      if (upsert) {
        SILT_ASSIGN_OR_RETURN(std::string fn, UpsertFunction(sink, options));
        body.push_back("        " + fn + "(keys)(out, batch_id)");
        continue;
      }
      need_query_id_ = true;
      for (const std::string& note : options.notes) body.push_back("        # " + note);
      if (!options.properties.empty()) {
        need_create_table_ = true;
        body.push_back("        _create_table(spark, " + Py(sink.path) + ", out.schema, " +
                       PyList(sink.partition_by) + ", " + PyDict(options.properties) + ")");
      }
      body.push_back("        writer = out.write.format(\"delta\").mode(" +
                     Py(mode == "complete" ? "overwrite" : "append") + ")");
      if (!sink.partition_by.empty()) {
        body.push_back("        writer = writer.partitionBy(" + PyArgs(sink.partition_by) + ")");
      }
      for (const PyOption& option : options.writer) {
        body.push_back("        writer = writer.option(" + Py(option.key) + ", " +
                       option.value_expr + ")");
      }
      body.push_back("        writer = writer.option(\"txnAppId\", _query_id(spark))");
      body.push_back("        writer = writer.option(\"txnVersion\", batch_id)");
      body.push_back("        writer.save(" + Py(sink.path) + ")");
    } else if (sink.format == "kafka") {
      std::vector<PyOption> options;
      SILT_RETURN_NOT_OK(KafkaSinkOptions(sink, &options));
      body.push_back("        # At least once, as silt's Kafka sink: a re-run batch sends again.");
      body.push_back("        writer = out.write.format(\"kafka\")");
      for (const PyOption& option : options) {
        body.push_back("        writer = writer.option(" + Py(option.key) + ", " +
                       option.value_expr + ")");
      }
      body.push_back("        writer.save()");
    } else if (sink.format == "console") {
      SILT_RETURN_NOT_OK(CheckOnly(sink, {"numRows", "truncate"}));
      int64_t rows = 20;
      bool truncate = true;
      if (auto v = GetOption(sink.options, "numRows")) rows = std::stoll(*v);
      if (auto v = GetOption(sink.options, "truncate")) truncate = AsciiLower(*v) != "false";
      body.push_back("        print(\"-\" * 43)");
      body.push_back("        print(f\"Batch: {batch_id}\")");
      body.push_back("        print(\"-\" * 43)");
      body.push_back("        out.show(" + std::to_string(rows) + ", " +
                     (truncate ? "True" : "False") + ")");
    } else {
      return Refuse(sink.key_path + ".format", "unknown sink format '", sink.format, "'");
    }
  }
  std::vector<std::string>& f = functions_;
  f.push_back("");
  f.push_back("");
  f.push_back("def _write_sinks(keys):");
  f.push_back("    \"\"\"sinks: every sink fed from one read of each batch, in the order listed.");
  f.push_back("    Delta tables commit with txn(query id, batch id), so after a failure the");
  f.push_back("    re-run batch is skipped by the tables that already record it.\"\"\"");
  f.push_back("");
  f.push_back("    def write(batch_df, batch_id):");
  f.push_back("        spark = batch_df.sparkSession");
  f.push_back("        batch_df.persist()");
  f.push_back("        try:");
  for (const std::string& line : body) f.push_back(line.empty() ? line : "    " + line);
  f.push_back("        finally:");
  f.push_back("            batch_df.unpersist()");
  f.push_back("");
  f.push_back("    return write");
  Line(1, "# sinks: one foreachBatch writes every sink (_write_sinks)");
  Line(1, "writer = df.writeStream.outputMode(" + Py(mode) + ").foreachBatch(_write_sinks(" +
              (upsert ? "group_keys" : "None") + "))");
  return WriterTail();
}

}  // namespace silt::stream::pyspark
