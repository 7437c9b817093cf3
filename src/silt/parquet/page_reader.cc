#include "silt/parquet/page_reader.h"

#include <libdeflate.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace silt::parquet {

namespace {

// A file-source page header is read with a prefix this long (which holds
// most headers, statistics included, and small pages whole), longer when
// it does not.
constexpr int64_t kHeaderGuess = 16 * 1024;

Status UnsupportedLevelEncoding(Encoding encoding) {
  return Status::NotSupported("Parquet encoding ", EncodingName(encoding),
                              " is not supported for this column's type");
}

// The page checksum (parquet-format: CRC-32 of the page's bytes after its
// header, as stored) when the header has one: a flipped bit is an error,
// never a wrong value.
Status CheckPageCrc(const PageHeader& header, std::string_view body) {
  if (!header.crc) return Status::OK();
  const uint32_t crc = libdeflate_crc32(0, body.data(), body.size());
  if (crc != static_cast<uint32_t>(*header.crc)) {
    return Status::Corruption("page checksum mismatch (header says ",
                              static_cast<uint32_t>(*header.crc), ", the page has ", crc, ")");
  }
  return Status::OK();
}

}  // namespace

PageReader::PageReader(std::unique_ptr<Decompressor> decompressor, int max_repetition_level,
                       int max_definition_level)
    : decompressor_(std::move(decompressor)),
      max_repetition_level_(max_repetition_level),
      max_definition_level_(max_definition_level) {}

void PageReader::Reset(std::string_view chunk) {
  chunk_ = chunk;
  file_ = nullptr;
  file_offset_ = 0;
  size_ = static_cast<int64_t>(chunk.size());
  next_ = 0;
  page_offset_ = 0;
  has_header_ = false;
  body_ = {};
}

void PageReader::Reset(fs::RandomAccessFile* file, int64_t offset, int64_t size) {
  chunk_ = {};
  file_ = file;
  file_offset_ = offset;
  size_ = size;
  next_ = 0;
  page_offset_ = 0;
  has_header_ = false;
  body_ = {};
}

Status PageReader::Next() {
  page_offset_ = next_;
  has_header_ = false;
  body_ = {};
  if (file_ != nullptr) return ReadFilePage();
  SILT_ASSIGN_OR_RETURN(ParsedPageHeader parsed,
                        ParsePageHeader(chunk_.substr(static_cast<size_t>(next_))));
  header_ = std::move(parsed.header);
  has_header_ = true;
  const int64_t pos = next_ + parsed.header_size;
  if (header_.compressed_page_size < 0 || header_.compressed_page_size > size_ - pos) {
    return Status::Corruption("page of ", header_.compressed_page_size,
                              " bytes runs past the end of the column chunk");
  }
  body_ =
      chunk_.substr(static_cast<size_t>(pos), static_cast<size_t>(header_.compressed_page_size));
  next_ = pos + header_.compressed_page_size;
  return Status::OK();
}

Status PageReader::ReadFilePage() {
  const int64_t left = size_ - next_;
  const int64_t at = file_offset_ + next_;
  int64_t guess = std::min(left, kHeaderGuess);
  SILT_ASSIGN_OR_RETURN(raw_, file_->ReadAt(at, guess));
  Result<ParsedPageHeader> parsed = ParsePageHeader(raw_);
  while (!parsed.ok() && guess < left) {
    guess = std::min(left, guess * 8);
    SILT_ASSIGN_OR_RETURN(raw_, file_->ReadAt(at, guess));
    parsed = ParsePageHeader(raw_);
  }
  SILT_RETURN_NOT_OK(parsed.status());
  header_ = std::move(parsed->header);
  has_header_ = true;
  const int64_t header_size = parsed->header_size;
  const int64_t body_size = header_.compressed_page_size;
  if (body_size < 0 || body_size > left - header_size) {
    return Status::Corruption("page of ", body_size,
                              " bytes runs past the end of the column chunk");
  }
  if (header_size + body_size <= static_cast<int64_t>(raw_.size())) {
    body_ = std::string_view(raw_).substr(static_cast<size_t>(header_size),
                                          static_cast<size_t>(body_size));
  } else {
    SILT_ASSIGN_OR_RETURN(raw_, file_->ReadAt(at + header_size, body_size));
    if (static_cast<int64_t>(raw_.size()) != body_size) {
      return Status::Corruption("column chunk is truncated");
    }
    body_ = raw_;
  }
  next_ += header_size + body_size;
  return Status::OK();
}

Result<std::string_view> PageReader::Uncompress(std::string_view page, int64_t uncompressed_size,
                                                std::string* buffer) {
  if (decompressor_->codec() == CompressionCodec::kUncompressed) {
    if (static_cast<int64_t>(page.size()) != uncompressed_size) {
      return Status::Corruption("uncompressed page of ", page.size(), " bytes, header says ",
                                uncompressed_size);
    }
    return page;
  }
  SILT_RETURN_NOT_OK(decompressor_->CheckUncompressedSize(page, uncompressed_size));
  buffer->resize(static_cast<size_t>(uncompressed_size));
  SILT_RETURN_NOT_OK(decompressor_->Decompress(page, reinterpret_cast<uint8_t*>(buffer->data()),
                                               uncompressed_size));
  return std::string_view(*buffer);
}

Result<DictionaryPage> PageReader::ReadDictionary() {
  if (!header_.dictionary_page_header) {
    return Status::Corruption("dictionary page without its header");
  }
  const DictionaryPageHeader& dh = *header_.dictionary_page_header;
  if (dh.encoding != Encoding::kPlain && dh.encoding != Encoding::kPlainDictionary) {
    return UnsupportedLevelEncoding(dh.encoding);
  }
  if (dh.num_values < 0) return Status::Corruption("negative dictionary size");
  SILT_RETURN_NOT_OK(CheckPageCrc(header_, body_));
  SILT_ASSIGN_OR_RETURN(std::string_view values,
                        Uncompress(body_, header_.uncompressed_page_size, &dict_buffer_));
  if (file_ != nullptr && values.data() != dict_buffer_.data()) {
    // An uncompressed page in raw_, which the next page overwrites.
    dict_buffer_.assign(values);
    values = dict_buffer_;
  }
  ReleaseRaw();
  return DictionaryPage{dh.num_values, values};
}

Result<DataPage> PageReader::ReadDataPage() {
  SILT_RETURN_NOT_OK(CheckPageCrc(header_, body_));
  if (header_.type == PageType::kDataPageV2) return SplitV2();
  return SplitV1();
}

Result<DataPage> PageReader::SplitV1() {
  if (!header_.data_page_header) return Status::Corruption("data page without its header");
  const DataPageHeader& dph = *header_.data_page_header;
  DataPage page;
  page.num_values = dph.num_values;
  page.encoding = dph.encoding;
  page.repetition_level_encoding = dph.repetition_level_encoding;
  page.definition_level_encoding = dph.definition_level_encoding;
  if (page.num_values < 0) return Status::Corruption("data page of negative value count");
  SILT_ASSIGN_OR_RETURN(std::string_view body,
                        Uncompress(body_, header_.uncompressed_page_size, &page_buffer_));
  // Repetition, then definition levels: RLE runs behind a 4-byte length,
  // or (deprecated) BIT_PACKED, one bit per value here.
  const int max_levels[2] = {max_repetition_level_, max_definition_level_};
  const Encoding encodings[2] = {page.repetition_level_encoding, page.definition_level_encoding};
  std::string_view* sections[2] = {&page.repetition_levels, &page.definition_levels};
  const char* names[2] = {"repetition", "definition"};
  for (int s = 0; s < 2; ++s) {
    if (max_levels[s] == 0) continue;
    if (encodings[s] == Encoding::kRle) {
      if (body.size() < 4) return Status::Corruption("truncated levels");
      uint32_t len;
      std::memcpy(&len, body.data(), 4);
      if (len > body.size() - 4) {
        return Status::Corruption(names[s], " levels claim ", len, " bytes, the page has ",
                                  body.size() - 4);
      }
      *sections[s] = body.substr(4, len);
      body.remove_prefix(4 + static_cast<size_t>(len));
    } else if (encodings[s] == Encoding::kBitPacked && max_levels[s] == 1) {
      const uint64_t bytes = (static_cast<uint64_t>(page.num_values) + 7) / 8;
      if (body.size() < bytes) return Status::Corruption("truncated levels");
      *sections[s] = body.substr(0, static_cast<size_t>(bytes));
      body.remove_prefix(static_cast<size_t>(bytes));
    } else {
      return UnsupportedLevelEncoding(encodings[s]);
    }
  }
  page.values = body;
  if (body.data() == page_buffer_.data()) ReleaseRaw();
  return page;
}

void PageReader::ReleaseRaw() {
  // A file-source page as read is not needed once decompressed: holding
  // it would keep two copies of a page per column alive.
  if (file_ != nullptr) {
    std::string().swap(raw_);
    body_ = {};
  }
}

Result<DataPage> PageReader::SplitV2() {
  if (!header_.data_page_header_v2) return Status::Corruption("data page v2 without its header");
  const DataPageHeaderV2& h = *header_.data_page_header_v2;
  DataPage page;
  page.num_values = h.num_values;
  page.num_nulls = h.num_nulls;
  page.encoding = h.encoding;
  if (page.num_values < 0) return Status::Corruption("data page of negative value count");
  const int64_t rep_len = h.repetition_levels_byte_length;
  const int64_t def_len = h.definition_levels_byte_length;
  const int64_t levels_len = rep_len + def_len;
  if (rep_len < 0 || def_len < 0 || levels_len > static_cast<int64_t>(body_.size()) ||
      levels_len > header_.uncompressed_page_size) {
    return Status::Corruption("data page v2 level lengths (", rep_len, ", ", def_len,
                              ") exceed the page");
  }
  // Levels are never compressed: they are read where they are stored.
  page.repetition_levels = body_.substr(0, static_cast<size_t>(rep_len));
  page.definition_levels = body_.substr(static_cast<size_t>(rep_len), static_cast<size_t>(def_len));
  const std::string_view values = body_.substr(static_cast<size_t>(levels_len));
  const int64_t values_size = header_.uncompressed_page_size - levels_len;
  if (h.is_compressed) {
    SILT_ASSIGN_OR_RETURN(page.values, Uncompress(values, values_size, &page_buffer_));
  } else {
    if (static_cast<int64_t>(values.size()) != values_size) {
      return Status::Corruption("uncompressed v2 page sizes disagree");
    }
    page.values = values;
  }
  return page;
}

int LevelBitWidth(int max_level) {
  return max_level <= 0 ? 0 : std::bit_width(static_cast<unsigned>(max_level));
}

bool AppendLevels(RleDecoder* decoder, int64_t n, std::vector<int16_t>* levels) {
  constexpr int64_t kLevelStep = int64_t{1} << 16;
  int64_t done = 0;
  while (done < n) {
    const int64_t step = std::min(kLevelStep, n - done);
    const size_t at = levels->size();
    levels->resize(at + static_cast<size_t>(step));
    const int64_t got = decoder->GetBatch(levels->data() + at, step);
    if (got != step) {
      levels->resize(at + static_cast<size_t>(std::max<int64_t>(got, 0)));
      return false;
    }
    done += step;
  }
  return true;
}

Status StartDictionaryIndices(std::string_view values, RleDecoder* decoder) {
  auto bytes = reinterpret_cast<const uint8_t*>(values.data());
  if (values.empty()) {
    decoder->Reset(bytes, 0, 1);
    return Status::OK();
  }
  const int bit_width = bytes[0];
  if (bit_width > 32) return Status::Corruption("dictionary index bit width ", bit_width);
  decoder->Reset(bytes + 1, static_cast<int64_t>(values.size()) - 1, bit_width);
  return Status::OK();
}

Status ParsePlainByteArrays(const uint8_t* data, int64_t size, int64_t n, int width,
                            std::string_view* views) {
  const char* base = reinterpret_cast<const char*>(data);
  if (width > 0) {
    if (size / width < n) {
      return Status::Corruption("PLAIN page holds ", size, " bytes but ", n, " values need ",
                                n * width);
    }
    for (int64_t i = 0; i < n; ++i) views[i] = std::string_view(base + i * width, width);
    return Status::OK();
  }
  int64_t pos = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (size - pos < 4) {
      return Status::Corruption("byte array ", i, " of ", n, " runs past the end of its page");
    }
    uint32_t len;
    std::memcpy(&len, base + pos, 4);
    pos += 4;
    if (static_cast<uint64_t>(size - pos) < len) {
      return Status::Corruption("byte array ", i, " of ", n, " claims ", len,
                                " bytes, past the end of its page");
    }
    views[i] = std::string_view(base + pos, len);
    pos += len;
  }
  return Status::OK();
}

Status NextPlainByteArray(std::string_view* values, std::string_view* out) {
  if (values->size() < 4) return Status::Corruption("truncated PLAIN byte array");
  uint32_t len;
  std::memcpy(&len, values->data(), 4);
  if (values->size() - 4 < len) return Status::Corruption("PLAIN byte array runs past the page");
  *out = values->substr(4, len);
  values->remove_prefix(4 + static_cast<size_t>(len));
  return Status::OK();
}

}  // namespace silt::parquet
