// JobParser: `type: maintenance` jobs (OPTIMIZE and VACUUM on a schedule).
#include "silt/stream/job/parser_internal.h"

namespace silt::stream::job_internal {

Result<JobSpec> JobParser::ParseMaintenanceJob(const YAML::Node& root) const {
  SILT_RETURN_NOT_OK(
      CheckKeys(root, "", {"name", "type", "tables", "optimize", "vacuum", "schedule", "storage"}));
  JobSpec job;
  MaintenanceSpec spec;
  if (YAML::Node n = root["name"]) {
    SILT_ASSIGN_OR_RETURN(job.name, Scalar(n, "name"));
  }
  YAML::Node tables = root["tables"];
  if (!tables)
    return Error(root, "tables", "required key is missing (the Delta tables to maintain)");
  SILT_ASSIGN_OR_RETURN(spec.tables, ScalarList(tables, "tables"));
  if (spec.tables.empty()) return Error(tables, "tables", "needs at least one table path");
  auto size_value = [&](const YAML::Node& n, const std::string& path) -> Result<int64_t> {
    SILT_ASSIGN_OR_RETURN(std::string text, Scalar(n, path));
    Result<int64_t> bytes = ParseByteSize(text);
    if (!bytes.ok()) return Error(n, path, bytes.status().message());
    return bytes;
  };
  if (YAML::Node n = root["optimize"]) {
    if (n.IsScalar()) {
      SILT_ASSIGN_OR_RETURN(spec.optimize, Boolean(n, "optimize"));
    } else if (n.IsMap()) {
      SILT_RETURN_NOT_OK(
          CheckKeys(n, "optimize", {"where", "targetSize", "minInputFiles", "zorderBy"}));
      if (YAML::Node v = n["where"]) {
        SILT_ASSIGN_OR_RETURN(spec.optimize_where, Scalar(v, "optimize.where"));
      }
      if (YAML::Node v = n["targetSize"]) {
        SILT_ASSIGN_OR_RETURN(spec.target_file_bytes, size_value(v, "optimize.targetSize"));
      }
      if (YAML::Node v = n["minInputFiles"]) {
        SILT_ASSIGN_OR_RETURN(spec.min_input_files, Integer(v, "optimize.minInputFiles"));
        if (spec.min_input_files < 1)
          return Error(v, "optimize.minInputFiles", "must be at least 1");
      }
      if (YAML::Node v = n["zorderBy"]) {
        SILT_ASSIGN_OR_RETURN(spec.zorder_by, ScalarList(v, "optimize.zorderBy"));
      }
    } else {
      return Error(n, "optimize", "expected false or a mapping of options");
    }
  }
  if (YAML::Node n = root["vacuum"]) {
    if (n.IsScalar()) {
      SILT_ASSIGN_OR_RETURN(spec.vacuum, Boolean(n, "vacuum"));
    } else if (n.IsMap()) {
      SILT_RETURN_NOT_OK(
          CheckKeys(n, "vacuum", {"retain", "retentionDurationCheck", "dryRun", "lite"}));
      if (YAML::Node v = n["retain"]) {
        SILT_ASSIGN_OR_RETURN(std::string text, Scalar(v, "vacuum.retain"));
        Result<int64_t> micros = ParseDurationMicros(text);
        if (!micros.ok()) return Error(v, "vacuum.retain", micros.status().message());
        spec.vacuum_retention_ms = *micros / 1000;
      }
      if (YAML::Node v = n["retentionDurationCheck"]) {
        SILT_ASSIGN_OR_RETURN(spec.vacuum_retention_check,
                              Boolean(v, "vacuum.retentionDurationCheck"));
      }
      if (YAML::Node v = n["dryRun"]) {
        SILT_ASSIGN_OR_RETURN(spec.vacuum_dry_run, Boolean(v, "vacuum.dryRun"));
      }
      if (YAML::Node v = n["lite"]) {
        SILT_ASSIGN_OR_RETURN(spec.vacuum_lite, Boolean(v, "vacuum.lite"));
      }
    } else {
      return Error(n, "vacuum", "expected false or a mapping of options");
    }
  }
  if (YAML::Node n = root["schedule"]) {
    if (!n.IsMap()) return Error(n, "schedule", "expected {interval: <duration>, maxRuns: <n>}");
    SILT_RETURN_NOT_OK(CheckKeys(n, "schedule", {"interval", "maxRuns"}));
    if (YAML::Node v = n["interval"]) {
      SILT_ASSIGN_OR_RETURN(std::string text, Scalar(v, "schedule.interval"));
      Result<int64_t> micros = ParseDurationMicros(text);
      if (!micros.ok()) return Error(v, "schedule.interval", micros.status().message());
      spec.interval_micros = *micros;
    }
    if (YAML::Node v = n["maxRuns"]) {
      SILT_ASSIGN_OR_RETURN(int64_t runs, Integer(v, "schedule.maxRuns"));
      if (runs < 1) return Error(v, "schedule.maxRuns", "must be at least 1");
      spec.max_runs = runs;
    }
  }
  if (!spec.optimize && !spec.vacuum) {
    return Error(root, "", "a maintenance job with optimize: false and vacuum: false does nothing");
  }
  if (YAML::Node n = root["storage"]) {
    SILT_RETURN_NOT_OK(ParseStorage(n, &job));
  }
  job.maintenance = std::move(spec);
  return job;
}

}  // namespace silt::stream::job_internal
