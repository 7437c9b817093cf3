// silt_snapshot_bench: the silt half of bench/delta_snapshot/run.py (not
// installed).
//
//   silt_snapshot_bench load TABLE [--version V] [--list 1]
//       Loads the latest snapshot (or the one at version V), walks its live
//       files and prints one JSON object: {"version":v,"files":n,
//       "bytes":sum of add.size,"with_stats":n,"tombstones":n,"load_s":s};
//       with --list 1, then one "<size> <path>" line per live file.
//   silt_snapshot_bench checkpoint TABLE --every N
//       Writes the classic checkpoint of every version that is a multiple of
//       N (as delta-spark does after such a commit) and has none yet, in
//       ascending order, each from the previous checkpoint plus N commits;
//       the checkpoint's "now" is the commit's own timestamp.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"

namespace silt {
namespace {

using Clock = std::chrono::steady_clock;

int Fail(const Status& s) {
  std::cerr << "silt_snapshot_bench: " << s.ToString() << "\n";
  return 1;
}

Status Load(const std::string& path, int64_t version, bool list) {
  Clock::time_point start = Clock::now();
  // Open, not OpenExisting: its existence check lists the log once more.
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr file_system, fs::FileSystemForPath(path));
  SILT_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(file_system, path));
  delta::SnapshotPtr snapshot;
  if (version < 0) {
    SILT_ASSIGN_OR_RETURN(snapshot, table->LatestSnapshot());
  } else {
    SILT_ASSIGN_OR_RETURN(snapshot, table->SnapshotAt(version));
  }
  int64_t bytes = 0;
  int64_t with_stats = 0;
  for (const delta::AddFile& add : snapshot->files()) {
    bytes += add.size;
    if (add.stats) ++with_stats;
  }
  double load_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << "{\"version\":" << snapshot->version() << ",\"files\":" << snapshot->files().size()
            << ",\"bytes\":" << bytes << ",\"with_stats\":" << with_stats
            << ",\"tombstones\":" << snapshot->tombstones().size() << ",\"load_s\":" << load_s
            << "}\n";
  if (list) {
    for (const delta::AddFile& add : snapshot->files())
      std::cout << add.size << " " << add.path << "\n";
  }
  return Status::OK();
}

Status Checkpoint(const std::string& path, int64_t every) {
  SILT_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::OpenExisting(path));
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr file_system, fs::FileSystemForPath(path));
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> versions, table->ListVersions());
  if (versions.empty()) return Status::NotFound(path, " has no commits");
  for (int64_t v = every; v <= versions.back(); v += every) {
    std::string file = fs::JoinPath(table->log_path(), delta::CheckpointFileName(v));
    SILT_ASSIGN_OR_RETURN(bool exists, file_system->Exists(file));
    if (exists) continue;
    SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, table->SnapshotAt(v));
    SILT_ASSIGN_OR_RETURN(delta::CheckpointInfo info,
                          delta::WriteCheckpoint(table.get(), *snapshot, snapshot->timestamp_ms()));
    if (v % (every * 100) == 0) {
      std::cerr << "checkpoint " << v << ": " << info.num_actions << " actions, "
                << info.size_in_bytes << " bytes\n";
    }
  }
  return Status::OK();
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: silt_snapshot_bench load TABLE [--version V]\n"
                 "       silt_snapshot_bench checkpoint TABLE --every N\n";
    return 2;
  }
  std::string_view mode = argv[1];
  std::string path = argv[2];
  int64_t version = -1;
  int64_t every = 0;
  bool list = false;
  for (int arg_idx = 3; arg_idx + 1 < argc; arg_idx += 2) {
    std::string_view flag = argv[arg_idx];
    if (flag == "--version") {
      version = std::atoll(argv[arg_idx + 1]);
    } else if (flag == "--list") {
      list = std::string_view(argv[arg_idx + 1]) == "1";
    } else if (flag == "--every") {
      every = std::atoll(argv[arg_idx + 1]);
    } else {
      return Fail(Status::InvalidArgument("unknown flag ", flag));
    }
  }
  if (mode == "load") {
    Status s = Load(path, version, list);
    return s.ok() ? 0 : Fail(s);
  }
  if (mode == "checkpoint" && every > 0) {
    Status s = Checkpoint(path, every);
    return s.ok() ? 0 : Fail(s);
  }
  return Fail(Status::InvalidArgument("unknown mode or missing --every: ", mode));
}

}  // namespace
}  // namespace silt

int main(int argc, char** argv) { return silt::Main(argc, argv); }
