// The PySpark export's program text: the header, imports, SESSION_CONF and
// SQL_CONF, the helpers the job needs, the functions and body the other
// parts wrote, and __main__.
#include <string>
#include <vector>

#include "silt/stream/export/exporter_internal.h"
#include "silt/stream/export/python_internal.h"

namespace silt::stream::pyspark {

Result<std::string> Exporter::Assemble() {
  std::string out;
  auto add = [&](const std::string& line) {
    // No trailing spaces on blank lines.
    size_t end = line.find_last_not_of(' ');
    out += end == std::string::npos ? std::string() : line.substr(0, end + 1);
    out += "\n";
  };
  const bool maintenance = job_.maintenance.has_value();
  std::string packages;
  for (const std::string& p : packages_) packages += (packages.empty() ? "" : ",") + p;
  add("#!/usr/bin/env python3");
  add("# " + std::string(job_.name.empty() ? "A silt job" : job_.name) + ": the silt job file " +
      (options_.job_file.empty() ? "" : options_.job_file + " ") +
      "as a PySpark 3.5 + delta-spark 3.2 program,");
  add("# written by `silt export --pyspark`" +
      (options_.silt_version.empty() ? std::string() : " (silt " + options_.silt_version + ")") +
      ".");
  add("#");
  add("#   spark-submit --packages " + packages + " THIS_FILE.py");
  add("#");
  add("# (or `python3 THIS_FILE.py` with pyspark and delta-spark installed: create_session()");
  add("# asks for the same packages). Environment variables of the job file were expanded");
  add("# when it was exported, except secrets, which are read from the environment here");
  add("# when the job file read them from it.");
  add("#");
  if (maintenance) {
    add("# run_maintenance(spark) runs the job once on a session of your own.");
  } else {
    add("# build(spark) returns the query's DataStreamWriter on a session of your own (it sets");
    add("# SQL_CONF on it); start(spark) starts it. Comments say where Spark behaves");
    add("# differently from silt.");
  }
  add("");
  add("import json  # noqa: F401 - used by helpers below when the job needs them");
  add("import os  # noqa: F401");
  if (need_time_) add("import time");
  add("");
  if (need_delta_tables_ || need_create_table_) add("from delta.tables import DeltaTable");
  add(std::string("from pyspark.sql import SparkSession") + (need_window_ ? ", Window" : ""));
  add("from pyspark.sql import functions as F  # noqa: F401");
  add("from pyspark.sql.utils import AnalysisException");
  add("");
  add("QUERY_NAME = " + (job_.name.empty() ? std::string("None") : Py(job_.name)));
  if (!maintenance) add("CHECKPOINT = " + Py(job_.checkpoint_location));
  if (job_.max_batches) {
    add("# maxBatches: silt stops after this many batches of a run; Spark has no such");
    add("# setting, so __main__ stops the query after them.");
    add("MAX_BATCHES = " + std::to_string(*job_.max_batches));
  }
  add("");
  add("# SparkSession settings: Delta's SQL extensions and catalog, and the job's storage.");
  for (const std::string& note : session_notes_) {
    for (const std::string& line : Wrap(note, 86)) add("# " + line);
  }
  add("SESSION_CONF = {");
  add("    \"spark.jars.packages\": " + Py(packages) + ",");
  for (const PyOption& option : session_conf_) {
    add("    " + Py(option.key) + ": " + option.value_expr + ",");
  }
  add("}");
  add("# SQL settings, set on the session by build(): the job's spark.sql.* keys, the");
  add("# session time zone (silt's default UTC) and ANSI mode (silt's default false).");
  add("SQL_CONF = {");
  for (const auto& [key, value] : sql_conf_) add("    " + Py(key) + ": " + value + ",");
  add("}");
  add("");
  add("");
  add("def create_session():");
  add("    builder = SparkSession.builder.appName(QUERY_NAME or \"silt-export\")");
  add("    for key, value in {**SESSION_CONF, **SQL_CONF}.items():");
  add("        builder = builder.config(key, value)");
  add("    return builder.getOrCreate()");
  add("");
  add("");
  add("def set_sql_conf(spark):");
  add("    \"\"\"Sets SQL_CONF on a running session; a static setting (which only a new");
  add("    session takes, see create_session) is left as the session has it.\"\"\"");
  add("    for key, value in SQL_CONF.items():");
  add("        try:");
  add("            spark.conf.set(key, value)");
  add("        except AnalysisException:");
  add("            pass");
  if (need_jaas_) {
    add("");
    add("");
    add("def _jaas(module, username, password):");
    add("    \"\"\"A JAAS line for the Java Kafka client (librdkafka's sasl.username and");
    add("    sasl.password).\"\"\"");
    add("    def quoted(text):");
    add("        return '\"' + text.replace('\\\\', '\\\\\\\\').replace('\"', '\\\\\"') + '\"'");
    add("");
    add("    return f\"{module} required username={quoted(username)} "
        "password={quoted(password)};\"");
  }
  if (need_query_id_) {
    add("");
    add("");
    add("_QUERY_ID = []");
    add("");
    add("");
    add("def _query_id(spark):");
    add("    \"\"\"The query's id from the checkpoint's metadata file: the appId of every");
    add("    Delta txn this program writes, as silt's sinks and Spark's Delta sink use "
        "it.\"\"\"");
    add("    if not _QUERY_ID:");
    add("        text = spark.read.text(CHECKPOINT.rstrip(\"/\") + \"/metadata\").first()[0]");
    add("        _QUERY_ID.append(json.loads(text)[\"id\"])");
    add("    return _QUERY_ID[0]");
  }
  if (need_create_table_) {
    add("");
    add("");
    add("def _nullable(data_type):");
    add("    \"\"\"The type with every field, element and value nullable, as a streaming");
    add("    write creates a Delta table.\"\"\"");
    add("    from pyspark.sql.types import ArrayType, MapType, StructField, StructType");
    add("");
    add("    if isinstance(data_type, StructType):");
    add("        return StructType([StructField(f.name, _nullable(f.dataType), True, "
        "f.metadata)");
    add("                           for f in data_type.fields])");
    add("    if isinstance(data_type, ArrayType):");
    add("        return ArrayType(_nullable(data_type.elementType), True)");
    add("    if isinstance(data_type, MapType):");
    add("        return MapType(_nullable(data_type.keyType), _nullable(data_type.valueType), "
        "True)");
    add("    return data_type");
    add("");
    add("");
    add("def _create_table(spark, path, schema, partition_by, properties):");
    add("    \"\"\"Creates the Delta table at `path` unless it exists (one commit, no data):");
    add("    the query's schema made nullable, its partitioning and table properties.\"\"\"");
    add("    if DeltaTable.isDeltaTable(spark, path):");
    add("        return");
    add("    builder = DeltaTable.createIfNotExists(spark).location(path)");
    add("    builder = builder.addColumns(_nullable(schema))");
    add("    if partition_by:");
    add("        builder = builder.partitionedBy(*partition_by)");
    add("    for key, value in properties.items():");
    add("        builder = builder.property(key, value)");
    add("    builder.execute()");
  }
  if (need_idempotent_) {
    add("");
    add("");
    add("def _idempotent(spark, batch_id, action):");
    add("    \"\"\"Runs a MERGE as the batch's idempotent Delta transaction (Delta's");
    add("    txnAppId/txnVersion session settings): a table that already records");
    add("    txn(query id, batch id) skips it, as silt's merge sink does.\"\"\"");
    add("    spark.conf.set(\"spark.databricks.delta.write.txnAppId\", _query_id(spark))");
    add("    spark.conf.set(\"spark.databricks.delta.write.txnVersion\", str(batch_id))");
    add("    try:");
    add("        action()");
    add("    finally:");
    add("        spark.conf.unset(\"spark.databricks.delta.write.txnAppId\")");
    add("        spark.conf.unset(\"spark.databricks.delta.write.txnVersion\")");
  }
  for (const std::string& line : functions_) add(line);
  if (!maintenance) {
    add("");
    add("");
    add("def build(spark):");
    add("    \"\"\"The query as a DataStreamWriter, not started.\"\"\"");
    add("    set_sql_conf(spark)");
    add("    group_keys = []  # noqa: F841 - the keys of a groupBy step, for update mode");
    for (const std::string& line : body_) add(line);
    add("");
    add("");
    add("def start(spark):");
    add("    return build(spark).start()");
    if (job_.max_batches) {
      add("");
      add("");
      add("def stop_after_batches(query, count):");
      add("    \"\"\"Stops `query` once `count` batches of this run have completed (Spark");
      add("    stops between batches or interrupts one, which then re-runs on restart).\"\"\"");
      add("    while query.isActive:");
      add("        done = {p[\"batchId\"] for p in query.recentProgress");
      add("                if \"addBatch\" in p.get(\"durationMs\", {})}");
      add("        if len(done) >= count:");
      add("            query.stop()");
      add("            break");
      add("        query.awaitTermination(0.5)");
    }
    main_.push_back("    query = start(create_session())");
    if (job_.max_batches) main_.push_back("    stop_after_batches(query, MAX_BATCHES)");
    main_.push_back("    query.awaitTermination()");
  }
  add("");
  add("");
  add("if __name__ == \"__main__\":");
  for (const std::string& line : main_) add(line);
  return out;
}

void Exporter::Line(int indent, const std::string& text) {
  body_.push_back(text.empty() ? std::string() : std::string(4 * indent, ' ') + text);
}

void Exporter::Comment(int indent, const std::string& text) {
  for (const std::string& line : Wrap(text, 86 - 4 * indent)) Line(indent, "# " + line);
}

}  // namespace silt::stream::pyspark
