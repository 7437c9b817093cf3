// Where a fresh Kafka query starts: the offsets the starting options name,
// resolved once and kept in <checkpoint>/sources/<i>/0 in Spark's layout.
#include <set>

#include "silt/base/logging.h"
#include "silt/stream/source/kafka_source.h"
#include "silt/stream/source/kafka_source_internal.h"

namespace silt::stream {

namespace {

// Spark's KafkaSourceInitialOffsetWriter: a NUL byte (SPARK-19517), the
// version line, then the offsets JSON.
constexpr std::string_view kInitialOffsetsHeader("\0v1\n", 4);

}  // namespace

Result<KafkaOffsets> KafkaSource::ResolveStartingOffsets() {
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::TopicPartition> partitions, DiscoverPartitions());
  switch (options_.start) {
    case KafkaSourceOptions::Start::kEarliest: return FetchWatermarks(partitions, false);
    case KafkaSourceOptions::Start::kLatest: return FetchWatermarks(partitions, true);
    case KafkaSourceOptions::Start::kOffsets: {
      // Spark requires the JSON to cover exactly the selected partitions.
      std::set<kafka::TopicPartition> given;
      for (const auto& [tp, offset] : options_.starting_offsets) given.insert(tp);
      std::set<kafka::TopicPartition> selected(partitions.begin(), partitions.end());
      if (options_.strategy != KafkaSourceOptions::Strategy::kSubscribePattern &&
          given != selected) {
        std::string missing;
        for (const kafka::TopicPartition& tp : selected) {
          if (!given.count(tp)) missing += (missing.empty() ? "" : ", ") + tp.ToString();
        }
        for (const kafka::TopicPartition& tp : given) {
          if (!selected.count(tp)) missing += (missing.empty() ? "" : ", ") + tp.ToString();
        }
        return Status::InvalidArgument(options_.key_path,
                                       ".startingOffsets: the partitions in the JSON do not "
                                       "match the subscribed partitions (differing: ",
                                       missing, ")");
      }
      KafkaOffsets out;
      for (const auto& [tp, offset] : options_.starting_offsets) {
        if (offset >= 0) {
          out[tp] = offset;
          continue;
        }
        SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
        out[tp] = offset == internal::kKafkaLatest ? marks.high : marks.low;
      }
      // Partitions a pattern selects but the JSON omits start at latest.
      for (const kafka::TopicPartition& tp : partitions) {
        if (out.count(tp)) continue;
        SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
        out[tp] = marks.high;
      }
      return out;
    }
    case KafkaSourceOptions::Start::kResolver:
      if (!options_.resolve_start) return Status::Internal("Kafka source: no start resolver");
      return options_.resolve_start(consumer_.get(), partitions);
    case KafkaSourceOptions::Start::kTimestamp:
    case KafkaSourceOptions::Start::kTimestampPerPartition: {
      KafkaOffsets out;
      for (const kafka::TopicPartition& tp : partitions) {
        int64_t ts = options_.starting_timestamp_ms;
        if (options_.start == KafkaSourceOptions::Start::kTimestampPerPartition) {
          auto it = options_.starting_timestamps.find(tp);
          if (it == options_.starting_timestamps.end()) {
            return Status::InvalidArgument(options_.key_path,
                                           ".startingOffsetsByTimestamp: no timestamp for "
                                           "partition ",
                                           tp.ToString());
          }
          ts = it->second;
        }
        SILT_ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> found,
                              consumer_->OffsetsForTimes({tp}, ts));
        if (!found.empty() && found[0]) {
          out[tp] = *found[0];
          continue;
        }
        if (!options_.starting_timestamp_strategy_latest) {
          return Status::InvalidArgument(
              options_.key_path, ": no offset in partition ", tp.ToString(),
              " has a timestamp at or after ", ts,
              " (set startingOffsetsByTimestampStrategy to latest to start at the end)");
        }
        SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
        out[tp] = marks.high;
      }
      return out;
    }
  }
  return Status::Internal("unknown Kafka starting offsets mode");
}

Result<KafkaOffsets> KafkaSource::InitialOffsets() {
  if (initial_offsets_) return *initial_offsets_;
  fs::FileSystem* cfs = context_.checkpoint_fs.get();
  const std::string file = fs::JoinPath(context_.metadata_dir, "0");
  if (cfs != nullptr) {
    SILT_ASSIGN_OR_RETURN(bool exists, cfs->Exists(file));
    if (exists) {
      SILT_ASSIGN_OR_RETURN(std::string content, cfs->ReadFile(file));
      std::string_view text = content;
      // Spark writes a leading NUL byte; tolerate files without it.
      if (!text.empty() && text[0] == '\0') text.remove_prefix(1);
      if (!text.starts_with("v1\n")) {
        return Status::Corruption(file, ": expected Kafka initial offsets starting with v1");
      }
      text.remove_prefix(3);
      SILT_ASSIGN_OR_RETURN(KafkaOffsets offsets, KafkaOffsetsFromJson(text, file, false));
      initial_offsets_ = offsets;
      return offsets;
    }
  }
  SILT_ASSIGN_OR_RETURN(KafkaOffsets offsets, ResolveStartingOffsets());
  if (cfs != nullptr) {
    std::string content(kInitialOffsetsHeader);
    content += KafkaOffsetsToJson(offsets);
    SILT_RETURN_NOT_OK(cfs->CreateDir(context_.metadata_dir));
    Status put = cfs->PutIfAbsent(file, content);
    if (put.IsAlreadyExists()) {
      // Another start won the race; its offsets are the query's.
      initial_offsets_.reset();
      return InitialOffsets();
    }
    SILT_RETURN_NOT_OK_CTX(put, "writing the Kafka initial offsets ", file);
  }
  SILT_LOG_INFO("stream", "Kafka initial offsets: ", KafkaOffsetsToJson(offsets));
  initial_offsets_ = offsets;
  return offsets;
}

Result<KafkaOffsets> KafkaSource::ParseStart(const std::optional<std::string>& start) {
  if (!start || start->empty() || *start == "-") return InitialOffsets();
  return KafkaOffsetsFromJson(*start, "Kafka source offset", false);
}

}  // namespace silt::stream
