#include "silt/metrics/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace silt::metrics {

namespace {

// btime of /proc/stat: the boot time, seconds since the epoch.
double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  }
  return 0;
}

int64_t CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  int64_t count = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  // The directory handle itself is one of them.
  return count > 0 ? count - 1 : 0;
}

}  // namespace

ProcessStats ReadProcessStats() {
  ProcessStats out;
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces; the
  // fields after the last ')' are plain numbers, starting with field 3.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return out;
  std::istringstream fields(text.substr(close + 1));
  std::vector<std::string> values;
  std::string value;
  while (fields >> value) values.push_back(value);
  // Field n (1-based, as proc(5) numbers them) is values[n - 3].
  auto field = [&](int n) -> double {
    const size_t idx = static_cast<size_t>(n - 3);
    return idx < values.size() ? std::stod(values[idx]) : 0.0;
  };
  if (values.size() < 22) return out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  out.cpu_seconds = (field(14) + field(15)) / ticks;
  out.start_time_seconds = BootTimeSeconds() + field(22) / ticks;
  out.virtual_bytes = static_cast<int64_t>(field(23));
  out.resident_bytes = static_cast<int64_t>(field(24) * page);
  out.open_fds = CountOpenFds();
  out.ok = true;
  return out;
}

void AddProcessMetrics(Registry* registry) {
  Counter& cpu = registry
                     ->AddCounter("process_cpu_seconds_total",
                                  "Total user and system CPU time spent in "
                                  "seconds.")
                     .WithLabels({});
  Gauge& rss = registry->AddGauge("process_resident_memory_bytes", "Resident memory size in bytes.")
                   .WithLabels({});
  Gauge& vms = registry->AddGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.")
                   .WithLabels({});
  Gauge& start = registry
                     ->AddGauge("process_start_time_seconds",
                                "Start time of the process since unix epoch in seconds.")
                     .WithLabels({});
  Gauge& fds =
      registry->AddGauge("process_open_fds", "Number of open file descriptors.").WithLabels({});
  registry->AddRefresher([&cpu, &rss, &vms, &start, &fds] {
    ProcessStats stats = ReadProcessStats();
    if (!stats.ok) return;
    cpu.SetTotal(stats.cpu_seconds);
    rss.Set(static_cast<double>(stats.resident_bytes));
    vms.Set(static_cast<double>(stats.virtual_bytes));
    start.Set(stats.start_time_seconds);
    fds.Set(static_cast<double>(stats.open_fds));
  });
}

}  // namespace silt::metrics
