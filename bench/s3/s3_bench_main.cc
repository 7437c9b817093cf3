// silt_s3_bench: the silt half of bench/s3/run.py (not installed).
//
//   silt_s3_bench --prefix s3://bucket/dir --payload FILE [--files N]
//                 [--commits C] [--part-mb P] [--parallel-parts K]
//
// Against the S3 server of the AWS_* environment (AWS_ENDPOINT_URL,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION), with silt's own
// S3 file system, one file at a time:
//   upload    N objects, each the bytes of the local FILE, through OpenForWrite (multipart, up to
//             K parts in flight), appended in 1 MiB pieces as an encoder would
//   download  each object back with one GET (ReadFile), checked against what
//             was written
//   commit    C blind-append Delta commits of one AddFile each to a new table
//             under the prefix, each as a streaming batch pays for it: the
//             latest snapshot, then the conditional PUT of the next version
// and prints one JSON object: {"upload_s": [...], "download_s": [...],
// "commit_ms": [...], "bytes_per_file": n}.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/uuid.h"
#include "silt/columnar/types.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/fs/s3_file_system.h"

namespace silt {
namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string prefix;
  int files = 8;
  std::string payload;
  int commits = 100;
  int64_t part_mb = 8;
  int parallel_parts = 4;
};

int Fail(const Status& s) {
  std::cerr << "silt_s3_bench: " << s.ToString() << "\n";
  return 1;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Result<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int arg_idx = 1; arg_idx < argc; ++arg_idx) {
    std::string_view flag = argv[arg_idx];
    if (arg_idx + 1 >= argc) return Status::InvalidArgument("missing value for ", flag);
    std::string value = argv[++arg_idx];
    if (flag == "--prefix") {
      args.prefix = value;
    } else if (flag == "--files") {
      args.files = std::atoi(value.c_str());
    } else if (flag == "--payload") {
      args.payload = value;
    } else if (flag == "--commits") {
      args.commits = std::atoi(value.c_str());
    } else if (flag == "--part-mb") {
      args.part_mb = std::atoll(value.c_str());
    } else if (flag == "--parallel-parts") {
      args.parallel_parts = std::atoi(value.c_str());
    } else {
      return Status::InvalidArgument("unknown flag ", flag);
    }
  }
  if (args.prefix.empty() || args.payload.empty()) {
    return Status::InvalidArgument("--prefix s3://bucket/dir and --payload FILE are required");
  }
  return args;
}

Status Run(const Args& args) {
  std::map<std::string, std::string> settings = {
      {"partSizeBytes", std::to_string(args.part_mb << 20)},
      {"maxParallelParts", std::to_string(args.parallel_parts)}};
  SILT_RETURN_NOT_OK(fs::SetS3Settings(settings));
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr s3, fs::DefaultS3FileSystem());
  const std::string root = fs::JoinPath(args.prefix, "bench-" + NewUuid());
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr local, fs::FileSystemForPath(args.payload));
  SILT_ASSIGN_OR_RETURN(const std::string payload, local->ReadFile(args.payload));
  const auto file_bytes = static_cast<int64_t>(payload.size());

  std::vector<double> upload_s;
  std::vector<double> download_s;
  for (int file_idx = 0; file_idx < args.files; ++file_idx) {
    std::string path = fs::JoinPath(root, "data/file-" + std::to_string(file_idx) + ".bin");
    Clock::time_point start = Clock::now();
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<fs::WritableFile> writer, s3->OpenForWrite(path));
    for (int64_t offset = 0; offset < file_bytes; offset += 1 << 20) {
      SILT_RETURN_NOT_OK(writer->Append(std::string_view(payload).substr(
          static_cast<size_t>(offset),
          static_cast<size_t>(std::min<int64_t>(1 << 20, file_bytes - offset)))));
    }
    SILT_RETURN_NOT_OK(writer->Close());
    upload_s.push_back(Seconds(start));
  }
  for (int file_idx = 0; file_idx < args.files; ++file_idx) {
    std::string path = fs::JoinPath(root, "data/file-" + std::to_string(file_idx) + ".bin");
    Clock::time_point start = Clock::now();
    SILT_ASSIGN_OR_RETURN(std::string back, s3->ReadFile(path));
    download_s.push_back(Seconds(start));
    if (back != payload)
      return Status::Corruption(path, " read back differs from what was written");
  }

  SILT_ASSIGN_OR_RETURN(std::unique_ptr<delta::DeltaTable> table,
                        delta::DeltaTable::Open(s3, fs::JoinPath(root, "table")));
  SILT_ASSIGN_OR_RETURN(columnar::SchemaPtr schema, columnar::ParseDdlSchema("id BIGINT"));
  std::vector<double> commit_ms;
  for (int commit_idx = 0; commit_idx <= args.commits; ++commit_idx) {
    Clock::time_point start = Clock::now();
    delta::SnapshotPtr snapshot;
    delta::CommitRequest request;
    if (commit_idx == 0) {
      delta::Metadata metadata;
      metadata.id = NewUuid();
      metadata.schema = schema;
      metadata.schema_string = columnar::SchemaToJson(*schema);
      request.new_metadata = std::move(metadata);
      request.new_protocol = delta::Protocol();
    } else {
      SILT_ASSIGN_OR_RETURN(snapshot, table->LatestSnapshot());
    }
    delta::AddFile add;
    add.path = "part-" + std::to_string(commit_idx) + ".parquet";
    add.size = 1000;
    add.modification_time = 1'700'000'000'000;
    request.adds.push_back(std::move(add));
    request.txn = delta::Txn{"bench", commit_idx, std::nullopt};
    SILT_ASSIGN_OR_RETURN(delta::CommitResult result,
                          delta::Commit(table.get(), snapshot, request));
    if (result.version != commit_idx) {
      return Status::Internal("commit ", commit_idx, " landed at version ", result.version);
    }
    // Version 0 creates the table; it is not a steady-state commit.
    if (commit_idx > 0) commit_ms.push_back(Seconds(start) * 1000);
  }
  SILT_RETURN_NOT_OK(s3->DeleteDirRecursive(root));

  auto list = [](const std::vector<double>& values) {
    std::string out = "[";
    for (size_t value_idx = 0; value_idx < values.size(); ++value_idx) {
      if (value_idx > 0) out += ",";
      out += std::to_string(values[value_idx]);
    }
    return out + "]";
  };
  std::cout << "{\"upload_s\": " << list(upload_s) << ", \"download_s\": " << list(download_s)
            << ", \"commit_ms\": " << list(commit_ms) << ", \"bytes_per_file\": " << file_bytes
            << "}\n";
  return Status::OK();
}

}  // namespace
}  // namespace silt

int main(int argc, char** argv) {
  silt::Result<silt::Args> args = silt::ParseArgs(argc, argv);
  if (!args.ok()) return silt::Fail(args.status());
  silt::Status st = silt::Run(*args);
  if (!st.ok()) return silt::Fail(st);
  return 0;
}
