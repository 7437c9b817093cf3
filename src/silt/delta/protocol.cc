#include "silt/delta/protocol.h"

#include <string>
#include <string_view>
#include <vector>

namespace silt::delta {

namespace {

std::string ColumnMappingMode(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.columnMapping.mode");
  return it == metadata.configuration.end() ? std::string("none") : it->second;
}

bool ColumnMappingInert(const Metadata& metadata) {
  std::string mode = ColumnMappingMode(metadata);
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
      feature == "v2Checkpoint") {
    return "";
  }
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
  if (feature == "columnMapping") {
    if (ColumnMappingInert(metadata)) return "";
    return Status::Concat("columnMapping (delta.columnMapping.mode = '",
                          ColumnMappingMode(metadata), "')");
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
        feature == "typeWidening-preview") {
      continue;
    }
    if (feature == "columnMapping") {
      std::string mode = ColumnMappingMode(metadata);
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

Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata) {
  SILT_RETURN_NOT_OK(CheckReadSupported(protocol, metadata));
  if (protocol.min_writer_version > kMaxWriterVersion || protocol.min_writer_version < 1) {
    return Status::NotSupported("Delta writer version ", protocol.min_writer_version,
                                " (silt writes tables up to writer version ", kMaxWriterVersion,
                                ")");
  }
  std::vector<std::string> problems;
  for (const std::string& feature : WriterFeatures(protocol)) {
    std::string problem = WriterFeatureProblem(feature, metadata);
    if (!problem.empty()) problems.push_back(std::move(problem));
  }
  if (!problems.empty()) {
    return Status::NotSupported("writing to tables with the Delta table feature(s) ",
                                Join(problems), " is not supported yet");
  }
  return Status::OK();
}

Result<Protocol> ProtocolForNewTable(const TableConfiguration& configuration) {
  Protocol protocol;
  SILT_ASSIGN_OR_RETURN(bool deletion_vectors, EnableDeletionVectors(configuration));
  SILT_ASSIGN_OR_RETURN(bool v2_checkpoints, CheckpointPolicyV2(configuration));
  std::vector<std::string> features;
  if (deletion_vectors) features.emplace_back("deletionVectors");
  // delta-spark enables v2Checkpoint (a reader and writer feature) when a
  // table is created with delta.checkpointPolicy = v2.
  if (v2_checkpoints) features.emplace_back("v2Checkpoint");
  if (!features.empty()) {
    protocol.min_reader_version = 3;
    protocol.min_writer_version = 7;
    protocol.reader_features = features;
    protocol.writer_features = features;
  }
  return protocol;
}

}  // namespace silt::delta
