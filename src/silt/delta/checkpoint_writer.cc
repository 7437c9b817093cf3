// Checkpoint writing's entry (checkpoint_writer_internal.h): which kind a
// table takes, the settings it reads from the table properties, and what
// both kinds share.
#include "silt/delta/checkpoint_writer.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>

#include "silt/delta/checkpoint_writer_internal.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

namespace checkpoint_writer_internal {

int64_t LastCheckpointVersion(fs::FileSystem* fs, const std::string& file) {
  auto text = fs->ReadFile(file);
  if (!text.ok()) return -1;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text->data(), text->size(), true).get(root) != simdjson::SUCCESS) return -1;
  int64_t version = -1;
  if (root["version"].get_int64().get(version) != simdjson::SUCCESS) return -1;
  return version;
}

}  // namespace checkpoint_writer_internal

namespace {

using checkpoint_writer_internal::CheckpointSettings;

// A checkpoint must carry everything a reader needs (protocol, metaData,
// txns, files with their row tracking fields, tombstones, metadata domains);
// tables whose state silt does not model are left to writers that model it.
// (A table with v2Checkpoint may take a classic, V1-spec checkpoint: the
// protocol always allows one.)
Status CheckCheckpointable(const Snapshot& snapshot) {
  const Protocol& p = snapshot.protocol();
  if (p.min_writer_version >= 7 && p.writer_features) {
    for (const std::string& f : *p.writer_features) {
      if (f == "icebergCompatV1" || f == "icebergCompatV2") {
        return Status::NotSupported(
            "silt does not write checkpoints for tables with writer "
            "feature ",
            f);
      }
    }
  }
  return Status::OK();
}

bool HasFeature(const std::optional<std::vector<std::string>>& features, std::string_view name) {
  return features && std::find(features->begin(), features->end(), name) != features->end();
}

Result<CheckpointSettings> Settings(const TableConfiguration& conf, int64_t now_ms) {
  CheckpointSettings out;
  SILT_ASSIGN_OR_RETURN(int64_t tombstone_retention_ms, DeletedFileRetentionMs(conf));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> txn_retention_ms, SetTransactionRetentionMs(conf));
  SILT_ASSIGN_OR_RETURN(out.write_stats, CheckpointWriteStatsAsJson(conf));
  out.tombstone_cutoff_ms = now_ms - tombstone_retention_ms;
  if (txn_retention_ms) out.txn_cutoff_ms = now_ms - *txn_retention_ms;
  return out;
}

}  // namespace

std::string CheckpointFileName(int64_t version) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%020lld.checkpoint.parquet", static_cast<long long>(version));
  return buf;
}

Result<bool> ShouldCheckpoint(const Metadata& metadata, int64_t version) {
  SILT_ASSIGN_OR_RETURN(int64_t interval, CheckpointInterval(metadata.configuration));
  return version != 0 && version % interval == 0;
}

Result<CheckpointInfo> WriteCheckpoint(DeltaTable* table, const Snapshot& snapshot,
                                       int64_t now_ms) {
  SILT_RETURN_NOT_OK(CheckCheckpointable(snapshot));
  const TableConfiguration& conf = snapshot.metadata().configuration;
  SILT_ASSIGN_OR_RETURN(CheckpointSettings settings, Settings(conf, now_ms));
  SILT_ASSIGN_OR_RETURN(bool v2, CheckpointPolicyV2(conf));
  // The policy says v2 but the table lacks the feature (set by hand, or by
  // an engine that ignores it): the classic checkpoint every reader takes.
  const Protocol& p = snapshot.protocol();
  if (v2 && p.min_writer_version >= 7 && HasFeature(p.writer_features, "v2Checkpoint") &&
      p.min_reader_version >= 3 && HasFeature(p.reader_features, "v2Checkpoint")) {
    return checkpoint_writer_internal::WriteV2Checkpoint(table, snapshot, settings);
  }
  if (snapshot.files_elided()) {
    return Status::Internal("a classic checkpoint of ", table->path(), " at version ",
                            snapshot.version(), " needs every live file; the state holds only ",
                            "those added since version ", snapshot.elided_since());
  }
  return checkpoint_writer_internal::WriteClassicCheckpoint(table, snapshot, settings);
}

}  // namespace silt::delta
