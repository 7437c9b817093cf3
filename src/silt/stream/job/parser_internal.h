// The job-file parser, internal to stream/job*: JobParser turns a YAML
// document into a JobSpec (job.h), tracking the key path of every node so
// that errors read "job.yaml:12: sink.partitonBy: unknown key; ...". Its
// parts live one concern a file under job/: reading typed values off YAML
// nodes (yaml_nodes.cc), the stream job's top level, source, trigger,
// metrics and storage (stream_job.cc), transform steps (transforms.cc),
// sinks and the dead-letter table (sinks.cc), the scale-out rules
// (scale_out.cc) and maintenance jobs (maintenance_job.cc).
//
// Thread safety: a JobParser is used by one thread; it holds only the
// source name. Errors: every method returns InvalidArgument naming the file,
// line and key path.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/base/status.h"
#include "silt/stream/job.h"

namespace silt::stream::job_internal {

class JobParser {
 public:
  explicit JobParser(std::string_view source_name) : source_(source_name) {}

  // A `type: stream` (the default) or `type: maintenance` job.
  Result<JobSpec> Parse(const YAML::Node& root) const;

 private:
  // --- reading typed values off nodes (yaml_nodes.cc)

  template <typename... Args>
  Status Error(const YAML::Node& node, std::string_view key_path, Args&&... args) const {
    std::string where(source_);
    YAML::Mark mark = node.Mark();
    if (!mark.is_null()) where += ":" + std::to_string(mark.line + 1);
    std::string message = Status::Concat(std::forward<Args>(args)...);
    if (key_path.empty()) return Status::InvalidArgument(where, ": ", message);
    return Status::InvalidArgument(where, ": ", key_path, ": ", message);
  }

  static std::string Join(std::string_view path, std::string_view key) {
    if (path.empty()) return std::string(key);
    return std::string(path) + "." + std::string(key);
  }

  static std::string Index(std::string_view path, size_t i) {
    return std::string(path) + "[" + std::to_string(i) + "]";
  }

  // An entry "prefix.*" of `allowed` admits every key with that prefix.
  Status CheckKeys(const YAML::Node& map, std::string_view path,
                   std::initializer_list<std::string_view> allowed) const;

  // A scalar of any YAML kind (string, number, boolean) as text, with
  // environment variables expanded.
  Result<std::string> Scalar(const YAML::Node& node, std::string_view path) const;

  Result<int64_t> Integer(const YAML::Node& node, std::string_view path) const;

  Result<bool> Boolean(const YAML::Node& node, std::string_view path) const;

  // A list of scalars; a single scalar counts as a one-element list.
  Result<std::vector<std::string>> ScalarList(const YAML::Node& node, std::string_view path) const;

  // A mapping of names to scalars, in file order.
  Result<std::vector<std::pair<std::string, std::string>>> ScalarMap(const YAML::Node& node,
                                                                     std::string_view path) const;

  // --- the stream job (stream_job.cc)

  // The `spark.sql.*` keys: SparkSession confs of a ported job.
  Status ParseSparkConf(const YAML::Node& root, JobSpec* job) const;

  Status ParseSource(const YAML::Node& node, SourceSpec* spec) const;

  Status ParseTrigger(const YAML::Node& node, TriggerSpec* trigger) const;

  Status ParseMetrics(const YAML::Node& node, JobSpec* job) const;

  Status ParseStorage(const YAML::Node& node, JobSpec* job) const;

  // --- transform steps (transforms.cc)

  Status ParseTransforms(const YAML::Node& node, std::vector<TransformStep>* steps) const;

  // join: {with: {format: delta, path: P, where: ..., select: [...]},
  //        on: <column> | [<column>, ...], how: inner|left|left_semi|left_anti}
  Status ParseJoin(const YAML::Node& body, const std::string& path, TransformStep* step) const;

  // --- sinks (sinks.cc)

  Status ParseSinks(const YAML::Node& node, JobSpec* job) const;

  // `sink:` (path "sink") or one entry of `sinks:` (path "sinks[i]", which
  // may also have name, where and select).
  Status ParseSink(const YAML::Node& node, const std::string& path, bool routed,
                   SinkSpec* spec) const;

  Status ParseMerge(const YAML::Node& node, const std::string& path, MergeSinkSpec* merge) const;

  // deadLetter: {path: <Delta table>, options: {...}}: an append-only Delta
  // sink of the fixed dead-letter schema (stream/sink/dead_letter.h).
  Status ParseDeadLetter(const YAML::Node& node, JobSpec* job) const;

  // --- scale-out (scale_out.cc)

  // scaleOut: {mode: consumerGroup, groupId, appId, workerId}, and the
  // refusal of what several workers on one table cannot do exactly once.
  Status ParseScaleOut(const YAML::Node& node, JobSpec* job) const;

  // --- maintenance jobs (maintenance_job.cc)

  // `type: maintenance` (MaintenanceSpec in job.h).
  Result<JobSpec> ParseMaintenanceJob(const YAML::Node& root) const;

  std::string source_;
};

// YAML says a mapping's keys are unique, but yaml-cpp keeps both entries of
// a repeated key and lookups find the first: a second `startingOffsets`
// further down would be silently ignored. Errors: InvalidArgument naming
// both lines and the key path.
Status CheckNoDuplicateKeys(const YAML::Node& node, const std::string& path,
                            std::string_view source);

}  // namespace silt::stream::job_internal
