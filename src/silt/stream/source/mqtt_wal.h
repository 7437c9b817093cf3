// MqttWal: the write-ahead log of the MQTT source, under the checkpoint's
// sources/<i>/wal/ (format: docs/format/mqtt-wal.md). MQTT brokers cannot
// replay, so every message is made durable here before the broker gets its
// PUBACK; batches are then planned as ranges of log sequence numbers, which
// replay like Kafka offsets.
//
// The log is a series of segment files named by the sequence number of their
// first record (wal-<20 digits>.log). Sequence numbers start at 0 and are
// dense. Append buffers records in memory; Sync writes and fsyncs them, and
// only then are they counted in end_seq() and readable. Open recovers from a
// crash: a torn or corrupt tail of the newest segment (records that were
// never synced, hence never acknowledged) is cut off.
//
// Thread safety: one writer thread calls Append/Sync; other threads may call
// Read, TrimBefore, end_seq, begin_seq and size_bytes concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "silt/base/result.h"

namespace silt::stream {

struct MqttWalRecord {
  int64_t seq = 0;             // assigned by Append
  int64_t arrival_micros = 0;  // wall clock when silt received it
  int32_t message_id = 0;      // the MQTT packet identifier (0 for QoS 0)
  int32_t qos = 0;
  bool retained = false;
  std::string topic;
  std::string payload;
};

class MqttWal {
 public:
  struct Options {
    std::string dir;  // a local directory; created when missing
    // A segment is closed and a new one started once it holds this much.
    int64_t segment_bytes = int64_t{8} << 20;
  };

  // Opens (creating when absent) and recovers the log.
  // Errors: IOError for file-system failures; Corruption when a closed
  // segment is damaged or the segments do not follow each other.
  static Result<std::unique_ptr<MqttWal>> Open(const Options& options);
  ~MqttWal();

  // Buffers `record` (its seq is set to the next number). Not durable and
  // not readable until Sync returns OK.
  void Append(MqttWalRecord record);
  int64_t buffered() const { return static_cast<int64_t>(pending_.size()); }
  // Topic and payload bytes of the buffered records.
  int64_t buffered_bytes() const { return pending_bytes_; }
  // Writes and fsyncs the buffered records (rolling to a new segment when the
  // current one is full). On error nothing is counted as durable and the log
  // must be reopened.
  Status Sync();

  // The next sequence number: records [begin_seq, end_seq) are durable.
  int64_t end_seq() const { return end_seq_.load(std::memory_order_acquire); }
  // The oldest record still held (== end_seq when the log is empty).
  int64_t begin_seq() const;
  // Bytes of all segment files.
  int64_t size_bytes() const { return size_bytes_.load(std::memory_order_acquire); }

  // Durable records with from <= seq < to, in order, at most `max_records`
  // and stopping after `max_bytes` of payload (at least one record).
  // Errors: InvalidArgument when `from` was trimmed or `to` > end_seq();
  // Corruption/IOError from the files.
  Result<std::vector<MqttWalRecord>> Read(int64_t from, int64_t to, int64_t max_records,
                                          int64_t max_bytes) const;

  // Deletes every segment whose records are all < `seq` (never the one being
  // written). Errors: IOError.
  Status TrimBefore(int64_t seq);

  // The last `n` durable records (fewer when the log holds fewer), oldest
  // first: the MQTT source rebuilds its duplicate filter from them.
  Result<std::vector<MqttWalRecord>> Tail(int64_t n) const;

 private:
  struct Segment {
    int64_t first_seq = 0;
    std::string path;
    int64_t bytes = 0;
  };
  explicit MqttWal(Options options) : options_(std::move(options)) {}
  Status Recover();
  Status StartSegment(int64_t first_seq);

  Options options_;
  mutable std::mutex mu_;          // guards segments_
  std::vector<Segment> segments_;  // by first_seq; the last one is written
  int fd_ = -1;                    // the last segment, opened for append
  std::vector<MqttWalRecord> pending_;
  int64_t pending_bytes_ = 0;
  int64_t next_seq_ = 0;  // writer only: end_seq + buffered
  std::atomic<int64_t> end_seq_{0};
  std::atomic<int64_t> size_bytes_{0};
};

}  // namespace silt::stream
