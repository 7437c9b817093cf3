// The PySpark export's transform steps, each as the DataFrame call that
// means the same.
#include <string>
#include <vector>

#include "silt/stream/export/exporter_internal.h"
#include "silt/stream/export/python_internal.h"

namespace silt::stream::pyspark {

Status Exporter::Transforms() {
  for (const TransformStep& step : job_.transforms) {
    Line(0, "");
    Line(1, "# " + step.key_path + "." + step.kind);
    if (step.kind == "select") {
      Line(1, "df = df.selectExpr(");
      for (const std::string& item : step.exprs) Line(2, Py(item) + ",");
      Line(1, ")");
    } else if (step.kind == "where") {
      Line(1, "df = df.where(" + Py(step.exprs[0]) + ")");
    } else if (step.kind == "withColumn") {
      // silt evaluates the entries in order, each seeing the ones before.
      for (const auto& [name, text] : step.named) {
        Line(1, "df = df.withColumn(" + Py(name) + ", F.expr(" + Py(text) + "))");
      }
    } else if (step.kind == "withColumnRenamed") {
      for (const auto& [from, to] : step.named) {
        Line(1, "df = df.withColumnRenamed(" + Py(from) + ", " + Py(to) + ")");
      }
    } else if (step.kind == "drop") {
      Line(1, "df = df.drop(" + PyArgs(step.exprs) + ")");
    } else if (step.kind == "withWatermark") {
      SILT_ASSIGN_OR_RETURN(int64_t micros, ParseDurationMicros(step.delay_threshold));
      Line(1,
           "df = df.withWatermark(" + Py(step.event_time) + ", " + Py(SparkInterval(micros)) + ")");
    } else if (step.kind == "sql") {
      Line(1, "df.createOrReplaceTempView(\"input\")");
      Line(1, "df = spark.sql(" + Py(step.exprs[0]) + ")");
    } else if (step.kind == "join") {
      Join(step);
    } else if (step.kind == "groupBy") {
      std::vector<std::string> keys;
      for (const std::string& key : step.exprs) keys.push_back("F.expr(" + Py(key) + ")");
      std::vector<std::string> aggs;
      for (const std::string& agg : step.aggs) aggs.push_back("F.expr(" + Py(agg) + ")");
      Line(1, "df = df.groupBy(");
      for (const std::string& key : keys) Line(2, key + ",");
      Line(1, ").agg(");
      for (const std::string& agg : aggs) Line(2, agg + ",");
      Line(1, ")");
      // Spark puts the grouping columns first, under the names silt gives
      // them (`window`, `session_window`, the column or the alias).
      Line(1, "group_keys = df.columns[:" + std::to_string(step.exprs.size()) + "]");
    } else if (step.kind == "dropDuplicates" || step.kind == "dropDuplicatesWithinWatermark") {
      Line(1, "df = df." + step.kind + "(" + (step.exprs.empty() ? "" : PyList(step.exprs)) + ")");
    } else {
      return Refuse(step.key_path, "unknown step '", step.kind, "'");
    }
  }
  return Status::OK();
}

void Exporter::Join(const TransformStep& step) {
  const StaticTableSpec& with = step.join_with;
  Comment(1,
          "The static side: Spark plans the Delta table anew for every micro-batch, as silt "
          "reads it again when it has a new commit.");
  Line(1, "static = spark.read.format(\"delta\").load(" + Py(with.path) + ")");
  if (!with.where.empty()) Line(1, "static = static.where(" + Py(with.where) + ")");
  if (!with.select.empty()) Line(1, "static = static.selectExpr(" + PyArgs(with.select) + ")");
  Line(1, "df = df.join(static, " + PyList(step.exprs) + ", " + Py(step.join_how) + ")");
}

}  // namespace silt::stream::pyspark
