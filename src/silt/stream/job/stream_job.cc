// JobParser: a stream job's top level, its source, trigger, metrics
// endpoint, storage settings and `spark.sql.*` confs.
#include "silt/base/strings.h"
#include "silt/stream/job/parser_internal.h"

namespace silt::stream::job_internal {

Result<JobSpec> JobParser::Parse(const YAML::Node& root) const {
  JobSpec job;
  if (!root.IsDefined() || root.IsNull()) return Error(root, "", "the job file is empty");
  if (!root.IsMap()) return Error(root, "", "the job file must be a YAML mapping of keys");
  if (YAML::Node type = root["type"]) {
    SILT_ASSIGN_OR_RETURN(std::string kind, Scalar(type, "type"));
    if (AsciiLower(kind) == "maintenance") return ParseMaintenanceJob(root);
    if (AsciiLower(kind) != "stream" && AsciiLower(kind) != "streaming") {
      return Error(type, "type", "expected stream or maintenance, got '", kind, "'");
    }
  }
  SILT_RETURN_NOT_OK(
      CheckKeys(root, "",
                {"name", "type", "source", "transform", "sink", "sinks", "checkpointLocation",
                 "trigger", "maxBatches", "parallelism", "storage", "ansi", "metrics", "deadLetter",
                 "scaleOut", "spark.sql.*"}));
  SILT_RETURN_NOT_OK(ParseSparkConf(root, &job));
  if (YAML::Node n = root["ansi"]) {
    SILT_ASSIGN_OR_RETURN(std::string ansi, Scalar(n, "ansi"));
    if (AsciiLower(ansi) != "true" && AsciiLower(ansi) != "false") {
      return Error(n, "ansi", "expected true or false, got '", ansi, "'");
    }
    job.ansi = AsciiLower(ansi) == "true";
  }
  if (YAML::Node n = root["name"]) {
    SILT_ASSIGN_OR_RETURN(job.name, Scalar(n, "name"));
  }
  YAML::Node source = root["source"];
  if (!source) return Error(root, "source", "required key is missing");
  SILT_RETURN_NOT_OK(ParseSource(source, &job.source));
  if (YAML::Node n = root["transform"]) {
    SILT_RETURN_NOT_OK(ParseTransforms(n, &job.transforms));
  }
  YAML::Node sink = root["sink"];
  YAML::Node sinks = root["sinks"];
  if (sink && sinks) return Error(sinks, "sinks", "write either sink or sinks, not both");
  if (!sink && !sinks) return Error(root, "sink", "required key is missing (or sinks: [...])");
  if (sink) SILT_RETURN_NOT_OK(ParseSink(sink, "sink", false, &job.sink));
  if (sinks) SILT_RETURN_NOT_OK(ParseSinks(sinks, &job));
  YAML::Node checkpoint = root["checkpointLocation"];
  if (!checkpoint) {
    return Error(root, "checkpointLocation",
                 "required key is missing (the directory that keeps offsets and commits)");
  }
  SILT_ASSIGN_OR_RETURN(job.checkpoint_location, Scalar(checkpoint, "checkpointLocation"));
  if (job.checkpoint_location.empty()) {
    return Error(checkpoint, "checkpointLocation", "must not be empty");
  }
  if (YAML::Node n = root["trigger"]) {
    SILT_RETURN_NOT_OK(ParseTrigger(n, &job.trigger));
  }
  if (YAML::Node n = root["maxBatches"]) {
    SILT_ASSIGN_OR_RETURN(int64_t max, Integer(n, "maxBatches"));
    if (max < 1) return Error(n, "maxBatches", "must be at least 1");
    job.max_batches = max;
  }
  if (YAML::Node n = root["parallelism"]) {
    SILT_ASSIGN_OR_RETURN(int64_t threads, Integer(n, "parallelism"));
    if (threads < 1 || threads > 256) {
      return Error(n, "parallelism", "must be between 1 and 256, got ", threads);
    }
    job.parallelism = static_cast<int>(threads);
  }
  if (YAML::Node n = root["storage"]) {
    SILT_RETURN_NOT_OK(ParseStorage(n, &job));
  }
  if (YAML::Node n = root["metrics"]) {
    SILT_RETURN_NOT_OK(ParseMetrics(n, &job));
  }
  if (YAML::Node n = root["deadLetter"]) {
    SILT_RETURN_NOT_OK(ParseDeadLetter(n, &job));
  }
  if (YAML::Node n = root["scaleOut"]) {
    SILT_RETURN_NOT_OK(ParseScaleOut(n, &job));
  }
  return job;
}

Status JobParser::ParseSparkConf(const YAML::Node& root, JobSpec* job) const {
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it->first.Scalar();
    if (!key.starts_with("spark.sql.")) continue;
    SILT_ASSIGN_OR_RETURN(std::string value, Scalar(it->second, key));
    if (key == "spark.sql.session.timeZone") {
      job->session_time_zone = value;
    } else if (key == "spark.sql.ansi.enabled") {
      if (AsciiLower(value) != "true" && AsciiLower(value) != "false") {
        return Error(it->second, key, "expected true or false, got '", value, "'");
      }
      if (root["ansi"]) {
        return Error(it->first, key, "set either ansi or spark.sql.ansi.enabled, not both");
      }
      job->ansi = AsciiLower(value) == "true";
    } else if (key == "spark.sql.shuffle.partitions") {
      SILT_ASSIGN_OR_RETURN(int64_t n, Integer(it->second, key));
      if (n < 1) return Error(it->second, key, "must be at least 1");
      value = std::to_string(n);
    }
    job->spark_conf[key] = value;
  }
  return Status::OK();
}

Status JobParser::ParseSource(const YAML::Node& node, SourceSpec* spec) const {
  if (!node.IsMap()) return Error(node, "source", "expected a mapping");
  SILT_RETURN_NOT_OK(CheckKeys(node, "source", {"format", "options", "schema"}));
  YAML::Node format = node["format"];
  if (!format) {
    return Error(node, "source.format",
                 "required key is missing (generator, json, text, kafka, delta)");
  }
  SILT_ASSIGN_OR_RETURN(std::string f, Scalar(format, "source.format"));
  spec->format = AsciiLower(f);
  spec->key_path = "source";
  if (YAML::Node options = node["options"]) {
    SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(options, "source.options"));
    for (auto& [key, value] : entries) {
      if (key == "schema") {
        spec->schema_ddl = value;
        continue;
      }
      spec->options[key] = value;
    }
  }
  if (YAML::Node schema = node["schema"]) {
    if (!spec->schema_ddl.empty()) {
      return Error(schema, "source.schema",
                   "the schema is given twice (source.schema and source.options.schema)");
    }
    SILT_ASSIGN_OR_RETURN(spec->schema_ddl, Scalar(schema, "source.schema"));
  }
  return Status::OK();
}

Status JobParser::ParseTrigger(const YAML::Node& node, TriggerSpec* trigger) const {
  if (!node.IsMap() || node.size() != 1) {
    return Error(node, "trigger",
                 "expected one of {processingTime: <duration>}, {once: true}, "
                 "{availableNow: true}");
  }
  SILT_RETURN_NOT_OK(CheckKeys(node, "trigger", {"processingTime", "once", "availableNow"}));
  if (YAML::Node n = node["processingTime"]) {
    SILT_ASSIGN_OR_RETURN(std::string text, Scalar(n, "trigger.processingTime"));
    Result<int64_t> micros = ParseDurationMicros(text);
    if (!micros.ok()) return Error(n, "trigger.processingTime", micros.status().message());
    // processingTime 0 is Spark's default trigger: batches back to back.
    trigger->kind = *micros > 0 ? TriggerKind::kProcessingTime : TriggerKind::kDefault;
    trigger->interval_micros = *micros;
  } else if (YAML::Node n = node["once"]) {
    SILT_ASSIGN_OR_RETURN(bool once, Boolean(n, "trigger.once"));
    if (!once) return Error(n, "trigger.once", "must be true (omit the trigger for the default)");
    trigger->kind = TriggerKind::kOnce;
  } else if (YAML::Node n = node["availableNow"]) {
    SILT_ASSIGN_OR_RETURN(bool now, Boolean(n, "trigger.availableNow"));
    if (!now) {
      return Error(n, "trigger.availableNow", "must be true (omit the trigger for the default)");
    }
    trigger->kind = TriggerKind::kAvailableNow;
  }
  return Status::OK();
}

Status JobParser::ParseMetrics(const YAML::Node& node, JobSpec* job) const {
  if (!node.IsMap()) {
    return Error(node, "metrics", "expected a mapping such as {port: 9108, host: 127.0.0.1}");
  }
  SILT_RETURN_NOT_OK(
      CheckKeys(node, "metrics", {"port", "host", "healthTimeout", "lagInterval", "stopGrace"}));
  MetricsSpec spec;
  YAML::Node port = node["port"];
  if (!port) return Error(node, "metrics.port", "required key is missing");
  SILT_ASSIGN_OR_RETURN(int64_t number, Integer(port, "metrics.port"));
  if (number < 0 || number > 65535) {
    return Error(port, "metrics.port", "expected a port from 0 to 65535, got ", number);
  }
  spec.port = static_cast<int>(number);
  if (YAML::Node n = node["host"]) {
    SILT_ASSIGN_OR_RETURN(spec.host, Scalar(n, "metrics.host"));
    if (spec.host.empty()) return Error(n, "metrics.host", "must not be empty");
  }
  auto duration = [&](const char* key, int64_t* out, bool zero_ok = false) -> Status {
    YAML::Node n = node[key];
    if (!n) return Status::OK();
    const std::string path = std::string("metrics.") + key;
    SILT_ASSIGN_OR_RETURN(std::string text, Scalar(n, path));
    Result<int64_t> micros = ParseDurationMicros(text);
    if (!micros.ok()) return Error(n, path, micros.status().message());
    if (*micros < 0 || (*micros == 0 && !zero_ok)) {
      return Error(n, path, zero_ok ? "must not be negative" : "must be more than 0");
    }
    *out = *micros;
    return Status::OK();
  };
  SILT_RETURN_NOT_OK(duration("healthTimeout", &spec.health_timeout_micros));
  SILT_RETURN_NOT_OK(duration("lagInterval", &spec.lag_interval_micros));
  SILT_RETURN_NOT_OK(duration("stopGrace", &spec.stop_grace_micros, true));
  job->metrics = spec;
  return Status::OK();
}

Status JobParser::ParseStorage(const YAML::Node& node, JobSpec* job) const {
  if (node.IsNull()) return Status::OK();
  if (!node.IsMap()) return Error(node, "storage", "expected a mapping");
  SILT_RETURN_NOT_OK(CheckKeys(node, "storage", {"s3"}));
  if (YAML::Node s3 = node["s3"]) {
    SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(s3, "storage.s3"));
    for (auto& [key, value] : entries) job->storage_s3[key] = value;
  }
  return Status::OK();
}

}  // namespace silt::stream::job_internal
