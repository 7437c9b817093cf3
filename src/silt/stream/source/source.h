// Source: the input side of a streaming query, shaped like Spark's
// SupportsAdmissionControl micro-batch streams. Offsets are JSON texts, the
// exact lines stored in the checkpoint's offsets/N files, so a source decides
// its own offset format (Kafka's {"topic":{"0":n}}, the file source's
// {"logOffset":n}).
//
// Per batch the query calls LatestOffset once (planning; may write the
// source's own metadata under the checkpoint's sources/<i>/ before offsets/N
// is written), then GetBatch once with the recorded range. GetBatch must
// return the same rows whenever it is called with the same range: a batch
// re-run after a crash depends on it.
//
// Thread safety: a Source is used by one query thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/fs/file_system.h"
#include "silt/stream/job.h"

namespace silt::stream {

// How much one batch may take.
struct ReadLimit {
  // Trigger.Once: everything available, ignoring maxOffsetsPerTrigger /
  // maxFilesPerTrigger.
  bool all_available = false;
};

// Pulls the records of one batch in chunks (at most
// columnar::kTargetBatchRows rows each).
class BatchReader {
 public:
  virtual ~BatchReader() = default;
  // The next chunk in the source schema, or null at the end.
  virtual Result<columnar::RecordBatchPtr> Next() = 0;
  // input_file_name() of the rows of the chunk Next returned last: the URI
  // of the file they came from, as Spark gives it ("file:///abs/path",
  // "s3a://bucket/key"); "" for sources without files.
  virtual std::string_view input_file_name() const { return {}; }
  // Rows the source read but dropped before returning them, which Spark
  // still counts in numInputRows (delta-spark filters deletion-vector rows
  // above its scan); valid once Next returned null.
  virtual int64_t dropped_input_rows() const { return 0; }
};

// A batch's records split for the query's `parallelism` (Source::
// GetBatchParts).
struct BatchParts {
  // Readers over disjoint parts; each keeps its records' order, together
  // they hold exactly GetBatch's records.
  std::vector<std::unique_ptr<BatchReader>> readers;
  // Threads the records are worth, at least readers.size(): more when a
  // reader holds records enough for several threads (a Kafka partition
  // that carries most of the batch). The threads share the readers chunk
  // by chunk (stream/query/shared_readers.h).
  size_t threads = 1;
};

class Source {
 public:
  virtual ~Source() = default;

  // The record schema, known before the first batch.
  virtual const columnar::SchemaPtr& schema() const = 0;
  // Spark-style description for progress records.
  virtual std::string Description() const = 0;

  // Restores the source's position at query start. `last_planned` is the
  // source's offset in the newest offsets/N (whether or not the batch
  // committed); nullopt for a fresh query.
  virtual Status Restore(const std::optional<std::string>& last_planned) = 0;

  // Trigger.AvailableNow: remembers what is available now; LatestOffset never
  // goes past it afterwards. REQUIRES: after Restore.
  virtual Status PrepareForAvailableNow() = 0;

  // The end offset of the next batch that starts at `start` (nullopt: the
  // beginning), within the source's per-trigger cap unless
  // `limit.all_available`. nullopt when there is no new data.
  virtual Result<std::optional<std::string>> LatestOffset(const std::optional<std::string>& start,
                                                          const ReadLimit& limit) = 0;

  // The newest offset known without caps, for progress records; empty when
  // the source cannot tell.
  virtual std::string ReportLatestOffset() const { return {}; }

  // The records after `start` up to and including `end`.
  // Errors: InvalidArgument/Corruption for offsets this source did not write.
  // The same records for up to `max_parts` threads (the query's
  // `parallelism`): readers over disjoint parts (a Kafka source: whole
  // partitions; a file source: whole files) and how many threads they are
  // worth. Each reader may be used on its own thread, all at once, and by
  // several threads one call at a time (a chunk it returned stays valid
  // after its next Next()). A source asks for threads only where they pay
  // (enough records for each). Default: GetBatch's one reader, one thread.
  virtual Result<BatchParts> GetBatchParts(const std::optional<std::string>& start,
                                           const std::string& end, int max_parts) {
    (void)max_parts;
    BatchParts parts;
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<BatchReader> reader, GetBatch(start, end));
    parts.readers.push_back(std::move(reader));
    return parts;
  }

  virtual Result<std::unique_ptr<BatchReader>> GetBatch(const std::optional<std::string>& start,
                                                        const std::string& end) = 0;

  // Called after commits/N of the batch ending at `end_offset_json` is
  // written. Best effort (e.g. the Kafka source commits the offsets to its
  // consumer group); failures are the source's to log, never the query's.
  virtual void OnBatchCommitted(const std::string& end_offset_json) { (void)end_offset_json; }

  // True when OnBatchCommitted discards input that a re-run of the batch
  // would need again (the MQTT source trims its write-ahead log). commits/N
  // is written unsynced (decision 157: losing it to a crash of the machine
  // re-runs the batch, which the sink skips); for such a source the query
  // makes it durable first, since the re-run could not read its input.
  virtual bool CommitDiscardsInput() const { return false; }

  // Where row `row` of a chunk this source returned came from, for error
  // messages ("Kafka topic t partition 0 offset 17"); empty when the source
  // cannot say.
  virtual std::string DescribeRow(const columnar::RecordBatch& chunk, int64_t row) const {
    (void)chunk;
    (void)row;
    return {};
  }
};

struct SourceContext {
  // The checkpoint's file system and this source's metadata directory
  // (`<checkpoint>/sources/<i>`).
  fs::FileSystemPtr checkpoint_fs;
  std::string metadata_dir;
  // When set, used for the source's data paths instead of
  // fs::FileSystemForPath (tests inject faults through it).
  fs::FileSystemPtr data_fs;
  Clock* clock = &SystemClock();
  // spark.sql.session.timeZone: the JSON file source reads timestamp text
  // without a zone in it, as Spark's JSON reader does.
  std::string session_time_zone = "UTC";
  // The job's spark.sql.* confs (the JSON file source reads
  // spark.sql.legacy.timeParserPolicy from them).
  std::map<std::string, std::string> spark_conf;
};

}  // namespace silt::stream
