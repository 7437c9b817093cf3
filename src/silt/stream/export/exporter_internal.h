// The PySpark export's working state: Exporter writes one job as a PySpark
// program (stream/pyspark_export.h has the contract). Its parts live in one
// file each: the driver (pyspark_export.cc), the session and its S3 settings
// (session.cc), the source (sources.cc, kafka_options.cc), the transform
// steps (steps.cc), the sinks (sinks.cc) and their foreachBatch functions
// (sink_functions.cc), maintenance jobs (maintenance.cc) and the program's
// text around them (program.cc). Private to src/silt/stream/export/.
//
// Thread safety: an Exporter is used by one thread, once.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/base/strings.h"
#include "silt/stream/export/secrets_internal.h"
#include "silt/stream/job.h"
#include "silt/stream/pyspark_export.h"

namespace silt::stream::pyspark {

// The Maven coordinates a program needs, for spark.jars.packages: the
// versions the seed job runs (and the tests use).
constexpr std::string_view kDeltaPackage = "io.delta:delta-spark_2.12:3.2.1";
constexpr std::string_view kKafkaPackage = "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.3";
// hadoop-aws of the Hadoop that pyspark 3.5 ships (3.3.4).
constexpr std::string_view kS3Package = "org.apache.hadoop:hadoop-aws:3.3.4";
constexpr std::string_view kEventHubsPackage =
    "com.microsoft.azure:azure-eventhubs-spark_2.12:2.3.22";

// InvalidArgument "<key_path>: cannot be exported to PySpark: <why>".
template <typename... Args>
Status Refuse(std::string_view key_path, Args&&... why) {
  return Status::InvalidArgument(key_path,
                                 ": cannot be exported to PySpark: ", std::forward<Args>(why)...);
}

// The value of option `name` (case-insensitive), if set.
inline std::optional<std::string> GetOption(const std::map<std::string, std::string>& options,
                                            std::string_view name) {
  for (const auto& [key, value] : options) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

inline bool IsS3Path(std::string_view path) {
  return StartsWithIgnoreCase(path, "s3://") || StartsWithIgnoreCase(path, "s3a://");
}

// One Spark option: the name and a Python expression for its value.
struct PyOption {
  std::string key;
  std::string value_expr;
};

// The program being written: its settings, helpers and body.
class Exporter {
 public:
  Exporter(const JobSpec& job, const PySparkExportOptions& options);

  // The program, or the first reason the job cannot be exported. Once.
  Result<std::string> Run();

 private:
  // ------------------------------------------------------------------
  // Whole-job checks and the session (session.cc)

  Status CheckJob();
  Status Session();
  Status S3();
  std::vector<SinkSpec> AllSinks() const;

  // ------------------------------------------------------------------
  // Source (sources.cc, kafka_options.cc)

  Status Source();
  Status FileSource();
  // `df = spark.readStream.format(...)...load(path)` for a source that reads
  // the `path` option: the job's schema when `with_schema`, every other
  // option carried over as written.
  void LoadFromPath(std::string_view format, bool with_schema);
  Status KafkaSource();
  // The `kafka.*` options of a source or sink, as the Java client names
  // them (silt's are librdkafka's).
  Status KafkaOptions(const std::map<std::string, std::string>& all, const std::string& key_path,
                      const std::vector<std::string>& raw_prefix, std::vector<PyOption>* out,
                      std::vector<std::string>* notes);
  Status DeltaSource();
  Status EventHubsSource();

  // ------------------------------------------------------------------
  // Transform steps (steps.cc)

  Status Transforms();
  void Join(const TransformStep& step);

  // ------------------------------------------------------------------
  // Sinks (sinks.cc) and their foreachBatch functions (sink_functions.cc)

  struct DeltaOptions {
    std::vector<PyOption> writer;                                 // writer .option(...)
    std::vector<std::pair<std::string, std::string>> properties;  // delta.*
    std::vector<std::string> notes;
  };

  Status Sink();
  Status WriterTail();
  Status CheckOnly(const SinkSpec& sink, std::initializer_list<std::string_view> known);
  Status KafkaSinkOptions(const SinkSpec& sink, std::vector<PyOption>* options);
  Result<DeltaOptions> DeltaSinkOptions(const SinkSpec& sink);
  // `sinks:`: one foreachBatch writing every sink from one read.
  Status RoutedSinks();
  // A foreachBatch function doing the merge sink's MERGE; returns its name.
  Result<std::string> MergeFunction(const SinkSpec& sink, const DeltaOptions& options);
  // A factory of foreachBatch functions upserting the changed groups (update
  // mode on a Delta sink); returns its name.
  Result<std::string> UpsertFunction(const SinkSpec& sink, const DeltaOptions& options);
  // A Python name for a sink's function, from the sink's name; unique.
  std::string FunctionName(std::string_view prefix, const SinkSpec& sink);

  // ------------------------------------------------------------------
  // Maintenance jobs (maintenance.cc)

  Result<std::string> RunMaintenance();

  // ------------------------------------------------------------------
  // The program (program.cc)

  Result<std::string> Assemble();
  // A line of build()'s body, `indent` levels (4 spaces each) deep; an
  // empty `text` is an empty line.
  void Line(int indent, const std::string& text);
  // `text` as comment lines of build()'s body, wrapped to fit 90 columns.
  void Comment(int indent, const std::string& text);

  const JobSpec& job_;
  const PySparkExportOptions& options_;
  RawValues raw_;
  std::set<std::string> packages_;
  std::vector<PyOption> session_conf_;
  std::map<std::string, std::string> sql_conf_;
  std::vector<std::string> session_notes_;
  std::vector<std::string> functions_;
  std::set<std::string> function_names_;
  std::vector<std::string> body_;
  std::vector<std::string> main_;
  int group_by_index_ = -1;
  std::string sql_aggregation_;  // key path of a sql step with GROUP BY
  bool need_jaas_ = false;
  bool need_query_id_ = false;
  bool need_create_table_ = false;
  bool need_idempotent_ = false;
  bool need_delta_tables_ = false;
  bool need_window_ = false;
  bool need_time_ = false;
};

}  // namespace silt::stream::pyspark
