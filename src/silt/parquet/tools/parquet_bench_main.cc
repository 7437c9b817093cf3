// silt_parquet_bench: the silt half of bench/parquet/run.py (not installed).
//
//   silt_parquet_bench INPUT [--reps N] [--zstd-level L] [--keep DIR]
//
// Reads INPUT (a Parquet file, normally uncompressed, written by pyarrow)
// into memory with silt's reader, then times, phase by phase and N times
// each back to back, in memory (no disk I/O, one thread):
//   write_snappy  the whole table into a snappy Parquet file
//   write_zstd    the same with zstd at level L (default 1)
//   read          a full read of the snappy file (every row group, column)
//   read_zstd     a full read of the zstd file
// and prints one JSON object: {"write_snappy": [wall seconds...],
// "cpu_write_snappy": [CPU seconds...], ...,
// "size_snappy": bytes, "size_zstd": bytes, "rows": n}. --keep also saves
// the two files silt wrote as DIR/silt-snappy.parquet and
// DIR/silt-zstd.parquet.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"

namespace silt::parquet {
namespace {

using Clock = std::chrono::steady_clock;

// CPU seconds this process has used (user + system, all threads): on a
// shared machine it does not count time spent waiting for a CPU.
double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int Fail(const Status& s) {
  std::cerr << "silt_parquet_bench: " << s.ToString() << "\n";
  return 1;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Result<std::vector<columnar::RecordBatchPtr>> ReadAll(fs::FileSystem* fs, const std::string& path) {
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<ParquetFileReader> reader,
                        ParquetFileReader::Open(fs, path));
  std::vector<columnar::RecordBatchPtr> batches;
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, reader->ReadRowGroup(rg));
    batches.push_back(std::move(batch));
  }
  return batches;
}

Result<int64_t> WriteAll(fs::FileSystem* fs, const std::string& path,
                         const std::vector<columnar::RecordBatchPtr>& batches,
                         const WriterOptions& options) {
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<ParquetFileWriter> writer,
                        ParquetFileWriter::Open(fs, path, batches.front()->schema, options));
  for (const auto& batch : batches) SILT_RETURN_NOT_OK(writer->WriteBatch(*batch));
  SILT_ASSIGN_OR_RETURN(WriteResult result, writer->Close());
  return result.file_size;
}

void PrintList(const char* name, const std::vector<double>& v) {
  std::cout << "\"" << name << "\": [";
  for (size_t i = 0; i < v.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6f", v[i]);
    std::cout << (i ? ", " : "") << buf;
  }
  std::cout << "], ";
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: silt_parquet_bench INPUT [--reps N] [--zstd-level L]\n";
    return 2;
  }
  const std::string input = argv[1];
  int reps = 5;
  int zstd_level = 1;
  std::string keep;
  std::string profile;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else if (flag == "--zstd-level") {
      zstd_level = std::atoi(argv[i + 1]);
    } else if (flag == "--profile") {
      // For perf: write the snappy file once, then only this phase.
      profile = argv[i + 1];
    } else if (flag == "--keep") {
      keep = argv[i + 1];
    } else {
      std::cerr << "unknown option " << flag << "\n";
      return 2;
    }
  }
  auto local = fs::MakeLocalFileSystem();
  Result<std::string> bytes = local->ReadFile(input);
  if (!bytes.ok()) return Fail(bytes.status());
  auto mem = fs::MakeMemoryFileSystem();
  if (Status s = mem->WriteFile("/input.parquet", *bytes); !s.ok()) return Fail(s);
  Result<std::vector<columnar::RecordBatchPtr>> table = ReadAll(mem.get(), "/input.parquet");
  if (!table.ok()) return Fail(table.status());
  if (table->empty()) return Fail(Status::InvalidArgument(input, ": no row groups"));
  int64_t rows = 0;
  for (const auto& b : *table) rows += b->num_rows;

  WriterOptions snappy;
  snappy.compression = Compression::kSnappy;
  WriterOptions zstd;
  zstd.compression = Compression::kZstd;
  zstd.zstd_level = zstd_level;

  if (!profile.empty()) {
    // --profile snappy|zstd (writes) or read-snappy|read-zstd, for perf.
    const bool zstd_file = profile == "zstd" || profile == "read-zstd";
    const WriterOptions& opts = zstd_file ? zstd : snappy;
    Result<int64_t> size = WriteAll(mem.get(), "/p.parquet", *table, opts);
    if (!size.ok()) return Fail(size.status());
    const double cpu_start = CpuSeconds();
    for (int rep = 0; rep < reps; ++rep) {
      if (profile.rfind("read", 0) == 0) {
        Result<std::vector<columnar::RecordBatchPtr>> back = ReadAll(mem.get(), "/p.parquet");
        if (!back.ok()) return Fail(back.status());
      } else {
        size = WriteAll(mem.get(), "/p.parquet", *table, opts);
        if (!size.ok()) return Fail(size.status());
      }
    }
    std::cout << profile << ": " << (CpuSeconds() - cpu_start) / reps << " CPU s per rep\n";
    return 0;
  }

  // Wall and CPU seconds per phase and repetition.
  std::vector<double> wall[4], cpu[4];
  int64_t size_snappy = 0, size_zstd = 0;
  auto timed = [&](int phase, auto&& fn) -> Status {
    const auto start = Clock::now();
    const double cpu_start = CpuSeconds();
    SILT_RETURN_NOT_OK(fn());
    cpu[phase].push_back(CpuSeconds() - cpu_start);
    wall[phase].push_back(Seconds(start));
    return Status::OK();
  };
  // Phase by phase, each repeated `reps` times back to back, so every
  // sample sees the steady state of that phase (not the first read after a
  // write that freed its memory).
  Status s = Status::OK();
  for (int rep = 0; rep < reps && s.ok(); ++rep) {
    s = timed(0, [&]() -> Status {
      SILT_ASSIGN_OR_RETURN(size_snappy, WriteAll(mem.get(), "/snappy.parquet", *table, snappy));
      return Status::OK();
    });
  }
  for (int rep = 0; rep < reps && s.ok(); ++rep) {
    s = timed(1, [&]() -> Status {
      SILT_ASSIGN_OR_RETURN(size_zstd, WriteAll(mem.get(), "/zstd.parquet", *table, zstd));
      return Status::OK();
    });
  }
  for (int phase = 2; phase < 4; ++phase) {
    for (int rep = 0; rep < reps && s.ok(); ++rep) {
      s = timed(phase, [&]() -> Status {
        SILT_ASSIGN_OR_RETURN(std::vector<columnar::RecordBatchPtr> back,
                              ReadAll(mem.get(), phase == 2 ? "/snappy.parquet" : "/zstd.parquet"));
        return Status::OK();
      });
    }
  }
  if (!s.ok()) return Fail(s);
  if (!keep.empty()) {
    for (const char* name : {"snappy", "zstd"}) {
      Result<std::string> file = mem->ReadFile(std::string("/") + name + ".parquet");
      if (!file.ok()) return Fail(file.status());
      Status s = local->WriteFile(keep + "/silt-" + name + ".parquet", *file);
      if (!s.ok()) return Fail(s);
    }
  }
  static const char* kPhases[4] = {"write_snappy", "write_zstd", "read_snappy", "read_zstd"};
  std::cout << "{";
  for (int phase = 0; phase < 4; ++phase) {
    PrintList(kPhases[phase], wall[phase]);
    PrintList((std::string("cpu_") + kPhases[phase]).c_str(), cpu[phase]);
  }
  std::cout << "\"size_snappy\": " << size_snappy << ", \"size_zstd\": " << size_zstd
            << ", \"rows\": " << rows << "}\n";
  return 0;
}

}  // namespace
}  // namespace silt::parquet

int main(int argc, char** argv) { return silt::parquet::Main(argc, argv); }
