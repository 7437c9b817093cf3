// The PySpark export of a maintenance job (`type: maintenance`):
// run_maintenance(spark) running OPTIMIZE and VACUUM over the tables, and a
// __main__ that runs it on the job's schedule.
#include <cstdio>
#include <string>
#include <vector>

#include "silt/stream/export/exporter_internal.h"
#include "silt/stream/export/python_internal.h"

namespace silt::stream::pyspark {

Result<std::string> Exporter::RunMaintenance() {
  const MaintenanceSpec& m = *job_.maintenance;
  SILT_RETURN_NOT_OK(Session());
  if (m.vacuum && m.vacuum_lite) {
    return Refuse("vacuum.lite", "delta-spark 3.2 has no VACUUM LITE (Delta 3.3 added it)");
  }
  need_delta_tables_ = true;
  if (m.optimize) {
    sql_conf_["spark.databricks.delta.optimize.maxFileSize"] =
        Py(std::to_string(m.target_file_bytes));
  }
  if (m.vacuum && !m.vacuum_retention_check) {
    sql_conf_["spark.databricks.delta.retentionDurationCheck.enabled"] = Py("false");
  }
  std::vector<std::string>& f = functions_;
  f.push_back("");
  f.push_back("");
  f.push_back("TABLES = [");
  for (const std::string& table : m.tables) f.push_back("    " + Py(table) + ",");
  f.push_back("]");
  f.push_back("");
  f.push_back("");
  f.push_back("def run_maintenance(spark):");
  f.push_back("    \"\"\"One run: " + std::string(m.optimize ? "OPTIMIZE" : "") +
              (m.optimize && m.vacuum ? ", then " : "") + (m.vacuum ? "VACUUM" : "") +
              ", each table in order. Returns the failures");
  f.push_back("    as (table, operation, error), after trying every table.\"\"\"");
  f.push_back("    set_sql_conf(spark)");
  f.push_back("    failures = []");
  f.push_back("    for table in TABLES:");
  if (m.optimize) {
    f.push_back("        try:");
    std::string call = "DeltaTable.forPath(spark, table).optimize()";
    if (!m.optimize_where.empty()) call += ".where(" + Py(m.optimize_where) + ")";
    if (m.min_input_files != 2) {
      f.push_back("            # minInputFiles " + std::to_string(m.min_input_files) +
                  ": delta-spark compacts every bin of two or more files; it has no such "
                  "setting.");
    }
    f.push_back("            metrics = " + call +
                (m.zorder_by.empty() ? ".executeCompaction()"
                                     : ".executeZOrderBy(" + PyArgs(m.zorder_by) + ")"));
    f.push_back("            print(f\"optimize {table}: {metrics.first()['metrics']}\")");
    f.push_back("        except Exception as error:  # noqa: BLE001 - reported, as silt does");
    f.push_back("            print(f\"optimize {table} failed: {error}\")");
    f.push_back("            failures.append((table, \"optimize\", error))");
  }
  if (m.vacuum) {
    f.push_back("        try:");
    std::string retain;
    if (m.vacuum_retention_ms) {
      char hours[64];
      std::snprintf(hours, sizeof(hours), "%.17g",
                    static_cast<double>(*m.vacuum_retention_ms) / 3'600'000.0);
      retain = hours;
    }
    if (m.vacuum_dry_run) {
      f.push_back("            escaped = table.replace(\"`\", \"``\")");
      f.push_back("            files = spark.sql(f\"VACUUM delta.`{escaped}`" +
                  (retain.empty() ? std::string() : " RETAIN " + retain + " HOURS") +
                  " DRY RUN\").count()");
      f.push_back("            print(f\"vacuum {table} (dry run): {files} files to delete\")");
    } else {
      f.push_back("            DeltaTable.forPath(spark, table).vacuum(" + retain + ")");
      f.push_back("            print(f\"vacuum {table}: done\")");
    }
    f.push_back("        except Exception as error:  # noqa: BLE001 - reported, as silt does");
    f.push_back("            print(f\"vacuum {table} failed: {error}\")");
    f.push_back("            failures.append((table, \"vacuum\", error))");
  }
  f.push_back("    return failures");
  main_.push_back("    spark = create_session()");
  if (m.interval_micros == 0) {
    main_.push_back("    failures = run_maintenance(spark)");
    main_.push_back("    if failures:");
    main_.push_back("        raise failures[0][2]");
  } else {
    need_time_ = true;
    const double seconds = static_cast<double>(m.interval_micros) / 1e6;
    char interval[64];
    std::snprintf(interval, sizeof(interval), "%.17g", seconds);
    main_.push_back("    # schedule: every " + SparkInterval(m.interval_micros) +
                    (m.max_runs ? ", " + std::to_string(*m.max_runs) + " runs" : "") +
                    "; failures are reported and the next run goes on.");
    main_.push_back("    runs = 0");
    main_.push_back("    while True:");
    main_.push_back("        run_maintenance(spark)");
    main_.push_back("        runs += 1");
    if (m.max_runs) {
      main_.push_back("        if runs >= " + std::to_string(*m.max_runs) + ":");
      main_.push_back("            break");
    }
    main_.push_back("        time.sleep(" + std::string(interval) + ")");
  }
  return Assemble();
}

}  // namespace silt::stream::pyspark
