// Commit contention on one Delta table (bench/scaleout/run.py): N writers,
// each a thread with its own table handle and snapshot, commit as fast as
// they can for a fixed time, each commit what a scale-out worker's is: a
// blind append of one small file plus a compare-and-set txn of the writer's
// own partition (delta::CommitRequest::expected_txns), on a snapshot
// brought up to date first (DeltaTable::Update), advanced in memory after
// a commit that landed right after it (CommitAndAdvance), with the
// checkpoint every delta.checkpointInterval commits. Losing the race for a
// version costs a listing and a read of every winner, then another try.
//
//   silt_commit_bench --table PATH|s3://bucket/dir --writers N --seconds S
//
// PATH must not exist; s3:// paths use the AWS_* environment (MinIO).
// Prints one JSON object: commits, commits/s, and the latency of a commit
// (snapshot update, lost races included) as percentiles.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "silt/base/result.h"
#include "silt/base/uuid.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"

namespace silt {
namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string table;
  int writers = 1;
  double seconds = 10;
};

Result<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int arg_idx = 1; arg_idx < argc; ++arg_idx) {
    std::string flag = argv[arg_idx];
    if (arg_idx + 1 >= argc) return Status::InvalidArgument("missing value after ", flag);
    std::string value = argv[++arg_idx];
    if (flag == "--table") {
      args.table = value;
    } else if (flag == "--writers") {
      args.writers = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--seconds") {
      args.seconds = std::atof(value.c_str());
    } else {
      return Status::InvalidArgument("unknown flag ", flag);
    }
  }
  if (args.table.empty()) return Status::InvalidArgument("--table is required");
  return args;
}

delta::AddFile SmallFile(int writer, int64_t n) {
  delta::AddFile add;
  add.path = "part-" + std::to_string(writer) + "-" + std::to_string(n) + "-" + NewUuid() +
             ".c000.snappy.parquet";
  add.size = 2048;
  add.modification_time = 1;
  add.stats = R"({"numRecords":100})";
  return add;
}

struct WriterResult {
  int64_t commits = 0;
  std::vector<double> latencies_ms;
  Status error;
};

void RunWriter(const Args& args, fs::FileSystemPtr file_system, int writer, Clock::time_point until,
               WriterResult* out) {
  Result<std::unique_ptr<delta::DeltaTable>> opened =
      delta::DeltaTable::Open(file_system, args.table);
  if (!opened.ok()) {
    out->error = opened.status();
    return;
  }
  std::unique_ptr<delta::DeltaTable> table = std::move(*opened);
  delta::SnapshotPtr snapshot;
  const std::string app_id = "bench:t:" + std::to_string(writer);
  std::optional<int64_t> offset;
  while (Clock::now() < until) {
    const Clock::time_point start = Clock::now();
    Result<delta::SnapshotPtr> latest =
        snapshot != nullptr ? table->Update(std::move(snapshot)) : table->LatestSnapshot();
    if (!latest.ok()) {
      out->error = latest.status();
      return;
    }
    snapshot = std::move(*latest);
    delta::CommitRequest request;
    request.operation = "STREAMING UPDATE";
    request.operation_parameters = {{"outputMode", "Append"}};
    request.adds = {SmallFile(writer, out->commits)};
    const int64_t next = offset.value_or(0) + 100;
    request.expected_txns = {{delta::Txn{app_id, next, {}}, offset}};
    Result<delta::CommitResult> committed =
        delta::CommitAndAdvance(table.get(), &snapshot, request);
    if (!committed.ok()) {
      out->error = committed.status();
      return;
    }
    offset = next;
    ++out->commits;
    out->latencies_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t idx = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  return values[idx];
}

Status Run(const Args& args) {
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr file_system, fs::FileSystemForPath(args.table));
  SILT_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(file_system, args.table));
  SILT_ASSIGN_OR_RETURN(bool exists, table->Exists());
  if (exists) return Status::InvalidArgument(args.table, " exists already");
  delta::CommitRequest create;
  create.operation = "CREATE TABLE";
  delta::Metadata metadata;
  metadata.schema = columnar::DataType::Struct({{"id", columnar::DataType::Long(), true}});
  create.new_metadata = metadata;
  SILT_RETURN_NOT_OK(delta::Commit(table.get(), nullptr, create).status());

  const Clock::time_point start = Clock::now();
  const Clock::time_point until =
      start + std::chrono::microseconds(static_cast<int64_t>(args.seconds * 1e6));
  std::vector<WriterResult> results(static_cast<size_t>(args.writers));
  std::vector<std::thread> threads;
  for (int writer = 0; writer < args.writers; ++writer) {
    threads.emplace_back(RunWriter, std::cref(args), file_system, writer, until,
                         &results[static_cast<size_t>(writer)]);
  }
  for (std::thread& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  int64_t commits = 0;
  std::vector<double> latencies;
  for (const WriterResult& r : results) {
    if (!r.error.ok()) return r.error;
    commits += r.commits;
    latencies.insert(latencies.end(), r.latencies_ms.begin(), r.latencies_ms.end());
  }
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> versions, table->ListVersions());
  std::printf(
      "{\"table\":\"%s\",\"writers\":%d,\"seconds\":%.2f,\"commits\":%lld,"
      "\"commits_per_second\":%.1f,\"versions\":%lld,\"latency_ms_p50\":%.2f,"
      "\"latency_ms_p90\":%.2f,\"latency_ms_p99\":%.2f,\"latency_ms_max\":%.2f}\n",
      args.table.c_str(), args.writers, elapsed, static_cast<long long>(commits),
      static_cast<double>(commits) / elapsed, static_cast<long long>(versions.size()),
      Percentile(latencies, 0.5), Percentile(latencies, 0.9), Percentile(latencies, 0.99),
      Percentile(latencies, 1.0));
  return Status::OK();
}

}  // namespace
}  // namespace silt

int main(int argc, char** argv) {
  silt::Result<silt::Args> args = silt::ParseArgs(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "silt_commit_bench: %s\n", args.status().ToString().c_str());
    return 2;
  }
  silt::Status st = silt::Run(*args);
  if (!st.ok()) {
    std::fprintf(stderr, "silt_commit_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
