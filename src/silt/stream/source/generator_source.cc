#include "silt/stream/source/generator_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

namespace {

constexpr int64_t kTicksPerBlock = 10;
constexpr int64_t kTickMillis = 10'000;
constexpr int64_t kBlockMillis = kTicksPerBlock * kTickMillis;
constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
constexpr char kDefaultStart[] = "2026-06-22T08:00:00Z";

// SplitMix64 finalizer over (seed, a, b): a fast, well-mixed pure function,
// so every generated value depends only on its coordinates.
uint64_t Mix(uint64_t seed, uint64_t a, uint64_t b) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL ^ (a + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL ^
               (b + 0x8CB92BA72F3D8DD7ULL) * 0x94D049BB133111EBULL;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

// Kafka's default partitioner hash (murmur2 with Kafka's seed), so a key
// lands on the partition a Kafka producer would choose.
int32_t KafkaMurmur2(std::string_view key) {
  const uint32_t m = 0x5bd1e995;
  const int r = 24;
  const uint32_t length = static_cast<uint32_t>(key.size());
  uint32_t h = 0x9747b28cU ^ length;
  const auto* data = reinterpret_cast<const uint8_t*>(key.data());
  uint32_t length4 = length / 4;
  for (uint32_t i = 0; i < length4; ++i) {
    uint32_t i4 = i * 4;
    uint32_t k = static_cast<uint32_t>(data[i4]) | (static_cast<uint32_t>(data[i4 + 1]) << 8) |
                 (static_cast<uint32_t>(data[i4 + 2]) << 16) |
                 (static_cast<uint32_t>(data[i4 + 3]) << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  uint32_t tail = length & ~3U;
  switch (length % 4) {
    case 3: h ^= static_cast<uint32_t>(data[tail + 2]) << 16; [[fallthrough]];
    case 2: h ^= static_cast<uint32_t>(data[tail + 1]) << 8; [[fallthrough]];
    case 1: h ^= static_cast<uint32_t>(data[tail]); h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h & 0x7fffffffU);
}

// "2026-06-22T08:00:00.123Z" into `out` (24 chars) without allocating:
// called once per generated row.
std::string_view FormatIsoMillis(int64_t epoch_ms, char (&out)[32]) {
  int64_t days = epoch_ms / 86'400'000;
  int64_t ms_of_day = epoch_ms % 86'400'000;
  if (ms_of_day < 0) {
    ms_of_day += 86'400'000;
    --days;
  }
  columnar::CivilDate date = columnar::CivilFromDays(static_cast<int32_t>(days));
  const int64_t hour = ms_of_day / 3'600'000;
  const int64_t minute = ms_of_day / 60'000 % 60;
  const int64_t second = ms_of_day / 1000 % 60;
  const int64_t milli = ms_of_day % 1000;
  int n = std::snprintf(out, sizeof(out), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", date.year,
                        date.month, date.day, static_cast<int>(hour), static_cast<int>(minute),
                        static_cast<int>(second), static_cast<int>(milli));
  return std::string_view(out, static_cast<size_t>(n));
}

std::string DeviceId(const char* prefix, int32_t number) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s-%02d", prefix, number);
  return buf;
}

class GeneratorReader final : public BatchReader {
 public:
  GeneratorReader(const GeneratorSource* source, int64_t begin, int64_t end)
      : source_(source), next_(begin), end_(end) {}
  Result<columnar::RecordBatchPtr> Next() override {
    if (next_ >= end_) return columnar::RecordBatchPtr();
    int64_t stop = std::min(end_, next_ + columnar::kTargetBatchRows);
    columnar::RecordBatchPtr batch = source_->GenerateRows(next_, stop);
    next_ = stop;
    return batch;
  }

 private:
  const GeneratorSource* source_;
  int64_t next_;
  int64_t end_;
};

}  // namespace

columnar::SchemaPtr KafkaRecordSchema() {
  using columnar::DataType;
  static const columnar::SchemaPtr kSchema = DataType::Struct({
      {"key", DataType::Binary(), true},
      {"value", DataType::Binary(), true},
      {"topic", DataType::String(), true},
      {"partition", DataType::Int(), true},
      {"offset", DataType::Long(), true},
      {"timestamp", DataType::Timestamp(), true},
      {"timestampType", DataType::Int(), true},
  });
  return kSchema;
}

Result<GeneratorOptions> GeneratorOptions::FromSpec(const SourceSpec& spec) {
  internal::OptionReader reader(spec.options, spec.key_path + ".options");
  SILT_RETURN_NOT_OK(reader.CheckNames(
      {.what = "generator source",
       .honoured = {"rowsPerSecond", "numDevices", "seed", "totalRows", "startTimestamp", "topic",
                    "numPartitions", "maxOffsetsPerTrigger"}}));
  if (!spec.schema_ddl.empty()) {
    return Status::InvalidArgument(spec.key_path,
                                   ".schema: the generator source has Kafka's fixed record "
                                   "schema; remove the schema");
  }
  GeneratorOptions out;
  SILT_ASSIGN_OR_RETURN(std::optional<double> rate, reader.GetDouble("rowsPerSecond"));
  if (rate) {
    if (*rate <= 0) {
      return Status::InvalidArgument(reader.KeyPath("rowsPerSecond"), ": must be positive");
    }
    out.rows_per_second = *rate;
  }
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> devices, reader.GetInt("numDevices", 1));
  if (devices) {
    if (*devices > 9999) {
      return Status::InvalidArgument(reader.KeyPath("numDevices"), ": at most 9999");
    }
    out.num_devices = *devices;
  }
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> seed,
                        reader.GetInt("seed", std::numeric_limits<int64_t>::min()));
  if (seed) out.seed = *seed;
  SILT_ASSIGN_OR_RETURN(out.total_rows, reader.GetInt("totalRows", 0));
  std::string start = reader.Get("startTimestamp").value_or(kDefaultStart);
  std::optional<int64_t> start_micros = columnar::ParseTimestamp(start);
  if (!start_micros) {
    return Status::InvalidArgument(reader.KeyPath("startTimestamp"),
                                   ": expected an ISO-8601 timestamp like 2026-06-22T08:00:00Z, "
                                   "got '",
                                   start, "'");
  }
  // Event times are whole milliseconds, as Kafka timestamps are.
  out.start_timestamp_micros = *start_micros - ((*start_micros % 1000) + 1000) % 1000;
  if (std::optional<std::string> topic = reader.Get("topic")) {
    if (topic->empty()) return Status::InvalidArgument(reader.KeyPath("topic"), ": is empty");
    out.topic = *topic;
  }
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> partitions, reader.GetInt("numPartitions", 1));
  if (partitions) {
    if (*partitions > 10000) {
      return Status::InvalidArgument(reader.KeyPath("numPartitions"), ": at most 10000");
    }
    out.num_partitions = *partitions;
  }
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> max_offsets,
                        reader.GetInt("maxOffsetsPerTrigger", 1));
  if (max_offsets) out.max_offsets_per_trigger = *max_offsets;
  return out;
}

GeneratorSource::GeneratorSource(GeneratorOptions options, Clock* clock)
    : options_(std::move(options)), clock_(clock), schema_(KafkaRecordSchema()) {
  num_plugs_ = static_cast<int32_t>((options_.num_devices + 1) / 2);
  num_doors_ = static_cast<int32_t>(options_.num_devices / 2);
  rows_per_block_ = num_plugs_ * kTicksPerBlock + num_doors_;
  for (int32_t p = 0; p < num_plugs_; ++p) device_ids_.push_back(DeviceId("smart-plug", p + 1));
  for (int32_t d = 0; d < num_doors_; ++d) device_ids_.push_back(DeviceId("door-sensor", d + 1));
  block_partition_counts_.assign(static_cast<size_t>(options_.num_partitions), 0);
  for (size_t dev = 0; dev < device_ids_.size(); ++dev) {
    int32_t partition =
        static_cast<int32_t>(KafkaMurmur2(device_ids_[dev]) % options_.num_partitions);
    device_partition_.push_back(partition);
    block_partition_counts_[static_cast<size_t>(partition)] +=
        static_cast<int32_t>(dev) < num_plugs_ ? kTicksPerBlock : 1;
  }
}

Result<std::unique_ptr<GeneratorSource>> GeneratorSource::Make(GeneratorOptions options,
                                                               Clock* clock) {
  if (options.num_devices < 1 || options.num_partitions < 1 ||
      options.max_offsets_per_trigger < 1) {
    return Status::InvalidArgument(
        "generator: numDevices, numPartitions and maxOffsetsPerTrigger must be positive");
  }
  return std::unique_ptr<GeneratorSource>(new GeneratorSource(std::move(options), clock));
}

std::string GeneratorSource::Description() const {
  return "Generator[topic=" + options_.topic + ", devices=" + std::to_string(options_.num_devices) +
         ", seed=" + std::to_string(options_.seed) + "]";
}

void GeneratorSource::BlockEvents(int64_t block, std::vector<Event>* out) const {
  std::vector<Event>& events = *out;
  events.clear();
  events.reserve(static_cast<size_t>(rows_per_block_));
  const uint64_t seed = static_cast<uint64_t>(options_.seed);
  for (int32_t tick = 0; tick < kTicksPerBlock; ++tick) {
    int64_t absolute_tick = block * kTicksPerBlock + tick;
    for (int32_t p = 0; p < num_plugs_; ++p) {
      // Reports are periodic with sub-second jitter, like a real plug's.
      int64_t jitter =
          static_cast<int64_t>(Mix(seed ^ 0x6a09e667f3bcc908ULL, static_cast<uint64_t>(p),
                                   static_cast<uint64_t>(absolute_tick)) %
                               1000);
      events.push_back({block * kBlockMillis + tick * kTickMillis + jitter, p, tick});
    }
  }
  for (int32_t d = 0; d < num_doors_; ++d) {
    int32_t device = num_plugs_ + d;
    int64_t at = static_cast<int64_t>(
        Mix(seed, 1'000'003ULL + static_cast<uint64_t>(d), static_cast<uint64_t>(block)) %
        kBlockMillis);
    events.push_back({block * kBlockMillis + at, device, 0});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time_ms != b.time_ms ? a.time_ms < b.time_ms : a.device < b.device;
  });
}

std::vector<int64_t> GeneratorSource::PartitionCounts(int64_t index) const {
  int64_t block = index / rows_per_block_;
  int64_t rest = index % rows_per_block_;
  std::vector<int64_t> counts(block_partition_counts_.size());
  for (size_t p = 0; p < counts.size(); ++p) counts[p] = block * block_partition_counts_[p];
  if (rest > 0) {
    std::vector<Event> events;
    BlockEvents(block, &events);
    for (int64_t i = 0; i < rest; ++i) {
      ++counts[static_cast<size_t>(device_partition_[static_cast<size_t>(events[i].device)])];
    }
  }
  return counts;
}

std::string GeneratorSource::OffsetJson(int64_t index) const {
  std::vector<int64_t> counts = PartitionCounts(index);
  JsonWriter w;
  w.BeginObject();
  w.Key(options_.topic);
  w.BeginObject();
  for (size_t p = 0; p < counts.size(); ++p) {
    w.Member(std::to_string(p), counts[p]);
  }
  w.EndObject();
  w.EndObject();
  return w.Take();
}

Result<int64_t> GeneratorSource::ParseOffset(std::string_view json) const {
  std::string where = "generator offset '" + std::string(json) + "'";
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object,
                        internal::ParseJsonObject(parser, json, where));
  simdjson::dom::object partitions;
  if (object.size() != 1 || object.at_key(options_.topic).get_object().get(partitions)) {
    return Status::InvalidArgument(where, ": expected {\"", options_.topic,
                                   "\":{\"0\":n,...}} (was the topic option changed?)");
  }
  std::vector<int64_t> counts(static_cast<size_t>(options_.num_partitions), -1);
  for (auto field : partitions) {
    std::optional<int64_t> partition;
    std::string_view key = field.key;
    if (key.size() < 6 && AllDigits(key)) {
      partition = std::stoll(std::string(key));
    }
    int64_t value = 0;
    if (!partition || *partition >= options_.num_partitions || field.value.get_int64().get(value) ||
        value < 0) {
      return Status::InvalidArgument(where, ": partition \"", key, "\" is not one of the ",
                                     options_.num_partitions,
                                     " partitions (was numPartitions changed?)");
    }
    counts[static_cast<size_t>(*partition)] = value;
  }
  int64_t index = 0;
  for (int64_t c : counts) {
    if (c < 0) {
      return Status::InvalidArgument(where, ": expected all ", options_.num_partitions,
                                     " partitions (was numPartitions changed?)");
    }
    index += c;
  }
  if (PartitionCounts(index) != counts) {
    return Status::InvalidArgument(where,
                                   ": not a position of this generator's sequence (were "
                                   "numDevices or numPartitions changed?)");
  }
  return index;
}

int64_t GeneratorSource::Available() const {
  int64_t available = options_.total_rows.value_or(kUnbounded);
  if (options_.rows_per_second > 0) {
    double elapsed_s = static_cast<double>(clock_->MonotonicMicros() - restored_at_micros_) / 1e6;
    double produced = std::floor(std::max(0.0, elapsed_s) * options_.rows_per_second);
    int64_t by_rate = produced >= static_cast<double>(kUnbounded / 2)
                          ? kUnbounded
                          : restored_index_ + static_cast<int64_t>(produced);
    available = std::min(available, by_rate);
  }
  return available;
}

Status GeneratorSource::Restore(const std::optional<std::string>& last_planned) {
  restored_index_ = 0;
  if (last_planned && *last_planned != "-") {
    SILT_ASSIGN_OR_RETURN(restored_index_, ParseOffset(*last_planned));
  }
  // The rate cap counts from this start: rows planned before a restart are
  // not produced again "for free".
  restored_at_micros_ = clock_->MonotonicMicros();
  return Status::OK();
}

Status GeneratorSource::PrepareForAvailableNow() {
  int64_t available = Available();
  // An unbounded generator without a rate has no "now": one batch worth.
  if (available == kUnbounded) available = restored_index_ + options_.max_offsets_per_trigger;
  available_now_end_ = available;
  return Status::OK();
}

Result<std::optional<std::string>> GeneratorSource::LatestOffset(
    const std::optional<std::string>& start, const ReadLimit& limit) {
  int64_t begin = 0;
  if (start && *start != "-") {
    SILT_ASSIGN_OR_RETURN(begin, ParseOffset(*start));
  }
  int64_t available = Available();
  if (available_now_end_) available = std::min(available, *available_now_end_);
  int64_t end = available;
  bool capped = !limit.all_available || available == kUnbounded;
  if (capped && available - begin > options_.max_offsets_per_trigger) {
    end = begin + options_.max_offsets_per_trigger;
  }
  if (end <= begin) return std::optional<std::string>();
  return std::optional<std::string>(OffsetJson(end));
}

std::string GeneratorSource::ReportLatestOffset() const {
  int64_t available = Available();
  if (available == kUnbounded) return {};
  return OffsetJson(available);
}

Result<std::unique_ptr<BatchReader>> GeneratorSource::GetBatch(
    const std::optional<std::string>& start, const std::string& end) {
  int64_t begin = 0;
  if (start && *start != "-") {
    SILT_ASSIGN_OR_RETURN(begin, ParseOffset(*start));
  }
  SILT_ASSIGN_OR_RETURN(int64_t stop, ParseOffset(end));
  if (stop < begin) {
    return Status::InvalidArgument("generator: end offset ", end, " is before start offset ",
                                   start.value_or("-"));
  }
  return std::unique_ptr<BatchReader>(std::make_unique<GeneratorReader>(this, begin, stop));
}

columnar::RecordBatchPtr GeneratorSource::GenerateRows(int64_t begin, int64_t end) const {
  using columnar::ColumnBuilder;
  using columnar::DataType;
  ColumnBuilder key(DataType::Binary());
  ColumnBuilder value(DataType::Binary());
  ColumnBuilder topic(DataType::String());
  ColumnBuilder partition(DataType::Int());
  ColumnBuilder offset(DataType::Long());
  ColumnBuilder timestamp(DataType::Timestamp());
  ColumnBuilder timestamp_type(DataType::Int());
  const int64_t rows = std::max<int64_t>(0, end - begin);
  for (ColumnBuilder* b :
       {&key, &value, &topic, &partition, &offset, &timestamp, &timestamp_type}) {
    b->Reserve(rows);
  }

  std::vector<int64_t> next_offset = PartitionCounts(begin);
  const uint64_t seed = static_cast<uint64_t>(options_.seed);
  const int64_t start_ms = options_.start_timestamp_micros / 1000;
  JsonWriter payload;
  JsonWriter envelope;
  char timestamp_text[32];
  std::vector<Event> events;
  int64_t index = begin;
  while (index < end) {
    const int64_t block = index / rows_per_block_;
    BlockEvents(block, &events);
    int64_t block_end = std::min(end, (block + 1) * rows_per_block_);
    for (; index < block_end; ++index) {
      const Event& event = events[static_cast<size_t>(index - block * rows_per_block_)];
      const std::string& device_id = device_ids_[static_cast<size_t>(event.device)];
      const bool is_plug = event.device < num_plugs_;
      const int64_t event_ms = start_ms + event.time_ms;

      payload.Clear();
      payload.BeginObject();
      if (is_plug) {
        const uint64_t tick = static_cast<uint64_t>(block * kTicksPerBlock + event.tick);
        const uint64_t h = Mix(seed, static_cast<uint64_t>(event.device), tick);
        const bool off = h % 50 == 0;
        const int64_t power_tenths = off ? 0 : 750 + static_cast<int64_t>((h >> 8) % 200);
        const int64_t voltage_tenths = 2280 + static_cast<int64_t>((h >> 20) % 40);
        const int64_t current_milli = std::llround(static_cast<double>(power_tenths) * 1000.0 /
                                                   static_cast<double>(voltage_tenths));
        const int64_t energy_hundredths =
            1250 + event.device * 310 + static_cast<int64_t>(tick) * 24 / 100;
        payload.Member("power", static_cast<double>(power_tenths) / 10.0);
        payload.Member("voltage", static_cast<double>(voltage_tenths) / 10.0);
        payload.Member("current", static_cast<double>(current_milli) / 1000.0);
        payload.Member("energy", static_cast<double>(energy_hundredths) / 100.0);
        payload.Member("state", off ? "OFF" : "ON");
        payload.Member("linkquality", 150 + static_cast<int64_t>((h >> 32) % 106));
      } else {
        const int64_t door = event.device - num_plugs_;
        const uint64_t h = Mix(seed ^ 0xbb67ae8584caa73bULL, static_cast<uint64_t>(door),
                               static_cast<uint64_t>(block));
        payload.Member("contact", ((h >> 17) & 1) == 1);
        payload.Key("battery");
        // Batteries drain slowly: one percent per hour of event time.
        payload.Int(100 - (block / 36 + door * 3) % 10);
        payload.Member("linkquality", 120 + static_cast<int64_t>((h >> 40) % 100));
      }
      payload.EndObject();

      envelope.Clear();
      envelope.BeginObject();
      envelope.Member("device_id", device_id);
      envelope.Member("device_type", is_plug ? "smart_plug" : "door_window");
      envelope.Member("ingested_at", FormatIsoMillis(event_ms, timestamp_text));
      envelope.Member("payload", payload.str());
      envelope.EndObject();

      const int32_t p = device_partition_[static_cast<size_t>(event.device)];
      key.AppendString(device_id);
      value.AppendString(envelope.str());
      topic.AppendString(options_.topic);
      partition.Append<int32_t>(p);
      offset.Append<int64_t>(next_offset[static_cast<size_t>(p)]++);
      timestamp.Append<int64_t>(event_ms * 1000);
      timestamp_type.Append<int32_t>(0);
    }
  }
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = schema_;
  batch->num_rows = rows;
  batch->columns = {key.Finish(),    value.Finish(),     topic.Finish(),         partition.Finish(),
                    offset.Finish(), timestamp.Finish(), timestamp_type.Finish()};
  return batch;
}

}  // namespace silt::stream
