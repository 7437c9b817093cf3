#include "silt/delta/protocol.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "silt/delta/column_mapping.h"

namespace silt::delta {

namespace {

// The variant type (unshredded and shredded, read by TableScan through
// parquet/variant_reader.h) and shredding, whose writers may always write
// unshredded variants, as silt does: inert for appends.
bool IsVariantFeature(std::string_view feature) {
  return feature == "variantType" || feature == "variantType-preview" ||
         feature == "variantShredding" || feature == "variantShredding-preview";
}

bool HasVariant(const columnar::DataType& type) {
  switch (type.id()) {
    case columnar::TypeId::kVariant: return true;
    case columnar::TypeId::kArray: return HasVariant(*type.element_type());
    case columnar::TypeId::kMap:
      return HasVariant(*type.key_type()) || HasVariant(*type.value_type());
    case columnar::TypeId::kStruct:
      for (const columnar::Field& f : type.fields()) {
        if (HasVariant(*f.type)) return true;
      }
      return false;
    default: return false;
  }
}

void AddFeature(std::optional<std::vector<std::string>>* features, const std::string& name) {
  if (!features->has_value()) features->emplace();
  for (const std::string& f : **features) {
    if (f == name) return;
  }
  (*features)->push_back(name);
}

std::string ColumnMappingModeText(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.columnMapping.mode");
  return it == metadata.configuration.end() ? std::string("none") : it->second;
}

bool ColumnMappingInert(const Metadata& metadata) {
  std::string mode = ColumnMappingModeText(metadata);
  return mode == "none" || mode == "NONE" || mode.empty();
}

// The first column (dotted path) whose field metadata mentions `key`, or "".
// Field metadata is kept as JSON text; a quoted key match is enough to know
// the capability is in use.
std::string ColumnWithMetadataKey(const columnar::DataType& type, std::string_view key,
                                  const std::string& prefix) {
  const columnar::DataType* t = &type;
  while (t->id() == columnar::TypeId::kArray || t->id() == columnar::TypeId::kMap) {
    t = t->id() == columnar::TypeId::kArray ? t->element_type().get() : t->value_type().get();
  }
  if (t->id() != columnar::TypeId::kStruct) return "";
  std::string quoted = "\"" + std::string(key);
  for (const auto& field : t->fields()) {
    std::string path = prefix.empty() ? field.name : prefix + "." + field.name;
    if (field.metadata_json.find(quoted) != std::string::npos) return path;
    std::string nested = ColumnWithMetadataKey(*field.type, key, path);
    if (!nested.empty()) return nested;
  }
  return "";
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::vector<std::string> ReaderFeatures(const Protocol& protocol) {
  if (protocol.min_reader_version == 2) return {"columnMapping"};
  if (protocol.min_reader_version >= 3) {
    return protocol.reader_features.value_or(std::vector<std::string>());
  }
  return {};
}

std::vector<std::string> WriterFeatures(const Protocol& protocol) {
  int32_t v = protocol.min_writer_version;
  if (v >= 7) return protocol.writer_features.value_or(std::vector<std::string>());
  std::vector<std::string> out;
  if (v >= 2) out.insert(out.end(), {"appendOnly", "invariants"});
  if (v >= 3) out.emplace_back("checkConstraints");
  if (v >= 4) out.insert(out.end(), {"changeDataFeed", "generatedColumns"});
  if (v >= 5) out.emplace_back("columnMapping");
  if (v >= 6) out.emplace_back("identityColumns");
  return out;
}

// Why silt cannot append to a table using writer feature `feature`, or ""
// when the feature is implemented or has no effect on appends here.
std::string WriterFeatureProblem(const std::string& feature, const Metadata& metadata) {
  // Features that change nothing for a blind append of complete rows.
  if (feature == "appendOnly" || feature == "changeDataFeed" || feature == "domainMetadata" ||
      feature == "vacuumProtocolCheck" || feature == "timestampNtz" ||
      feature == "allowColumnDefaults" || feature == "deletionVectors" ||
      feature == "v2Checkpoint" || IsVariantFeature(feature)) {
    return "";
  }
  // Honoured by every commit (commit.cc): in-commit timestamps when
  // delta.enableInCommitTimestamps is on; fresh row ids, row commit versions
  // and the delta.rowTracking high-water mark unless row tracking is
  // suspended.
  if (feature == "inCommitTimestamp" || feature == "rowTracking") return "";
  // silt writes checkpoints at the version it commits only, and its log
  // cleanup deletes the protected checkpoints only with everything before
  // them (log_cleanup.h, LogCleanupOptions::protected_before_version).
  if (feature == "checkpointProtection") return "";
  // Appends keep every field's delta.typeChanges; the sink's mergeSchema
  // widens a column only with delta.enableTypeWidening on, recording the
  // change (type_widening.h, schema_evolution.h). TableScan reads both
  // names' tables; widening on a -preview table is refused where it would
  // happen (TypeWideningEnabled).
  if (feature == "typeWidening" || feature == "typeWidening-preview") return "";
  // Appends write statistics for the first delta.dataSkippingNumIndexedCols
  // columns, where delta-spark requires clustering columns to be; OPTIMIZE
  // clusters by the delta.clustering columns (optimize.cc).
  if (feature == "clustering") return "";
  const columnar::DataType* schema = metadata.schema.get();
  if (feature == "invariants" || feature == "generatedColumns" || feature == "identityColumns") {
    std::string_view key = feature == "invariants"         ? "delta.invariants"
                           : feature == "generatedColumns" ? "delta.generationExpression"
                                                           : "delta.identity.";
    std::string column = schema ? ColumnWithMetadataKey(*schema, key, "") : "";
    if (column.empty()) return "";
    return Status::Concat(feature, " (column '", column, "' uses ", key, ")");
  }
  if (feature == "checkConstraints") {
    for (const auto& [key, value] : metadata.configuration) {
      if (key.rfind("delta.constraints.", 0) == 0) {
        return Status::Concat(feature, " (", key, " = ", value, ")");
      }
    }
    return "";
  }
  // Honoured by the writers that name it in CommitRequest::honoured_features
  // (they write physical names and field ids, column_mapping.h); refused to
  // the others.
  if (feature == "columnMapping") {
    if (ColumnMappingInert(metadata)) return "";
    return Status::Concat("columnMapping (delta.columnMapping.mode = '",
                          ColumnMappingModeText(metadata), "')");
  }
  return feature;
}

}  // namespace

Status CheckReadSupported(const Protocol& protocol, const Metadata& metadata) {
  if (protocol.min_reader_version > kMaxReaderVersion || protocol.min_reader_version < 1) {
    return Status::NotSupported("Delta reader version ", protocol.min_reader_version,
                                " (silt reads tables up to reader version ", kMaxReaderVersion,
                                ")");
  }
  std::vector<std::string> unsupported;
  for (const std::string& feature : ReaderFeatures(protocol)) {
    if (feature == "timestampNtz" || feature == "vacuumProtocolCheck" ||
        feature == "v2Checkpoint" || feature == "deletionVectors" || feature == "typeWidening" ||
        feature == "typeWidening-preview" || IsVariantFeature(feature)) {
      continue;
    }
    if (feature == "columnMapping") {
      std::string mode = ColumnMappingModeText(metadata);
      if (ColumnMappingInert(metadata) || mode == "name" || mode == "id") continue;
      unsupported.push_back(Status::Concat(
          "columnMapping (column mapping, delta.columnMapping.mode = '", mode, "')"));
      continue;
    }
    unsupported.push_back(feature);
  }
  if (!unsupported.empty()) {
    return Status::NotSupported("reading tables with the Delta table feature(s) ",
                                Join(unsupported), " is not supported yet");
  }
  return Status::OK();
}

Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata,
                           const std::vector<std::string>& honoured) {
  SILT_RETURN_NOT_OK(CheckReadSupported(protocol, metadata));
  if (protocol.min_writer_version > kMaxWriterVersion || protocol.min_writer_version < 1) {
    return Status::NotSupported("Delta writer version ", protocol.min_writer_version,
                                " (silt writes tables up to writer version ", kMaxWriterVersion,
                                ")");
  }
  std::vector<std::string> problems;
  for (const std::string& feature : WriterFeatures(protocol)) {
    if (std::find(honoured.begin(), honoured.end(), feature) != honoured.end()) continue;
    std::string problem = WriterFeatureProblem(feature, metadata);
    if (!problem.empty()) problems.push_back(std::move(problem));
  }
  if (!problems.empty()) {
    return Status::NotSupported("writing to tables with the Delta table feature(s) ",
                                Join(problems), " is not supported yet");
  }
  return Status::OK();
}

std::vector<std::string> SupportedFeatures(const Protocol& protocol) {
  std::vector<std::string> out = WriterFeatures(protocol);
  for (const std::string& feature : ReaderFeatures(protocol)) {
    if (std::find(out.begin(), out.end(), feature) == out.end()) out.push_back(feature);
  }
  return out;
}

Protocol RemoveTableFeature(const Protocol& protocol, std::string_view feature) {
  std::vector<std::string> remaining;
  for (std::string& f : SupportedFeatures(protocol)) {
    if (f != feature) remaining.push_back(std::move(f));
  }
  // The versions each remaining feature needs.
  int32_t reader = 1;
  int32_t writer = 1;
  for (const std::string& f : remaining) {
    int32_t w = 7;
    int32_t r = IsReaderWriterFeature(f) ? 3 : 1;
    if (f == "appendOnly" || f == "invariants") w = 2;
    if (f == "checkConstraints") w = 3;
    if (f == "changeDataFeed" || f == "generatedColumns") w = 4;
    if (f == "columnMapping") {
      w = 5;
      r = 2;
    }
    if (f == "identityColumns") w = 6;
    reader = std::max(reader, r);
    writer = std::max(writer, w);
  }
  Protocol legacy;
  legacy.min_reader_version = reader;
  legacy.min_writer_version = writer;
  if (writer < 7) {
    std::vector<std::string> implied = SupportedFeatures(legacy);
    std::vector<std::string> want = remaining;
    std::sort(implied.begin(), implied.end());
    std::sort(want.begin(), want.end());
    if (implied == want) return legacy;
  }
  Protocol out;
  out.min_reader_version = reader;
  out.min_writer_version = 7;
  out.writer_features = remaining;
  if (reader >= 3) {
    out.reader_features = std::vector<std::string>();
    for (const std::string& f : remaining) {
      if (IsReaderWriterFeature(f)) out.reader_features->push_back(f);
    }
  }
  return out;
}

bool AddSchemaFeatures(const columnar::DataType& schema, Protocol* protocol) {
  if (!HasVariant(schema)) return false;
  return AddTableFeature(protocol, "variantType");
}

bool AddTableFeature(Protocol* protocol, std::string_view feature) {
  const std::vector<std::string> readers = ReaderFeatures(*protocol);
  const std::vector<std::string> writers = WriterFeatures(*protocol);
  const bool reader_too = IsReaderWriterFeature(feature);
  auto has = [&](const std::vector<std::string>& list) {
    for (const std::string& f : list) {
      if (f == feature || f == std::string(feature) + "-preview") return true;
    }
    return false;
  };
  if (has(writers) && (!reader_too || has(readers))) return false;
  // Table features need writer 7 (and reader 3 for reader-writer
  // features); the legacy versions' implied features become explicit, as
  // delta-spark lists them.
  Protocol upgraded = *protocol;
  if (reader_too && upgraded.min_reader_version < 3) {
    upgraded.reader_features = readers;
    upgraded.min_reader_version = 3;
  }
  if (upgraded.min_writer_version < 7) {
    upgraded.writer_features = writers;
    upgraded.min_writer_version = 7;
  }
  if (reader_too) AddFeature(&upgraded.reader_features, std::string(feature));
  AddFeature(&upgraded.writer_features, std::string(feature));
  *protocol = std::move(upgraded);
  return true;
}

Result<Protocol> ProtocolForNewTable(const TableConfiguration& configuration, bool clustered) {
  Protocol protocol;
  SILT_ASSIGN_OR_RETURN(bool deletion_vectors, EnableDeletionVectors(configuration));
  SILT_ASSIGN_OR_RETURN(bool in_commit_timestamps, EnableInCommitTimestamps(configuration));
  SILT_ASSIGN_OR_RETURN(bool row_tracking, EnableRowTracking(configuration));
  SILT_ASSIGN_OR_RETURN(bool v2_checkpoints, CheckpointPolicyV2(configuration));
  SILT_ASSIGN_OR_RETURN(bool type_widening, EnableTypeWidening(configuration));
  SILT_ASSIGN_OR_RETURN(ColumnMappingMode mapping, ColumnMappingModeOf(configuration));
  // delta.feature.<name> = supported (ValidateTableProperties admits the
  // features silt honours).
  std::vector<std::string> named;
  for (const auto& [key, value] : configuration) {
    if (key.rfind(kFeaturePropertyPrefix, 0) == 0) {
      named.push_back(key.substr(kFeaturePropertyPrefix.size()));
    }
  }
  auto add = [](std::vector<std::string>* list, std::string_view feature) {
    for (const std::string& f : *list) {
      if (f == feature) return;
    }
    list->emplace_back(feature);
  };
  std::vector<std::string> writer;
  std::vector<std::string> reader;
  // Deletion vectors and V2 checkpoints alone list only themselves, as
  // delta-spark 3 does.
  if (in_commit_timestamps || row_tracking || clustered || type_widening || !named.empty()) {
    // delta-spark 4 lists the features of the legacy (1, 2) protocol when a
    // new table needs table features.
    writer = {"appendOnly", "invariants"};
  }
  if (row_tracking || clustered) add(&writer, "domainMetadata");
  if (row_tracking) add(&writer, "rowTracking");
  if (clustered) add(&writer, "clustering");
  if (in_commit_timestamps) add(&writer, "inCommitTimestamp");
  // delta-spark 4 (3, 7) with typeWidening in both lists.
  if (type_widening) {
    add(&reader, "typeWidening");
    add(&writer, "typeWidening");
  }
  if (deletion_vectors) {
    add(&reader, "deletionVectors");
    add(&writer, "deletionVectors");
  }
  // delta-spark enables v2Checkpoint (a reader and writer feature) when a
  // table is created with delta.checkpointPolicy = v2.
  if (v2_checkpoints) {
    add(&reader, "v2Checkpoint");
    add(&writer, "v2Checkpoint");
  }
  for (const std::string& feature : named) {
    if (IsReaderWriterFeature(feature)) add(&reader, feature);
    add(&writer, feature);
  }
  if (mapping != ColumnMappingMode::kNone) {
    // delta-spark 4 (2, 7) with columnMapping beside the legacy (1, 2)
    // features; reader 3 with it listed when other reader features are.
    add(&writer, "appendOnly");
    add(&writer, "invariants");
    add(&writer, "columnMapping");
    if (reader.empty()) {
      protocol.min_reader_version = 2;
    } else {
      add(&reader, "columnMapping");
    }
  }
  if (!reader.empty()) {
    protocol.min_reader_version = 3;
    protocol.reader_features = std::move(reader);
  }
  if (!writer.empty()) {
    protocol.min_writer_version = 7;
    protocol.writer_features = std::move(writer);
  }
  return protocol;
}

bool IsReaderWriterFeature(std::string_view feature) {
  return feature == "deletionVectors" || feature == "columnMapping" || feature == "timestampNtz" ||
         feature == "v2Checkpoint" || feature == "typeWidening" ||
         feature == "typeWidening-preview" || feature == "vacuumProtocolCheck" ||
         IsVariantFeature(feature) || feature == "catalogManaged";
}

bool SupportsWriterFeature(const Protocol& protocol, std::string_view feature) {
  if (protocol.min_writer_version < 7 || !protocol.writer_features) return false;
  for (const std::string& f : *protocol.writer_features) {
    if (f == feature) return true;
  }
  return false;
}

}  // namespace silt::delta
