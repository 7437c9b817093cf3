// Each Kafka batch's plan: the end offsets of the next batch (new and
// vanished partitions, minOffsetsPerTrigger, the rate limit) and, when it
// runs, its offset ranges with data lost to retention handled per
// failOnDataLoss.
#include <algorithm>
#include <cmath>
#include <limits>

#include "silt/base/logging.h"
#include "silt/stream/source/kafka_source.h"

namespace silt::stream {

namespace {

// Spark's KafkaMicroBatchStream.rateLimit: `limit` records split over the
// partitions in proportion to their backlog; a partition whose share is below
// one record still gets one, so small partitions are not starved.
KafkaOffsets RateLimit(int64_t limit, const KafkaOffsets& from, const KafkaOffsets& until) {
  std::map<kafka::TopicPartition, int64_t> sizes;
  double total = 0;
  for (const auto& [tp, end] : until) {
    auto begin = from.find(tp);
    if (begin == from.end()) continue;
    int64_t size = end - begin->second;
    if (size > 0) {
      sizes[tp] = size;
      total += static_cast<double>(size);
    }
  }
  if (total < 1) return until;
  KafkaOffsets out;
  for (const auto& [tp, end] : until) {
    auto size = sizes.find(tp);
    if (size == sizes.end()) {
      out[tp] = end;
      continue;
    }
    const int64_t begin = from.at(tp);
    const double prorate = static_cast<double>(limit) * (static_cast<double>(size->second) / total);
    const int64_t prorate_long =
        static_cast<int64_t>(prorate < 1 ? std::ceil(prorate) : std::floor(prorate));
    const int64_t off = prorate_long > std::numeric_limits<int64_t>::max() - begin
                            ? std::numeric_limits<int64_t>::max()
                            : begin + prorate_long;
    out[tp] = std::min(end, off);
  }
  // Spark's rounding can overshoot the limit (every partition with a share
  // below one record still gets one); silt promises that no batch exceeds
  // maxOffsetsPerTrigger, so the excess comes off the largest shares.
  int64_t planned = 0;
  for (const auto& [tp, end] : out) {
    auto begin = from.find(tp);
    if (begin != from.end() && end > begin->second) planned += end - begin->second;
  }
  while (planned > limit) {
    int64_t* largest = nullptr;
    int64_t largest_size = 0;
    for (auto& [tp, end] : out) {
      auto begin = from.find(tp);
      if (begin == from.end()) continue;
      const int64_t size = end - begin->second;
      if (size > largest_size) {
        largest_size = size;
        largest = &end;
      }
    }
    if (largest == nullptr) break;
    const int64_t cut = std::min(planned - limit, std::max<int64_t>(1, largest_size / 2));
    *largest -= cut;
    planned -= cut;
  }
  return out;
}

}  // namespace

Status KafkaSource::ReportDataLoss(const std::string& message) {
  if (options_.fail_on_data_loss) {
    return Status::NotFound(
        message,
        ". Some data may have been lost because they are not available in Kafka any more; "
        "either the data was aged out by Kafka or the topic may have been deleted before all "
        "the data in the topic was processed. If you don't want the query to fail on such "
        "cases, set the source option failOnDataLoss to false");
  }
  SILT_LOG_WARN("stream", message, " (failOnDataLoss=false: continuing)");
  return Status::OK();
}

Status KafkaSource::PrepareForAvailableNow() {
  SILT_ASSIGN_OR_RETURN(std::vector<kafka::TopicPartition> partitions, DiscoverPartitions());
  SILT_ASSIGN_OR_RETURN(KafkaOffsets latest, FetchWatermarks(partitions, true));
  available_now_end_ = std::move(latest);
  return Status::OK();
}

Result<std::optional<std::string>> KafkaSource::LatestOffset(
    const std::optional<std::string>& start, const ReadLimit& limit) {
  SILT_ASSIGN_OR_RETURN(KafkaOffsets from, ParseStart(start));
  KafkaOffsets latest;
  if (available_now_end_) {
    latest = *available_now_end_;
  } else {
    SILT_ASSIGN_OR_RETURN(std::vector<kafka::TopicPartition> partitions, DiscoverPartitions());
    SILT_ASSIGN_OR_RETURN(latest, FetchWatermarks(partitions, true));
  }
  if (options_.ending_offsets) {
    for (auto& [tp, offset] : latest) {
      auto it = options_.ending_offsets->find(tp);
      if (it != options_.ending_offsets->end() && it->second >= 0) {
        offset = std::min(offset, it->second);
      }
    }
  }
  reported_latest_ = KafkaOffsetsToJson(latest);

  // New partitions start at their earliest offset; partitions that vanished
  // (topic deleted) are data loss.
  KafkaOffsets begin = from;
  for (const auto& [tp, offset] : latest) {
    if (begin.count(tp)) continue;
    SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
    begin[tp] = marks.low;
    SILT_LOG_INFO("stream", "Kafka partition ", tp.ToString(), " is new; reading it from offset ",
                  marks.low);
  }
  KafkaOffsets until = latest;
  for (const auto& [tp, offset] : from) {
    if (!latest.count(tp)) {
      if (available_now_end_) {
        until[tp] = offset;  // not part of the availableNow snapshot: no progress
        continue;
      }
      SILT_RETURN_NOT_OK(
          ReportDataLoss("Kafka partition " + tp.ToString() + " is gone (was the topic deleted?)"));
      continue;
    }
    if (latest.at(tp) < offset) {
      // The end moved backwards (topic re-created): keep the position
      // rather than re-reading, and report it as Spark does.
      SILT_RETURN_NOT_OK(ReportDataLoss("Kafka partition " + tp.ToString() + " offset was " +
                                        std::to_string(offset) + " but the latest is now " +
                                        std::to_string(latest.at(tp))));
      until[tp] = latest.at(tp);
    }
  }
  // Spark's ReadMinRows: wait for minOffsetsPerTrigger new records, but no
  // longer than maxTriggerDelay since the last batch this process planned.
  // Not under once / availableNow, which must finish with what is there.
  if (options_.min_offsets_per_trigger && !limit.all_available && !available_now_end_) {
    const int64_t now_ms = context_.clock->NowMicros() / 1000;
    if (now_ms - last_trigger_ms_ >= options_.max_trigger_delay_ms) {
      last_trigger_ms_ = now_ms;
    } else {
      int64_t available = 0;
      for (const auto& [tp, end] : until) {
        auto it = begin.find(tp);
        available += end - (it == begin.end() ? 0 : it->second);
      }
      if (available < *options_.min_offsets_per_trigger) return std::optional<std::string>();
      last_trigger_ms_ = now_ms;
    }
  }
  std::optional<int64_t> cap = options_.max_offsets_per_trigger;
  if (!cap && options_.default_max_offsets_per_partition) {
    cap = *options_.default_max_offsets_per_partition * static_cast<int64_t>(until.size());
  }
  if (cap && *cap > 0 && !limit.all_available) until = RateLimit(*cap, begin, until);
  bool progressed = false;
  for (auto& [tp, end] : until) {
    auto it = from.find(tp);
    if (it == from.end()) {
      progressed = true;
    } else if (end != it->second) {
      progressed = true;
    }
  }
  if (!progressed) return std::optional<std::string>();
  return std::optional<std::string>(KafkaOffsetsToJson(until));
}

Result<std::vector<kafka::OffsetRange>> KafkaSource::BatchRanges(
    const std::optional<std::string>& start, const std::string& end) {
  SILT_ASSIGN_OR_RETURN(KafkaOffsets from, ParseStart(start));
  SILT_ASSIGN_OR_RETURN(KafkaOffsets until,
                        KafkaOffsetsFromJson(end, "Kafka source end offset", false));
  // The earliest offsets now, asked once for every partition of the batch
  // (LatestOffset asked for the latest ones only): what retention deleted
  // since the batch was planned is data loss, handled per failOnDataLoss
  // before anything is read.
  std::vector<kafka::TopicPartition> partitions;
  partitions.reserve(until.size());
  for (const auto& [tp, until_offset] : until) partitions.push_back(tp);
  SILT_ASSIGN_OR_RETURN(KafkaOffsets earliest, FetchWatermarks(partitions, false));
  std::vector<kafka::OffsetRange> ranges;
  for (const auto& [tp, until_offset] : until) {
    auto low_it = earliest.find(tp);
    if (low_it == earliest.end()) {
      return Status::NotFound("Kafka partition ", tp.ToString(), ": no earliest offset returned");
    }
    const int64_t low = low_it->second;
    auto it = from.find(tp);
    // A partition first seen in this batch starts at its earliest offset.
    int64_t from_offset = it != from.end() ? it->second : low;
    if (it == from.end() && low > 0) {
      SILT_LOG_INFO("stream", "Kafka partition ", tp.ToString(), " is new; reading from offset ",
                    low);
    }
    if (from_offset < low && from_offset < until_offset) {
      const int64_t lost_until = std::min(low, until_offset);
      SILT_RETURN_NOT_OK(ReportDataLoss(
          "Kafka partition " + tp.ToString() + ": offsets " + std::to_string(from_offset) + " to " +
          std::to_string(lost_until - 1) + " (" + std::to_string(lost_until - from_offset) +
          " records) were deleted before they were read"));
      from_offset = lost_until;
    }
    if (from_offset < until_offset) ranges.push_back({tp, from_offset, until_offset});
  }
  return ranges;
}

}  // namespace silt::stream
