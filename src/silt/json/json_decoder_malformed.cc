// JsonDecoder over a record simdjson rejects: Spark's converter run over
// the Jackson-compatible lexer's tokens, keeping what PERMISSIVE keeps of
// the record (the fields converted before the error, partial structs).
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
using columnar::TypeId;
using internal::Fit;
using internal::Node;
using internal::RowResult;

void JsonDecoder::Impl::AppendValueJson(std::string_view span, std::string* out) {
  // The span was read whole without an error: it is one value.
  bool has_markers = false;
  span_lexer.Reset(span);
  span_lexer.NextToken();
  internal::AppendNormalizedValue(&span_lexer, out, &has_markers);
  markers |= has_markers;
  row_lone_surrogates |= span_lexer.saw_lone_surrogates();
}

Fit JsonDecoder::Impl::Emulate(Node* node, internal::JacksonLexer* lexer, std::string* out) {
  using internal::JToken;
  JToken t = lexer->current();
  while (t == JToken::kFieldName) t = lexer->NextToken();
  if (t == JToken::kNone || t == JToken::kNull) {
    out->append("null");
    return Fit::kOk;
  }
  const auto fail = []() { throw internal::JacksonError{"value does not fit the schema"}; };
  switch (node->id) {
    case TypeId::kNull: out->append("null"); return Fit::kOk;
    case TypeId::kStruct: {
      // convertObject: a field whose converter throws is caught (NULL, the
      // record is bad); errors between fields, or while skipping after a
      // failed field, propagate.
      if (t != JToken::kStartObject) fail();
      out->push_back('{');
      Fit result = Fit::kOk;
      bool first = true;
      while (true) {
        t = lexer->NextToken();
        if (t == JToken::kNone || t == JToken::kEndObject) break;
        std::string_view name;
        const int idx = lexer->CurrentName(&name) ? node->lookup->Find(name) : -1;
        if (idx < 0) {
          lexer->SkipChildren();
          continue;
        }
        const size_t mark = out->size();
        if (!first) out->push_back(',');
        out->push_back('"');
        AppendJsonEscaped(out, node->lookup->name(idx));
        out->append("\":");
        try {
          result =
              Worse(result, Emulate(node->children[static_cast<size_t>(idx)].get(), lexer, out));
          first = false;
        } catch (const internal::JacksonError&) {
          out->resize(mark);
          result = Fit::kPartial;
          lexer->SkipChildren();
        }
      }
      out->push_back('}');
      return result;
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      // convertArray / convertMap: an element's partial struct is kept, any
      // other failure fails the whole list.
      const bool is_map = node->id == TypeId::kMap;
      if (t != (is_map ? JToken::kStartObject : JToken::kStartArray)) fail();
      out->push_back(is_map ? '{' : '[');
      Fit result = Fit::kOk;
      bool first = true;
      while (true) {
        t = lexer->NextToken();
        if (t == JToken::kNone || t == (is_map ? JToken::kEndObject : JToken::kEndArray)) break;
        if (!first) out->push_back(',');
        first = false;
        if (is_map) {
          std::string_view key;
          if (!lexer->CurrentName(&key)) key = {};
          out->push_back('"');
          AppendJsonEscaped(out, key);
          out->append("\":");
        }
        result = Worse(result, Emulate(node->children[0].get(), lexer, out));
      }
      out->push_back(is_map ? '}' : ']');
      return result;
    }
    case TypeId::kString:
      // Any token but an end marker is text (a structure is copied whole).
      if (t == JToken::kString) {
        out->push_back('"');
        AppendJsonEscaped(out, lexer->StringValue());
        out->push_back('"');
      } else if (t == JToken::kStartObject || t == JToken::kStartArray) {
        const size_t start = lexer->token_start();
        lexer->SkipChildren();
        AppendValueJson(lexer_input.substr(start, lexer->position() - start), out);
      } else if (t == JToken::kEndObject || t == JToken::kEndArray) {
        fail();
      } else {
        bool has_markers = false;
        internal::AppendNormalizedValue(lexer, out, &has_markers);
        markers |= has_markers;
      }
      return Fit::kOk;
    default: break;
  }
  // A scalar: decide as the DOM conversion does, over the token alone.
  value_json.clear();
  bool has_markers = false;
  switch (t) {
    case JToken::kString:
      // Spark's converters read the text even to fail (its error message
      // quotes it), so a bad string fails here either way.
      value_json.push_back('"');
      AppendJsonEscaped(&value_json, lexer->StringValue());
      value_json.push_back('"');
      break;
    case JToken::kInt:
    case JToken::kFloat:
    case JToken::kTrue:
    case JToken::kFalse: internal::AppendNormalizedValue(lexer, &value_json, &has_markers); break;
    default: fail();
  }
  dom::element value;
  if (!side_reader.ParseNormalized(value_json, has_markers, &value)) fail();
  const bool saved = markers;
  markers = has_markers;
  const Fit fit = Convert<false>(node, value);
  markers = saved || has_markers;
  if (fit != Fit::kOk) fail();
  out->append(value_json);
  return Fit::kOk;
}

RowResult JsonDecoder::Impl::DecodeMalformed(DecodeStats* stats) {
  // Spark's converters over Jackson's tokens (Emulate): what they produce
  // before a record is given up (the fields converted, the partial structs)
  // is written out as strict JSON and decoded as a clean document would be,
  // as a bad record. An error no converter catches loses the whole row.
  using internal::JToken;
  lexer_input = reader.jackson_input();
  internal::JacksonLexer* lexer = reader.lexer();
  markers = false;
  partial_json.clear();
  try {
    lexer->Reset(lexer_input);
    const JToken t = lexer->NextToken();
    if (!value_root) {
      if (t != JToken::kStartObject) return AllNullRow(stats);
      Emulate(root.get(), lexer, &partial_json);
    } else {
      Node* child = root->children[0].get();
      if (t == JToken::kNone || t == JToken::kNull) return AllNullRow(stats);
      if (child->id == TypeId::kArray && child->children[0]->id == TypeId::kStruct &&
          t == JToken::kStartObject) {
        partial_json.push_back('[');
        Emulate(child->children[0].get(), lexer, &partial_json);
        partial_json.push_back(']');
      } else {
        Emulate(child, lexer, &partial_json);
      }
    }
  } catch (const internal::JacksonError&) {
    return AllNullRow(stats);
  }
  row_lone_surrogates |= lexer->saw_lone_surrogates();
  dom::element doc;
  if (!side_reader.ParseNormalized(partial_json, markers, &doc)) return AllNullRow(stats);
  // Whatever was read, the record is bad: Jackson failed on it.
  return value_root ? DecodeValue(doc, true, stats) : DecodeObject(doc, true, stats);
}

}  // namespace silt::json
