// ExportPySpark: a job file as the PySpark 3.5 + delta-spark 3.2 program
// that does the same thing (`silt export --pyspark JOB.yaml`), for users who
// move a job to a Spark cluster.
//
// The translation works from the parsed JobSpec, so environment variables
// are expanded and the job file is checked exactly as `silt run` does before
// it starts (the source's options included); expressions and SQL are Spark
// SQL already and are carried over as written. Every job-file feature either
// becomes the Spark call that means the same, or the export is refused with
// an InvalidArgument naming the job-file key and the reason (the CLI's exit
// code 2, like a bad job): silt's generator and MQTT sources, dead-letter
// tables, options of librdkafka that the Java Kafka client has no
// counterpart for, ... Where Spark behaves differently in a way the program
// cannot change, the program says so in a comment at that place.
//
// The program's shape (docs/cli.md#export):
//   SESSION_CONF / SQL_CONF   the SparkSession settings (Delta's extensions,
//                             the job's spark.sql.* confs, S3A settings)
//   create_session()          a SparkSession with those settings
//   build(spark)              sets SQL_CONF on `spark` and returns the
//                             query's DataStreamWriter, not started
//   start(spark)              build(spark).start()
//   __main__                  create_session(), start, wait (maxBatches: stop
//                             after that many batches)
// A maintenance job (`type: maintenance`) becomes run_maintenance(spark) and
// a __main__ that runs it (on its schedule).
//
// Secrets (storage.s3 keys, Kafka SASL passwords, the Event Hubs connection
// string) are written as os.environ lookups when the job file took them from
// the environment (`${NAME}` / `${NAME:-default}` in `raw_yaml`), so the
// program holds no more secrets than the job file did.
//
// Thread safety: a pure function of its arguments.
#pragma once

#include <string>

#include "silt/base/result.h"
#include "silt/stream/job.h"

namespace silt::stream {

struct PySparkExportOptions {
  // The job file's name as the user gave it, for the program's header.
  std::string job_file;
  // The job file's text before environment expansion (to find the secrets
  // that came from the environment); empty: every value is written as
  // expanded.
  std::string raw_yaml;
  // silt's version, for the header.
  std::string silt_version;
};

// Errors: InvalidArgument "<job-file key>: ... cannot be exported to PySpark:
// <why>" for a feature without a Spark counterpart; the errors of the
// source's option checks (as `silt run`'s).
Result<std::string> ExportPySpark(const JobSpec& job, const PySparkExportOptions& options);

}  // namespace silt::stream
