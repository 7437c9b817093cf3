#include "silt/delta/row_tracking.h"

#include <simdjson.h>

#include "silt/base/json_writer.h"
#include "silt/base/uuid.h"
#include "silt/delta/append_writer.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/protocol.h"
#include "silt/delta/stats.h"
#include "silt/delta/table.h"

namespace silt::delta {

Result<bool> AssignsRowIds(const Protocol& protocol, const Metadata& metadata) {
  if (!SupportsWriterFeature(protocol, "rowTracking")) return false;
  SILT_ASSIGN_OR_RETURN(bool suspended, RowTrackingSuspended(metadata.configuration));
  return !suspended;
}

Result<bool> RowTrackingEnabled(const Protocol& protocol, const Metadata& metadata) {
  if (!SupportsWriterFeature(protocol, "rowTracking")) return false;
  return EnableRowTracking(metadata.configuration);
}

Result<int64_t> RowIdHighWaterMark(const DomainMetadata* domain) {
  if (domain == nullptr) return -1;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  int64_t mark = 0;
  if (parser.parse(domain->configuration).get(root) != simdjson::SUCCESS ||
      root["rowIdHighWaterMark"].get_int64().get(mark) != simdjson::SUCCESS) {
    return Status::Corruption("domainMetadata ", kRowTrackingDomain, ": configuration '",
                              domain->configuration, "' has no integer rowIdHighWaterMark");
  }
  return mark;
}

DomainMetadata RowTrackingDomain(int64_t high_water_mark) {
  JsonWriter w;
  w.BeginObject();
  w.Member("rowIdHighWaterMark", high_water_mark);
  w.Member("domainName", std::string(kRowTrackingDomain));
  w.EndObject();
  return DomainMetadata{std::string(kRowTrackingDomain), w.Take(), false};
}

Result<int64_t> AssignRowIds(std::vector<AddFile>* adds, int64_t high_water_mark, int64_t version) {
  for (AddFile& add : *adds) {
    if (!add.default_row_commit_version) add.default_row_commit_version = version;
    if (add.base_row_id) continue;
    std::optional<int64_t> rows = add.stats ? StatsNumRecords(*add.stats) : std::nullopt;
    if (!rows) {
      return Status::InvalidArgument("row tracking: data file ", add.path,
                                     " has no numRecords statistic, so it cannot be given "
                                     "row ids");
    }
    add.base_row_id = high_water_mark + 1;
    high_water_mark += *rows;
  }
  return high_water_mark;
}

void AddMaterializedRowTrackingColumnNames(TableConfiguration* configuration) {
  if (!GetTableProperty(*configuration, kMaterializedRowIdColumnName)) {
    (*configuration)[std::string(kMaterializedRowIdColumnName)] = "_row-id-col-" + NewUuid();
  }
  if (!GetTableProperty(*configuration, kMaterializedRowCommitVersionColumnName)) {
    (*configuration)[std::string(kMaterializedRowCommitVersionColumnName)] =
        "_row-commit-version-col-" + NewUuid();
  }
}

std::optional<MaterializedRowTrackingColumns> MaterializedColumns(const Metadata& metadata) {
  std::optional<std::string> row_id =
      GetTableProperty(metadata.configuration, kMaterializedRowIdColumnName);
  std::optional<std::string> version =
      GetTableProperty(metadata.configuration, kMaterializedRowCommitVersionColumnName);
  if (!row_id || !version) return std::nullopt;
  return MaterializedRowTrackingColumns{*row_id, *version};
}

namespace {

int CountLeaves(const columnar::DataType& type) {
  if (type.id() != columnar::TypeId::kStruct) return 1;
  int n = 0;
  for (const columnar::Field& field : type.fields()) n += CountLeaves(*field.type);
  return n;
}

}  // namespace

Result<std::optional<RowTrackingWrite>> RowTrackingWriteFor(const Snapshot& snapshot,
                                                            const std::string& table_path) {
  SILT_ASSIGN_OR_RETURN(bool enabled, RowTrackingEnabled(snapshot.protocol(), snapshot.metadata()));
  if (!enabled) return std::optional<RowTrackingWrite>();
  std::optional<MaterializedRowTrackingColumns> names = MaterializedColumns(snapshot.metadata());
  if (!names) {
    return Status::Corruption("Delta table ", table_path,
                              " enables row tracking without naming its materialized columns (",
                              kMaterializedRowIdColumnName, ")");
  }
  RowTrackingWrite out;
  out.names = *names;
  std::vector<columnar::Field> fields = snapshot.schema()->fields();
  SILT_ASSIGN_OR_RETURN(ColumnMappingMode mapping,
                        ColumnMappingModeOf(snapshot.metadata().configuration));
  if (mapping != ColumnMappingMode::kNone) {
    // Under column mapping too the files hold them under their own names,
    // without field ids, as delta-spark writes them.
    fields.push_back(HiddenColumn(names->row_id, columnar::DataType::Long()));
    fields.push_back(HiddenColumn(names->row_commit_version, columnar::DataType::Long()));
  } else {
    fields.push_back({names->row_id, columnar::DataType::Long(), true, "{}"});
    fields.push_back({names->row_commit_version, columnar::DataType::Long(), true, "{}"});
  }
  out.schema = columnar::DataType::Struct(std::move(fields));
  out.stats_columns =
      CountLeaves(*DataFileSchema(*snapshot.schema(), snapshot.partition_columns()));
  return std::optional<RowTrackingWrite>(std::move(out));
}

}  // namespace silt::delta
