#include "silt/delta/generated_columns.h"

#include <cctype>
#include <charconv>

#include "silt/base/json_writer.h"
#include "silt/delta/field_metadata.h"

namespace silt::delta {

namespace {

Status IdentityCorruption(const columnar::Field& field, std::string_view what) {
  return Status::Corruption("identity column '", field.name, "': ", what, " (metadata ",
                            field.metadata_json, ")");
}

// Splits an identity definition into upper-cased words, keeping '(' and ')'
// as words of their own.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (char c : text) {
    if (c == '(' || c == ')') {
      flush();
      words.emplace_back(1, c);
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      flush();
    } else {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  flush();
  return words;
}

}  // namespace

Result<std::vector<GeneratedColumn>> GeneratedColumns(const columnar::Schema& schema) {
  std::vector<GeneratedColumn> out;
  for (const columnar::Field& field : schema.fields()) {
    if (field.metadata_json.find(kGenerationExpressionKey) == std::string::npos) continue;
    SILT_ASSIGN_OR_RETURN(std::optional<std::string> expression,
                          FieldMetadataString(field, kGenerationExpressionKey));
    if (expression) out.push_back(GeneratedColumn{field.name, std::move(*expression)});
  }
  return out;
}

Result<std::vector<IdentityColumn>> IdentityColumns(const columnar::Schema& schema) {
  std::vector<IdentityColumn> out;
  for (const columnar::Field& field : schema.fields()) {
    if (field.metadata_json.find("delta.identity.") == std::string::npos) continue;
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> start,
                          FieldMetadataLong(field, kIdentityStartKey));
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> step, FieldMetadataLong(field, kIdentityStepKey));
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> mark,
                          FieldMetadataLong(field, kIdentityHighWaterMarkKey));
    SILT_ASSIGN_OR_RETURN(std::optional<bool> explicit_insert,
                          FieldMetadataBool(field, kIdentityAllowExplicitInsertKey));
    if (!start && !step && !mark && !explicit_insert) continue;
    if (!start || !step || !explicit_insert) {
      return IdentityCorruption(field, "needs delta.identity.start, step and allowExplicitInsert");
    }
    if (*step == 0) return IdentityCorruption(field, "delta.identity.step is 0");
    if (field.type->id() != columnar::TypeId::kLong) {
      return IdentityCorruption(field, "is " + field.type->ToDdl() + ", not BIGINT");
    }
    out.push_back(IdentityColumn{field.name, *start, *step, mark, *explicit_insert});
  }
  return out;
}

Result<columnar::Field> WithGenerationExpression(const columnar::Field& field,
                                                 std::string_view expression) {
  JsonWriter text;
  text.String(expression);
  return WithFieldMetadata(field, kGenerationExpressionKey, text.str());
}

Result<columnar::Field> WithIdentity(const columnar::Field& field, int64_t start, int64_t step,
                                     bool allow_explicit_insert) {
  SILT_ASSIGN_OR_RETURN(columnar::Field out,
                        WithFieldMetadata(field, kIdentityStepKey, std::to_string(step)));
  SILT_ASSIGN_OR_RETURN(out, WithFieldMetadata(out, kIdentityAllowExplicitInsertKey,
                                               allow_explicit_insert ? "true" : "false"));
  return WithFieldMetadata(out, kIdentityStartKey, std::to_string(start));
}

Result<columnar::SchemaPtr> WithIdentityHighWaterMark(const columnar::Schema& schema,
                                                      std::string_view name,
                                                      int64_t high_water_mark) {
  std::vector<columnar::Field> fields = schema.fields();
  for (columnar::Field& field : fields) {
    if (field.name != name || field.metadata_json.find(kIdentityStartKey) == std::string::npos) {
      continue;
    }
    SILT_ASSIGN_OR_RETURN(field, WithFieldMetadata(field, kIdentityHighWaterMarkKey,
                                                   std::to_string(high_water_mark)));
    return columnar::DataType::Struct(std::move(fields));
  }
  return Status::InvalidArgument("no identity column '", name, "' in the table schema");
}

Result<IdentityColumn> ParseIdentityDefinition(std::string_view name, std::string_view text) {
  const std::vector<std::string> words = Words(text);
  auto expected = [&](std::string_view what) {
    return Status::InvalidArgument("'", text, "': expected ", what,
                                   " (GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(START WITH "
                                   "n INCREMENT BY n)])");
  };
  IdentityColumn column;
  column.name = std::string(name);
  size_t i = 0;
  auto take = [&](std::string_view word) {
    if (i < words.size() && words[i] == word) {
      ++i;
      return true;
    }
    return false;
  };
  if (!take("GENERATED")) return expected("GENERATED");
  if (take("ALWAYS")) {
    column.allow_explicit_insert = false;
  } else if (take("BY")) {
    if (!take("DEFAULT")) return expected("DEFAULT after BY");
    column.allow_explicit_insert = true;
  } else {
    return expected("ALWAYS or BY DEFAULT after GENERATED");
  }
  if (!take("AS") || !take("IDENTITY")) return expected("AS IDENTITY");
  auto number = [&](int64_t* out) -> Status {
    if (i >= words.size()) return expected("a number");
    const std::string& w = words[i];
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), *out);
    if (ec != std::errc() || end != w.data() + w.size()) {
      return expected("a BIGINT number, got '" + w + "'");
    }
    ++i;
    return Status::OK();
  };
  if (take("(")) {
    bool any = false;
    if (take("START")) {
      if (!take("WITH")) return expected("WITH after START");
      SILT_RETURN_NOT_OK(number(&column.start));
      any = true;
    }
    if (take("INCREMENT")) {
      if (!take("BY")) return expected("BY after INCREMENT");
      SILT_RETURN_NOT_OK(number(&column.step));
      any = true;
    }
    if (!any) return expected("START WITH or INCREMENT BY");
    if (!take(")")) return expected("')'");
  }
  if (i != words.size()) return expected("the end after '" + words[i - 1] + "'");
  if (column.step == 0) {
    return Status::InvalidArgument("'", text, "': INCREMENT BY must not be 0");
  }
  return column;
}

}  // namespace silt::delta
