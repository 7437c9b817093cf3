#include "silt/dml/source.h"

#include "silt/delta/table.h"
#include "silt/expr/expression.h"
#include "silt/expr/filter.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"
#include "silt/query/query.h"

namespace silt::dml {

namespace {

struct Collected {
  columnar::SchemaPtr schema;
  std::vector<columnar::RecordBatchPtr> batches;
};

Result<Collected> ReadDelta(const expr::TableReference& ref) {
  SILT_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::OpenExisting(ref.path));
  delta::SnapshotPtr snapshot;
  if (ref.query && ref.query->version) {
    SILT_ASSIGN_OR_RETURN(snapshot, table->SnapshotAt(*ref.query->version));
  } else if (ref.query && ref.query->timestamp) {
    SILT_ASSIGN_OR_RETURN(int64_t ms, query::ParseTimeTravelTimestamp(*ref.query->timestamp));
    SILT_ASSIGN_OR_RETURN(snapshot, table->SnapshotAtTimestamp(ms));
  } else {
    SILT_ASSIGN_OR_RETURN(snapshot, table->LatestSnapshot());
  }
  query::QuerySpec spec;
  if (ref.query) {
    spec.select = ref.query->select;
    spec.where = ref.query->where;
    spec.group_by = ref.query->group_by;
    spec.having = ref.query->having;
    spec.order_by = ref.query->order_by;
    spec.limit = ref.query->limit.value_or(-1);
  }
  Collected out;
  query::QueryOutput output;
  output.begin = [&](const columnar::SchemaPtr& schema) {
    out.schema = schema;
    return Status::OK();
  };
  output.batch = [&](const columnar::RecordBatch& batch) {
    out.batches.push_back(std::make_shared<columnar::RecordBatch>(batch));
    return Status::OK();
  };
  SILT_RETURN_NOT_OK(query::RunQuery(*table, snapshot, spec, output).status());
  return out;
}

Result<Collected> ReadParquet(const expr::TableReference& ref, const expr::EvalOptions& options) {
  if (ref.query && (!ref.query->group_by.empty() || ref.query->having ||
                    !ref.query->order_by.empty() || ref.query->limit)) {
    return Status::NotSupported(
        "a MERGE source SELECT over parquet.`", ref.path,
        "` takes a select list and WHERE only (GROUP BY, HAVING, ORDER BY and LIMIT are "
        "supported over Delta tables)");
  }
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr fs, fs::FileSystemForPath(ref.path));
  const std::string path = fs::NormalizePath(ref.path);
  std::vector<std::string> files;
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> listed, fs->ListDir(path));
  for (const fs::FileInfo& f : listed) {
    std::string_view name = fs::BaseName(f.path);
    if (name.empty() || name[0] == '_' || name[0] == '.') continue;
    if (name.size() >= 8 && name.substr(name.size() - 8) == ".parquet") files.push_back(f.path);
  }
  if (listed.empty()) files.push_back(path);  // a file, not a directory
  Collected out;
  for (const std::string& file : files) {
    SILT_ASSIGN_OR_RETURN(auto reader, parquet::ParquetFileReader::Open(fs.get(), file));
    if (out.schema == nullptr) {
      out.schema = reader->schema();
    } else if (!out.schema->Equals(*reader->schema())) {
      return Status::NotSupported("the Parquet files of ", ref.path, " have different schemas (",
                                  file, ")");
    }
    for (int g = 0; g < reader->num_row_groups(); ++g) {
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, reader->ReadRowGroup(g));
      out.batches.push_back(std::move(batch));
    }
  }
  if (out.schema == nullptr) return Status::NotFound("no Parquet files in ", ref.path);
  if (!ref.query) return out;
  // SELECT items FROM parquet.`p` [WHERE cond].
  expr::EvalContext ctx;
  std::unique_ptr<expr::BoundFilter> filter;
  if (ref.query->where) {
    SILT_ASSIGN_OR_RETURN(filter, expr::BoundFilter::Make(*ref.query->where, out.schema, options));
  }
  std::vector<expr::BoundExpressionPtr> items;
  for (const expr::NodePtr& item : ref.query->select) {
    SILT_ASSIGN_OR_RETURN(auto bound, expr::BindSelectItem(*item, out.schema, options));
    for (auto& b : bound) items.push_back(std::move(b));
  }
  std::vector<columnar::Field> fields;
  for (const auto& item : items) fields.push_back({item->name(), item->type(), true});
  Collected selected;
  selected.schema = columnar::DataType::Struct(std::move(fields));
  for (const columnar::RecordBatchPtr& batch : out.batches) {
    columnar::RecordBatchPtr kept = batch;
    if (filter) {
      SILT_ASSIGN_OR_RETURN(kept, filter->Filter(batch, ctx));
    }
    auto projected = std::make_shared<columnar::RecordBatch>();
    projected->schema = selected.schema;
    projected->num_rows = kept->num_rows;
    for (auto& item : items) {
      SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr c, item->Evaluate(*kept, ctx));
      projected->columns.push_back(std::move(c));
    }
    selected.batches.push_back(std::move(projected));
  }
  return selected;
}

}  // namespace

Result<std::unique_ptr<RowSource>> OpenStatementSource(const expr::TableReference& ref,
                                                       const expr::EvalOptions& options) {
  Result<Collected> collected = Status::NotSupported("");
  if (ref.format == "delta") {
    collected = ReadDelta(ref);
  } else if (ref.format == "parquet") {
    collected = ReadParquet(ref, options);
  } else {
    return Status::NotSupported("a MERGE source in ", ref.format, " format (", ref.path,
                                ") is not supported by silt yet: use delta.`PATH` or "
                                "parquet.`PATH`");
  }
  if (!collected.ok()) {
    return collected.status().WithContextParts("reading the MERGE source ", ref.format, ".`",
                                               ref.path, "`");
  }
  return MakeBatchSource(collected->schema, std::move(collected->batches));
}

}  // namespace silt::dml
