#include "silt/exec/key_codec.h"

#include "silt/columnar/builder.h"
#include "silt/exec/value_codec_internal.h"

namespace silt::exec {

Result<KeyCodec> KeyCodec::Make(std::vector<columnar::TypePtr> key_types) {
  for (const columnar::TypePtr& type : key_types) {
    if (!internal::EncodableType(*type)) {
      return Status::NotSupported("grouping by a value of type ", type->ToDdl(),
                                  " is not supported yet");
    }
  }
  return KeyCodec(std::move(key_types));
}

void KeyCodec::EncodeRows(const std::vector<columnar::ColumnPtr>& keys, int64_t rows,
                          std::vector<std::string>* out) const {
  const size_t base = out->size();
  out->resize(base + static_cast<size_t>(rows));
  for (const columnar::ColumnPtr& key : keys) {
    internal::EncodeColumn(*key, /*normalize=*/true, nullptr, rows, out->data() + base);
  }
}

Result<std::vector<columnar::ColumnPtr>> KeyCodec::Decode(
    const std::vector<std::string_view>& encoded) const {
  std::vector<std::unique_ptr<columnar::ColumnBuilder>> builders;
  for (const columnar::TypePtr& type : types_) {
    builders.push_back(std::make_unique<columnar::ColumnBuilder>(type));
    builders.back()->Reserve(static_cast<int64_t>(encoded.size()));
  }
  for (size_t row = 0; row < encoded.size(); ++row) {
    std::string_view in = encoded[row];
    for (size_t k = 0; k < types_.size(); ++k) {
      if (!internal::DecodeValue(*types_[k], &in, builders[k].get())) {
        return Status::Corruption("aggregation key ", row, ": malformed value of key column ", k,
                                  " (", types_[k]->ToDdl(), ")");
      }
    }
    if (!in.empty()) {
      return Status::Corruption("aggregation key ", row, ": ", in.size(),
                                " bytes after the last key column");
    }
  }
  std::vector<columnar::ColumnPtr> columns;
  for (auto& b : builders) columns.push_back(b->Finish());
  return columns;
}

}  // namespace silt::exec
