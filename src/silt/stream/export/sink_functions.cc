// The PySpark export's foreachBatch functions for Delta sinks that Spark's
// Delta sink cannot be: the merge sink's MERGE and update mode's upsert of
// the changed groups, each an idempotent Delta transaction.
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "silt/stream/export/exporter_internal.h"
#include "silt/stream/export/python_internal.h"

namespace silt::stream::pyspark {

namespace {

void AppendNotes(std::vector<std::string>* f, const std::vector<std::string>& notes) {
  for (const std::string& note : notes) f->push_back("    # " + note);
}

}  // namespace

Result<std::string> Exporter::MergeFunction(const SinkSpec& sink, const DeltaOptions& options) {
  const std::string fn = FunctionName("_merge_", sink);
  const MergeSinkSpec& merge = *sink.merge;
  need_query_id_ = need_create_table_ = need_idempotent_ = need_delta_tables_ = true;
  std::vector<std::string>& f = functions_;
  f.push_back("");
  f.push_back("");
  f.push_back("def " + fn + "(batch_df, batch_id):");
  f.push_back("    \"\"\"" + sink.key_path + " (mode: merge): MERGE each batch into " +
              Escaped(sink.path) + " in one");
  f.push_back("    commit recording txn(query id, batch id), so a re-run batch is skipped.\"\"\"");
  f.push_back("    spark = batch_df.sparkSession");
  AppendNotes(&f, options.notes);
  f.push_back("    _create_table(spark, " + Py(sink.path) + ", batch_df.schema, " +
              PyList(sink.partition_by) + ", " + PyDict(options.properties) + ")");
  f.push_back("    source = batch_df");
  if (sink.dedup_by) {
    need_window_ = true;
    const DedupSpec& dedup = *sink.dedup_by;
    f.push_back("    # dedupBy: the latest row per key (greatest orderBy values, NULL lowest;");
    f.push_back("    # then the last in batch order, which is Spark's read order here).");
    std::string keys;
    for (const std::string& key : dedup.keys) {
      keys += (keys.empty() ? "" : ", ") + std::string("F.expr(") + Py(key) + ")";
    }
    std::string order;
    for (const std::string& o : dedup.order_by) {
      order += "F.expr(" + Py(o) + ").desc_nulls_last(), ";
    }
    order += "F.col(\"__silt_seq\").desc()";
    f.push_back("    latest = Window.partitionBy(" + keys + ").orderBy(" + order + ")");
    f.push_back("    source = (");
    f.push_back("        source.withColumn(\"__silt_seq\", F.monotonically_increasing_id())");
    f.push_back("        .withColumn(\"__silt_rank\", F.row_number().over(latest))");
    f.push_back("        .where(\"__silt_rank = 1\")");
    f.push_back("        .drop(\"__silt_seq\", \"__silt_rank\")");
    f.push_back("    )");
  }
  f.push_back("    merge = (");
  f.push_back("        DeltaTable.forPath(spark, " + Py(sink.path) + ")");
  f.push_back("        .alias(" + Py(merge.target_alias) + ")");
  f.push_back("        .merge(source.alias(" + Py(merge.source_alias) + "), " + Py(merge.on) + ")");
  auto clause_line = [&](const std::string& method, const MergeClauseSpec& clause,
                         const char* assign_key) {
    std::vector<std::string> args;
    if (!clause.condition.empty()) args.push_back("condition=" + Py(clause.condition));
    if (!clause.assignments.empty()) {
      args.push_back(std::string(assign_key) + "=" + PyDict(clause.assignments));
    }
    std::string joined;
    for (const std::string& a : args) joined += (joined.empty() ? "" : ", ") + a;
    f.push_back("        ." + method + "(" + joined + ")");
  };
  for (const MergeClauseSpec& c : merge.when_matched) {
    if (c.action == "update") clause_line("whenMatchedUpdate", c, "set");
    if (c.action == "updateAll") clause_line("whenMatchedUpdateAll", c, "set");
    if (c.action == "delete") clause_line("whenMatchedDelete", c, "set");
  }
  for (const MergeClauseSpec& c : merge.when_not_matched) {
    if (c.action == "insert") clause_line("whenNotMatchedInsert", c, "values");
    if (c.action == "insertAll") clause_line("whenNotMatchedInsertAll", c, "values");
  }
  for (const MergeClauseSpec& c : merge.when_not_matched_by_source) {
    if (c.action == "update") clause_line("whenNotMatchedBySourceUpdate", c, "set");
    if (c.action == "delete") clause_line("whenNotMatchedBySourceDelete", c, "set");
  }
  f.push_back("    )");
  f.push_back("    _idempotent(spark, batch_id, merge.execute)");
  return fn;
}

Result<std::string> Exporter::UpsertFunction(const SinkSpec& sink, const DeltaOptions& options) {
  const std::string fn = FunctionName("_upsert_", sink);
  need_query_id_ = need_create_table_ = need_idempotent_ = need_delta_tables_ = true;
  std::vector<std::string>& f = functions_;
  f.push_back("");
  f.push_back("");
  f.push_back("def " + fn + "(keys):");
  f.push_back("    \"\"\"" + sink.key_path + " in update mode: each batch's changed groups MERGEd");
  f.push_back("    into " + Escaped(sink.path) +
              " on the group keys (NULL-safe), in one commit recording");
  f.push_back("    txn(query id, batch id).\"\"\"");
  f.push_back("");
  f.push_back("    def write(batch_df, batch_id):");
  f.push_back("        spark = batch_df.sparkSession");
  for (const std::string& note : options.notes) f.push_back("        # " + note);
  f.push_back("        _create_table(spark, " + Py(sink.path) + ", batch_df.schema, " +
              PyList(sink.partition_by) + ", " + PyDict(options.properties) + ")");
  f.push_back("        on = \" AND \".join(f\"t.`{k}` <=> s.`{k}`\" for k in keys) or \"true\"");
  f.push_back("        merge = (");
  f.push_back("            DeltaTable.forPath(spark, " + Py(sink.path) + ")");
  f.push_back("            .alias(\"t\")");
  f.push_back("            .merge(batch_df.alias(\"s\"), on)");
  f.push_back("            .whenMatchedUpdateAll()");
  f.push_back("            .whenNotMatchedInsertAll()");
  f.push_back("        )");
  f.push_back("        _idempotent(spark, batch_id, merge.execute)");
  f.push_back("");
  f.push_back("    return write");
  return fn;
}

std::string Exporter::FunctionName(std::string_view prefix, const SinkSpec& sink) {
  std::string out(prefix);
  for (char c : sink.name) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? AsciiLower(c) : '_';
  }
  const std::string base = out;
  for (int n = 2; !function_names_.insert(out).second; ++n) out = base + "_" + std::to_string(n);
  return out;
}

}  // namespace silt::stream::pyspark
