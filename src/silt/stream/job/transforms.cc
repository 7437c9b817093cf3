// JobParser: the `transform:` steps (select, where, sql, join, groupBy, ...).
#include "silt/base/strings.h"
#include "silt/stream/job/parser_internal.h"

namespace silt::stream::job_internal {

Status JobParser::ParseTransforms(const YAML::Node& node, std::vector<TransformStep>* steps) const {
  if (node.IsNull()) return Status::OK();
  if (!node.IsSequence()) return Error(node, "transform", "expected a list of steps");
  for (size_t i = 0; i < node.size(); ++i) {
    std::string path = Index("transform", i);
    const YAML::Node item = node[i];
    if (!item.IsMap() || item.size() != 1) {
      return Error(item, path,
                   "each step is a mapping with exactly one key (select, where, filter, "
                   "withColumn, withColumnRenamed, drop, withWatermark, sql, join, "
                   "groupBy, dropDuplicates, dropDuplicatesWithinWatermark)");
    }
    auto it = item.begin();
    if (!it->first.IsScalar()) return Error(it->first, path, "keys must be plain names");
    std::string kind = it->first.Scalar();
    const YAML::Node body = it->second;
    std::string body_path = Join(path, kind);
    TransformStep step;
    step.key_path = path;
    if (kind == "select") {
      step.kind = "select";
      SILT_ASSIGN_OR_RETURN(step.exprs, ScalarList(body, body_path));
      if (step.exprs.empty()) return Error(body, body_path, "select needs at least one column");
    } else if (kind == "where" || kind == "filter") {
      step.kind = "where";
      SILT_ASSIGN_OR_RETURN(std::string predicate, Scalar(body, body_path));
      step.exprs.push_back(std::move(predicate));
    } else if (kind == "withColumn") {
      step.kind = "withColumn";
      SILT_ASSIGN_OR_RETURN(step.named, ScalarMap(body, body_path));
      if (step.named.empty()) return Error(body, body_path, "needs at least one name: expr");
    } else if (kind == "withColumnRenamed") {
      step.kind = "withColumnRenamed";
      SILT_ASSIGN_OR_RETURN(step.named, ScalarMap(body, body_path));
      if (step.named.empty()) return Error(body, body_path, "needs at least one old: new");
    } else if (kind == "sql") {
      step.kind = "sql";
      SILT_ASSIGN_OR_RETURN(std::string query, Scalar(body, body_path));
      step.exprs.push_back(std::move(query));
    } else if (kind == "drop") {
      step.kind = "drop";
      SILT_ASSIGN_OR_RETURN(step.exprs, ScalarList(body, body_path));
    } else if (kind == "withWatermark") {
      step.kind = "withWatermark";
      if (!body.IsMap()) {
        return Error(body, body_path, "expected {eventTime: <column>, delayThreshold: <duration>}");
      }
      SILT_RETURN_NOT_OK(CheckKeys(body, body_path, {"eventTime", "delayThreshold"}));
      YAML::Node event_time = body["eventTime"];
      YAML::Node delay = body["delayThreshold"];
      if (!event_time) return Error(body, Join(body_path, "eventTime"), "required key is missing");
      if (!delay) return Error(body, Join(body_path, "delayThreshold"), "required key is missing");
      SILT_ASSIGN_OR_RETURN(step.event_time, Scalar(event_time, Join(body_path, "eventTime")));
      SILT_ASSIGN_OR_RETURN(step.delay_threshold, Scalar(delay, Join(body_path, "delayThreshold")));
      Result<int64_t> micros = ParseDurationMicros(step.delay_threshold);
      if (!micros.ok()) {
        return Error(delay, Join(body_path, "delayThreshold"), micros.status().message());
      }
    } else if (kind == "groupBy") {
      step.kind = "groupBy";
      if (!body.IsMap()) {
        return Error(body, body_path, "expected {keys: [<expr>, ...], agg: [<aggregate>, ...]}");
      }
      SILT_RETURN_NOT_OK(CheckKeys(body, body_path, {"keys", "agg"}));
      if (YAML::Node keys = body["keys"]) {
        SILT_ASSIGN_OR_RETURN(step.exprs, ScalarList(keys, Join(body_path, "keys")));
      }
      YAML::Node agg = body["agg"];
      if (!agg) return Error(body, Join(body_path, "agg"), "required key is missing");
      SILT_ASSIGN_OR_RETURN(step.aggs, ScalarList(agg, Join(body_path, "agg")));
      if (step.aggs.empty()) {
        return Error(agg, Join(body_path, "agg"), "needs at least one aggregate");
      }
    } else if (kind == "join") {
      step.kind = "join";
      SILT_RETURN_NOT_OK(ParseJoin(body, body_path, &step));
    } else if (kind == "dropDuplicates" || kind == "dropDuplicatesWithinWatermark") {
      step.kind = kind;
      if (!body.IsNull()) {
        SILT_ASSIGN_OR_RETURN(step.exprs, ScalarList(body, body_path));
      }
    } else {
      return Error(it->first, body_path,
                   "unknown step; expected one of select, where, filter, withColumn, "
                   "withColumnRenamed, drop, withWatermark, sql, join, groupBy, "
                   "dropDuplicates, dropDuplicatesWithinWatermark");
    }
    steps->push_back(std::move(step));
  }
  return Status::OK();
}

Status JobParser::ParseJoin(const YAML::Node& body, const std::string& path,
                            TransformStep* step) const {
  if (!body.IsMap()) {
    return Error(body, path, "expected {with: {format: delta, path: ...}, on: [<column>, ...]}");
  }
  SILT_RETURN_NOT_OK(CheckKeys(body, path, {"with", "on", "how"}));
  YAML::Node with = body["with"];
  const std::string with_path = Join(path, "with");
  if (!with) return Error(body, with_path, "required key is missing (the static table)");
  if (!with.IsMap()) return Error(with, with_path, "expected {format: delta, path: ...}");
  SILT_RETURN_NOT_OK(CheckKeys(with, with_path, {"format", "path", "where", "select"}));
  StaticTableSpec& table = step->join_with;
  if (YAML::Node n = with["format"]) {
    SILT_ASSIGN_OR_RETURN(std::string format, Scalar(n, Join(with_path, "format")));
    table.format = AsciiLower(format);
    if (table.format != "delta") {
      return Error(n, Join(with_path, "format"), "expected delta, got '", format, "'");
    }
  }
  YAML::Node table_path = with["path"];
  if (!table_path) return Error(with, Join(with_path, "path"), "required key is missing");
  SILT_ASSIGN_OR_RETURN(table.path, Scalar(table_path, Join(with_path, "path")));
  if (table.path.empty()) return Error(table_path, Join(with_path, "path"), "must not be empty");
  if (YAML::Node n = with["where"]) {
    SILT_ASSIGN_OR_RETURN(table.where, Scalar(n, Join(with_path, "where")));
  }
  if (YAML::Node n = with["select"]) {
    SILT_ASSIGN_OR_RETURN(table.select, ScalarList(n, Join(with_path, "select")));
  }
  YAML::Node on = body["on"];
  const std::string on_path = Join(path, "on");
  if (!on) return Error(body, on_path, "required key is missing (the join columns)");
  SILT_ASSIGN_OR_RETURN(step->exprs, ScalarList(on, on_path));
  if (step->exprs.empty()) return Error(on, on_path, "needs at least one column");
  if (YAML::Node n = body["how"]) {
    SILT_ASSIGN_OR_RETURN(step->join_how, Scalar(n, Join(path, "how")));
  }
  return Status::OK();
}

}  // namespace silt::stream::job_internal
