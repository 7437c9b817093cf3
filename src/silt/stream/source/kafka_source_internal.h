// Spark's special offsets of the Kafka source's offset JSON, shared by the
// source's files (kafka_source*.cc). Not part of the source's interface.
#pragma once

#include <cstdint>

namespace silt::stream::internal {

// -2 and -1 in startingOffsets / endingOffsets JSON: a partition's earliest
// and latest offset.
inline constexpr int64_t kKafkaEarliest = -2;
inline constexpr int64_t kKafkaLatest = -1;

}  // namespace silt::stream::internal
