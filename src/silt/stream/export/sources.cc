// The PySpark export's source: the readStream of the file, Kafka, Delta or
// Event Hubs source, or the reason silt's own sources have no Spark
// counterpart.
#include <string>
#include <vector>

#include "silt/stream/export/exporter_internal.h"
#include "silt/stream/export/python_internal.h"
#include "silt/stream/source/delta_source.h"
#include "silt/stream/source/eventhubs_source.h"
#include "silt/stream/source/file_source.h"
#include "silt/stream/source/generator_source.h"
#include "silt/stream/source/kafka_source.h"
#include "silt/stream/source/mqtt_source.h"

namespace silt::stream::pyspark {

Status Exporter::Source() {
  const SourceSpec& source = job_.source;
  const std::string& format = source.format;
  if (job_.scale_out) {
    Comment(1, "scaleOut (" + job_.scale_out->mode +
                   "): silt runs several workers on one Kafka consumer group and keeps each "
                   "partition's offset in the table's txn actions. On Spark one query spreads "
                   "the topic's partitions over the cluster's executors: run this program once. "
                   "It keeps its offsets in its checkpoint and does not read the workers' "
                   "txns, so give it a checkpoint of its own and, to continue where the "
                   "workers stopped, startingOffsets from the table's recorded offsets "
                   "(`silt checkpoint` / `silt describe` show them).");
  }
  if (format == "generator") {
    SILT_RETURN_NOT_OK(GeneratorOptions::FromSpec(source).status());
    return Refuse("source.format",
                  "generator is silt's built-in sensor-event generator and Spark has no "
                  "counterpart; produce the events into Kafka (`silt produce`) and read them "
                  "with format: kafka, then export that job");
  }
  if (format == "mqtt") {
    SILT_RETURN_NOT_OK(MqttSourceOptions::FromSpec(source).status());
    return Refuse("source.format",
                  "mqtt: Spark 3.5 has no MQTT source (Apache Bahir's was last released for "
                  "Spark 2.4 and has other columns and no write-ahead log); bridge the broker "
                  "into Kafka (e.g. Kafka Connect's MQTT source) and read it with format: "
                  "kafka, then export that job");
  }
  if (format == "json" || format == "text") return FileSource();
  if (format == "kafka") return KafkaSource();
  if (format == "delta") return DeltaSource();
  if (format == "eventhubs") return EventHubsSource();
  return Refuse("source.format", "unknown source format '", format, "'");
}

Status Exporter::FileSource() {
  const SourceSpec& source = job_.source;
  SILT_RETURN_NOT_OK(FileSourceOptions::FromSpec(source).status());
  Line(1, "# source: Spark's file source (" + source.format + " files in a directory)");
  LoadFromPath(source.format, /*with_schema=*/source.format == "json");
  return Status::OK();
}

void Exporter::LoadFromPath(std::string_view format, bool with_schema) {
  const SourceSpec& source = job_.source;
  const std::string path = GetOption(source.options, "path").value_or("");
  Line(1, "df = (");
  Line(2, "spark.readStream.format(" + Py(format) + ")");
  if (with_schema) Line(2, ".schema(" + Py(source.schema_ddl) + ")");
  for (const auto& [key, value] : source.options) {
    if (EqualsIgnoreCase(key, "path")) continue;
    Line(2, ".option(" + Py(key) + ", " + Py(value) + ")");
  }
  Line(2, ".load(" + Py(path) + ")");
  Line(1, ")");
}

Status Exporter::KafkaSource() {
  const SourceSpec& source = job_.source;
  SILT_RETURN_NOT_OK(KafkaSourceOptions::FromSpec(source).status());
  packages_.insert(std::string(kKafkaPackage));
  std::vector<PyOption> options;
  std::vector<std::string> notes;
  for (const auto& [key, value] : source.options) {
    if (EqualsIgnoreCase(key, "endingOffsets") || EqualsIgnoreCase(key, "endingTimestamp") ||
        EqualsIgnoreCase(key, "endingOffsetsByTimestamp")) {
      return Refuse("source.options." + key,
                    "Spark refuses ending offsets in streaming queries (\"ending offset not "
                    "valid in streaming queries\"); drop the option or run a batch query");
    }
    if (StartsWithIgnoreCase(key, "kafka.")) continue;
    if (EqualsIgnoreCase(key, "maxOffsetsPerTrigger")) {
      notes.push_back(
          "maxOffsetsPerTrigger: Spark splits the limit over partitions by backlog "
          "as silt does, but rounds small shares up, so a batch may read a few "
          "records more than the limit; silt never exceeds it.");
    }
    options.push_back({key, Py(value)});
  }
  SILT_RETURN_NOT_OK(
      KafkaOptions(source.options, "source.options", {"source", "options"}, &options, &notes));
  Line(1, "# source: Spark's Kafka source (spark-sql-kafka-0-10)");
  for (const std::string& note : notes) Comment(1, note);
  Line(1, "df = (");
  Line(2, "spark.readStream.format(\"kafka\")");
  for (const PyOption& option : options) {
    Line(2, ".option(" + Py(option.key) + ", " + option.value_expr + ")");
  }
  Line(2, ".load()");
  Line(1, ")");
  return Status::OK();
}

Status Exporter::DeltaSource() {
  const SourceSpec& source = job_.source;
  SILT_RETURN_NOT_OK(DeltaSourceOptions::FromSpec(source).status());
  bool cdf = false;
  for (const auto& [key, value] : source.options) {
    if ((EqualsIgnoreCase(key, "readChangeFeed") || EqualsIgnoreCase(key, "readChangeData")) &&
        EqualsIgnoreCase(value, "true")) {
      cdf = true;
    }
  }
  Line(1, cdf ? "# source: delta-spark's streaming source, reading the change data feed"
              : "# source: delta-spark's streaming source (the table's added rows)");
  LoadFromPath("delta", /*with_schema=*/false);
  return Status::OK();
}

Status Exporter::EventHubsSource() {
  const SourceSpec& source = job_.source;
  SILT_RETURN_NOT_OK(EventHubsSourceOptions::FromSpec(source).status());
  for (const auto& [key, value] : source.options) {
    if (StartsWithIgnoreCase(key, "kafka.")) {
      return Refuse("source.options." + key,
                    "a setting of silt's Kafka-protocol client for Event Hubs; the connector "
                    "reads over AMQP and has no such setting");
    }
  }
  packages_.insert(std::string(kEventHubsPackage));
  Line(1, "# source: the Azure Event Hubs connector (azure-eventhubs-spark), over AMQP.");
  Comment(1,
          "silt reads the namespace's Kafka endpoint: there `offset` is the sequence number "
          "as text, `publisher` is NULL and `properties` are the Kafka headers; the "
          "connector gives the AMQP values. Not tested by silt (no namespace is reachable "
          "from its tests); check the connector release that matches your Spark.");
  Line(1, "eh_conf = {");
  for (const auto& [key, value] : source.options) {
    std::string expr = Py(value);
    if (EqualsIgnoreCase(key, "eventhubs.connectionString")) {
      // The connector's Python API takes the string encrypted.
      expr = "spark.sparkContext._jvm.org.apache.spark.eventhubs.EventHubsUtils.encrypt(" +
             SecretExpr(raw_.Get({"source", "options", key}), value) + ")";
    }
    Line(2, Py(key) + ": " + expr + ",");
  }
  Line(1, "}");
  Line(1, "df = spark.readStream.format(\"eventhubs\").options(**eh_conf).load()");
  return Status::OK();
}

}  // namespace silt::stream::pyspark
