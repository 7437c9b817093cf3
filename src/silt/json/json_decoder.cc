// JsonDecoder (json_decoder.h): the schema tree, the row loop and the
// public API; the decoder's other parts are listed in
// json_decoder_internal.h.
#include "silt/json/json_decoder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/json/json_decoder_internal.h"
#include "silt/json/text_parse_internal.h"

namespace silt::json {

namespace dom = simdjson::dom;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::Field;
using columnar::TypeId;
using columnar::TypePtr;
using internal::FieldLookup;
using internal::Node;
using internal::RowResult;

namespace {

bool IsJsonBlank(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

TypePtr MakeNullable(const TypePtr& type) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields;
      fields.reserve(type->fields().size());
      for (const Field& field : type->fields()) {
        Field copy = field;
        copy.type = MakeNullable(field.type);
        copy.nullable = true;
        fields.push_back(std::move(copy));
      }
      return DataType::Struct(std::move(fields));
    }
    case TypeId::kArray: return DataType::Array(MakeNullable(type->element_type()), true);
    case TypeId::kMap:
      return DataType::Map(type->key_type(), MakeNullable(type->value_type()), true);
    default: return type;
  }
}

Result<std::unique_ptr<Node>> BuildNode(const TypePtr& type, const std::string& path) {
  auto node = std::make_unique<Node>();
  node->id = type->id();
  node->precision = type->precision();
  node->scale = type->scale();
  switch (type->id()) {
    case TypeId::kStruct: {
      for (const Field& field : type->fields()) {
        std::string child_path = path.empty() ? field.name : path + "." + field.name;
        SILT_ASSIGN_OR_RETURN(auto child, BuildNode(field.type, child_path));
        node->children.push_back(std::move(child));
      }
      node->lookup = std::make_unique<FieldLookup>(type->fields());
      node->slot_value.resize(type->fields().size());
      node->slot_count.resize(type->fields().size());
      break;
    }
    case TypeId::kArray: {
      SILT_ASSIGN_OR_RETURN(auto child, BuildNode(type->element_type(), path + "[]"));
      node->children.push_back(std::move(child));
      break;
    }
    case TypeId::kMap: {
      if (type->key_type()->id() != TypeId::kString) {
        return Status::NotSupported("JSON decoding of map keys of type ", type->key_type()->ToDdl(),
                                    " (field '", path, "' is ", type->ToDdl(),
                                    "; JSON object keys decode to STRING keys only)");
      }
      SILT_ASSIGN_OR_RETURN(auto child, BuildNode(type->value_type(), path + "{}"));
      node->children.push_back(std::move(child));
      break;
    }
    case TypeId::kVariant:
      return Status::NotSupported("JSON decoding into VARIANT (field '", path,
                                  "'); read the text as STRING and use parse_json");
    default: break;
  }
  return node;
}

void BindBuilders(Node* node, ColumnBuilder* builder) {
  node->builder = builder;
  switch (node->id) {
    case TypeId::kStruct:
      for (size_t i = 0; i < node->children.size(); ++i) {
        BindBuilders(node->children[i].get(), builder->child(static_cast<int>(i)));
      }
      break;
    case TypeId::kArray: BindBuilders(node->children[0].get(), builder->child(0)); break;
    case TypeId::kMap:
      node->map_entries = builder->child(0);
      node->map_keys = node->map_entries->child(0);
      BindBuilders(node->children[0].get(), node->map_entries->child(1));
      break;
    default: break;
  }
}

internal::JacksonFeatures FeaturesFor(const JsonParseOptions& options) {
  internal::JacksonFeatures f;
  f.allow_comments = options.allow_comments;
  f.allow_unquoted_field_names = options.allow_unquoted_field_names;
  f.allow_single_quotes = options.allow_single_quotes;
  f.allow_leading_zeros = options.allow_numeric_leading_zeros;
  f.allow_non_numeric_numbers = options.allow_non_numeric_numbers;
  f.allow_backslash_escaping_any = options.allow_backslash_escaping_any_character;
  f.allow_unquoted_control_chars = options.allow_unquoted_control_chars;
  return f;
}

}  // namespace

template <typename RowText>
Result<ColumnPtr> JsonDecoder::Impl::Decode(int64_t num_rows, const RowText& row_text,
                                            ColumnPtr* corrupt_record, DecodeStats* stats,
                                            std::vector<int64_t>* source_rows) {
  if (source_rows != nullptr) source_rows->clear();
  BindBuilders(root.get(), root_builder.get());
  flat_builders.clear();
  for (const std::unique_ptr<Node>& child : root->children) flat_builders.push_back(child->builder);
  root_builder->Reserve(num_rows);
  const bool want_corrupt = corrupt_record != nullptr;
  if (want_corrupt) corrupt_builder->Reserve(num_rows);
  DecodeStats local;
  for (int64_t row_idx = 0; row_idx < num_rows; ++row_idx) {
    std::string_view text;
    RowResult result = RowResult::kNull;
    if (row_text(row_idx, &text) && !IsJsonBlank(text)) result = DecodeRow(text, &local);
    if (upgrade_error) {
      upgrade_error = false;
      root_builder->Finish();
      if (want_corrupt) corrupt_builder->Finish();
      return Status::InvalidArgument(
          "INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER: cannot read '",
          upgrade_text, "' (row ", row_idx, ") with the pattern '", upgrade_pattern,
          "', which Spark's parser before 3.0 would read, so Spark 3.5 fails here (set "
          "spark.sql.legacy.timeParserPolicy to CORRECTED to read it as NULL, or fix the "
          "pattern)");
    }
    if (result == RowResult::kSplit) {
      for (int64_t k = 0; k < split_rows; ++k) {
        if (want_corrupt) {
          if (split_bad) {
            corrupt_builder->AppendString(text);
          } else {
            corrupt_builder->AppendNull();
          }
        }
        source_rows->push_back(row_idx);
      }
      continue;
    }
    // Spark's file reader gives no row for a line without a JSON value
    // (e.g. only a comment).
    if (result == RowResult::kNull && file_reader) continue;
    if (source_rows != nullptr) source_rows->push_back(row_idx);
    if (result == RowResult::kNull) root_builder->AppendNull();
    if (want_corrupt) {
      if (result == RowResult::kBad) {
        corrupt_builder->AppendString(text);
      } else {
        corrupt_builder->AppendNull();
      }
    }
  }
  ColumnPtr out = root_builder->Finish();
  if (want_corrupt) *corrupt_record = corrupt_builder->Finish();
  if (stats != nullptr) {
    stats->malformed_rows += local.malformed_rows;
    stats->mismatched_fields += local.mismatched_fields;
    stats->partial_rows += local.partial_rows;
  }
  return out;
}

RowResult JsonDecoder::Impl::DecodeRow(std::string_view text, DecodeStats* stats) {
  // Jackson's byte parser (the file reader) skips a UTF-8 byte-order mark.
  if (file_reader && text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    text.remove_prefix(3);
  }
  if (flat_strings && scanner.Scan(text) && DecodeFlat()) return RowResult::kClean;
  dom::element doc;
  internal::ParseOutcome outcome = reader.Parse(text, &doc);
  if (file_reader && reader.replaced_invalid_utf8()) {
    // Jackson's byte parser instead of U+FFFD: rewritten so that the lexer
    // reads, and fails, where it does.
    internal::RewriteLaxUtf8(text, &lax_text);
    outcome = reader.Parse(lax_text, &doc);
  }
  row_lone_surrogates = reader.has_lone_surrogates();
  switch (outcome) {
    case internal::ParseOutcome::kEmpty: return RowResult::kNull;
    case internal::ParseOutcome::kMalformed: return DecodeMalformed(stats);
    case internal::ParseOutcome::kValue: break;
  }
  markers = reader.has_markers();
  if (value_root) return DecodeValue(doc, false, stats);
  if (file_reader && doc.type() == dom::element_type::ARRAY) return DecodeArrayRows(doc, stats);
  return DecodeObject(doc, false, stats);
}

JsonDecoder::JsonDecoder() : impl_(std::make_unique<Impl>()) {}
JsonDecoder::~JsonDecoder() = default;

Result<std::unique_ptr<JsonDecoder>> JsonDecoder::Make(columnar::SchemaPtr schema) {
  return Make(std::move(schema), JsonDecodeOptions());
}

Result<std::unique_ptr<JsonDecoder>> JsonDecoder::Make(columnar::SchemaPtr schema,
                                                       const JsonDecodeOptions& options) {
  if (schema == nullptr || schema->id() != TypeId::kStruct) {
    return Status::InvalidArgument("JSON decoder schema must be a STRUCT, got ",
                                   schema == nullptr ? std::string("null") : schema->ToDdl());
  }
  std::unique_ptr<JsonDecoder> decoder(new JsonDecoder());
  Impl& impl = *decoder->impl_;
  SILT_ASSIGN_OR_RETURN(impl.root, BuildNode(schema, ""));
  impl.output_type = MakeNullable(schema);
  impl.root_builder = std::make_unique<ColumnBuilder>(impl.output_type);
  impl.corrupt_builder = std::make_unique<ColumnBuilder>(DataType::String());
  impl.zone_offset_micros = options.default_zone_offset_micros;
  impl.local_to_utc = options.local_to_utc;
  impl.features = FeaturesFor(options.parse);
  impl.reader.set_features(impl.features);
  impl.side_reader.set_features(impl.features);
  internal::JacksonFeatures span_features = impl.features;
  span_features.max_nesting_depth = std::numeric_limits<int>::max();
  span_features.max_number_length = std::numeric_limits<int>::max();
  impl.span_lexer = internal::JacksonLexer(span_features);
  impl.allow_non_numeric = options.parse.allow_non_numeric_numbers;
  impl.value_root = options.value_root;
  impl.file_reader = options.file_reader && !options.value_root;
  if (impl.file_reader) {
    impl.features.byte_parser = true;
    impl.reader.set_features(impl.features);
    impl.side_reader.set_features(impl.features);
  }
  SILT_RETURN_NOT_OK(impl.SetDateTime(options.datetime));
  impl.flat_strings =
      !impl.value_root && !impl.file_reader &&
      std::all_of(impl.root->children.begin(), impl.root->children.end(),
                  [](const std::unique_ptr<Node>& child) { return child->id == TypeId::kString; });
  impl.flat_member.assign(impl.root->children.size(), -1);
  if (impl.value_root && schema->num_fields() != 1) {
    return Status::InvalidArgument("JSON decoder with value_root needs a schema of one field, got ",
                                   schema->ToDdl());
  }
  return decoder;
}

const columnar::TypePtr& JsonDecoder::output_type() const { return impl_->output_type; }

Result<ColumnPtr> JsonDecoder::DecodeColumn(const columnar::Column& input,
                                            ColumnPtr* corrupt_record, DecodeStats* stats) {
  if (input.type == nullptr ||
      (input.type->id() != TypeId::kString && input.type->id() != TypeId::kBinary)) {
    return Status::InvalidArgument(
        "JSON decoder input must be a STRING or BINARY column, got ",
        input.type == nullptr ? std::string("null") : input.type->ToDdl());
  }
  if (impl_->file_reader) {
    return Status::InvalidArgument("JSON decoder splitting arrays reads views (DecodeViews)");
  }
  auto row_text = [&input](int64_t row_idx, std::string_view* text) {
    if (input.IsNull(row_idx)) return false;
    *text = input.StringValue(row_idx);
    return true;
  };
  return impl_->Decode(input.length, row_text, corrupt_record, stats, nullptr);
}

Result<ColumnPtr> JsonDecoder::DecodeViews(const std::string_view* rows, int64_t num_rows,
                                           ColumnPtr* corrupt_record, DecodeStats* stats,
                                           std::vector<int64_t>* source_rows) {
  if (impl_->file_reader && source_rows == nullptr) {
    return Status::InvalidArgument("JSON decoder splitting arrays needs source_rows");
  }
  auto row_text = [rows](int64_t row_idx, std::string_view* text) {
    *text = rows[row_idx];
    return true;
  };
  return impl_->Decode(num_rows, row_text, corrupt_record, stats, source_rows);
}

}  // namespace silt::json
