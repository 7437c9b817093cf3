// JobParser: `sink:` / `sinks:` (append and merge sinks, routing) and the
// dead-letter table.
#include <algorithm>

#include "silt/base/strings.h"
#include "silt/stream/job/parser_internal.h"

namespace silt::stream::job_internal {

Status JobParser::ParseSinks(const YAML::Node& node, JobSpec* job) const {
  if (!node.IsSequence() || node.size() == 0) {
    return Error(node, "sinks", "expected a non-empty list of sinks");
  }
  for (size_t i = 0; i < node.size(); ++i) {
    SinkSpec spec;
    SILT_RETURN_NOT_OK(ParseSink(node[i], Index("sinks", i), true, &spec));
    for (const SinkSpec& other : job->sinks) {
      if (other.name == spec.name) {
        return Error(node[i], Index("sinks", i) + ".name", "'", spec.name, "' names two sinks (",
                     other.key_path, " and ", spec.key_path, ")");
      }
      if (other.output_mode != spec.output_mode) {
        return Error(node[i], Index("sinks", i) + ".outputMode", "'", spec.output_mode,
                     "' differs from ", other.key_path, "'s '", other.output_mode,
                     "' (the output mode is the query's: one for all sinks)");
      }
    }
    job->sinks.push_back(std::move(spec));
  }
  job->sink = job->sinks[0];
  return Status::OK();
}

Status JobParser::ParseSink(const YAML::Node& node, const std::string& path, bool routed,
                            SinkSpec* spec) const {
  if (!node.IsMap()) return Error(node, path, "expected a mapping");
  if (routed) {
    SILT_RETURN_NOT_OK(CheckKeys(
        node, path,
        {"name", "where", "select", "format", "outputMode", "path", "partitionBy", "clusterBy",
         "options", "mode", "merge", "dedupBy", "generatedColumns", "identityColumns"}));
  } else {
    SILT_RETURN_NOT_OK(
        CheckKeys(node, path,
                  {"format", "outputMode", "path", "partitionBy", "clusterBy", "options", "mode",
                   "merge", "dedupBy", "generatedColumns", "identityColumns"}));
  }
  spec->key_path = path;
  spec->name = path;
  const std::string p = path;
  if (YAML::Node n = node["name"]) {
    SILT_ASSIGN_OR_RETURN(spec->name, Scalar(n, Join(p, "name")));
    if (spec->name.empty()) return Error(n, Join(p, "name"), "must not be empty");
  }
  if (YAML::Node n = node["where"]) {
    SILT_ASSIGN_OR_RETURN(spec->where, Scalar(n, Join(p, "where")));
  }
  if (YAML::Node n = node["select"]) {
    SILT_ASSIGN_OR_RETURN(spec->select, ScalarList(n, Join(p, "select")));
    if (spec->select.empty()) {
      return Error(n, Join(p, "select"), "needs at least one column");
    }
  }
  if (YAML::Node n = node["format"]) {
    SILT_ASSIGN_OR_RETURN(std::string f, Scalar(n, Join(p, "format")));
    spec->format = AsciiLower(f);
  }
  if (YAML::Node n = node["outputMode"]) {
    SILT_ASSIGN_OR_RETURN(std::string mode, Scalar(n, Join(p, "outputMode")));
    spec->output_mode = AsciiLower(mode);
    if (spec->output_mode != "append" && spec->output_mode != "complete" &&
        spec->output_mode != "update") {
      return Error(n, Join(p, "outputMode"), "expected append, complete or update, got '", mode,
                   "'");
    }
  }
  YAML::Node table = node["path"];
  // The Kafka sink writes to topics (options.topic), the console to
  // stdout: neither has a path.
  if (!table && spec->format != "kafka" && spec->format != "console") {
    return Error(node, Join(p, "path"), "required key is missing (the table location)");
  }
  if (table) {
    SILT_ASSIGN_OR_RETURN(spec->path, Scalar(table, Join(p, "path")));
    if (spec->path.empty()) return Error(table, Join(p, "path"), "must not be empty");
  }
  if (YAML::Node n = node["partitionBy"]) {
    SILT_ASSIGN_OR_RETURN(spec->partition_by, ScalarList(n, Join(p, "partitionBy")));
  }
  if (YAML::Node n = node["clusterBy"]) {
    SILT_ASSIGN_OR_RETURN(spec->cluster_by, ScalarList(n, Join(p, "clusterBy")));
    if (!spec->partition_by.empty() && !spec->cluster_by.empty()) {
      return Error(n, Join(p, "clusterBy"),
                   "a Delta table is either partitioned or clustered: drop partitionBy or "
                   "clusterBy");
    }
  }
  for (const char* key : {"generatedColumns", "identityColumns"}) {
    YAML::Node n = node[key];
    if (!n) continue;
    SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(n, Join(p, key)));
    if (spec->format != "delta") {
      return Error(n, Join(p, key), "applies to format delta, not ", spec->format);
    }
    (std::string_view(key) == "generatedColumns" ? spec->generated_columns
                                                 : spec->identity_columns) = std::move(entries);
  }
  if (YAML::Node n = node["options"]) {
    SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(n, Join(p, "options")));
    for (auto& [key, value] : entries) spec->options[key] = value;
  }
  if (YAML::Node n = node["mode"]) {
    SILT_ASSIGN_OR_RETURN(std::string mode, Scalar(n, Join(p, "mode")));
    spec->mode = AsciiLower(mode);
    if (spec->mode != "append" && spec->mode != "merge") {
      return Error(n, Join(p, "mode"), "expected append or merge, got '", mode, "'");
    }
    if (spec->mode == "merge" &&
        (!spec->generated_columns.empty() || !spec->identity_columns.empty())) {
      return Error(n, Join(p, "mode"),
                   "generatedColumns and identityColumns are computed by appends only, not "
                   "by the merge sink");
    }
    if (spec->mode == "merge" && spec->format != "delta") {
      return Error(n, Join(p, "mode"), "merge needs format delta (got ", spec->format, ")");
    }
  }
  if (YAML::Node n = node["merge"]) {
    if (spec->mode != "merge") {
      return Error(n, Join(p, "merge"), "set mode: merge to merge batches into the table");
    }
    MergeSinkSpec merge;
    SILT_RETURN_NOT_OK(ParseMerge(n, Join(p, "merge"), &merge));
    spec->merge = std::move(merge);
  } else if (spec->mode == "merge") {
    return Error(node, Join(p, "merge"),
                 "required with mode: merge ({on: <condition>, whenMatched: [...], "
                 "whenNotMatched: [...]})");
  }
  if (YAML::Node n = node["dedupBy"]) {
    const std::string dp = Join(p, "dedupBy");
    if (spec->mode != "merge") {
      return Error(n, dp, "only a merge sink (mode: merge) deduplicates its batches");
    }
    if (!n.IsMap()) return Error(n, dp, "expected {keys: [<expr>, ...], orderBy: [<expr>]}");
    SILT_RETURN_NOT_OK(CheckKeys(n, dp, {"keys", "orderBy"}));
    DedupSpec dedup;
    YAML::Node keys = n["keys"];
    if (!keys) return Error(n, Join(dp, "keys"), "required key is missing");
    SILT_ASSIGN_OR_RETURN(dedup.keys, ScalarList(keys, Join(dp, "keys")));
    if (dedup.keys.empty()) return Error(keys, Join(dp, "keys"), "needs at least one key");
    if (YAML::Node o = n["orderBy"]) {
      SILT_ASSIGN_OR_RETURN(dedup.order_by, ScalarList(o, Join(dp, "orderBy")));
    }
    spec->dedup_by = std::move(dedup);
  }
  return Status::OK();
}

Status JobParser::ParseMerge(const YAML::Node& node, const std::string& path,
                             MergeSinkSpec* merge) const {
  if (!node.IsMap()) {
    return Error(node, path, "expected {on: <condition>, whenMatched: [...], ...}");
  }
  SILT_RETURN_NOT_OK(CheckKeys(node, path,
                               {"on", "targetAlias", "sourceAlias", "whenMatched", "whenNotMatched",
                                "whenNotMatchedBySource"}));
  YAML::Node on = node["on"];
  if (!on) {
    return Error(node, Join(path, "on"), "required key is missing (e.g. \"t.id = s.id\")");
  }
  SILT_ASSIGN_OR_RETURN(merge->on, Scalar(on, Join(path, "on")));
  if (YAML::Node n = node["targetAlias"]) {
    SILT_ASSIGN_OR_RETURN(merge->target_alias, Scalar(n, Join(path, "targetAlias")));
  }
  if (YAML::Node n = node["sourceAlias"]) {
    SILT_ASSIGN_OR_RETURN(merge->source_alias, Scalar(n, Join(path, "sourceAlias")));
  }
  if (merge->target_alias.empty() || merge->source_alias.empty() ||
      AsciiLower(merge->target_alias) == AsciiLower(merge->source_alias)) {
    return Error(node, path, "targetAlias and sourceAlias must be two different names");
  }
  struct Kind {
    const char* key;
    std::vector<MergeClauseSpec>* out;
    std::initializer_list<std::string_view> actions;
  };
  const Kind kinds[] = {
      {"whenMatched", &merge->when_matched, {"update", "updateAll", "delete"}},
      {"whenNotMatched", &merge->when_not_matched, {"insert", "insertAll"}},
      {"whenNotMatchedBySource", &merge->when_not_matched_by_source, {"update", "delete"}},
  };
  for (const Kind& kind : kinds) {
    YAML::Node list = node[kind.key];
    if (!list) continue;
    const std::string lp = Join(path, kind.key);
    if (!list.IsSequence()) {
      return Error(list, lp, "expected a list of clauses ({condition: ..., action: ...})");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string cp = Index(lp, i);
      const YAML::Node c = list[i];
      if (!c.IsMap()) return Error(c, cp, "expected {condition: <expr>, action: <action>, ...}");
      SILT_RETURN_NOT_OK(CheckKeys(c, cp, {"condition", "action", "set", "values"}));
      MergeClauseSpec clause;
      clause.key_path = cp;
      if (YAML::Node v = c["condition"]) {
        SILT_ASSIGN_OR_RETURN(clause.condition, Scalar(v, Join(cp, "condition")));
      }
      YAML::Node action = c["action"];
      std::string expected;
      for (std::string_view a : kind.actions) {
        if (!expected.empty()) expected += ", ";
        expected += a;
      }
      if (!action) return Error(c, Join(cp, "action"), "required key is missing (", expected, ")");
      SILT_ASSIGN_OR_RETURN(clause.action, Scalar(action, Join(cp, "action")));
      auto known = std::find(kind.actions.begin(), kind.actions.end(), clause.action);
      if (known == kind.actions.end()) {
        return Error(action, Join(cp, "action"), "expected one of ", expected, ", got '",
                     clause.action, "'");
      }
      const bool assigns = clause.action == "update" || clause.action == "insert";
      const char* list_key = clause.action == "insert" ? "values" : "set";
      const char* other_key = clause.action == "insert" ? "set" : "values";
      if (c[other_key]) {
        return Error(c[other_key], Join(cp, other_key), "not used by action ", clause.action,
                     assigns ? std::string(" (write ") + list_key + ")" : std::string());
      }
      if (YAML::Node v = c[list_key]) {
        if (!assigns) {
          return Error(v, Join(cp, list_key), "not used by action ", clause.action);
        }
        SILT_ASSIGN_OR_RETURN(clause.assignments, ScalarMap(v, Join(cp, list_key)));
      }
      if (assigns && clause.assignments.empty()) {
        return Error(c, Join(cp, list_key), "required for action ", clause.action,
                     " (or use action ", clause.action, "All)");
      }
      // Spark's rule: in each WHEN kind only the last clause may be
      // unconditional (a later one could never act).
      if (clause.condition.empty() && i + 1 < list.size()) {
        return Error(c, Join(cp, "condition"),
                     "only the last clause of a list may omit its condition");
      }
      kind.out->push_back(std::move(clause));
    }
  }
  if (merge->when_matched.empty() && merge->when_not_matched.empty() &&
      merge->when_not_matched_by_source.empty()) {
    return Error(node, path,
                 "needs at least one of whenMatched, whenNotMatched, whenNotMatchedBySource");
  }
  return Status::OK();
}

Status JobParser::ParseDeadLetter(const YAML::Node& node, JobSpec* job) const {
  if (!node.IsMap()) {
    return Error(node, "deadLetter", "expected a mapping such as {path: /data/dead_letters}");
  }
  SILT_RETURN_NOT_OK(CheckKeys(node, "deadLetter", {"path", "options"}));
  SinkSpec spec;
  spec.format = "delta";
  spec.name = "deadLetter";
  spec.key_path = "deadLetter";
  YAML::Node table = node["path"];
  if (!table) return Error(node, "deadLetter.path", "required key is missing (the table location)");
  SILT_ASSIGN_OR_RETURN(spec.path, Scalar(table, "deadLetter.path"));
  if (spec.path.empty()) return Error(table, "deadLetter.path", "must not be empty");
  if (YAML::Node n = node["options"]) {
    SILT_ASSIGN_OR_RETURN(auto entries, ScalarMap(n, "deadLetter.options"));
    for (auto& [key, value] : entries) spec.options[key] = value;
  }
  job->dead_letter = std::move(spec);
  return Status::OK();
}

}  // namespace silt::stream::job_internal
