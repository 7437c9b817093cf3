#include "silt/stream/source/mqtt_source.h"

#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <poll.h>

#include <atomic>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/fs/file_system.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/options_internal.h"
#include "silt/stream/source/mqtt_wal.h"

namespace silt::stream {

namespace {

// How many of the newest WAL records the duplicate filter remembers. A
// redelivered message is one whose PUBACK was lost, so it is among the last
// few the broker sent (at most its in-flight window); brokers hand out packet
// identifiers in sequence over 1..65535, so within this many records an
// identifier is never reused for a different message.
constexpr int64_t kDuplicateWindow = 16384;
// The I/O thread's poll slice: how quickly it notices stop requests and WAL
// room.
constexpr int kPollMs = 100;
// Group commit: at most this many packets / payload bytes per WAL fsync.
constexpr int kMaxPacketsPerSync = 4096;
constexpr int64_t kMaxBytesPerSync = int64_t{4} << 20;

uint64_t Fnv1a(std::string_view a, std::string_view b) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : a) h = (h ^ c) * 1099511628211ull;
  h = (h ^ 0xFF) * 1099511628211ull;
  for (unsigned char c : b) h = (h ^ c) * 1099511628211ull;
  return h;
}

Status SplitBrokerUrl(const std::string& url, const std::string& key, MqttSourceOptions* out) {
  std::string_view rest(url);
  auto take = [&](std::string_view scheme) {
    if (StartsWithIgnoreCase(rest, scheme)) {
      rest.remove_prefix(scheme.size());
      return true;
    }
    return false;
  };
  if (take("tcp://") || take("mqtt://")) {
    out->tls = false;
    out->port = 1883;
  } else if (take("ssl://") || take("mqtts://") || take("tls://")) {
    out->tls = true;
    out->port = 8883;
  } else {
    return Status::InvalidArgument(key, ": expected tcp://host:port or ssl://host:port, got '", url,
                                   "'");
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  std::string_view host = rest;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {  // [IPv6]:port
    size_t close = rest.find(']');
    if (close == std::string_view::npos) {
      return Status::InvalidArgument(key, ": unclosed '[' in '", url, "'");
    }
    host = rest.substr(1, close - 1);
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Status::InvalidArgument(key, ": bad host in '", url, "'");
      port = after.substr(1);
      if (port.empty()) return Status::InvalidArgument(key, ": empty port in '", url, "'");
    }
  } else if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (port.empty()) return Status::InvalidArgument(key, ": empty port in '", url, "'");
  }
  if (!port.empty()) {
    int p = 0;
    bool ok = port.size() <= 5 && AllDigits(port);
    for (char c : port) p = p * 10 + (c - '0');
    if (!ok || p < 1 || p > 65535) {
      return Status::InvalidArgument(key, ": bad port '", port, "' in '", url, "'");
    }
    out->port = p;
  }
  if (host.empty() || host.find('/') != std::string_view::npos) {
    return Status::InvalidArgument(key, ": no host in '", url, "'");
  }
  out->host = std::string(host);
  return Status::OK();
}

// MQTT topic filter rules (3.1.1 section 4.7): '#' only last and alone in
// its level, '+' alone in its level, no NUL, 1..65535 bytes.
Status CheckTopicFilter(const std::string& filter, const std::string& key) {
  if (filter.empty() || filter.size() > 65535) {
    return Status::InvalidArgument(key, ": a topic filter must have 1 to 65535 bytes");
  }
  for (size_t i = 0; i < filter.size(); ++i) {
    const char c = filter[i];
    const bool level_start = i == 0 || filter[i - 1] == '/';
    const bool level_end = i + 1 == filter.size() || filter[i + 1] == '/';
    if (c == '\0') return Status::InvalidArgument(key, ": NUL in topic filter");
    if (c == '+' && !(level_start && level_end)) {
      return Status::InvalidArgument(key, ": '+' must fill a whole level in '", filter, "'");
    }
    if (c == '#' && !(level_start && i + 1 == filter.size())) {
      return Status::InvalidArgument(key, ": '#' must be the whole last level in '", filter, "'");
    }
  }
  return Status::OK();
}

std::once_flag lib_init_once;

class MqttBatchReader final : public BatchReader {
 public:
  MqttBatchReader(const MqttWal* wal, columnar::SchemaPtr schema, int64_t from, int64_t to)
      : wal_(wal), schema_(std::move(schema)), next_(from), to_(to) {}

  Result<columnar::RecordBatchPtr> Next() override {
    if (next_ >= to_) return columnar::RecordBatchPtr();
    // Chunks stay well below the int32 offsets of a binary column.
    constexpr int64_t kMaxChunkBytes = int64_t{64} << 20;
    SILT_ASSIGN_OR_RETURN(std::vector<MqttWalRecord> records,
                          wal_->Read(next_, to_, columnar::kTargetBatchRows, kMaxChunkBytes));
    columnar::ColumnBuilder topic(columnar::DataType::String());
    columnar::ColumnBuilder payload(columnar::DataType::Binary());
    columnar::ColumnBuilder qos(columnar::DataType::Int());
    columnar::ColumnBuilder retained(columnar::DataType::Boolean());
    columnar::ColumnBuilder timestamp(columnar::DataType::Timestamp());
    columnar::ColumnBuilder message_id(columnar::DataType::Int());
    for (const MqttWalRecord& r : records) {
      topic.AppendString(r.topic);
      payload.AppendString(r.payload);
      qos.Append<int32_t>(r.qos);
      retained.AppendBool(r.retained);
      timestamp.Append<int64_t>(r.arrival_micros);
      message_id.Append<int32_t>(r.message_id);
    }
    next_ += static_cast<int64_t>(records.size());
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->schema = schema_;
    batch->num_rows = static_cast<int64_t>(records.size());
    batch->columns = {topic.Finish(),    payload.Finish(),   qos.Finish(),
                      retained.Finish(), timestamp.Finish(), message_id.Finish()};
    return batch;
  }

 private:
  const MqttWal* wal_;
  columnar::SchemaPtr schema_;
  int64_t next_;
  int64_t to_;
};

class MqttSource final : public Source {
 public:
  MqttSource(MqttSourceOptions options, SourceContext context)
      : options_(std::move(options)), context_(std::move(context)), schema_(MqttRecordSchema()) {
    if (options_.client_id.empty()) {
      // Stable across restarts (the broker keeps the session under it) and
      // distinct per checkpoint; 23 characters, MQTT 3.1.1's guaranteed limit.
      char id[24];
      std::snprintf(id, sizeof(id), "silt-%016llx",
                    static_cast<unsigned long long>(Fnv1a(context_.metadata_dir, "")));
      options_.client_id = id;
    }
  }

  ~MqttSource() override { Stop(); }

  const columnar::SchemaPtr& schema() const override { return schema_; }

  std::string Description() const override {
    std::string topics;
    for (const std::string& t : options_.topics) topics += (topics.empty() ? "" : ",") + t;
    return "MQTTStreamSource[brokerUrl: " + options_.broker_url + ", topics: " + topics +
           ", clientId: " + options_.client_id + "]";
  }

  Status Restore(const std::optional<std::string>& last_planned) override {
    MqttWal::Options wal_options;
    wal_options.dir = fs::JoinPath(context_.metadata_dir, "wal");
    wal_options.segment_bytes =
        std::clamp<int64_t>(options_.max_wal_bytes / 8, int64_t{64} << 10, int64_t{8} << 20);
    SILT_ASSIGN_OR_RETURN(wal_, MqttWal::Open(wal_options));
    if (last_planned && *last_planned != "-") {
      SILT_ASSIGN_OR_RETURN(int64_t planned, MqttOffsetFromJson(*last_planned, "offsets"));
      if (planned > wal_->end_seq()) {
        return Status::Corruption("MQTT WAL ", wal_options.dir, " ends at record ", wal_->end_seq(),
                                  " but the checkpoint planned up to ", planned,
                                  " (was the WAL deleted or replaced?)");
      }
    }
    SILT_ASSIGN_OR_RETURN(std::vector<MqttWalRecord> tail, wal_->Tail(kDuplicateWindow));
    for (const MqttWalRecord& r : tail) Remember(r);
    subscriptions_path_ = fs::JoinPath(context_.metadata_dir, "subscriptions");
    Result<std::string> subscribed = context_.checkpoint_fs->ReadFile(subscriptions_path_);
    if (subscribed.ok()) stored_subscriptions_ = *subscribed;
    SILT_RETURN_NOT_OK(StartClient());
    thread_ = std::thread([this] { Run(); });
    return Status::OK();
  }

  Status PrepareForAvailableNow() override {
    SILT_ASSIGN_OR_RETURN(int64_t end, WaitForBacklog());
    available_now_end_ = end;
    return Status::OK();
  }

  // What "available now" means for a broker: the WAL plus whatever the
  // broker delivers once connected until it has been quiet for a second.
  // Returns the WAL's end then.
  Result<int64_t> WaitForBacklog() {
    const int64_t deadline =
        context_.clock->MonotonicMicros() + int64_t{options_.connection_timeout_s} * 1000000;
    while (!subscribed_.load() && context_.clock->MonotonicMicros() < deadline) {
      SILT_RETURN_NOT_OK(FatalStatus());
      context_.clock->SleepMicros(20000);
    }
    int64_t seen = wal_->end_seq();
    int64_t quiet_since = context_.clock->MonotonicMicros();
    while (context_.clock->MonotonicMicros() - quiet_since < 1000000) {
      SILT_RETURN_NOT_OK(FatalStatus());
      context_.clock->SleepMicros(50000);
      if (wal_->end_seq() != seen) {
        seen = wal_->end_seq();
        quiet_since = context_.clock->MonotonicMicros();
      }
    }
    return seen;
  }

  Result<std::optional<std::string>> LatestOffset(const std::optional<std::string>& start,
                                                  const ReadLimit& limit) override {
    SILT_RETURN_NOT_OK(FatalStatus());
    int64_t from = 0;
    if (start) {
      SILT_ASSIGN_OR_RETURN(from, MqttOffsetFromJson(*start, "start offset"));
    }
    if (limit.all_available && !available_now_end_ && !waited_for_backlog_) {
      // Trigger.Once: one batch of what the broker has for the session.
      SILT_RETURN_NOT_OK(WaitForBacklog().status());
      waited_for_backlog_ = true;
    }
    int64_t end = wal_->end_seq();
    reported_latest_ = MqttOffsetToJson(end);
    if (available_now_end_) end = std::min(end, *available_now_end_);
    if (!limit.all_available && options_.max_messages_per_trigger) {
      end = std::min(end, from + *options_.max_messages_per_trigger);
    }
    if (end <= from) return std::optional<std::string>();
    return std::optional<std::string>(MqttOffsetToJson(end));
  }

  std::string ReportLatestOffset() const override { return reported_latest_; }

  Result<std::unique_ptr<BatchReader>> GetBatch(const std::optional<std::string>& start,
                                                const std::string& end) override {
    int64_t from = 0;
    if (start) {
      SILT_ASSIGN_OR_RETURN(from, MqttOffsetFromJson(*start, "start offset"));
    }
    SILT_ASSIGN_OR_RETURN(int64_t to, MqttOffsetFromJson(end, "end offset"));
    if (to < from) {
      return Status::InvalidArgument("MQTT batch ends at ", to, " before its start ", from);
    }
    return std::unique_ptr<BatchReader>(new MqttBatchReader(wal_.get(), schema_, from, to));
  }

  // Trimming the WAL drops what a re-run of the batch would read.
  bool CommitDiscardsInput() const override { return true; }

  void OnBatchCommitted(const std::string& end_offset_json) override {
    Result<int64_t> end = MqttOffsetFromJson(end_offset_json, "committed offset");
    if (!end.ok()) return;
    Status st = wal_->TrimBefore(*end);
    if (!st.ok()) SILT_LOG_WARN("stream", "trimming the MQTT WAL: ", st.ToString());
  }

 private:
  Status FatalStatus() {
    std::lock_guard<std::mutex> lock(fatal_mu_);
    return fatal_;
  }
  void SetFatal(Status st) {
    SILT_LOG_ERROR("stream", Description(), ": ", st.ToString());
    std::lock_guard<std::mutex> lock(fatal_mu_);
    if (fatal_.ok()) fatal_ = std::move(st);
    stop_.store(true);
  }

  // The sequence number the next appended record gets.
  int64_t NextSeq() const { return wal_->end_seq() + wal_->buffered(); }

  void Remember(const MqttWalRecord& r) {
    if (r.qos == 0) return;
    recent_[r.message_id] = RecentMessage{Fnv1a(r.topic, r.payload), r.seq};
  }

  Status StartClient() {
    std::call_once(lib_init_once, [] { mosquitto_lib_init(); });
    mosq_ = mosquitto_new(options_.client_id.c_str(), options_.clean_session, this);
    if (mosq_ == nullptr) return Status::IOError("creating the MQTT client: out of memory");
    // "Threaded" tells libmosquitto not to write packets from inside
    // mosquitto_loop_read: the PUBACKs it queues while reading wait for
    // mosquitto_loop_write, which Run calls after the WAL fsync.
    mosquitto_threaded_set(mosq_, true);
    int version = options_.mqtt_version == 3   ? MQTT_PROTOCOL_V31
                  : options_.mqtt_version == 5 ? MQTT_PROTOCOL_V5
                                               : MQTT_PROTOCOL_V311;
    mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, version);
    if (version == MQTT_PROTOCOL_V5) {
      mosquitto_int_option(mosq_, MOSQ_OPT_RECEIVE_MAXIMUM, options_.max_inflight);
    }
    if (options_.username) {
      int rc = mosquitto_username_pw_set(mosq_, options_.username->c_str(),
                                         options_.password ? options_.password->c_str() : nullptr);
      if (rc != MOSQ_ERR_SUCCESS) {
        return Status::InvalidArgument(options_.key_path, ".username: ", mosquitto_strerror(rc));
      }
    }
    if (options_.tls) {
      auto opt = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
      if (options_.ssl_ca_file.empty() && options_.ssl_ca_path.empty()) {
        mosquitto_int_option(mosq_, MOSQ_OPT_TLS_USE_OS_CERTS, 1);
      }
      int rc = mosquitto_tls_set(mosq_, opt(options_.ssl_ca_file), opt(options_.ssl_ca_path),
                                 opt(options_.ssl_cert_file), opt(options_.ssl_key_file), nullptr);
      if (rc == MOSQ_ERR_SUCCESS && !options_.ssl_protocol.empty()) {
        rc = mosquitto_tls_opts_set(mosq_, 1, options_.ssl_protocol.c_str(), nullptr);
      }
      if (rc != MOSQ_ERR_SUCCESS) {
        return Status::InvalidArgument(options_.key_path,
                                       ".ssl.*: TLS settings rejected: ", mosquitto_strerror(rc),
                                       " (are the CA / certificate / key files readable PEM?)");
      }
    }
    mosquitto_connect_with_flags_callback_set(mosq_, &MqttSource::OnConnect);
    mosquitto_message_callback_set(mosq_, &MqttSource::OnMessage);
    mosquitto_subscribe_callback_set(mosq_, &MqttSource::OnSubscribe);
    return Status::OK();
  }

  std::string SubscriptionsText() const {
    std::string text = "qos " + std::to_string(options_.qos) + "\n";
    for (const std::string& t : options_.topics) text += t + "\n";
    return text;
  }

  static void OnConnect(mosquitto* mosq, void* self_ptr, int rc, int flags) {
    auto* self = static_cast<MqttSource*>(self_ptr);
    if (rc != 0) {
      // 3 (server unavailable) is transient; the others are the job's fault.
      if (rc == 3) {
        SILT_LOG_WARN("stream", self->Description(), ": broker unavailable; retrying");
        return;
      }
      self->SetFatal(Status::InvalidArgument(
          self->options_.key_path,
          ": the broker refused the connection: ", mosquitto_connack_string(rc)));
      return;
    }
    self->connected_ = true;
    self->duplicates_ = 0;
    const bool session_present = (flags & 1) != 0;
    if (!session_present) {
      // A fresh session: the broker redelivers nothing and may hand out
      // packet identifiers afresh, so the filter would only mislead.
      self->recent_.clear();
    }
    SILT_LOG_INFO("stream", self->Description(), ": connected",
                  session_present ? " (session resumed)" : " (new session)");
    // Re-subscribing a kept session would make the broker resend every
    // retained message, so silt subscribes only when the session is new or
    // the filters changed.
    if (session_present && self->stored_subscriptions_ == self->SubscriptionsText()) {
      self->subscribed_.store(true);
      return;
    }
    std::vector<char*> subs;
    for (std::string& t : self->options_.topics) subs.push_back(t.data());
    int options = 0;
    if (self->options_.mqtt_version == 5) options = MQTT_SUB_OPT_SEND_RETAIN_NEW;
    int sub_rc = mosquitto_subscribe_multiple(mosq, nullptr, static_cast<int>(subs.size()),
                                              subs.data(), self->options_.qos, options, nullptr);
    if (sub_rc != MOSQ_ERR_SUCCESS) {
      SILT_LOG_WARN("stream", self->Description(),
                    ": subscribe failed: ", mosquitto_strerror(sub_rc));
    }
  }

  static void OnSubscribe(mosquitto*, void* self_ptr, int, int count, const int* granted) {
    auto* self = static_cast<MqttSource*>(self_ptr);
    for (int i = 0; i < count; ++i) {
      if (granted[i] == 0x80 || granted[i] < self->options_.qos) {
        self->SetFatal(Status::InvalidArgument(
            self->options_.key_path, ".topic: the broker ",
            granted[i] == 0x80 ? std::string("refused the subscription to '")
                               : "granted only QoS " + std::to_string(granted[i]) + " for '",
            i < static_cast<int>(self->options_.topics.size()) ? self->options_.topics[i] : "",
            "'"));
        return;
      }
    }
    const std::string text = self->SubscriptionsText();
    Status st = self->context_.checkpoint_fs->WriteFile(self->subscriptions_path_, text);
    if (!st.ok()) SILT_LOG_WARN("stream", "recording the MQTT subscriptions: ", st.ToString());
    self->stored_subscriptions_ = text;
    self->subscribed_.store(true);
  }

  static void OnMessage(mosquitto*, void* self_ptr, const mosquitto_message* m) {
    auto* self = static_cast<MqttSource*>(self_ptr);
    std::string_view topic(m->topic);
    std::string_view payload(static_cast<const char*>(m->payload),
                             static_cast<size_t>(m->payloadlen));
    if (m->qos > 0) {
      auto it = self->recent_.find(m->mid);
      // Packet ids come round every 65535 messages: only a record within
      // the window can be the original of a redelivery.
      if (it != self->recent_.end() && it->second.hash == Fnv1a(topic, payload) &&
          self->NextSeq() - it->second.seq <= kDuplicateWindow) {
        // Redelivered after a lost PUBACK: the WAL holds it already, and
        // the PUBACK libmosquitto queued for this copy acknowledges it.
        if (self->duplicates_++ == 0) {
          SILT_LOG_INFO("stream", self->Description(), ": message id ", m->mid,
                        " redelivered after a lost PUBACK is in the WAL already; acknowledged "
                        "without a second copy");
        }
        return;
      }
    }
    MqttWalRecord r;
    r.seq = self->NextSeq();  // what Append assigns
    r.arrival_micros = self->context_.clock->NowMicros();
    r.message_id = m->mid;
    r.qos = m->qos;
    r.retained = m->retain;
    r.topic = std::string(topic);
    r.payload = std::string(payload);
    self->Remember(r);
    self->wal_->Append(std::move(r));
  }

  // Connects (blocking, bounded by connectionTimeout) and returns whether a
  // socket is open.
  bool Connect() {
    int rc = MOSQ_ERR_SUCCESS;
    if (options_.mqtt_version == 5) {
      mosquitto_property* props = nullptr;
      // MQTT 5 ends a session at disconnect unless it is given an expiry:
      // keep it as long as the broker allows, like a 3.1.1 persistent one.
      if (!options_.clean_session) {
        mosquitto_property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL, 0xFFFFFFFFu);
      }
      rc = mosquitto_connect_bind_v5(mosq_, options_.host.c_str(), options_.port,
                                     options_.keep_alive_s, nullptr, props);
      mosquitto_property_free_all(&props);
    } else {
      rc = mosquitto_connect(mosq_, options_.host.c_str(), options_.port, options_.keep_alive_s);
    }
    if (rc != MOSQ_ERR_SUCCESS) {
      const int64_t now = context_.clock->MonotonicMicros();
      if (now - last_connect_warning_ > 10 * 1000000) {
        SILT_LOG_WARN("stream", Description(), ": cannot connect: ",
                      rc == MOSQ_ERR_ERRNO ? std::strerror(errno) : mosquitto_strerror(rc),
                      "; retrying");
        last_connect_warning_ = now;
      }
      return false;
    }
    return true;
  }

  void Run() {
    int64_t backoff_ms = 100;
    bool paused_logged = false;
    while (!stop_.load()) {
      int sock = mosquitto_socket(mosq_);
      if (sock < 0) {
        connected_ = false;
        if (!Connect()) {
          for (int64_t slept = 0; slept < backoff_ms && !stop_.load(); slept += kPollMs) {
            std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
          }
          backoff_ms = std::min<int64_t>(backoff_ms * 2, 5000);
          continue;
        }
        backoff_ms = 100;
        sock = mosquitto_socket(mosq_);
      }
      // Back-pressure: with the WAL full, the socket is not read, so TCP
      // flow control stops the broker, which queues for the session.
      const bool full = wal_->size_bytes() >= options_.max_wal_bytes;
      if (full && !paused_logged) {
        SILT_LOG_WARN("stream", Description(), ": the WAL holds ", wal_->size_bytes(),
                      " bytes (maxWalBytes ", options_.max_wal_bytes,
                      "); not reading from the broker until batches commit");
      }
      paused_logged = full;
      pollfd pfd{};
      pfd.fd = sock;
      pfd.events =
          static_cast<short>((full ? 0 : POLLIN) | (mosquitto_want_write(mosq_) ? POLLOUT : 0));
      int n = ::poll(&pfd, 1, kPollMs);
      int rc = MOSQ_ERR_SUCCESS;
      if (n > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !full) {
        // mosquitto_loop_read takes one packet per call; taking what the
        // socket holds (within bounds) first makes one fsync cover many
        // messages.
        for (int packets = 0; packets < kMaxPacketsPerSync; ++packets) {
          rc = mosquitto_loop_read(mosq_, 1);
          if (rc != MOSQ_ERR_SUCCESS || mosquitto_socket(mosq_) < 0) break;
          if (wal_->buffered_bytes() >= kMaxBytesPerSync ||
              wal_->size_bytes() + wal_->buffered_bytes() >= options_.max_wal_bytes) {
            break;
          }
          pollfd more{};
          more.fd = mosquitto_socket(mosq_);
          more.events = POLLIN;
          if (::poll(&more, 1, 0) <= 0) break;
        }
      }
      // Durable first, acknowledged second.
      if (wal_->buffered() > 0) {
        Status st = wal_->Sync();
        if (!st.ok()) {
          SetFatal(st.WithContextParts("writing the MQTT WAL"));
          break;
        }
      }
      if (rc == MOSQ_ERR_SUCCESS && mosquitto_socket(mosq_) >= 0) {
        rc = mosquitto_loop_write(mosq_, 1);
      }
      if (rc == MOSQ_ERR_SUCCESS && mosquitto_socket(mosq_) >= 0) rc = mosquitto_loop_misc(mosq_);
      if (rc != MOSQ_ERR_SUCCESS && rc != MOSQ_ERR_NO_CONN && !stop_.load()) {
        SILT_LOG_WARN("stream", Description(), ": connection lost (",
                      rc == MOSQ_ERR_ERRNO ? std::strerror(errno) : mosquitto_strerror(rc),
                      "); reconnecting");
      }
      if (rc != MOSQ_ERR_SUCCESS) {
        connected_ = false;
        // mosquitto_loop_read closes the socket on errors; make sure.
        if (mosquitto_socket(mosq_) >= 0) mosquitto_disconnect(mosq_);
      }
    }
  }

  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (mosq_ != nullptr) {
      if (mosquitto_socket(mosq_) >= 0) {
        mosquitto_disconnect(mosq_);
        mosquitto_loop_write(mosq_, 1);
      }
      mosquitto_destroy(mosq_);
      mosq_ = nullptr;
    }
  }

  MqttSourceOptions options_;
  SourceContext context_;
  columnar::SchemaPtr schema_;
  std::unique_ptr<MqttWal> wal_;
  mosquitto* mosq_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> subscribed_{false};
  bool connected_ = false;  // I/O thread only
  std::mutex fatal_mu_;
  Status fatal_;
  // I/O thread only (after Restore): packet id -> the newest WAL record
  // with it, to drop redeliveries.
  struct RecentMessage {
    uint64_t hash = 0;  // of topic and payload
    int64_t seq = 0;    // its WAL sequence number
  };
  std::unordered_map<int32_t, RecentMessage> recent_;
  int64_t duplicates_ = 0;
  int64_t last_connect_warning_ = std::numeric_limits<int64_t>::min() / 2;
  std::string subscriptions_path_;
  std::string stored_subscriptions_;
  std::optional<int64_t> available_now_end_;
  bool waited_for_backlog_ = false;
  std::string reported_latest_;
};

}  // namespace

columnar::SchemaPtr MqttRecordSchema() {
  using columnar::DataType;
  return DataType::Struct({
      {"topic", DataType::String(), true},
      {"payload", DataType::Binary(), true},
      {"qos", DataType::Int(), true},
      {"retained", DataType::Boolean(), true},
      {"timestamp", DataType::Timestamp(), true},
      {"message_id", DataType::Int(), true},
  });
}

std::string MqttOffsetToJson(int64_t wal_offset) {
  JsonWriter w;
  w.BeginObject();
  w.Member("walOffset", wal_offset);
  w.EndObject();
  return w.Take();
}

Result<int64_t> MqttOffsetFromJson(std::string_view json, std::string_view where) {
  simdjson::dom::parser parser;
  Result<simdjson::dom::object> object = internal::ParseJsonObject(parser, json, where);
  if (!object.ok()) {
    return Status::InvalidArgument(where,
                                   ": expected an MQTT offset like {\"walOffset\":12}, got '",
                                   json.substr(0, 200), "'");
  }
  Result<std::optional<int64_t>> v = internal::GetOptionalInt(*object, "walOffset", where);
  if (!v.ok() || !v->has_value() || **v < 0) {
    return Status::InvalidArgument(where,
                                   ": expected an MQTT offset like {\"walOffset\":12}, got '",
                                   json.substr(0, 200), "'");
  }
  return **v;
}

Result<MqttSourceOptions> MqttSourceOptions::FromSpec(const SourceSpec& spec) {
  MqttSourceOptions o;
  o.key_path = spec.key_path + ".options";
  internal::OptionReader reader(spec.options, o.key_path);
  SILT_RETURN_NOT_OK(reader.CheckNames({
      .what = "MQTT source",
      .honoured = {"brokerUrl",
                   "path",
                   "topic",
                   "topics",
                   "clientId",
                   "QoS",
                   "username",
                   "password",
                   "cleanSession",
                   "connectionTimeout",
                   "keepAlive",
                   "mqttVersion",
                   "maxInflight",
                   "ssl.protocol",
                   "ssl.ca.file",
                   "ssl.ca.path",
                   "ssl.cert.file",
                   "ssl.key.file",
                   "maxMessagesPerTrigger",
                   "maxWalBytes"},
      // Bahir's client-side message store and reconnect switch: silt's WAL
      // replaces the first and always reconnects.
      .inert = {"persistence", "localStorage", "autoReconnect"},
      .unsupported = {{"ssl.key.store", ""},
                      {"ssl.key.store.type", ""},
                      {"ssl.key.store.password", ""},
                      {"ssl.trust.store", ""},
                      {"ssl.trust.store.type", ""},
                      {"ssl.trust.store.password", ""},
                      {"ssl.ciphers", ""},
                      {"ssl.key.manager", ""},
                      {"ssl.trust.manager", ""}},
  }));
  std::optional<std::string> url = reader.Get("brokerUrl");
  if (!url) url = reader.Get("path");
  if (!url) {
    return Status::InvalidArgument(reader.KeyPath("brokerUrl"),
                                   ": required (tcp://host:port or ssl://host:port)");
  }
  o.broker_url = *url;
  SILT_RETURN_NOT_OK(SplitBrokerUrl(*url, reader.KeyPath("brokerUrl"), &o));
  if (std::optional<std::string> t = reader.Get("topic")) {
    o.topics.push_back(*t);
    SILT_RETURN_NOT_OK(CheckTopicFilter(*t, reader.KeyPath("topic")));
  }
  if (std::optional<std::string> list = reader.Get("topics")) {
    std::string_view rest(*list);
    while (true) {
      size_t comma = rest.find(',');
      std::string t(TrimAscii(rest.substr(0, comma)));
      SILT_RETURN_NOT_OK(CheckTopicFilter(t, reader.KeyPath("topics")));
      o.topics.push_back(std::move(t));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (o.topics.empty()) {
    return Status::InvalidArgument(reader.KeyPath("topic"),
                                   ": required (a topic filter such as zigbee2mqtt/+; or "
                                   "topics: a comma-separated list)");
  }
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> qos, reader.GetInt("QoS", 0));
  if (qos) {
    if (*qos > 1) {
      return Status::InvalidArgument(reader.KeyPath("QoS"),
                                     ": must be 0 or 1; QoS 2 would be acknowledged (PUBREC) by "
                                     "libmosquitto before silt has made the message durable");
    }
    o.qos = static_cast<int>(*qos);
  }
  if (std::optional<std::string> id = reader.Get("clientId")) {
    if (id->empty() || id->size() > 65535) {
      return Status::InvalidArgument(reader.KeyPath("clientId"), ": must not be empty");
    }
    o.client_id = *id;
  }
  o.username = reader.Get("username");
  o.password = reader.Get("password");
  if (o.password && !o.username) {
    return Status::InvalidArgument(reader.KeyPath("password"), ": needs username");
  }
  SILT_ASSIGN_OR_RETURN(std::optional<bool> clean, reader.GetBool("cleanSession"));
  if (clean) o.clean_session = *clean;
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> timeout, reader.GetInt("connectionTimeout", 1));
  if (timeout) o.connection_timeout_s = static_cast<int>(std::min<int64_t>(*timeout, 3600));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> keep_alive, reader.GetInt("keepAlive", 5));
  if (keep_alive) {
    if (*keep_alive > 65535) {
      return Status::InvalidArgument(reader.KeyPath("keepAlive"), ": at most 65535 seconds");
    }
    o.keep_alive_s = static_cast<int>(*keep_alive);
  }
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> version, reader.GetInt("mqttVersion", 3));
  if (version) {
    if (*version != 3 && *version != 4 && *version != 5) {
      return Status::InvalidArgument(reader.KeyPath("mqttVersion"),
                                     ": 3 (MQTT 3.1), 4 (3.1.1) or 5, got ", *version);
    }
    o.mqtt_version = static_cast<int>(*version);
  }
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> inflight, reader.GetInt("maxInflight", 1));
  if (inflight) o.max_inflight = static_cast<int>(std::min<int64_t>(*inflight, 65535));
  if (std::optional<std::string> p = reader.Get("ssl.protocol")) {
    std::string lower = AsciiLower(*p);
    if (lower != "tlsv1.2" && lower != "tlsv1.3") {
      return Status::InvalidArgument(reader.KeyPath("ssl.protocol"), ": TLSv1.2 or TLSv1.3, got '",
                                     *p, "'");
    }
    o.ssl_protocol = lower;
  }
  o.ssl_ca_file = reader.Get("ssl.ca.file").value_or("");
  o.ssl_ca_path = reader.Get("ssl.ca.path").value_or("");
  o.ssl_cert_file = reader.Get("ssl.cert.file").value_or("");
  o.ssl_key_file = reader.Get("ssl.key.file").value_or("");
  const bool any_ssl = !o.ssl_protocol.empty() || !o.ssl_ca_file.empty() ||
                       !o.ssl_ca_path.empty() || !o.ssl_cert_file.empty() ||
                       !o.ssl_key_file.empty();
  if (any_ssl && !o.tls) {
    return Status::InvalidArgument(reader.KeyPath("brokerUrl"),
                                   ": ssl.* options need an ssl:// broker URL, got '", o.broker_url,
                                   "'");
  }
  if (o.ssl_cert_file.empty() != o.ssl_key_file.empty()) {
    return Status::InvalidArgument(
        reader.KeyPath(o.ssl_cert_file.empty() ? "ssl.cert.file" : "ssl.key.file"),
        ": a client certificate needs both ssl.cert.file and "
        "ssl.key.file");
  }
  SILT_ASSIGN_OR_RETURN(o.max_messages_per_trigger, reader.GetInt("maxMessagesPerTrigger", 1));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> wal_bytes,
                        reader.GetInt("maxWalBytes", int64_t{1} << 20));
  if (wal_bytes) o.max_wal_bytes = *wal_bytes;
  return o;
}

Result<std::unique_ptr<Source>> MakeMqttSource(MqttSourceOptions options,
                                               const SourceContext& context) {
  if (context.checkpoint_fs == nullptr || context.checkpoint_fs->name() != "local") {
    return Status::InvalidArgument(
        "checkpointLocation: the MQTT source keeps its write-ahead log under the checkpoint and "
        "needs fsync, so the checkpoint must be on a local file system, not ",
        context.checkpoint_fs == nullptr ? std::string("none")
                                         : std::string(context.checkpoint_fs->name()));
  }
  return std::unique_ptr<Source>(new MqttSource(std::move(options), context));
}

}  // namespace silt::stream
