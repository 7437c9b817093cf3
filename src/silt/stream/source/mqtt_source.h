// MqttSource (format: mqtt): subscribes to an MQTT 3.1.1 / 5 broker through
// libmosquitto and makes the stream replayable with a write-ahead log
// (MqttWal) under <checkpoint>/sources/<i>/wal.
//
// Option names follow Apache Bahir's sql-streaming-mqtt source where it has
// one (brokerUrl, topic, clientId, QoS, username, password, cleanSession,
// connectionTimeout, keepAlive, mqttVersion, maxInflight, ssl.protocol);
// silt's own: topics (several filters), ssl.ca.file / ssl.ca.path /
// ssl.cert.file / ssl.key.file (PEM, where Bahir takes Java key stores),
// maxMessagesPerTrigger, maxWalBytes. docs/job-file.md lists them.
//
// Record schema: topic string, payload binary, qos int, retained boolean,
// timestamp timestamp (arrival at silt), message_id int.
//
// Exactly once from the broker's acknowledgement on (docs/format/mqtt-wal.md):
// a background thread reads the socket, appends every message to the WAL,
// fsyncs, and only then lets libmosquitto write the PUBACKs it queued
// (libmosquitto 2.0 has no manual acknowledgement; in "threaded" mode it
// queues outgoing packets until mosquitto_loop_write, which silt calls after
// the fsync). A message the broker redelivers because its PUBACK was lost is
// recognised by its packet identifier and content and acknowledged without a
// second copy. Offsets are {"walOffset":n}: batch N holds WAL records
// [start, end). Segments wholly before the committed end are deleted after
// commits/N. When the WAL holds maxWalBytes, silt stops reading the socket:
// the broker keeps (and, past its own queue limits, drops) what it cannot
// deliver.
//
// QoS 2 is refused: libmosquitto answers PUBREC before the application sees
// the message, so the broker would forget it before it is durable.
//
// Thread safety: the Source methods are called by one query thread; the I/O
// thread shares only the WAL (whose contract allows it) and atomics.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silt/stream/source/source.h"

namespace silt::stream {

struct MqttSourceOptions {
  std::string broker_url;  // as written, for messages
  std::string host;
  int port = 1883;
  bool tls = false;
  std::vector<std::string> topics;
  int qos = 1;
  std::string client_id;  // empty: derived from the checkpoint path
  std::optional<std::string> username;
  std::optional<std::string> password;
  bool clean_session = false;
  int connection_timeout_s = 30;
  int keep_alive_s = 60;
  int mqtt_version = 4;  // 3 = 3.1, 4 = 3.1.1, 5 = 5.0 (Bahir's mqttVersion)
  int max_inflight = 20;
  std::string ssl_protocol;  // "tlsv1.2", "tlsv1.3"; empty: library default
  std::string ssl_ca_file;
  std::string ssl_ca_path;
  std::string ssl_cert_file;
  std::string ssl_key_file;
  std::optional<int64_t> max_messages_per_trigger;
  int64_t max_wal_bytes = int64_t{256} << 20;
  std::string key_path;  // "source.options"

  // Errors: InvalidArgument naming the job-file key.
  static Result<MqttSourceOptions> FromSpec(const SourceSpec& spec);
};

// The record schema above.
columnar::SchemaPtr MqttRecordSchema();

// {"walOffset":n} and back. Errors: InvalidArgument naming `where`.
std::string MqttOffsetToJson(int64_t wal_offset);
Result<int64_t> MqttOffsetFromJson(std::string_view json, std::string_view where);

// Connects only in Restore (MakeSource must not touch the broker or the
// checkpoint). REQUIRES: the checkpoint is on the local file system (the WAL
// needs fsync); Make says so otherwise.
Result<std::unique_ptr<Source>> MakeMqttSource(MqttSourceOptions options,
                                               const SourceContext& context);

}  // namespace silt::stream
