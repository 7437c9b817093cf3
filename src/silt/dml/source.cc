#include "silt/dml/source.h"

#include <simdjson.h>

#include <algorithm>

#include "silt/delta/table.h"
#include "silt/expr/expression.h"
#include "silt/expr/filter.h"
#include "silt/fs/file_system.h"
#include "silt/json/json_decoder.h"
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

Result<Collected> ApplySelect(const expr::TableReference& ref, Collected out,
                              const expr::EvalOptions& options);

// The files a parquet.`PATH` / json.`PATH` source reads: the directory's
// files ending in `suffix` (hidden and _-prefixed ones skipped, as Spark
// skips them), or the path itself when it is a file.
Result<std::vector<std::string>> ListDataFiles(fs::FileSystem* fs, const std::string& raw_path,
                                               std::string_view suffix) {
  const std::string path = fs::NormalizePath(raw_path);
  std::vector<std::string> files;
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> listed, fs->ListDir(path));
  for (const fs::FileInfo& f : listed) {
    std::string_view name = fs::BaseName(f.path);
    if (name.empty() || name[0] == '_' || name[0] == '.') continue;
    if (name.ends_with(suffix)) files.push_back(f.path);
  }
  if (listed.empty()) files.push_back(path);  // a file, not a directory
  return files;
}

Result<Collected> ReadParquet(const expr::TableReference& ref, const expr::EvalOptions& options) {
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr fs, fs::FileSystemForPath(ref.path));
  SILT_ASSIGN_OR_RETURN(std::vector<std::string> files,
                        ListDataFiles(fs.get(), ref.path, ".parquet"));
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
  return ApplySelect(ref, std::move(out), options);
}

// SELECT items FROM <file source> [WHERE cond] over the rows read.
Result<Collected> ApplySelect(const expr::TableReference& ref, Collected out,
                              const expr::EvalOptions& options) {
  if (!ref.query) return out;
  if (!ref.query->group_by.empty() || ref.query->having || !ref.query->order_by.empty() ||
      ref.query->limit) {
    return Status::NotSupported(
        "a MERGE source SELECT over ", ref.format, ".`", ref.path,
        "` takes a select list and WHERE only (GROUP BY, HAVING, ORDER BY and LIMIT are "
        "supported over Delta tables)");
  }
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

// Spark's JSON schema inference (JsonInferSchema) with its defaults:
// integers BIGINT (DECIMAL(20,0) past BIGINT, as Jackson's big integers),
// other numbers DOUBLE, objects STRUCT with fields sorted by name, arrays of
// the merged element type; conflicting types widen BIGINT to DOUBLE and
// anything else to STRING; a type seen only as null is STRING.
columnar::TypePtr InferJsonType(simdjson::dom::element e);

columnar::TypePtr MergeJsonTypes(const columnar::TypePtr& a, const columnar::TypePtr& b) {
  using columnar::DataType;
  using columnar::TypeId;
  if (a->id() == TypeId::kNull) return b;
  if (b->id() == TypeId::kNull) return a;
  if (a->Equals(*b)) return a;
  auto numeric = [](const columnar::TypePtr& t) {
    return t->id() == TypeId::kLong || t->id() == TypeId::kDouble || t->id() == TypeId::kDecimal;
  };
  if (numeric(a) && numeric(b)) return DataType::Double();
  if (a->id() == TypeId::kStruct && b->id() == TypeId::kStruct) {
    std::vector<columnar::Field> fields = a->fields();
    for (const columnar::Field& f : b->fields()) {
      auto it = std::find_if(fields.begin(), fields.end(),
                             [&](const columnar::Field& g) { return g.name == f.name; });
      if (it == fields.end()) {
        fields.push_back(f);
      } else {
        it->type = MergeJsonTypes(it->type, f.type);
      }
    }
    std::sort(fields.begin(), fields.end(),
              [](const columnar::Field& x, const columnar::Field& y) { return x.name < y.name; });
    return DataType::Struct(std::move(fields));
  }
  if (a->id() == TypeId::kArray && b->id() == TypeId::kArray) {
    return DataType::Array(MergeJsonTypes(a->element_type(), b->element_type()));
  }
  return DataType::String();
}

columnar::TypePtr InferJsonType(simdjson::dom::element e) {
  using columnar::DataType;
  switch (e.type()) {
    case simdjson::dom::element_type::INT64: return DataType::Long();
    case simdjson::dom::element_type::UINT64: return DataType::Decimal(20, 0);
    case simdjson::dom::element_type::DOUBLE: return DataType::Double();
    case simdjson::dom::element_type::STRING: return DataType::String();
    case simdjson::dom::element_type::BOOL: return DataType::Boolean();
    case simdjson::dom::element_type::NULL_VALUE: return DataType::Null();
    case simdjson::dom::element_type::ARRAY: {
      columnar::TypePtr element = DataType::Null();
      simdjson::dom::array array = e.get_array().value_unsafe();
      for (simdjson::dom::element item : array) {
        element = MergeJsonTypes(element, InferJsonType(item));
      }
      return DataType::Array(element);
    }
    case simdjson::dom::element_type::OBJECT: {
      std::vector<columnar::Field> fields;
      simdjson::dom::object object = e.get_object().value_unsafe();
      for (auto [key, value] : object) {
        fields.push_back({std::string(key), InferJsonType(value), true});
      }
      std::sort(fields.begin(), fields.end(),
                [](const columnar::Field& x, const columnar::Field& y) { return x.name < y.name; });
      return DataType::Struct(std::move(fields));
    }
  }
  return DataType::String();
}

columnar::TypePtr CanonicalJsonType(const columnar::TypePtr& t) {
  using columnar::DataType;
  using columnar::TypeId;
  if (t->id() == TypeId::kNull) return DataType::String();
  if (t->id() == TypeId::kArray) return DataType::Array(CanonicalJsonType(t->element_type()));
  if (t->id() == TypeId::kStruct) {
    std::vector<columnar::Field> fields = t->fields();
    for (columnar::Field& f : fields) f.type = CanonicalJsonType(f.type);
    return DataType::Struct(std::move(fields));
  }
  return t;
}

// json.`PATH`: JSON lines (a file, or a directory's *.json files), schema
// inferred as Spark does.
Result<Collected> ReadJson(const expr::TableReference& ref, const expr::EvalOptions& options) {
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr fs, fs::FileSystemForPath(ref.path));
  SILT_ASSIGN_OR_RETURN(std::vector<std::string> files, ListDataFiles(fs.get(), ref.path, ".json"));
  std::vector<std::string> texts;
  for (const std::string& file : files) {
    SILT_ASSIGN_OR_RETURN(std::string text, fs->ReadFile(file));
    texts.push_back(std::move(text));
  }
  std::vector<std::string_view> lines;
  for (const std::string& text : texts) {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string_view line(text.data() + start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back(line);
      start = end + 1;
    }
  }
  simdjson::dom::parser parser;
  columnar::TypePtr type = columnar::DataType::Struct({});
  for (size_t i = 0; i < lines.size(); ++i) {
    simdjson::dom::element root;
    if (parser.parse(lines[i].data(), lines[i].size()).get(root) != simdjson::SUCCESS ||
        root.type() != simdjson::dom::element_type::OBJECT) {
      return Status::InvalidArgument("line ", i + 1, " of ", ref.path,
                                     " is not a JSON object (silt reads JSON lines)");
    }
    type = MergeJsonTypes(type, InferJsonType(root));
  }
  type = CanonicalJsonType(type);
  SILT_ASSIGN_OR_RETURN(auto decoder, json::JsonDecoder::Make(type));
  SILT_ASSIGN_OR_RETURN(columnar::ColumnPtr decoded,
                        decoder->DecodeViews(lines.data(), static_cast<int64_t>(lines.size())));
  Collected out;
  out.schema = decoder->output_type();
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = out.schema;
  batch->num_rows = decoded->length;
  batch->columns = decoded->children;
  out.batches.push_back(std::move(batch));
  return ApplySelect(ref, std::move(out), options);
}

}  // namespace

Result<std::unique_ptr<RowSource>> OpenStatementSource(const expr::TableReference& ref,
                                                       const expr::EvalOptions& options) {
  Result<Collected> collected = Status::NotSupported("");
  if (ref.format == "delta") {
    collected = ReadDelta(ref);
  } else if (ref.format == "parquet") {
    collected = ReadParquet(ref, options);
  } else if (ref.format == "json") {
    collected = ReadJson(ref, options);
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
