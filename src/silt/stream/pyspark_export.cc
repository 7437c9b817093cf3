#include "silt/stream/pyspark_export.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/base/strings.h"
#include "silt/stream/ops/sql_step.h"
#include "silt/stream/source/delta_source.h"
#include "silt/stream/source/eventhubs_source.h"
#include "silt/stream/source/file_source.h"
#include "silt/stream/source/generator_source.h"
#include "silt/stream/source/kafka_source.h"
#include "silt/stream/source/mqtt_source.h"

namespace silt::stream {

namespace {

// The Maven coordinates a program needs, for spark.jars.packages: the
// versions the seed job runs (and the tests use).
constexpr std::string_view kDeltaPackage = "io.delta:delta-spark_2.12:3.2.1";
constexpr std::string_view kKafkaPackage = "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.3";
// hadoop-aws of the Hadoop that pyspark 3.5 ships (3.3.4).
constexpr std::string_view kS3Package = "org.apache.hadoop:hadoop-aws:3.3.4";
constexpr std::string_view kEventHubsPackage =
    "com.microsoft.azure:azure-eventhubs-spark_2.12:2.3.22";

template <typename... Args>
Status Refuse(std::string_view key_path, Args&&... why) {
  return Status::InvalidArgument(key_path,
                                 ": cannot be exported to PySpark: ", std::forward<Args>(why)...);
}

// A Python string literal (double-quoted; UTF-8 passes through).
std::string Py(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string PyArgs(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += Py(item);
  }
  return out;
}

std::string PyList(const std::vector<std::string>& items) { return "[" + PyArgs(items) + "]"; }

// A duration as Spark's interval parser reads it ("5 minutes"), in the
// largest unit that holds it exactly.
std::string SparkInterval(int64_t micros) {
  struct Unit {
    int64_t micros;
    const char* singular;
    const char* plural;
  };
  static constexpr Unit kUnits[] = {{3'600'000'000LL, "hour", "hours"},
                                    {60'000'000LL, "minute", "minutes"},
                                    {1'000'000LL, "second", "seconds"},
                                    {1'000LL, "millisecond", "milliseconds"},
                                    {1LL, "microsecond", "microseconds"}};
  if (micros == 0) return "0 seconds";
  for (const Unit& unit : kUnits) {
    if (micros % unit.micros == 0) {
      const int64_t n = micros / unit.micros;
      return std::to_string(n) + " " + (n == 1 ? unit.singular : unit.plural);
    }
  }
  return std::to_string(micros) + " microseconds";
}

std::optional<std::string> GetOption(const std::map<std::string, std::string>& options,
                                     std::string_view name) {
  for (const auto& [key, value] : options) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

// The job file before environment expansion, to write secrets that came
// from the environment as environment lookups.
class RawValues {
 public:
  explicit RawValues(const std::string& yaml) {
    if (yaml.empty()) return;
    try {
      root_ = YAML::Load(yaml);
    } catch (const YAML::Exception&) {
      root_ = YAML::Node();  // the parsed JobSpec came from the same text
    }
  }

  // The raw scalar at `path` ("sinks", "1", "options", "kafka.sasl.password").
  std::optional<std::string> Get(const std::vector<std::string>& path) const {
    if (!root_.IsDefined() || root_.IsNull()) return std::nullopt;
    try {
      // Node::operator= would assign through to the tree; reset() rebinds.
      YAML::Node node;
      node.reset(root_);
      for (const std::string& part : path) {
        if (node.IsSequence() && AllDigits(part) && !part.empty()) {
          const size_t index = static_cast<size_t>(std::stoul(part));
          if (index >= node.size()) return std::nullopt;
          node.reset(node[index]);
        } else if (node.IsMap()) {
          bool found = false;
          for (auto it = node.begin(); it != node.end() && !found; ++it) {
            if (it->first.IsScalar() && it->first.Scalar() == part) {
              node.reset(it->second);
              found = true;
            }
          }
          if (!found) return std::nullopt;
        } else {
          return std::nullopt;
        }
        if (!node.IsDefined()) return std::nullopt;
      }
      if (!node.IsScalar()) return std::nullopt;
      return node.Scalar();
    } catch (const YAML::Exception&) {
      return std::nullopt;
    }
  }

 private:
  YAML::Node root_;
};

// "sinks[2]" -> {"sinks", "2"}; "sink" -> {"sink"}.
std::vector<std::string> RawPath(std::string_view key_path) {
  std::vector<std::string> out;
  std::string part;
  for (char c : key_path) {
    if (c == '.' || c == '[' || c == ']') {
      if (!part.empty()) out.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) out.push_back(part);
  return out;
}

// A Python expression for a secret: os.environ lookups when the raw value is
// exactly one ${NAME} / ${NAME:-default} reference, else the literal.
std::string SecretExpr(const std::optional<std::string>& raw, const std::string& value) {
  if (raw && raw->size() > 3 && raw->starts_with("${") && raw->ends_with("}") &&
      raw->find('}') == raw->size() - 1) {
    std::string_view inner = std::string_view(*raw).substr(2, raw->size() - 3);
    size_t sep = inner.find(":-");
    std::string_view name = sep == std::string_view::npos ? inner : inner.substr(0, sep);
    if (!name.empty()) {
      if (sep == std::string_view::npos) return "os.environ[" + Py(name) + "]";
      return "os.environ.get(" + Py(name) + ", " + Py(inner.substr(sep + 2)) + ")";
    }
  }
  return Py(value);
}

bool IsS3Path(std::string_view path) {
  return StartsWithIgnoreCase(path, "s3://") || StartsWithIgnoreCase(path, "s3a://");
}

// One Spark option: the name and a Python expression for its value.
struct PyOption {
  std::string key;
  std::string value_expr;
};

// Names that mean the same to librdkafka and to the Java Kafka client.
constexpr std::string_view kKafkaSameNames[] = {
    "bootstrap.servers",
    "security.protocol",
    "sasl.mechanism",
    "client.id",
    "group.id",
    "fetch.max.bytes",
    "fetch.min.bytes",
    "max.partition.fetch.bytes",
    "request.timeout.ms",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "metadata.max.age.ms",
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "retry.backoff.ms",
    "isolation.level",
    "client.rack",
    "connections.max.idle.ms",
    "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms",
    "sasl.kerberos.service.name",
    "acks",
    "compression.type",
    "linger.ms",
    "batch.size",
    "enable.idempotence",
    "max.in.flight.requests.per.connection",
    "delivery.timeout.ms",
};
// librdkafka names for the same settings under another Java name.
constexpr std::pair<std::string_view, std::string_view> kKafkaRenamed[] = {
    {"fetch.wait.max.ms", "fetch.max.wait.ms"},
    {"sasl.mechanisms", "sasl.mechanism"},
    {"compression.codec", "compression.type"},
    {"message.max.bytes", "max.request.size"},
};
// librdkafka tuning without a Java client counterpart; they do not change
// what is read or written.
constexpr std::string_view kKafkaTuningOnly[] = {
    "socket.timeout.ms",
    "receive.message.max.bytes",
    "queued.min.messages",
    "queued.max.messages.kbytes",
    "fetch.error.backoff.ms",
    "fetch.queue.backoff.ms",
    "topic.metadata.refresh.interval.ms",
    "socket.keepalive.enable",
    "socket.nagle.disable",
    "statistics.interval.ms",
    "debug",
    "log_level",
    "api.version.request",
    "broker.version.fallback",
};

// The program being written: its settings, helpers and body.
class Exporter {
 public:
  Exporter(const JobSpec& job, const PySparkExportOptions& options)
      : job_(job), options_(options), raw_(options.raw_yaml) {}

  Result<std::string> Run() {
    if (job_.maintenance) return RunMaintenance();
    SILT_RETURN_NOT_OK(CheckJob());
    SILT_RETURN_NOT_OK(Session());
    SILT_RETURN_NOT_OK(Source());
    SILT_RETURN_NOT_OK(Transforms());
    SILT_RETURN_NOT_OK(Sink());
    return Assemble();
  }

 private:
  // ------------------------------------------------------------------
  // Whole-job checks and the session

  Status CheckJob() {
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

  Status Session() {
    packages_.insert(std::string(kDeltaPackage));
    session_conf_.push_back(
        {"spark.sql.extensions", Py("io.delta.sql.DeltaSparkSessionExtension")});
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

  Status S3() {
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

  std::vector<SinkSpec> AllSinks() const {
    if (!job_.sinks.empty()) return job_.sinks;
    return {job_.sink};
  }

  // ------------------------------------------------------------------
  // Source

  Status Source() {
    const SourceSpec& source = job_.source;
    const std::string& format = source.format;
    if (job_.scale_out) {
      Comment(1, "scaleOut (" + job_.scale_out->mode +
                     "): silt runs several workers on one Kafka consumer group and keeps each "
                     "partition's offset in the table's txn actions. On Spark one query spreads "
                     "the topic's partitions over the cluster's executors: run this program once. "
                     "It keeps its offsets in its checkpoint and does not read the workers' "
                     "txns, so give it a checkpoint of its own and, to continue where the "
                     "workers stopped, startingOffsets from the table's recorded offsets "
                     "(`silt checkpoint` / `silt describe` show them).");
    }
    if (format == "generator") {
      SILT_RETURN_NOT_OK(GeneratorOptions::FromSpec(source).status());
      return Refuse("source.format",
                    "generator is silt's built-in sensor-event generator and Spark has no "
                    "counterpart; produce the events into Kafka (`silt produce`) and read them "
                    "with format: kafka, then export that job");
    }
    if (format == "mqtt") {
      SILT_RETURN_NOT_OK(MqttSourceOptions::FromSpec(source).status());
      return Refuse("source.format",
                    "mqtt: Spark 3.5 has no MQTT source (Apache Bahir's was last released for "
                    "Spark 2.4 and has other columns and no write-ahead log); bridge the broker "
                    "into Kafka (e.g. Kafka Connect's MQTT source) and read it with format: "
                    "kafka, then export that job");
    }
    if (format == "json" || format == "text") return FileSource();
    if (format == "kafka") return KafkaSource();
    if (format == "delta") return DeltaSource();
    if (format == "eventhubs") return EventHubsSource();
    return Refuse("source.format", "unknown source format '", format, "'");
  }

  Status FileSource() {
    const SourceSpec& source = job_.source;
    SILT_RETURN_NOT_OK(FileSourceOptions::FromSpec(source).status());
    Line(1, "# source: Spark's file source (" + source.format + " files in a directory)");
    LoadFromPath(source.format, /*with_schema=*/source.format == "json");
    return Status::OK();
  }

  // `df = spark.readStream.format(...)...load(path)` for a source that reads
  // the `path` option: the job's schema when `with_schema`, every other
  // option carried over as written.
  void LoadFromPath(std::string_view format, bool with_schema) {
    const SourceSpec& source = job_.source;
    const std::string path = GetOption(source.options, "path").value_or("");
    Line(1, "df = (");
    Line(2, "spark.readStream.format(" + Py(format) + ")");
    if (with_schema) Line(2, ".schema(" + Py(source.schema_ddl) + ")");
    for (const auto& [key, value] : source.options) {
      if (EqualsIgnoreCase(key, "path")) continue;
      Line(2, ".option(" + Py(key) + ", " + Py(value) + ")");
    }
    Line(2, ".load(" + Py(path) + ")");
    Line(1, ")");
  }

  Status KafkaSource() {
    const SourceSpec& source = job_.source;
    SILT_RETURN_NOT_OK(KafkaSourceOptions::FromSpec(source).status());
    packages_.insert(std::string(kKafkaPackage));
    std::vector<PyOption> options;
    std::vector<std::string> notes;
    for (const auto& [key, value] : source.options) {
      if (EqualsIgnoreCase(key, "endingOffsets") || EqualsIgnoreCase(key, "endingTimestamp") ||
          EqualsIgnoreCase(key, "endingOffsetsByTimestamp")) {
        return Refuse("source.options." + key,
                      "Spark refuses ending offsets in streaming queries (\"ending offset not "
                      "valid in streaming queries\"); drop the option or run a batch query");
      }
      if (StartsWithIgnoreCase(key, "kafka.")) continue;
      if (EqualsIgnoreCase(key, "maxOffsetsPerTrigger")) {
        notes.push_back(
            "maxOffsetsPerTrigger: Spark splits the limit over partitions by backlog "
            "as silt does, but rounds small shares up, so a batch may read a few "
            "records more than the limit; silt never exceeds it.");
      }
      options.push_back({key, Py(value)});
    }
    SILT_RETURN_NOT_OK(
        KafkaOptions(source.options, "source.options", {"source", "options"}, &options, &notes));
    Line(1, "# source: Spark's Kafka source (spark-sql-kafka-0-10)");
    for (const std::string& note : notes) Comment(1, note);
    Line(1, "df = (");
    Line(2, "spark.readStream.format(\"kafka\")");
    for (const PyOption& option : options) {
      Line(2, ".option(" + Py(option.key) + ", " + option.value_expr + ")");
    }
    Line(2, ".load()");
    Line(1, ")");
    return Status::OK();
  }

  // The `kafka.*` options of a source or sink, as the Java client names
  // them (silt's are librdkafka's).
  Status KafkaOptions(const std::map<std::string, std::string>& all, const std::string& key_path,
                      const std::vector<std::string>& raw_prefix, std::vector<PyOption>* out,
                      std::vector<std::string>* notes) {
    std::optional<std::string> username;
    std::optional<std::string> password_expr;
    std::string mechanism = "PLAIN";
    for (const auto& [key, value] : all) {
      if (!StartsWithIgnoreCase(key, "kafka.")) continue;
      const std::string name = AsciiLower(std::string_view(key).substr(6));
      const std::string option_path = key_path + "." + key;
      std::vector<std::string> raw_path = raw_prefix;
      raw_path.push_back(key);
      if (name == "sasl.mechanism" || name == "sasl.mechanisms") mechanism = AsciiUpper(value);
      if (name == "sasl.username") {
        username = value;
        continue;
      }
      if (name == "sasl.password") {
        password_expr = SecretExpr(raw_.Get(raw_path), value);
        continue;
      }
      if (name == "sasl.jaas.config") {
        out->push_back({"kafka.sasl.jaas.config", SecretExpr(raw_.Get(raw_path), value)});
        continue;
      }
      if (name == "group.id") {
        notes->push_back(
            "kafka.group.id: Spark reads with this consumer group but commits no "
            "offsets to it (silt commits each batch's end offsets to it for lag "
            "tools); the checkpoint stays the authority in both.");
      }
      if (std::find(std::begin(kKafkaSameNames), std::end(kKafkaSameNames), name) !=
          std::end(kKafkaSameNames)) {
        out->push_back({"kafka." + name, Py(value)});
        continue;
      }
      if (name == "ssl.endpoint.identification.algorithm") {
        // librdkafka says "none" where the Java client wants an empty value.
        out->push_back({"kafka." + name, Py(AsciiLower(value) == "none" ? "" : value)});
        continue;
      }
      if (name == "ssl.ca.location") {
        out->push_back({"kafka.ssl.truststore.type", Py("PEM")});
        out->push_back({"kafka.ssl.truststore.location", Py(value)});
        continue;
      }
      bool renamed = false;
      for (const auto& [from, to] : kKafkaRenamed) {
        if (name == from) {
          out->push_back({"kafka." + std::string(to), Py(value)});
          renamed = true;
        }
      }
      if (renamed) continue;
      if (std::find(std::begin(kKafkaTuningOnly), std::end(kKafkaTuningOnly), name) !=
          std::end(kKafkaTuningOnly)) {
        notes->push_back(key + " = " + value +
                         ": librdkafka tuning without a Java client counterpart; not carried "
                         "over (it does not change the records).");
        continue;
      }
      return Refuse(option_path,
                    "librdkafka option without a Java Kafka client counterpart known to the "
                    "export (write the Java client's setting into the program by hand)");
    }
    if (username || password_expr) {
      if (!username || !password_expr) {
        return Refuse(key_path + ".kafka.sasl.username",
                      "needs both kafka.sasl.username and kafka.sasl.password");
      }
      std::string module;
      if (mechanism == "PLAIN") {
        module = "org.apache.kafka.common.security.plain.PlainLoginModule";
      } else if (mechanism == "SCRAM-SHA-256" || mechanism == "SCRAM-SHA-512") {
        module = "org.apache.kafka.common.security.scram.ScramLoginModule";
      } else {
        return Refuse(key_path + ".kafka.sasl.mechanism", "no JAAS login module known for ",
                      mechanism, " with a user name and password");
      }
      need_jaas_ = true;
      out->push_back({"kafka.sasl.jaas.config",
                      "_jaas(" + Py(module) + ", " + Py(*username) + ", " + *password_expr + ")"});
    }
    return Status::OK();
  }

  Status DeltaSource() {
    const SourceSpec& source = job_.source;
    SILT_RETURN_NOT_OK(DeltaSourceOptions::FromSpec(source).status());
    bool cdf = false;
    for (const auto& [key, value] : source.options) {
      if ((EqualsIgnoreCase(key, "readChangeFeed") || EqualsIgnoreCase(key, "readChangeData")) &&
          EqualsIgnoreCase(value, "true")) {
        cdf = true;
      }
    }
    Line(1, cdf ? "# source: delta-spark's streaming source, reading the change data feed"
                : "# source: delta-spark's streaming source (the table's added rows)");
    LoadFromPath("delta", /*with_schema=*/false);
    return Status::OK();
  }

  Status EventHubsSource() {
    const SourceSpec& source = job_.source;
    SILT_RETURN_NOT_OK(EventHubsSourceOptions::FromSpec(source).status());
    for (const auto& [key, value] : source.options) {
      if (StartsWithIgnoreCase(key, "kafka.")) {
        return Refuse("source.options." + key,
                      "a setting of silt's Kafka-protocol client for Event Hubs; the connector "
                      "reads over AMQP and has no such setting");
      }
    }
    packages_.insert(std::string(kEventHubsPackage));
    Line(1, "# source: the Azure Event Hubs connector (azure-eventhubs-spark), over AMQP.");
    Comment(1,
            "silt reads the namespace's Kafka endpoint: there `offset` is the sequence number "
            "as text, `publisher` is NULL and `properties` are the Kafka headers; the "
            "connector gives the AMQP values. Not tested by silt (no namespace is reachable "
            "from its tests); check the connector release that matches your Spark.");
    Line(1, "eh_conf = {");
    for (const auto& [key, value] : source.options) {
      std::string expr = Py(value);
      if (EqualsIgnoreCase(key, "eventhubs.connectionString")) {
        // The connector's Python API takes the string encrypted.
        expr = "spark.sparkContext._jvm.org.apache.spark.eventhubs.EventHubsUtils.encrypt(" +
               SecretExpr(raw_.Get({"source", "options", key}), value) + ")";
      }
      Line(2, Py(key) + ": " + expr + ",");
    }
    Line(1, "}");
    Line(1, "df = spark.readStream.format(\"eventhubs\").options(**eh_conf).load()");
    return Status::OK();
  }

  // ------------------------------------------------------------------
  // Transform steps

  Status Transforms() {
    for (const TransformStep& step : job_.transforms) {
      Line(0, "");
      Line(1, "# " + step.key_path + "." + step.kind);
      if (step.kind == "select") {
        Line(1, "df = df.selectExpr(");
        for (const std::string& item : step.exprs) Line(2, Py(item) + ",");
        Line(1, ")");
      } else if (step.kind == "where") {
        Line(1, "df = df.where(" + Py(step.exprs[0]) + ")");
      } else if (step.kind == "withColumn") {
        // silt evaluates the entries in order, each seeing the ones before.
        for (const auto& [name, text] : step.named) {
          Line(1, "df = df.withColumn(" + Py(name) + ", F.expr(" + Py(text) + "))");
        }
      } else if (step.kind == "withColumnRenamed") {
        for (const auto& [from, to] : step.named) {
          Line(1, "df = df.withColumnRenamed(" + Py(from) + ", " + Py(to) + ")");
        }
      } else if (step.kind == "drop") {
        Line(1, "df = df.drop(" + PyArgs(step.exprs) + ")");
      } else if (step.kind == "withWatermark") {
        SILT_ASSIGN_OR_RETURN(int64_t micros, ParseDurationMicros(step.delay_threshold));
        Line(1, "df = df.withWatermark(" + Py(step.event_time) + ", " + Py(SparkInterval(micros)) +
                    ")");
      } else if (step.kind == "sql") {
        Line(1, "df.createOrReplaceTempView(\"input\")");
        Line(1, "df = spark.sql(" + Py(step.exprs[0]) + ")");
      } else if (step.kind == "join") {
        Join(step);
      } else if (step.kind == "groupBy") {
        std::vector<std::string> keys;
        for (const std::string& key : step.exprs) keys.push_back("F.expr(" + Py(key) + ")");
        std::vector<std::string> aggs;
        for (const std::string& agg : step.aggs) aggs.push_back("F.expr(" + Py(agg) + ")");
        Line(1, "df = df.groupBy(");
        for (const std::string& key : keys) Line(2, key + ",");
        Line(1, ").agg(");
        for (const std::string& agg : aggs) Line(2, agg + ",");
        Line(1, ")");
        // Spark puts the grouping columns first, under the names silt gives
        // them (`window`, `session_window`, the column or the alias).
        Line(1, "group_keys = df.columns[:" + std::to_string(step.exprs.size()) + "]");
      } else if (step.kind == "dropDuplicates" || step.kind == "dropDuplicatesWithinWatermark") {
        Line(1,
             "df = df." + step.kind + "(" + (step.exprs.empty() ? "" : PyList(step.exprs)) + ")");
      } else {
        return Refuse(step.key_path, "unknown step '", step.kind, "'");
      }
    }
    return Status::OK();
  }

  void Join(const TransformStep& step) {
    const StaticTableSpec& with = step.join_with;
    Comment(1,
            "The static side: Spark plans the Delta table anew for every micro-batch, as silt "
            "reads it again when it has a new commit.");
    Line(1, "static = spark.read.format(\"delta\").load(" + Py(with.path) + ")");
    if (!with.where.empty()) Line(1, "static = static.where(" + Py(with.where) + ")");
    if (!with.select.empty()) Line(1, "static = static.selectExpr(" + PyArgs(with.select) + ")");
    Line(1, "df = df.join(static, " + PyList(step.exprs) + ", " + Py(step.join_how) + ")");
  }

  // ------------------------------------------------------------------
  // Sinks

  Status Sink() {
    const std::string& mode = job_.sink.output_mode;
    Line(0, "");
    if (!job_.sinks.empty()) return RoutedSinks();
    const SinkSpec& sink = job_.sink;
    std::string writer_mode = mode;
    if (sink.format == "console") {
      SILT_RETURN_NOT_OK(CheckOnly(sink, {"numRows", "truncate"}));
      Line(1, "# " + sink.key_path + ": Spark's console sink");
      Line(1, "writer = df.writeStream.format(\"console\").outputMode(" + Py(mode) + ")");
      for (const auto& [key, value] : sink.options) {
        Line(1, "writer = writer.option(" + Py(key) + ", " + Py(value) + ")");
      }
    } else if (sink.format == "kafka") {
      std::vector<PyOption> options;
      SILT_RETURN_NOT_OK(KafkaSinkOptions(sink, &options));
      Line(1, "# " + sink.key_path + ": Spark's Kafka sink (at least once, as silt's)");
      Line(1, "writer = df.writeStream.format(\"kafka\").outputMode(" + Py(mode) + ")");
      for (const PyOption& option : options) {
        Line(1, "writer = writer.option(" + Py(option.key) + ", " + option.value_expr + ")");
      }
    } else if (sink.format == "delta") {
      SILT_ASSIGN_OR_RETURN(DeltaOptions options, DeltaSinkOptions(sink));
      if (sink.mode == "merge") {
        SILT_ASSIGN_OR_RETURN(std::string fn, MergeFunction(sink, options));
        Line(1, "# " + sink.key_path + ": mode merge, as foreachBatch MERGE (" + fn + ")");
        Line(1, "writer = df.writeStream.outputMode(" + Py(mode) + ").foreachBatch(" + fn + ")");
      } else if (mode == "update" && (group_by_index_ >= 0 || !sql_aggregation_.empty())) {
        if (group_by_index_ < 0) {
          return Refuse(sql_aggregation_,
                        "outputMode update on a Delta sink needs the group keys, and an "
                        "aggregation written as a sql step has none (as `silt run` says): write "
                        "it as a groupBy step, or use mode: merge");
        }
        SILT_ASSIGN_OR_RETURN(std::string fn, UpsertFunction(sink, options));
        Line(1, "# " + sink.key_path +
                    ": outputMode update. delta-spark refuses update mode on a Delta sink; silt");
        Line(1, "# upserts the changed groups with a MERGE on the group keys, which is this");
        Line(1, "# foreachBatch (" + fn + ").");
        Line(1,
             "writer = df.writeStream.outputMode(\"update\").foreachBatch(" + fn + "(group_keys))");
      } else {
        if (mode == "update") {
          writer_mode = "append";
          Comment(1,
                  "outputMode update without an aggregation appends (in silt and in Spark); "
                  "delta-spark only takes it spelled append.");
        }
        if (!options.properties.empty()) {
          need_create_table_ = true;
          Comment(1,
                  "The table properties (delta.*) apply when the table is created: silt's sink "
                  "creates it at the first batch, here it is created before the query starts.");
          Line(1, "_create_table(spark, " + Py(sink.path) + ", df.schema, " +
                      PyList(sink.partition_by) + ", " + PyDict(options.properties) + ")");
        }
        Line(1, "# " + sink.key_path + ": delta-spark's streaming sink (txn: query id, batch id)");
        for (const std::string& note : options.notes) Comment(1, note);
        Line(1, "writer = df.writeStream.format(\"delta\").outputMode(" + Py(writer_mode) + ")");
        if (!sink.partition_by.empty()) {
          Line(1, "writer = writer.partitionBy(" + PyArgs(sink.partition_by) + ")");
        }
        for (const PyOption& option : options.writer) {
          Line(1, "writer = writer.option(" + Py(option.key) + ", " + option.value_expr + ")");
        }
        Line(1, "writer = writer.option(\"path\", " + Py(sink.path) + ")");
      }
    } else {
      return Refuse(sink.key_path + ".format", "unknown sink format '", sink.format, "'");
    }
    return WriterTail();
  }

  Status WriterTail() {
    if (!job_.name.empty()) Line(1, "writer = writer.queryName(QUERY_NAME)");
    Line(1, "writer = writer.option(\"checkpointLocation\", CHECKPOINT)");
    switch (job_.trigger.kind) {
      case TriggerKind::kDefault:
        Comment(1, "No trigger: the next batch starts when the previous one ends (both engines).");
        break;
      case TriggerKind::kProcessingTime:
        Line(1, "writer = writer.trigger(processingTime=" +
                    Py(SparkInterval(job_.trigger.interval_micros)) + ")");
        break;
      case TriggerKind::kOnce: Line(1, "writer = writer.trigger(once=True)"); break;
      case TriggerKind::kAvailableNow: Line(1, "writer = writer.trigger(availableNow=True)"); break;
    }
    Line(1, "return writer");
    return Status::OK();
  }

  Status CheckOnly(const SinkSpec& sink, std::initializer_list<std::string_view> known) {
    for (const auto& option : sink.options) {
      // Not a structured binding: clang 14 (the TSan and fuzz builds) does
      // not let a lambda capture one.
      const std::string& key = option.first;
      bool ok = std::any_of(known.begin(), known.end(),
                            [&](std::string_view k) { return EqualsIgnoreCase(k, key); });
      if (!ok) {
        return Refuse(sink.key_path + ".options." + key, "unknown option of the ", sink.format,
                      " sink");
      }
    }
    return Status::OK();
  }

  Status KafkaSinkOptions(const SinkSpec& sink, std::vector<PyOption>* options) {
    packages_.insert(std::string(kKafkaPackage));
    std::vector<std::string> notes;
    for (const auto& [key, value] : sink.options) {
      if (StartsWithIgnoreCase(key, "kafka.")) continue;
      if (!EqualsIgnoreCase(key, "topic")) {
        return Refuse(sink.key_path + ".options." + key, "unknown option of the Kafka sink");
      }
      options->push_back({key, Py(value)});
    }
    std::vector<std::string> raw = RawPath(sink.key_path);
    raw.push_back("options");
    SILT_RETURN_NOT_OK(
        KafkaOptions(sink.options, sink.key_path + ".options", raw, options, &notes));
    for (const std::string& note : notes) Comment(1, note);
    return Status::OK();
  }

  struct DeltaOptions {
    std::vector<PyOption> writer;                                 // writer .option(...)
    std::vector<std::pair<std::string, std::string>> properties;  // delta.*
    std::vector<std::string> notes;
  };

  Result<DeltaOptions> DeltaSinkOptions(const SinkSpec& sink) {
    if (!sink.cluster_by.empty()) {
      // The program targets delta-spark 3.2, whose streaming writer has no
      // clusterBy; a table clustered beforehand is appended to as it is.
      return Refuse(
          sink.key_path + ".clusterBy",
          "delta-spark 3.2's streaming writer cannot create a clustered table: "
          "create it first (CREATE TABLE ... CLUSTER BY) and drop clusterBy from the job");
    }
    if (!sink.generated_columns.empty() || !sink.identity_columns.empty()) {
      // A streaming writer cannot declare them; a table created with them
      // beforehand computes them on every append.
      return Refuse(sink.key_path +
                        (sink.generated_columns.empty() ? ".identityColumns" : ".generatedColumns"),
                    "Spark's streaming writer cannot create generated or identity columns: "
                    "create the table first (CREATE TABLE ... GENERATED ...) and drop the key "
                    "from the job");
    }
    DeltaOptions out;
    const std::string prefix = sink.key_path + ".options.";
    for (const auto& [key, value] : sink.options) {
      const std::string lower = AsciiLower(key);
      if (lower.starts_with("delta.")) {
        out.properties.emplace_back(key, value);
      } else if (lower == "mergeschema" || lower == "overwriteschema" ||
                 lower.starts_with("parquet.bloom.filter.")) {
        out.writer.push_back({key, Py(value)});
      } else if (lower == "maxrecordsperfile" || lower == "optimizewrite") {
        out.writer.push_back({key, Py(value)});
      } else if (lower == "compression") {
        std::string codec = AsciiLower(value);
        if (codec == "none") codec = "uncompressed";
        std::string expr = Py(codec);
        auto [it, inserted] = sql_conf_.emplace("spark.sql.parquet.compression.codec", expr);
        if (!inserted && it->second != expr) {
          return Refuse(prefix + key,
                        "Spark sets the Parquet codec for the session "
                        "(spark.sql.parquet.compression.codec), and another sink sets another");
        }
        out.notes.push_back("compression " + value +
                            ": set for the session as spark.sql.parquet.compression.codec.");
      } else if (lower == "autocompact") {
        sql_conf_["spark.databricks.delta.autoCompact.enabled"] = Py(AsciiLower(value));
        sql_conf_["spark.databricks.delta.properties.defaults.autoOptimize.autoCompact"] =
            Py(AsciiLower(value));
        out.notes.push_back(
            "autoCompact: delta-spark's auto compaction runs after a commit, in the writing "
            "query, where silt's runs beside the stream. delta-spark 3.2.1 honours the table "
            "property delta.autoOptimize.autoCompact (set for new tables through "
            "spark.databricks.delta.properties.defaults.*; ALTER TABLE an existing one), not "
            "the session switch alone (delta-io/delta#3967).");
      } else if (lower == "autocompact.minnumfiles") {
        sql_conf_["spark.databricks.delta.autoCompact.minNumFiles"] = Py(value);
      } else if (lower == "autocompact.maxfilesize") {
        SILT_ASSIGN_OR_RETURN(int64_t bytes, ParseByteSize(value));
        sql_conf_["spark.databricks.delta.autoCompact.maxFileSize"] = Py(std::to_string(bytes));
      } else if (lower == "autocompact.everyncommits") {
        out.notes.push_back("autoCompact.everyNCommits " + value +
                            ": delta-spark checks for compaction after every commit.");
      } else {
        return Refuse(prefix + key, "unknown option of the Delta sink");
      }
    }
    return out;
  }

  static std::string PyDict(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::string out = "{";
    for (const auto& [key, value] : entries) {
      if (out.size() > 1) out += ", ";
      out += Py(key) + ": " + Py(value);
    }
    return out + "}";
  }

  // A foreachBatch function doing the merge sink's MERGE; returns its name.
  Result<std::string> MergeFunction(const SinkSpec& sink, const DeltaOptions& options) {
    const std::string fn = FunctionName("_merge_", sink);
    const MergeSinkSpec& merge = *sink.merge;
    need_query_id_ = need_create_table_ = need_idempotent_ = need_delta_tables_ = true;
    std::vector<std::string>& f = functions_;
    f.push_back("");
    f.push_back("");
    f.push_back("def " + fn + "(batch_df, batch_id):");
    f.push_back("    \"\"\"" + sink.key_path + " (mode: merge): MERGE each batch into " +
                Escaped(sink.path) + " in one");
    f.push_back(
        "    commit recording txn(query id, batch id), so a re-run batch is skipped.\"\"\"");
    f.push_back("    spark = batch_df.sparkSession");
    AppendNotes(&f, options.notes);
    f.push_back("    _create_table(spark, " + Py(sink.path) + ", batch_df.schema, " +
                PyList(sink.partition_by) + ", " + PyDict(options.properties) + ")");
    f.push_back("    source = batch_df");
    if (sink.dedup_by) {
      need_window_ = true;
      const DedupSpec& dedup = *sink.dedup_by;
      f.push_back("    # dedupBy: the latest row per key (greatest orderBy values, NULL lowest;");
      f.push_back("    # then the last in batch order, which is Spark's read order here).");
      std::string keys;
      for (const std::string& key : dedup.keys) {
        keys += (keys.empty() ? "" : ", ") + std::string("F.expr(") + Py(key) + ")";
      }
      std::string order;
      for (const std::string& o : dedup.order_by) {
        order += "F.expr(" + Py(o) + ").desc_nulls_last(), ";
      }
      order += "F.col(\"__silt_seq\").desc()";
      f.push_back("    latest = Window.partitionBy(" + keys + ").orderBy(" + order + ")");
      f.push_back("    source = (");
      f.push_back("        source.withColumn(\"__silt_seq\", F.monotonically_increasing_id())");
      f.push_back("        .withColumn(\"__silt_rank\", F.row_number().over(latest))");
      f.push_back("        .where(\"__silt_rank = 1\")");
      f.push_back("        .drop(\"__silt_seq\", \"__silt_rank\")");
      f.push_back("    )");
    }
    f.push_back("    merge = (");
    f.push_back("        DeltaTable.forPath(spark, " + Py(sink.path) + ")");
    f.push_back("        .alias(" + Py(merge.target_alias) + ")");
    f.push_back("        .merge(source.alias(" + Py(merge.source_alias) + "), " + Py(merge.on) +
                ")");
    auto clause_line = [&](const std::string& method, const MergeClauseSpec& clause,
                           const char* assign_key) {
      std::vector<std::string> args;
      if (!clause.condition.empty()) args.push_back("condition=" + Py(clause.condition));
      if (!clause.assignments.empty()) {
        args.push_back(std::string(assign_key) + "=" + PyDict(clause.assignments));
      }
      std::string joined;
      for (const std::string& a : args) joined += (joined.empty() ? "" : ", ") + a;
      f.push_back("        ." + method + "(" + joined + ")");
    };
    for (const MergeClauseSpec& c : merge.when_matched) {
      if (c.action == "update") clause_line("whenMatchedUpdate", c, "set");
      if (c.action == "updateAll") clause_line("whenMatchedUpdateAll", c, "set");
      if (c.action == "delete") clause_line("whenMatchedDelete", c, "set");
    }
    for (const MergeClauseSpec& c : merge.when_not_matched) {
      if (c.action == "insert") clause_line("whenNotMatchedInsert", c, "values");
      if (c.action == "insertAll") clause_line("whenNotMatchedInsertAll", c, "values");
    }
    for (const MergeClauseSpec& c : merge.when_not_matched_by_source) {
      if (c.action == "update") clause_line("whenNotMatchedBySourceUpdate", c, "set");
      if (c.action == "delete") clause_line("whenNotMatchedBySourceDelete", c, "set");
    }
    f.push_back("    )");
    f.push_back("    _idempotent(spark, batch_id, merge.execute)");
    return fn;
  }

  // A factory of foreachBatch functions upserting the changed groups (update
  // mode on a Delta sink); returns its name.
  Result<std::string> UpsertFunction(const SinkSpec& sink, const DeltaOptions& options) {
    const std::string fn = FunctionName("_upsert_", sink);
    need_query_id_ = need_create_table_ = need_idempotent_ = need_delta_tables_ = true;
    std::vector<std::string>& f = functions_;
    f.push_back("");
    f.push_back("");
    f.push_back("def " + fn + "(keys):");
    f.push_back("    \"\"\"" + sink.key_path +
                " in update mode: each batch's changed groups MERGEd");
    f.push_back("    into " + Escaped(sink.path) +
                " on the group keys (NULL-safe), in one commit recording");
    f.push_back("    txn(query id, batch id).\"\"\"");
    f.push_back("");
    f.push_back("    def write(batch_df, batch_id):");
    f.push_back("        spark = batch_df.sparkSession");
    for (const std::string& note : options.notes) f.push_back("        # " + note);
    f.push_back("        _create_table(spark, " + Py(sink.path) + ", batch_df.schema, " +
                PyList(sink.partition_by) + ", " + PyDict(options.properties) + ")");
    f.push_back("        on = \" AND \".join(f\"t.`{k}` <=> s.`{k}`\" for k in keys) or \"true\"");
    f.push_back("        merge = (");
    f.push_back("            DeltaTable.forPath(spark, " + Py(sink.path) + ")");
    f.push_back("            .alias(\"t\")");
    f.push_back("            .merge(batch_df.alias(\"s\"), on)");
    f.push_back("            .whenMatchedUpdateAll()");
    f.push_back("            .whenNotMatchedInsertAll()");
    f.push_back("        )");
    f.push_back("        _idempotent(spark, batch_id, merge.execute)");
    f.push_back("");
    f.push_back("    return write");
    return fn;
  }

  // `sinks:`: one foreachBatch writing every sink from one read.
  Status RoutedSinks() {
    const std::string& mode = job_.sink.output_mode;
    const bool upsert = mode == "update" && group_by_index_ >= 0;
    std::vector<std::string> body;
    std::vector<std::string> sink_notes;
    for (const SinkSpec& sink : job_.sinks) {
      if (!body.empty()) body.push_back("");
      body.push_back("        # " + sink.key_path + " (" + sink.name + ")");
      std::string out = "batch_df";
      if (!sink.where.empty()) out += ".where(" + Py(sink.where) + ")";
      if (!sink.select.empty()) out += ".selectExpr(" + PyArgs(sink.select) + ")";
      body.push_back("        out = " + out);
      if (sink.format == "delta") {
        SILT_ASSIGN_OR_RETURN(DeltaOptions options, DeltaSinkOptions(sink));
        if (sink.mode == "merge") {
          SILT_ASSIGN_OR_RETURN(std::string fn, MergeFunction(sink, options));
          body.push_back("        " + fn + "(out, batch_id)");
          continue;
        }
        if (mode == "update" && !sql_aggregation_.empty() && group_by_index_ < 0) {
          return Refuse(sql_aggregation_,
                        "outputMode update on a Delta sink needs the group keys, and an "
                        "aggregation written as a sql step has none: write it as a groupBy "
                        "step, or use mode: merge");
        }
        if (upsert) {
          SILT_ASSIGN_OR_RETURN(std::string fn, UpsertFunction(sink, options));
          body.push_back("        " + fn + "(keys)(out, batch_id)");
          continue;
        }
        need_query_id_ = true;
        for (const std::string& note : options.notes) body.push_back("        # " + note);
        if (!options.properties.empty()) {
          need_create_table_ = true;
          body.push_back("        _create_table(spark, " + Py(sink.path) + ", out.schema, " +
                         PyList(sink.partition_by) + ", " + PyDict(options.properties) + ")");
        }
        body.push_back("        writer = out.write.format(\"delta\").mode(" +
                       Py(mode == "complete" ? "overwrite" : "append") + ")");
        if (!sink.partition_by.empty()) {
          body.push_back("        writer = writer.partitionBy(" + PyArgs(sink.partition_by) + ")");
        }
        for (const PyOption& option : options.writer) {
          body.push_back("        writer = writer.option(" + Py(option.key) + ", " +
                         option.value_expr + ")");
        }
        body.push_back("        writer = writer.option(\"txnAppId\", _query_id(spark))");
        body.push_back("        writer = writer.option(\"txnVersion\", batch_id)");
        body.push_back("        writer.save(" + Py(sink.path) + ")");
      } else if (sink.format == "kafka") {
        std::vector<PyOption> options;
        SILT_RETURN_NOT_OK(KafkaSinkOptions(sink, &options));
        body.push_back(
            "        # At least once, as silt's Kafka sink: a re-run batch sends again.");
        body.push_back("        writer = out.write.format(\"kafka\")");
        for (const PyOption& option : options) {
          body.push_back("        writer = writer.option(" + Py(option.key) + ", " +
                         option.value_expr + ")");
        }
        body.push_back("        writer.save()");
      } else if (sink.format == "console") {
        SILT_RETURN_NOT_OK(CheckOnly(sink, {"numRows", "truncate"}));
        int64_t rows = 20;
        bool truncate = true;
        if (auto v = GetOption(sink.options, "numRows")) rows = std::stoll(*v);
        if (auto v = GetOption(sink.options, "truncate")) truncate = AsciiLower(*v) != "false";
        body.push_back("        print(\"-\" * 43)");
        body.push_back("        print(f\"Batch: {batch_id}\")");
        body.push_back("        print(\"-\" * 43)");
        body.push_back("        out.show(" + std::to_string(rows) + ", " +
                       (truncate ? "True" : "False") + ")");
      } else {
        return Refuse(sink.key_path + ".format", "unknown sink format '", sink.format, "'");
      }
    }
    std::vector<std::string>& f = functions_;
    f.push_back("");
    f.push_back("");
    f.push_back("def _write_sinks(keys):");
    f.push_back(
        "    \"\"\"sinks: every sink fed from one read of each batch, in the order listed.");
    f.push_back("    Delta tables commit with txn(query id, batch id), so after a failure the");
    f.push_back("    re-run batch is skipped by the tables that already record it.\"\"\"");
    f.push_back("");
    f.push_back("    def write(batch_df, batch_id):");
    f.push_back("        spark = batch_df.sparkSession");
    f.push_back("        batch_df.persist()");
    f.push_back("        try:");
    for (const std::string& line : body) f.push_back(line.empty() ? line : "    " + line);
    f.push_back("        finally:");
    f.push_back("            batch_df.unpersist()");
    f.push_back("");
    f.push_back("    return write");
    Line(1, "# sinks: one foreachBatch writes every sink (_write_sinks)");
    Line(1, "writer = df.writeStream.outputMode(" + Py(mode) + ").foreachBatch(_write_sinks(" +
                (upsert ? "group_keys" : "None") + "))");
    return WriterTail();
  }

  // A Python name for a sink's function, from the sink's name; unique.
  std::string FunctionName(std::string_view prefix, const SinkSpec& sink) {
    std::string out(prefix);
    for (char c : sink.name) {
      out += std::isalnum(static_cast<unsigned char>(c)) ? AsciiLower(c) : '_';
    }
    const std::string base = out;
    for (int n = 2; !function_names_.insert(out).second; ++n) out = base + "_" + std::to_string(n);
    return out;
  }

  // Text for inside a docstring.
  static std::string Escaped(std::string_view text) {
    std::string out;
    for (char c : text) {
      if (c == '\\' || c == '"') out += '\\';
      out += c;
    }
    return out;
  }

  static void AppendNotes(std::vector<std::string>* f, const std::vector<std::string>& notes) {
    for (const std::string& note : notes) f->push_back("    # " + note);
  }

  // ------------------------------------------------------------------
  // Maintenance jobs

  Result<std::string> RunMaintenance() {
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

  // ------------------------------------------------------------------
  // The program

  Result<std::string> Assemble() {
    std::string out;
    auto add = [&](const std::string& line) {
      // No trailing spaces on blank lines.
      size_t end = line.find_last_not_of(' ');
      out += end == std::string::npos ? std::string() : line.substr(0, end + 1);
      out += "\n";
    };
    const bool maintenance = job_.maintenance.has_value();
    std::string packages;
    for (const std::string& p : packages_) packages += (packages.empty() ? "" : ",") + p;
    add("#!/usr/bin/env python3");
    add("# " + std::string(job_.name.empty() ? "A silt job" : job_.name) + ": the silt job file " +
        (options_.job_file.empty() ? "" : options_.job_file + " ") +
        "as a PySpark 3.5 + delta-spark 3.2 program,");
    add("# written by `silt export --pyspark`" +
        (options_.silt_version.empty() ? std::string() : " (silt " + options_.silt_version + ")") +
        ".");
    add("#");
    add("#   spark-submit --packages " + packages + " THIS_FILE.py");
    add("#");
    add("# (or `python3 THIS_FILE.py` with pyspark and delta-spark installed: create_session()");
    add("# asks for the same packages). Environment variables of the job file were expanded");
    add("# when it was exported, except secrets, which are read from the environment here");
    add("# when the job file read them from it.");
    add("#");
    if (maintenance) {
      add("# run_maintenance(spark) runs the job once on a session of your own.");
    } else {
      add("# build(spark) returns the query's DataStreamWriter on a session of your own (it sets");
      add("# SQL_CONF on it); start(spark) starts it. Comments say where Spark behaves");
      add("# differently from silt.");
    }
    add("");
    add("import json  # noqa: F401 - used by helpers below when the job needs them");
    add("import os  # noqa: F401");
    if (need_time_) add("import time");
    add("");
    if (need_delta_tables_ || need_create_table_) add("from delta.tables import DeltaTable");
    add(std::string("from pyspark.sql import SparkSession") + (need_window_ ? ", Window" : ""));
    add("from pyspark.sql import functions as F  # noqa: F401");
    add("from pyspark.sql.utils import AnalysisException");
    add("");
    add("QUERY_NAME = " + (job_.name.empty() ? std::string("None") : Py(job_.name)));
    if (!maintenance) add("CHECKPOINT = " + Py(job_.checkpoint_location));
    if (job_.max_batches) {
      add("# maxBatches: silt stops after this many batches of a run; Spark has no such");
      add("# setting, so __main__ stops the query after them.");
      add("MAX_BATCHES = " + std::to_string(*job_.max_batches));
    }
    add("");
    add("# SparkSession settings: Delta's SQL extensions and catalog, and the job's storage.");
    for (const std::string& note : session_notes_) {
      for (const std::string& line : Wrap(note, 86)) add("# " + line);
    }
    add("SESSION_CONF = {");
    add("    \"spark.jars.packages\": " + Py(packages) + ",");
    for (const PyOption& option : session_conf_) {
      add("    " + Py(option.key) + ": " + option.value_expr + ",");
    }
    add("}");
    add("# SQL settings, set on the session by build(): the job's spark.sql.* keys, the");
    add("# session time zone (silt's default UTC) and ANSI mode (silt's default false).");
    add("SQL_CONF = {");
    for (const auto& [key, value] : sql_conf_) add("    " + Py(key) + ": " + value + ",");
    add("}");
    add("");
    add("");
    add("def create_session():");
    add("    builder = SparkSession.builder.appName(QUERY_NAME or \"silt-export\")");
    add("    for key, value in {**SESSION_CONF, **SQL_CONF}.items():");
    add("        builder = builder.config(key, value)");
    add("    return builder.getOrCreate()");
    add("");
    add("");
    add("def set_sql_conf(spark):");
    add("    \"\"\"Sets SQL_CONF on a running session; a static setting (which only a new");
    add("    session takes, see create_session) is left as the session has it.\"\"\"");
    add("    for key, value in SQL_CONF.items():");
    add("        try:");
    add("            spark.conf.set(key, value)");
    add("        except AnalysisException:");
    add("            pass");
    if (need_jaas_) {
      add("");
      add("");
      add("def _jaas(module, username, password):");
      add("    \"\"\"A JAAS line for the Java Kafka client (librdkafka's sasl.username and");
      add("    sasl.password).\"\"\"");
      add("    def quoted(text):");
      add("        return '\"' + text.replace('\\\\', '\\\\\\\\').replace('\"', '\\\\\"') + '\"'");
      add("");
      add("    return f\"{module} required username={quoted(username)} "
          "password={quoted(password)};\"");
    }
    if (need_query_id_) {
      add("");
      add("");
      add("_QUERY_ID = []");
      add("");
      add("");
      add("def _query_id(spark):");
      add("    \"\"\"The query's id from the checkpoint's metadata file: the appId of every");
      add("    Delta txn this program writes, as silt's sinks and Spark's Delta sink use "
          "it.\"\"\"");
      add("    if not _QUERY_ID:");
      add("        text = spark.read.text(CHECKPOINT.rstrip(\"/\") + \"/metadata\").first()[0]");
      add("        _QUERY_ID.append(json.loads(text)[\"id\"])");
      add("    return _QUERY_ID[0]");
    }
    if (need_create_table_) {
      add("");
      add("");
      add("def _nullable(data_type):");
      add("    \"\"\"The type with every field, element and value nullable, as a streaming");
      add("    write creates a Delta table.\"\"\"");
      add("    from pyspark.sql.types import ArrayType, MapType, StructField, StructType");
      add("");
      add("    if isinstance(data_type, StructType):");
      add("        return StructType([StructField(f.name, _nullable(f.dataType), True, "
          "f.metadata)");
      add("                           for f in data_type.fields])");
      add("    if isinstance(data_type, ArrayType):");
      add("        return ArrayType(_nullable(data_type.elementType), True)");
      add("    if isinstance(data_type, MapType):");
      add("        return MapType(_nullable(data_type.keyType), _nullable(data_type.valueType), "
          "True)");
      add("    return data_type");
      add("");
      add("");
      add("def _create_table(spark, path, schema, partition_by, properties):");
      add("    \"\"\"Creates the Delta table at `path` unless it exists (one commit, no data):");
      add("    the query's schema made nullable, its partitioning and table properties.\"\"\"");
      add("    if DeltaTable.isDeltaTable(spark, path):");
      add("        return");
      add("    builder = DeltaTable.createIfNotExists(spark).location(path)");
      add("    builder = builder.addColumns(_nullable(schema))");
      add("    if partition_by:");
      add("        builder = builder.partitionedBy(*partition_by)");
      add("    for key, value in properties.items():");
      add("        builder = builder.property(key, value)");
      add("    builder.execute()");
    }
    if (need_idempotent_) {
      add("");
      add("");
      add("def _idempotent(spark, batch_id, action):");
      add("    \"\"\"Runs a MERGE as the batch's idempotent Delta transaction (Delta's");
      add("    txnAppId/txnVersion session settings): a table that already records");
      add("    txn(query id, batch id) skips it, as silt's merge sink does.\"\"\"");
      add("    spark.conf.set(\"spark.databricks.delta.write.txnAppId\", _query_id(spark))");
      add("    spark.conf.set(\"spark.databricks.delta.write.txnVersion\", str(batch_id))");
      add("    try:");
      add("        action()");
      add("    finally:");
      add("        spark.conf.unset(\"spark.databricks.delta.write.txnAppId\")");
      add("        spark.conf.unset(\"spark.databricks.delta.write.txnVersion\")");
    }
    for (const std::string& line : functions_) add(line);
    if (!maintenance) {
      add("");
      add("");
      add("def build(spark):");
      add("    \"\"\"The query as a DataStreamWriter, not started.\"\"\"");
      add("    set_sql_conf(spark)");
      add("    group_keys = []  # noqa: F841 - the keys of a groupBy step, for update mode");
      for (const std::string& line : body_) add(line);
      add("");
      add("");
      add("def start(spark):");
      add("    return build(spark).start()");
      if (job_.max_batches) {
        add("");
        add("");
        add("def stop_after_batches(query, count):");
        add("    \"\"\"Stops `query` once `count` batches of this run have completed (Spark");
        add("    stops between batches or interrupts one, which then re-runs on restart).\"\"\"");
        add("    while query.isActive:");
        add("        done = {p[\"batchId\"] for p in query.recentProgress");
        add("                if \"addBatch\" in p.get(\"durationMs\", {})}");
        add("        if len(done) >= count:");
        add("            query.stop()");
        add("            break");
        add("        query.awaitTermination(0.5)");
      }
      main_.push_back("    query = start(create_session())");
      if (job_.max_batches) main_.push_back("    stop_after_batches(query, MAX_BATCHES)");
      main_.push_back("    query.awaitTermination()");
    }
    add("");
    add("");
    add("if __name__ == \"__main__\":");
    for (const std::string& line : main_) add(line);
    return out;
  }

  static std::vector<std::string> Wrap(const std::string& text, size_t width) {
    std::vector<std::string> lines;
    std::string line;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t space = text.find(' ', pos);
      std::string word =
          text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
      pos = space == std::string::npos ? text.size() : space + 1;
      if (!line.empty() && line.size() + 1 + word.size() > width) {
        lines.push_back(line);
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
  }

  void Line(int indent, const std::string& text) {
    body_.push_back(text.empty() ? std::string() : std::string(4 * indent, ' ') + text);
  }
  void Comment(int indent, const std::string& text) {
    for (const std::string& line : Wrap(text, 86 - 4 * indent)) Line(indent, "# " + line);
  }

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

}  // namespace

Result<std::string> ExportPySpark(const JobSpec& job, const PySparkExportOptions& options) {
  return Exporter(job, options).Run();
}

}  // namespace silt::stream
