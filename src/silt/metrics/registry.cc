#include "silt/metrics/registry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace silt::metrics {

namespace {

bool NameChar(char c, bool first, bool colon) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  if (colon && c == ':') return true;
  return !first && c >= '0' && c <= '9';
}

bool ValidName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!NameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

[[noreturn]] void Misuse(const std::string& what) {
  std::fprintf(stderr, "silt: metrics registry misuse: %s\n", what.c_str());
  std::abort();
}

void CheckFamily(const std::string& name, const std::vector<std::string>& labels) {
  if (!ValidMetricName(name)) Misuse("invalid metric name '" + name + "'");
  for (const std::string& label : labels) {
    if (!ValidLabelName(label) || label == "le") {
      Misuse("invalid label name '" + label + "' of " + name);
    }
  }
}

// name{a="x",b="y"} (extra: one more label, e.g. le, appended).
void AppendSeries(std::string* out, std::string_view name, const std::vector<std::string>& labels,
                  const std::vector<std::string>& values, std::string_view extra_label = {},
                  std::string_view extra_value = {}) {
  out->append(name);
  if (labels.empty() && extra_label.empty()) return;
  out->push_back('{');
  bool first = true;
  auto add = [&](std::string_view label, std::string_view value) {
    if (!first) out->push_back(',');
    first = false;
    out->append(label);
    out->append("=\"");
    out->append(EscapeLabelValue(value));
    out->push_back('"');
  };
  for (size_t i = 0; i < labels.size(); ++i) add(labels[i], i < values.size() ? values[i] : "");
  if (!extra_label.empty()) add(extra_label, extra_value);
  out->push_back('}');
}

void AppendHeader(std::string* out, const std::string& name, const std::string& help,
                  std::string_view type) {
  out->append("# HELP ").append(name).append(" ").append(EscapeHelp(help)).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

}  // namespace

bool ValidMetricName(std::string_view name) { return ValidName(name, true); }

bool ValidLabelName(std::string_view name) {
  return ValidName(name, false) && !name.starts_with("__");
}

void Counter::Increment(double by) {
  if (!(by > 0)) return;
  value_.fetch_add(by, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  // Buckets are "less than or equal" upper bounds, as Prometheus' le.
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot out;
  out.bounds = bounds_;
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    out.cumulative.push_back(running);
  }
  out.sum = sum_;
  out.count = count_;
  return out;
}

std::vector<double> DurationBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};
}

Registry::Entry* Registry::Find(const std::string& name, MetricType type) {
  for (const std::unique_ptr<Entry>& entry : entries_) {
    if (entry->name != name) continue;
    if (entry->type != type) Misuse("metric " + name + " registered twice with different types");
    return entry.get();
  }
  return nullptr;
}

CounterFamily& Registry::AddCounter(const std::string& name, const std::string& help,
                                    std::vector<std::string> label_names) {
  CheckFamily(name, label_names);
  std::lock_guard<std::mutex> lock(mutex_);
  if (Entry* entry = Find(name, MetricType::kCounter)) return *entry->counter;
  auto entry = std::make_unique<Entry>();
  entry->type = MetricType::kCounter;
  entry->name = name;
  entry->counter = std::make_unique<CounterFamily>(name, help, std::move(label_names),
                                                   [] { return std::make_unique<Counter>(); });
  entries_.push_back(std::move(entry));
  return *entries_.back()->counter;
}

GaugeFamily& Registry::AddGauge(const std::string& name, const std::string& help,
                                std::vector<std::string> label_names) {
  CheckFamily(name, label_names);
  std::lock_guard<std::mutex> lock(mutex_);
  if (Entry* entry = Find(name, MetricType::kGauge)) return *entry->gauge;
  auto entry = std::make_unique<Entry>();
  entry->type = MetricType::kGauge;
  entry->name = name;
  entry->gauge = std::make_unique<GaugeFamily>(name, help, std::move(label_names),
                                               [] { return std::make_unique<Gauge>(); });
  entries_.push_back(std::move(entry));
  return *entries_.back()->gauge;
}

HistogramFamily& Registry::AddHistogram(const std::string& name, const std::string& help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> bounds) {
  CheckFamily(name, label_names);
  if (!std::is_sorted(bounds.begin(), bounds.end()) ||
      std::adjacent_find(bounds.begin(), bounds.end()) != bounds.end()) {
    Misuse("histogram " + name + ": bucket bounds must be strictly ascending");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (Entry* entry = Find(name, MetricType::kHistogram)) return *entry->histogram;
  auto entry = std::make_unique<Entry>();
  entry->type = MetricType::kHistogram;
  entry->name = name;
  entry->histogram = std::make_unique<HistogramFamily>(
      name, help, std::move(label_names),
      [bounds = std::move(bounds)] { return std::make_unique<Histogram>(bounds); });
  entries_.push_back(std::move(entry));
  return *entries_.back()->histogram;
}

void Registry::AddRefresher(std::function<void()> refresh) {
  std::lock_guard<std::mutex> lock(mutex_);
  refreshers_.push_back(std::move(refresh));
}

std::string Registry::Expose() const {
  std::lock_guard<std::mutex> expose_lock(expose_mutex_);
  std::vector<const Entry*> entries;
  std::vector<std::function<void()>> refreshers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<Entry>& entry : entries_) entries.push_back(entry.get());
    refreshers = refreshers_;
  }
  for (const std::function<void()>& refresh : refreshers) refresh();

  std::string out;
  for (const Entry* entry : entries) {
    switch (entry->type) {
      case MetricType::kCounter: {
        const CounterFamily& family = *entry->counter;
        AppendHeader(&out, family.name(), family.help(), "counter");
        family.ForEach([&](const std::vector<std::string>& values, const Counter& counter) {
          AppendSeries(&out, family.name(), family.label_names(), values);
          out.append(" ").append(FormatValue(counter.value())).append("\n");
        });
        break;
      }
      case MetricType::kGauge: {
        const GaugeFamily& family = *entry->gauge;
        AppendHeader(&out, family.name(), family.help(), "gauge");
        family.ForEach([&](const std::vector<std::string>& values, const Gauge& gauge) {
          AppendSeries(&out, family.name(), family.label_names(), values);
          out.append(" ").append(FormatValue(gauge.value())).append("\n");
        });
        break;
      }
      case MetricType::kHistogram: {
        const HistogramFamily& family = *entry->histogram;
        AppendHeader(&out, family.name(), family.help(), "histogram");
        const std::string bucket = family.name() + "_bucket";
        family.ForEach([&](const std::vector<std::string>& values, const Histogram& histogram) {
          Histogram::Snapshot snap = histogram.snapshot();
          for (size_t i = 0; i <= snap.bounds.size(); ++i) {
            const std::string le =
                i < snap.bounds.size() ? FormatValue(snap.bounds[i]) : std::string("+Inf");
            AppendSeries(&out, bucket, family.label_names(), values, "le", le);
            out.append(" ").append(std::to_string(snap.cumulative[i])).append("\n");
          }
          AppendSeries(&out, family.name() + "_sum", family.label_names(), values);
          out.append(" ").append(FormatValue(snap.sum)).append("\n");
          AppendSeries(&out, family.name() + "_count", family.label_names(), values);
          out.append(" ").append(std::to_string(snap.count)).append("\n");
        });
        break;
      }
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Integral values (counts, offsets, bytes) print without an exponent up
  // to 2^53, where a double stops holding every integer.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(value));
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  // The shortest text that reads back as the same double.
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof(shorter), "%.*g", precision, value);
    if (std::strtod(shorter, nullptr) == value) return shorter;
  }
  return buf;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace silt::metrics
