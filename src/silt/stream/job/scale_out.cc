// JobParser: `scaleOut:`, and the refusal of what several workers on one
// table cannot do exactly once.
#include "silt/stream/job/parser_internal.h"

namespace silt::stream::job_internal {

Status JobParser::ParseScaleOut(const YAML::Node& node, JobSpec* job) const {
  if (!node.IsMap()) {
    return Error(node, "scaleOut", "expected a mapping such as {mode: consumerGroup}");
  }
  SILT_RETURN_NOT_OK(CheckKeys(node, "scaleOut", {"mode", "groupId", "appId", "workerId"}));
  ScaleOutSpec spec;
  YAML::Node mode = node["mode"];
  if (!mode) return Error(node, "scaleOut.mode", "required key is missing (consumerGroup)");
  SILT_ASSIGN_OR_RETURN(spec.mode, Scalar(mode, "scaleOut.mode"));
  if (spec.mode != "consumerGroup") {
    return Error(mode, "scaleOut.mode", "expected consumerGroup, got '", spec.mode, "'");
  }
  auto optional = [&](const char* key, std::string* out) -> Status {
    YAML::Node n = node[key];
    if (!n) return Status::OK();
    const std::string path = std::string("scaleOut.") + key;
    SILT_ASSIGN_OR_RETURN(*out, Scalar(n, path));
    if (out->empty()) return Error(n, path, "must not be empty");
    return Status::OK();
  };
  SILT_RETURN_NOT_OK(optional("groupId", &spec.group_id));
  SILT_RETURN_NOT_OK(optional("appId", &spec.app_id));
  SILT_RETURN_NOT_OK(optional("workerId", &spec.worker_id));
  if (spec.app_id.empty()) spec.app_id = job->name;
  if (spec.app_id.empty()) {
    return Error(node, "scaleOut.appId",
                 "required when the job has no name: every worker must record its offsets in "
                 "the table under the same application id");
  }
  // What each worker must be able to commit on its own, exactly once, as
  // a blind append of the rows of its partitions.
  const std::string why =
      " (scaleOut: each worker commits the rows of its own Kafka "
      "partitions to one Delta table as a blind append)";
  if (job->source.format != "kafka") {
    return Error(node, "scaleOut", "needs a kafka source, not '", job->source.format,
                 "': only Kafka partitions can be shared through a consumer group");
  }
  for (const auto& [key, value] : job->source.options) {
    if (key == "assign") {
      return Error(node, "scaleOut",
                   "source.options.assign pins partitions to one process; use subscribe or "
                   "subscribePattern so the group can share them");
    }
    if (key == "endingOffsets" || key == "minOffsetsPerTrigger" || key == "maxTriggerDelay") {
      return Error(node, "scaleOut", "source.options.", key,
                   " is not supported: a worker sees only its own partitions");
    }
  }
  if (!job->sinks.empty()) {
    return Error(node, "scaleOut",
                 "several sinks cannot be committed together by independent workers; use one "
                 "sink:",
                 why);
  }
  if (job->sink.format != "delta") {
    return Error(node, "scaleOut", "needs a delta sink, not '", job->sink.format, "'", why);
  }
  if (job->sink.mode != "append" || job->sink.output_mode != "append") {
    return Error(node, "scaleOut", "needs sink.outputMode append and sink.mode append", why);
  }
  if (job->dead_letter) {
    return Error(node, "scaleOut",
                 "deadLetter is not supported: its commit could not be made atomic with the "
                 "sink's",
                 why);
  }
  for (const TransformStep& step : job->transforms) {
    if (step.kind == "groupBy" || step.kind == "dropDuplicates" ||
        step.kind == "dropDuplicatesWithinWatermark") {
      return Error(node, "scaleOut", step.key_path, " (", step.kind,
                   ") is stateful: its state would be split between the workers; scale-out "
                   "runs stateless transforms only");
    }
  }
  if (job->trigger.kind == TriggerKind::kOnce || job->trigger.kind == TriggerKind::kAvailableNow) {
    return Error(node, "scaleOut",
                 "trigger once and availableNow are not supported: a worker cannot tell when "
                 "the whole group has drained the topic");
  }
  job->scale_out = std::move(spec);
  return Status::OK();
}

}  // namespace silt::stream::job_internal
