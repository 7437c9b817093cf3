// silt_ceiling_bench: the single-thread floor of bench/ceiling/run.py (not
// installed). Each mode times one stage of the seed job's path alone, on
// one thread, and prints one JSON object with the process CPU seconds
// (user + system) of that stage only; loading the input is not counted.
// Each stage runs kRepeats times and the least CPU counts: the first pass
// also pays for page faults of the buffers it grows, which no steady-state
// pipeline pays per event.
//
//   silt_ceiling_bench json EVENTS.jsonl
//       simdjson's On-Demand API over every line: the envelope's four
//       fields, then the payload string parsed again and every payload
//       field read with its type. The least a decoder of the seed's
//       from_json + get_json_object must do.
//   silt_ceiling_bench parquet FILE.parquet...
//       The columns silt wrote for those events, read back first (not
//       timed), then encoded again by silt's Parquet writer into memory:
//       once uncompressed ("encode_s") and once with snappy ("snappy_file_s").
//   silt_ceiling_bench snappy FILE.parquet...
//       The same columns' uncompressed pages compressed by snappy alone, in
//       1 MiB blocks (the writer's page size): "snappy_s".
#include <simdjson.h>
#include <snappy.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"

namespace silt {
namespace {

namespace od = simdjson::ondemand;

constexpr int kRepeats = 3;

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int Fail(const std::string& what) {
  std::cerr << "silt_ceiling_bench: " << what << "\n";
  return 1;
}

// Reads one field by type and folds it into `sum` so that no read can be
// optimized away. Returns false on a malformed document.
bool FoldValue(od::value value, uint64_t* sum) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return false;
  switch (type) {
    case od::json_type::string: {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) return false;
      *sum += s.size();
      return true;
    }
    case od::json_type::number: {
      double d = 0;
      if (value.get_double().get(d) != simdjson::SUCCESS) return false;
      *sum += static_cast<uint64_t>(d);
      return true;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (value.get_bool().get(b) != simdjson::SUCCESS) return false;
      *sum += b ? 1 : 0;
      return true;
    }
    default: return value.is_null().value_unsafe();
  }
}

int RunJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail("cannot open " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) lines.emplace_back(text.data() + pos, end - pos);
    pos = end + 1;
  }
  od::parser envelope_parser;
  od::parser payload_parser;
  std::string line_buf;
  std::string payload_buf;
  uint64_t sum = 0;
  double cpu = 0;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    const double start = CpuSeconds();
    for (std::string_view line : lines) {
      // A padded copy, as any decoder of a Kafka value (not padded by
      // librdkafka) must make.
      line_buf.assign(line);
      line_buf.resize(line.size() + simdjson::SIMDJSON_PADDING);
      od::document doc;
      if (envelope_parser.iterate(line_buf.data(), line.size(), line_buf.size()).get(doc) !=
          simdjson::SUCCESS) {
        return Fail("not JSON: " + std::string(line));
      }
      std::string_view payload;
      for (auto field : doc.get_object()) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS) return Fail("bad key");
        if (key == "payload") {
          if (field.value().get_string().get(payload) != simdjson::SUCCESS) {
            return Fail("payload is not a string");
          }
          payload_buf.assign(payload);
        } else if (!FoldValue(field.value(), &sum)) {
          return Fail("bad value in " + std::string(line));
        }
      }
      const size_t payload_size = payload_buf.size();
      payload_buf.resize(payload_size + simdjson::SIMDJSON_PADDING);
      od::document inner;
      if (payload_parser.iterate(payload_buf.data(), payload_size, payload_buf.size()).get(inner) !=
          simdjson::SUCCESS) {
        return Fail("payload not JSON");
      }
      for (auto field : inner.get_object()) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS) return Fail("bad payload key");
        sum += key.size();
        if (!FoldValue(field.value(), &sum)) return Fail("bad payload value");
      }
    }
    const double pass = CpuSeconds() - start;
    if (repeat == 0 || pass < cpu) cpu = pass;
  }
  std::cout << "{\"events\":" << lines.size() << ",\"input_bytes\":" << text.size()
            << ",\"json_s\":" << cpu << ",\"checksum\":" << sum << "}\n";
  return 0;
}

struct Loaded {
  std::vector<std::vector<columnar::RecordBatchPtr>> files;  // row groups per file
  int64_t rows = 0;
};

Status Load(const std::vector<std::string>& paths, Loaded* out) {
  fs::FileSystemPtr local = fs::MakeLocalFileSystem();
  for (const std::string& path : paths) {
    SILT_ASSIGN_OR_RETURN(auto reader, parquet::ParquetFileReader::Open(local.get(), path));
    std::vector<columnar::RecordBatchPtr> groups;
    for (int g = 0; g < reader->num_row_groups(); ++g) {
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, reader->ReadRowGroup(g));
      out->rows += batch->num_rows;
      groups.push_back(std::move(batch));
    }
    out->files.push_back(std::move(groups));
  }
  return Status::OK();
}

// Writes every loaded file again into `memory` with `compression`; the
// total bytes written.
Result<int64_t> Encode(const Loaded& loaded, fs::FileSystem* memory,
                       parquet::Compression compression) {
  int64_t bytes = 0;
  for (size_t i = 0; i < loaded.files.size(); ++i) {
    const std::vector<columnar::RecordBatchPtr>& groups = loaded.files[i];
    if (groups.empty()) continue;
    parquet::WriterOptions options;
    options.compression = compression;
    const std::string path = "/ceiling/" + std::to_string(static_cast<int>(compression)) + "-" +
                             std::to_string(i) + ".parquet";
    SILT_ASSIGN_OR_RETURN(
        auto writer, parquet::ParquetFileWriter::Open(memory, path, groups[0]->schema, options));
    for (const columnar::RecordBatchPtr& batch : groups)
      SILT_RETURN_NOT_OK(writer->WriteBatch(*batch));
    SILT_ASSIGN_OR_RETURN(parquet::WriteResult result, writer->Close());
    bytes += result.file_size;
  }
  return bytes;
}

// The least CPU seconds of kRepeats Encode passes (files dropped after each
// but the last); the bytes of the last.
Result<std::pair<double, int64_t>> TimeEncode(const Loaded& loaded, fs::FileSystem* memory,
                                              parquet::Compression compression) {
  double best = 0;
  int64_t bytes = 0;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    if (repeat > 0) SILT_RETURN_NOT_OK(memory->DeleteDirRecursive("/ceiling"));
    const double start = CpuSeconds();
    SILT_ASSIGN_OR_RETURN(bytes, Encode(loaded, memory, compression));
    const double pass = CpuSeconds() - start;
    if (repeat == 0 || pass < best) best = pass;
  }
  return std::make_pair(best, bytes);
}

int RunParquet(const std::vector<std::string>& paths, bool snappy_only) {
  Loaded loaded;
  if (Status s = Load(paths, &loaded); !s.ok()) return Fail(s.ToString());
  fs::FileSystemPtr memory = fs::MakeMemoryFileSystem();
  if (snappy_only) {
    // The uncompressed files stand for the pages snappy would get: page
    // bodies are most of their bytes (headers and footers are small).
    Result<int64_t> written = Encode(loaded, memory.get(), parquet::Compression::kUncompressed);
    if (!written.ok()) return Fail(written.status().ToString());
    std::vector<std::string> contents;
    for (size_t i = 0; i < loaded.files.size(); ++i) {
      Result<std::string> file = memory->ReadFile(
          "/ceiling/" + std::to_string(static_cast<int>(parquet::Compression::kUncompressed)) +
          "-" + std::to_string(i) + ".parquet");
      if (!file.ok()) return Fail(file.status().ToString());
      contents.push_back(std::move(*file));
    }
    constexpr size_t kBlock = 1 << 20;
    std::string out(snappy::MaxCompressedLength(kBlock), '\0');
    int64_t in_bytes = 0;
    int64_t out_bytes = 0;
    double cpu = 0;
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      in_bytes = out_bytes = 0;
      const double start = CpuSeconds();
      for (const std::string& file : contents) {
        for (size_t pos = 0; pos < file.size(); pos += kBlock) {
          const size_t n = std::min(kBlock, file.size() - pos);
          size_t compressed = 0;
          snappy::RawCompress(file.data() + pos, n, out.data(), &compressed);
          in_bytes += static_cast<int64_t>(n);
          out_bytes += static_cast<int64_t>(compressed);
        }
      }
      const double pass = CpuSeconds() - start;
      if (repeat == 0 || pass < cpu) cpu = pass;
    }
    std::cout << "{\"rows\":" << loaded.rows << ",\"snappy_in_bytes\":" << in_bytes
              << ",\"snappy_out_bytes\":" << out_bytes << ",\"snappy_s\":" << cpu << "}\n";
    return 0;
  }
  auto plain = TimeEncode(loaded, memory.get(), parquet::Compression::kUncompressed);
  if (!plain.ok()) return Fail(plain.status().ToString());
  auto snappy_file = TimeEncode(loaded, memory.get(), parquet::Compression::kSnappy);
  if (!snappy_file.ok()) return Fail(snappy_file.status().ToString());
  std::cout << "{\"rows\":" << loaded.rows << ",\"files\":" << loaded.files.size()
            << ",\"encode_s\":" << plain->first << ",\"uncompressed_bytes\":" << plain->second
            << ",\"snappy_file_s\":" << snappy_file->first
            << ",\"snappy_file_bytes\":" << snappy_file->second << "}\n";
  return 0;
}

}  // namespace
}  // namespace silt

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: silt_ceiling_bench json EVENTS.jsonl | parquet|snappy FILE.parquet...\n";
    return 2;
  }
  const std::string mode = argv[1];
  if (mode == "json") return silt::RunJson(argv[2]);
  std::vector<std::string> paths(argv + 2, argv + argc);
  if (mode == "parquet") return silt::RunParquet(paths, false);
  if (mode == "snappy") return silt::RunParquet(paths, true);
  std::cerr << "silt_ceiling_bench: unknown mode " << mode << "\n";
  return 2;
}
