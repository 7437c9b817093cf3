// Classic checkpoints (checkpoint_writer_internal.h): one
// `<version>.checkpoint.parquet` holding the whole state, then
// `_last_checkpoint` with the checkpoint's schema.
#include <memory>
#include <string>

#include "silt/base/json_writer.h"
#include "silt/delta/checkpoint_writer_internal.h"

namespace silt::delta::checkpoint_writer_internal {

Result<CheckpointInfo> WriteClassicCheckpoint(DeltaTable* table, const Snapshot& snapshot,
                                              const CheckpointSettings& settings) {
  CheckpointInfo info;
  info.version = snapshot.version();
  info.path = fs::JoinPath(table->log_path(), CheckpointFileName(snapshot.version()));
  fs::FileSystem* fs = table->file_system().get();
  SILT_ASSIGN_OR_RETURN_CTX(std::unique_ptr<parquet::ParquetFileWriter> writer,
                            parquet::ParquetFileWriter::Open(fs, info.path, CheckpointSchema(),
                                                             CheckpointWriterOptions()),
                            "writing checkpoint ", info.path);
  CheckpointRows rows(writer.get(), CheckpointSchema());
  Status st = WriteRows(snapshot, settings.tombstone_cutoff_ms, settings.txn_cutoff_ms,
                        settings.write_stats, &rows);
  if (!st.ok()) {
    (void)writer->Abort();
    return st.WithContextParts("writing checkpoint ", info.path);
  }
  SILT_ASSIGN_OR_RETURN_CTX(parquet::WriteResult result, writer->Close(), "writing checkpoint ",
                            info.path);
  info.num_actions = rows.rows();
  info.num_add_files = static_cast<int64_t>(snapshot.files().size());
  info.size_in_bytes = result.file_size;
  info.file_actions_encoded = rows.rows();

  SILT_RETURN_NOT_OK(WriteClassicLastCheckpoint(fs, table->log_path(), info,
                                                columnar::SchemaToJson(*CheckpointSchema())));
  return info;
}

Status WriteClassicLastCheckpoint(fs::FileSystem* fs, const std::string& log_path,
                                  const CheckpointInfo& info, std::string_view schema_json) {
  // _last_checkpoint is a hint; never move it backwards (a slower writer
  // checkpointing an older version must not hide a newer checkpoint).
  std::string last = fs::JoinPath(log_path, "_last_checkpoint");
  if (LastCheckpointVersion(fs, last) > info.version) return Status::OK();
  JsonWriter w;
  w.BeginObject();
  w.Member("version", info.version);
  w.Member("size", info.num_actions);
  w.Member("sizeInBytes", info.size_in_bytes);
  w.Member("numOfAddFiles", info.num_add_files);
  if (!schema_json.empty()) {
    w.Key("checkpointSchema");
    w.Raw(schema_json);
  }
  w.EndObject();
  SILT_RETURN_NOT_OK_CTX(fs->WriteFile(last, w.Take()), "writing ", last);
  return Status::OK();
}

}  // namespace silt::delta::checkpoint_writer_internal
