#include "silt/delta/append_writer.h"

#include <algorithm>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/schema_evolution.h"
#include "silt/delta/type_widening.h"

namespace silt::delta {

namespace {

// `column` shaped as `target`: struct fields matched by name (case-
// insensitive), fields the data lacks filled with nulls, at any struct depth
// (mergeSchema may have added nested fields the data does not have); arrays
// and maps whose nullability differs from the table's relabelled (the
// memory layout does not depend on it); values of a narrower type than the
// table's (or a void column) converted to it, at any depth.
Result<columnar::ColumnPtr> ConformColumn(const columnar::ColumnPtr& column,
                                          const columnar::TypePtr& target,
                                          const std::string& name) {
  if (column->type->Equals(*target)) return column;
  const columnar::TypeId id = target->id();
  if (!target->is_nested() && !column->type->is_nested() &&
      (column->type->id() == columnar::TypeId::kNull ||
       IsTypeChangeSupported(*column->type, *target))) {
    return WidenColumn(*column, target);
  }
  if ((id == columnar::TypeId::kArray || id == columnar::TypeId::kMap) &&
      column->type->id() == id && column->children.size() == 1) {
    auto out = std::make_shared<columnar::Column>(*column);
    out->type = target;
    const columnar::TypePtr& child_type =
        id == columnar::TypeId::kArray ? target->element_type() : target->map_entries_type();
    SILT_ASSIGN_OR_RETURN(out->children[0], ConformColumn(column->children[0], child_type, name));
    return columnar::ColumnPtr(std::move(out));
  }
  if (column->type->id() != columnar::TypeId::kStruct ||
      target->id() != columnar::TypeId::kStruct) {
    return Status::InvalidArgument("column '", name, "' is ", column->type->ToDdl(),
                                   " in the query but ", target->ToDdl(), " in the table");
  }
  auto out = std::make_shared<columnar::Column>();
  out->type = target;
  out->length = column->length;
  out->null_count = column->null_count;
  out->validity = column->validity;
  for (const columnar::Field& field : target->fields()) {
    int idx = column->type->FieldIndex(field.name);
    if (idx < 0) {
      out->children.push_back(columnar::MakeNullColumn(field.type, column->length));
      continue;
    }
    SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr child,
                          ConformColumn(column->children[static_cast<size_t>(idx)], field.type,
                                        name + "." + field.name));
    out->children.push_back(std::move(child));
  }
  return columnar::ColumnPtr(std::move(out));
}

}  // namespace

std::string SchemaDdl(const columnar::Schema& schema) {
  std::string out;
  for (const columnar::Field& field : schema.fields()) {
    if (!out.empty()) out += ", ";
    out += field.name + " " + field.type->ToDdl();
  }
  return out;
}

AppendLayout NewTableLayout(columnar::SchemaPtr data_schema) {
  AppendLayout layout;
  layout.table_schema = AsNullable(data_schema);
  for (int i = 0; i < data_schema->num_fields(); ++i) {
    layout.column_order.push_back(i);
    // Nested nullability differs: the columns are relabelled as they go.
    if (!data_schema->field(i).type->Equals(*layout.table_schema->field(i).type)) {
      layout.reorder = true;
    }
  }
  return layout;
}

Result<AppendLayout> PlanAppend(const columnar::SchemaPtr& table, const columnar::Schema& data,
                                bool merge_schema, const std::string& table_path,
                                bool type_widening) {
  Result<columnar::SchemaPtr> merged =
      MergeSchemaForAppend(table, data, merge_schema, type_widening);
  if (!merged.ok()) {
    return Status::InvalidArgument("the Delta table at ", table_path, " has schema (",
                                   SchemaDdl(*table), ") but the query writes (", SchemaDdl(data),
                                   "): ", merged.status().message());
  }
  AppendLayout layout;
  layout.table_schema = *merged;
  layout.schema_changed = layout.table_schema.get() != table.get();
  std::vector<std::string> problems;
  for (int table_idx = 0; table_idx < layout.table_schema->num_fields(); ++table_idx) {
    const columnar::Field& field = layout.table_schema->field(table_idx);
    int data_idx = data.FieldIndex(field.name);
    if (data_idx < 0) {
      if (!field.nullable) {
        problems.push_back("column '" + field.name +
                           "' is NOT NULL in the table but missing from the query output");
      }
      layout.column_order.push_back(-1);
      layout.reorder = true;
      continue;
    }
    const columnar::Field& data_field = data.field(data_idx);
    if (!field.nullable && data_field.nullable) layout.not_null_columns.push_back(table_idx);
    if (data_idx != table_idx || !field.type->Equals(*data_field.type)) layout.reorder = true;
    layout.column_order.push_back(data_idx);
  }
  if (!problems.empty()) {
    std::string detail;
    for (const std::string& p : problems) detail += "; " + p;
    return Status::InvalidArgument("the Delta table at ", table_path, " has schema (",
                                   SchemaDdl(*table), ") but the query writes (", SchemaDdl(data),
                                   ")", detail);
  }
  return layout;
}

columnar::SchemaPtr DataFileSchema(const columnar::Schema& schema,
                                   const std::vector<std::string>& partition_columns) {
  std::vector<columnar::Field> data_fields;
  for (const columnar::Field& field : schema.fields()) {
    if (std::find(partition_columns.begin(), partition_columns.end(), field.name) ==
        partition_columns.end()) {
      data_fields.push_back(field);
    }
  }
  return columnar::DataType::Struct(std::move(data_fields));
}

Result<std::unique_ptr<AppendWriter>> AppendWriter::Make(
    fs::FileSystemPtr fs, std::string table_path, AppendLayout layout,
    std::vector<std::string> partition_columns, TableWriterOptions options, int64_t batch_id) {
  std::unique_ptr<AppendWriter> writer(new AppendWriter());
  SILT_ASSIGN_OR_RETURN(
      writer->writer_,
      MakeTableWriter(std::move(fs), table_path, layout.table_schema, std::move(partition_columns),
                      std::move(options), layout.column_mapping));
  writer->path_ = std::move(table_path);
  writer->layout_ = std::move(layout);
  writer->batch_id_ = batch_id;
  return writer;
}

Status AppendWriter::Write(const columnar::RecordBatch& batch) {
  const AppendLayout& layout = layout_;
  for (int table_idx : layout.not_null_columns) {
    const columnar::Column& column =
        *batch.column(layout.column_order[static_cast<size_t>(table_idx)]);
    if (column.null_count > 0) {
      return Status::InvalidArgument(
          "NOT NULL constraint violated for column '", layout.table_schema->field(table_idx).name,
          "' of ", path_, ": ", column.null_count, " null value(s) in batch ", batch_id_);
    }
  }
  columnar::RecordBatch table_batch;
  table_batch.schema = layout.table_schema;
  table_batch.num_rows = batch.num_rows;
  table_batch.columns.reserve(layout.column_order.size());
  for (size_t table_idx = 0; table_idx < layout.column_order.size(); ++table_idx) {
    int data_idx = layout.column_order[table_idx];
    const columnar::Field& field = layout.table_schema->field(static_cast<int>(table_idx));
    if (data_idx < 0) {
      table_batch.columns.push_back(columnar::MakeNullColumn(field.type, batch.num_rows));
    } else if (!layout.reorder) {
      table_batch.columns.push_back(batch.column(data_idx));
    } else {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr column,
                            ConformColumn(batch.column(data_idx), field.type, field.name));
      table_batch.columns.push_back(std::move(column));
    }
  }
  return writer_->Write(table_batch);
}

Result<std::string> BloomFilterColumn(const std::string& column,
                                      const columnar::SchemaPtr& data_schema,
                                      const std::vector<std::string>& partition_columns,
                                      const std::string& key) {
  const std::string top = column.substr(0, column.find('.'));
  for (const std::string& p : partition_columns) {
    if (EqualsIgnoreCase(p, top)) {
      return Status::InvalidArgument(key, ": '", top,
                                     "' is a partition column; its values are not stored in "
                                     "the data files");
    }
  }
  const int idx = data_schema->FieldIndex(top);
  if (top.empty() || idx < 0) {
    return Status::InvalidArgument(key, ": no column '", column, "' in the query's output (",
                                   SchemaDdl(*data_schema), ")");
  }
  return data_schema->field(idx).name + column.substr(top.size());
}

Result<std::map<std::string, parquet::BloomFilterOptions>> ResolveBloomFilters(
    const BloomFilterRequest& request, const columnar::SchemaPtr& data_schema) {
  std::map<std::string, parquet::BloomFilterOptions> out;
  if (request.all.value_or(false)) {
    // Every column that can have one: primitive, not boolean.
    for (const columnar::Field& field : data_schema->fields()) {
      if (field.type->is_nested() || field.type->id() == columnar::TypeId::kBoolean) continue;
      out[field.name] = parquet::BloomFilterOptions();
    }
  }
  for (const auto& [name, on] : request.enabled) {
    if (on) {
      out[name] = parquet::BloomFilterOptions();
    } else {
      out.erase(name);
    }
  }
  // Tuning for a column without a filter is ignored, with a warning (under
  // the "stream" component, where the option was read).
  auto key_of = [&](const std::string& name) {
    auto it = request.key_of.find(name);
    return it == request.key_of.end() ? std::string() : it->second;
  };
  auto tune = [&](const auto& values, auto member) {
    for (const auto& [name, value] : values) {
      auto it = out.find(name);
      if (it == out.end()) {
        SILT_LOG_WARN("stream", key_of(name), ": no effect, no bloom filter is enabled for '", name,
                      "'");
      } else {
        it->second.*member = value;
      }
    }
  };
  tune(request.ndv, &parquet::BloomFilterOptions::ndv);
  tune(request.fpp, &parquet::BloomFilterOptions::fpp);
  // The columns named explicitly must be able to carry a filter: checked
  // against the Parquet writer itself (nested leaves, booleans).
  for (const auto& [name, bloom] : out) {
    auto key = request.key_of.find(name);
    if (key == request.key_of.end()) continue;  // chosen by "enabled: true"
    const int idx = data_schema->FieldIndex(name.substr(0, name.find('.')));
    const columnar::Field& field = data_schema->field(idx);
    if (field.type->id() == columnar::TypeId::kBoolean) {
      return Status::InvalidArgument(key->second, ": '", name,
                                     "' is boolean; Parquet has no bloom filters for booleans");
    }
    if (name.find('.') == std::string::npos && field.type->is_nested()) {
      return Status::InvalidArgument(key->second, ": '", name, "' is ", field.type->ToDdl(),
                                     "; name one of its leaves by its Parquet path (for example ",
                                     "'a.b', 'l.list.element', 'm.key_value.key')");
    }
    if (name.find('.') != std::string::npos) {
      parquet::WriterOptions trial;
      trial.bloom_filters[name] = bloom;
      auto mem = fs::MakeMemoryFileSystem();
      Result<std::unique_ptr<parquet::ParquetFileWriter>> writer =
          parquet::ParquetFileWriter::Open(mem.get(), "/bloom-check.parquet", data_schema, trial);
      if (!writer.ok()) {
        return Status::InvalidArgument(key->second, ": no Parquet leaf column '", name,
                                       "' that can have a bloom filter");
      }
      SILT_RETURN_NOT_OK((*writer)->Abort());
    }
  }
  return out;
}

}  // namespace silt::delta
