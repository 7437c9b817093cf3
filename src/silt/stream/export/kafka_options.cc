// The PySpark export's `kafka.*` options: librdkafka's names (silt's) as the
// Java Kafka client's, SASL credentials as a JAAS line, and the refusal of
// settings without a Java counterpart.
#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "silt/stream/export/exporter_internal.h"
#include "silt/stream/export/python_internal.h"

namespace silt::stream::pyspark {

namespace {

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

}  // namespace

Status Exporter::KafkaOptions(const std::map<std::string, std::string>& all,
                              const std::string& key_path,
                              const std::vector<std::string>& raw_prefix,
                              std::vector<PyOption>* out, std::vector<std::string>* notes) {
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

}  // namespace silt::stream::pyspark
