// libFuzzer target for the streaming checkpoint files silt reads back on
// restart, possibly written by Spark or damaged: `offsets/N`
// (stream::ParseOffsetSeq, then each source's offset JSON through the Kafka
// and file sources' offset parsers), `commits/N` (ParseCommitMark) and
// `metadata` (CheckpointDir::ReadQueryId). The same input is used as each
// of the three files of a checkpoint in memory. Any bytes must end in a
// value or a Status, never a crash, hang or sanitizer report. Built only
// with clang (SILT_BUILD_FUZZERS=ON); see README.md in this directory.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "silt/fs/file_system.h"
#include "silt/stream/checkpoint/checkpoint.h"
#include "silt/stream/source/file_source.h"
#include "silt/stream/source/kafka_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  auto offsets = silt::stream::ParseOffsetSeq(text, 7, "offsets/7");
  if (offsets.ok()) {
    for (const std::string& source : offsets->source_offsets) {
      (void)silt::stream::KafkaOffsetsFromJson(source, "offsets/7", false);
      (void)silt::stream::KafkaOffsetsFromJson(source, "startingOffsets", true);
      (void)silt::stream::FileSource::ParseOffset(source);
    }
    // What silt writes back must parse again.
    std::string again = silt::stream::SerializeOffsetSeq(*offsets);
    if (!silt::stream::ParseOffsetSeq(again, 7, "offsets/7").ok()) std::abort();
  }
  (void)silt::stream::ParseCommitMark(text, 7, "commits/7");

  auto fs = silt::fs::MakeMemoryFileSystem();
  for (const char* file : {"/cp/metadata", "/cp/offsets/7", "/cp/commits/7"}) {
    if (!fs->WriteFile(file, text).ok()) std::abort();
  }
  auto dir = silt::stream::CheckpointDir::Open(fs, "/cp");
  if (!dir.ok()) std::abort();
  (void)(*dir)->ReadQueryId();
  (void)(*dir)->ListBatches();
  (void)(*dir)->ReadOffsets(7);
  (void)(*dir)->ReadCommit(7);
  return 0;
}
