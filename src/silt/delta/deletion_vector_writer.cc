#include "silt/delta/deletion_vector_writer.h"

#include <roaring/roaring.h>
#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>

#include "silt/base/json_writer.h"
#include "silt/base/uuid.h"
#include "silt/delta/deletion_vector.h"
#include "silt/delta/replace_all.h"
#include "silt/delta/stats.h"

namespace silt::delta {

namespace {

constexpr uint32_t kRoaringArrayMagic = 1681511377;
constexpr char kZ85Alphabet[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

struct RoaringDeleter {
  void operator()(roaring_bitmap_t* r) const { roaring_bitmap_free(r); }
};
using RoaringPtr = std::unique_ptr<roaring_bitmap_t, RoaringDeleter>;

template <typename T>
void AppendLittleEndian(std::string* out, T value) {
  char bytes[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  out->append(bytes, sizeof(T));
}

void AppendBigEndian32(std::string* out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out->push_back(static_cast<char>((value >> shift) & 0xFF));
}

// One 32-bit bucket: the low halves of rows[begin, end), all with one key.
Status AppendBucket(const std::vector<uint64_t>& rows, size_t begin, size_t end, std::string* out) {
  std::vector<uint32_t> low;
  low.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) low.push_back(static_cast<uint32_t>(rows[i]));
  RoaringPtr bitmap(roaring_bitmap_of_ptr(low.size(), low.data()));
  if (bitmap == nullptr)
    return Status::ResourceExhausted("roaring bitmap of ", low.size(), " rows");
  roaring_bitmap_run_optimize(bitmap.get());
  const size_t size = roaring_bitmap_portable_size_in_bytes(bitmap.get());
  const size_t at = out->size();
  out->resize(at + size);
  const size_t written = roaring_bitmap_portable_serialize(bitmap.get(), out->data() + at);
  if (written != size)
    return Status::Internal("roaring bitmap serialized ", written, " of ", size, " bytes");
  return Status::OK();
}

// The 16 bytes of a canonical text UUID.
std::string UuidBytes(const std::string& text) {
  std::string out;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '-') continue;
    out.push_back(static_cast<char>((nibble(text[i]) << 4) | nibble(text[i + 1])));
    ++i;
  }
  return out;
}

uint32_t Crc32(std::string_view bytes) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

}  // namespace

Result<std::string> SerializeRoaringBitmapArray(const std::vector<uint64_t>& rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i] <= rows[i - 1]) {
      return Status::InvalidArgument("deletion vector rows are not sorted and unique at position ",
                                     i);
    }
  }
  std::string out;
  AppendLittleEndian<uint32_t>(&out, kRoaringArrayMagic);
  const size_t count_at = out.size();
  AppendLittleEndian<uint64_t>(&out, 0);
  uint64_t buckets = 0;
  for (size_t begin = 0; begin < rows.size();) {
    const uint64_t key = rows[begin] >> 32;
    size_t end = begin;
    while (end < rows.size() && (rows[end] >> 32) == key) ++end;
    AppendLittleEndian<uint32_t>(&out, static_cast<uint32_t>(key));
    SILT_RETURN_NOT_OK(AppendBucket(rows, begin, end, &out));
    ++buckets;
    begin = end;
  }
  for (size_t i = 0; i < 8; ++i) out[count_at + i] = static_cast<char>((buckets >> (8 * i)) & 0xFF);
  return out;
}

Result<std::string> EncodeZ85(std::string_view bytes) {
  if (bytes.size() % 4 != 0) {
    return Status::InvalidArgument("Z85 input of ", bytes.size(), " bytes is not a multiple of 4");
  }
  std::string out;
  out.reserve(bytes.size() / 4 * 5);
  for (size_t pos = 0; pos < bytes.size(); pos += 4) {
    uint32_t value = 0;
    for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[pos + i]);
    char group[5];
    for (int i = 4; i >= 0; --i) {
      group[i] = kZ85Alphabet[value % 85];
      value /= 85;
    }
    out.append(group, 5);
  }
  return out;
}

DeletionVectorFileWriter::DeletionVectorFileWriter(fs::FileSystem* fs, std::string table_path)
    : fs_(fs), table_path_(std::move(table_path)) {}

Result<DeletionVectorDescriptor> DeletionVectorFileWriter::Add(const std::vector<uint64_t>& rows) {
  if (rows.empty()) return Status::InvalidArgument("an empty deletion vector");
  SILT_ASSIGN_OR_RETURN(std::string bitmap, SerializeRoaringBitmapArray(rows));
  if (file_path_.empty()) {
    const std::string uuid = NewUuid();
    SILT_ASSIGN_OR_RETURN(encoded_id_, EncodeZ85(UuidBytes(uuid)));
    file_path_ = fs::JoinPath(table_path_, "deletion_vector_" + uuid + ".bin");
    contents_.push_back(1);  // format version
  }
  DeletionVectorDescriptor dv;
  dv.storage_type = "u";
  dv.path_or_inline_dv = encoded_id_;
  dv.offset = static_cast<int64_t>(contents_.size());
  dv.size_in_bytes = static_cast<int64_t>(bitmap.size());
  dv.cardinality = static_cast<int64_t>(rows.size());
  AppendBigEndian32(&contents_, static_cast<uint32_t>(bitmap.size()));
  contents_ += bitmap;
  AppendBigEndian32(&contents_, Crc32(bitmap));
  return dv;
}

Status DeletionVectorFileWriter::Finish() {
  if (file_path_.empty()) return Status::OK();
  return fs_->WriteFile(file_path_, contents_);
}

std::string StatsWithLooseBounds(const std::string& stats_json) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(stats_json).get(object) != simdjson::SUCCESS) return stats_json;
  JsonWriter w;
  w.BeginObject();
  for (auto field : object) {
    if (field.key == "tightBounds") continue;
    w.Key(field.key);
    w.Raw(simdjson::minify(field.value));
  }
  w.Member("tightBounds", false);
  w.EndObject();
  return w.Take();
}

Result<DeletionVectorChanges> DeleteRowsByDeletionVector(fs::FileSystem* fs,
                                                         const std::string& table_path,
                                                         const std::vector<RowDeletion>& deletions,
                                                         int64_t now_ms) {
  DeletionVectorChanges changes;
  DeletionVectorFileWriter writer(fs, table_path);
  for (const RowDeletion& deletion : deletions) {
    const AddFile& file = deletion.file;
    for (size_t i = 1; i < deletion.rows.size(); ++i) {
      if (deletion.rows[i] <= deletion.rows[i - 1]) {
        return Status::InvalidArgument("rows to delete from ", file.path,
                                       " are not sorted and unique");
      }
    }
    std::vector<uint64_t> current;
    if (file.deletion_vector) {
      SILT_ASSIGN_OR_RETURN(current, LoadDeletionVector(fs, table_path, *file.deletion_vector));
    }
    std::vector<uint64_t> rows;
    rows.reserve(current.size() + deletion.rows.size());
    std::set_union(current.begin(), current.end(), deletion.rows.begin(), deletion.rows.end(),
                   std::back_inserter(rows));
    const int64_t newly_deleted = static_cast<int64_t>(rows.size() - current.size());
    if (newly_deleted == 0) continue;
    changes.num_deleted_rows += newly_deleted;
    changes.removes.push_back(RemoveWithNumRecords(file, now_ms));
    if (file.deletion_vector) ++changes.num_deletion_vectors_removed;
    std::optional<int64_t> num_records =
        file.stats ? StatsNumRecords(*file.stats) : std::optional<int64_t>();
    if (num_records && static_cast<int64_t>(rows.size()) >= *num_records) {
      ++changes.num_files_fully_deleted;
      continue;
    }
    SILT_ASSIGN_OR_RETURN(DeletionVectorDescriptor dv, writer.Add(rows));
    AddFile add = file;
    add.deletion_vector = dv;
    add.data_change = true;
    if (add.stats) add.stats = StatsWithLooseBounds(*add.stats);
    changes.adds.push_back(std::move(add));
    ++changes.num_deletion_vectors_added;
    if (file.deletion_vector) ++changes.num_deletion_vectors_updated;
  }
  SILT_RETURN_NOT_OK(writer.Finish());
  changes.deletion_vector_file = writer.file_path();
  return changes;
}

}  // namespace silt::delta
