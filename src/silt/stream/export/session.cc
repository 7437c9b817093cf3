// The PySpark export's whole-job checks and SparkSession settings: Delta's
// extensions, the job's SQL confs, metrics and S3A.
#include <string>
#include <vector>

#include "silt/stream/export/exporter_internal.h"
#include "silt/stream/export/python_internal.h"
#include "silt/stream/ops/sql_step.h"

namespace silt::stream::pyspark {

Status Exporter::CheckJob() {
  if (job_.dead_letter) {
    return Refuse("deadLetter",
                  "Spark has no dead-letter table (rows failing from_json in mode DEADLETTER, "
                  "ANSI casts, late rows or NOT NULL checks stay in the batch or stop the "
                  "query); keep bad records with PERMISSIVE and a columnNameOfCorruptRecord "
                  "column and route them with `sinks:` and a `where`, then export that job");
  }
  for (size_t i = 0; i < job_.transforms.size(); ++i) {
    const TransformStep& step = job_.transforms[i];
    if (step.kind == "sql") {
      // The same check as `silt run`'s; the program runs the text itself.
      SILT_ASSIGN_OR_RETURN(std::vector<TransformStep> split, SplitSqlStep(step));
      for (const TransformStep& part : split) {
        if (part.kind == "groupBy") sql_aggregation_ = step.key_path + ".sql";
      }
    }
    if (step.kind == "groupBy") group_by_index_ = static_cast<int>(i);
  }
  return Status::OK();
}

Status Exporter::Session() {
  packages_.insert(std::string(kDeltaPackage));
  session_conf_.push_back({"spark.sql.extensions", Py("io.delta.sql.DeltaSparkSessionExtension")});
  session_conf_.push_back(
      {"spark.sql.catalog.spark_catalog", Py("org.apache.spark.sql.delta.catalog.DeltaCatalog")});
  // Spark's default zone is the JVM's and its ANSI default changes in 4.0;
  // silt's are UTC and false, so both are always written.
  sql_conf_["spark.sql.session.timeZone"] = Py(job_.session_time_zone);
  sql_conf_["spark.sql.ansi.enabled"] = Py(job_.ansi ? "true" : "false");
  for (const auto& [key, value] : job_.spark_conf) {
    if (key == "spark.sql.session.timeZone" || key == "spark.sql.ansi.enabled") continue;
    sql_conf_[key] = Py(value);
  }
  if (job_.metrics) {
    const MetricsSpec& m = *job_.metrics;
    sql_conf_["spark.sql.streaming.metricsEnabled"] = Py("true");
    session_conf_.push_back({"spark.ui.prometheus.enabled", Py("true")});
    if (m.port != 0) session_conf_.push_back({"spark.ui.port", Py(std::to_string(m.port))});
    session_notes_.push_back(
        "metrics: silt serves /metrics, /status and /healthz on " + m.host + ":" +
        std::to_string(m.port) +
        ". Spark reports the query's progress through its metrics system "
        "(spark.sql.streaming.metricsEnabled) and its UI serves Prometheus text at "
        "/metrics/prometheus/ (spark.ui.prometheus.enabled); the metric names differ and "
        "there is no /healthz (use the cluster manager's checks).");
  }
  return S3();
}

Status Exporter::S3() {
  bool any_s3 = !job_.storage_s3.empty() || IsS3Path(job_.checkpoint_location);
  for (const SinkSpec& sink : AllSinks()) any_s3 = any_s3 || IsS3Path(sink.path);
  if (auto path = GetOption(job_.source.options, "path")) any_s3 = any_s3 || IsS3Path(*path);
  for (const TransformStep& step : job_.transforms) {
    any_s3 = any_s3 || IsS3Path(step.join_with.path);
  }
  if (!any_s3) return Status::OK();
  packages_.insert(std::string(kS3Package));
  // Spark's Hadoop has no file system for s3://; S3A serves both schemes
  // (and reads the same fs.s3a.* settings), so paths stay as written.
  session_conf_.push_back(
      {"spark.hadoop.fs.s3.impl", Py("org.apache.hadoop.fs.s3a.S3AFileSystem")});
  session_notes_.push_back(
      "S3: silt creates Delta commits with a conditional PUT, so several writers are safe. "
      "delta-spark 3.2's default S3 log store (S3SingleDriverLogStore) assumes that one "
      "driver writes each table; for several writers configure the S3DynamoDBLogStore "
      "(io.delta:delta-storage-s3-dynamodb).");
  for (const auto& [key, value] : job_.storage_s3) {
    const std::vector<std::string> raw_path = {"storage", "s3", key};
    auto conf = [&](std::string_view name, std::string expr) {
      session_conf_.push_back({"spark.hadoop." + std::string(name), std::move(expr)});
    };
    if (key == "endpoint" || key == "fs.s3a.endpoint") {
      conf("fs.s3a.endpoint", Py(value));
    } else if (key == "region" || key == "fs.s3a.endpoint.region") {
      conf("fs.s3a.endpoint.region", Py(value));
    } else if (key == "accessKey" || key == "fs.s3a.access.key") {
      conf("fs.s3a.access.key", SecretExpr(raw_.Get(raw_path), value));
    } else if (key == "secretKey" || key == "fs.s3a.secret.key") {
      conf("fs.s3a.secret.key", SecretExpr(raw_.Get(raw_path), value));
    } else if (key == "sessionToken" || key == "fs.s3a.session.token") {
      conf("fs.s3a.session.token", SecretExpr(raw_.Get(raw_path), value));
      conf("fs.s3a.aws.credentials.provider",
           Py("org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"));
    } else if (key == "pathStyleAccess" || key == "fs.s3a.path.style.access") {
      conf("fs.s3a.path.style.access", Py(AsciiLower(value)));
    } else if (key == "partSizeBytes") {
      conf("fs.s3a.multipart.size", Py(value));
    } else if (key == "maxParallelParts") {
      conf("fs.s3a.fast.upload.active.blocks", Py(value));
    } else if (key == "maxAttempts") {
      conf("fs.s3a.attempts.maximum", Py(value));
    } else if (key == "profile") {
      conf("fs.s3a.aws.credentials.provider",
           Py("com.amazonaws.auth.profile.ProfileCredentialsProvider"));
      session_notes_.push_back(
          "storage.s3.profile: the AWS SDK reads the profile from "
          "AWS_PROFILE; set AWS_PROFILE=" +
          value + " for the driver and the executors.");
    } else if (key == "singleWriter") {
      // The log-store note above says what Spark does.
    } else if (key == "retryTimeoutSeconds") {
      session_notes_.push_back(
          "storage.s3.retryTimeoutSeconds: S3A retries by count and interval "
          "(fs.s3a.retry.limit, fs.s3a.retry.interval), not by a total time.");
    } else if (key == "caBundle") {
      session_notes_.push_back("storage.s3.caBundle (" + value +
                               "): the JVM trusts the CAs of its trust store; import the "
                               "bundle into it (keytool) or point javax.net.ssl.trustStore "
                               "at one that holds it.");
    } else if (key.starts_with("fs.s3a.")) {
      conf(key, Py(value));
    } else {
      return Refuse("storage.s3." + key, "no S3A setting known for this key");
    }
  }
  return Status::OK();
}

std::vector<SinkSpec> Exporter::AllSinks() const {
  if (!job_.sinks.empty()) return job_.sinks;
  return {job_.sink};
}

}  // namespace silt::stream::pyspark
