// A small Prometheus metrics registry: counters, gauges and histograms, each
// a family of children told apart by label values, and their text
// exposition (Prometheus' text format 0.0.4, what `/metrics` serves).
//
//   metrics::Registry registry;
//   metrics::CounterFamily& rows = registry.AddCounter(
//       "silt_sink_rows_total", "Rows committed to the sink.", {"query", "sink"});
//   rows.WithLabels({"sensor-stream", "DeltaSink[/data/t]"}).Increment(1000);
//   std::string text = registry.Expose();
//
// Names follow Prometheus' rules ([a-zA-Z_:][a-zA-Z0-9_:]* for metrics,
// [a-zA-Z_][a-zA-Z0-9_]* for labels, no "__" prefix); a family is registered
// by code, so a bad name is a programming error (ValidMetricName /
// ValidLabelName let tests and callers check). Label values are any UTF-8
// text and are escaped in the exposition.
//
// Thread safety: everything may be called from any thread. Updating a child
// is an atomic operation (histograms take a short per-child lock); looking
// up a child takes the family's lock; Expose() copies values under those
// locks and never holds one while formatting another family. A reference
// returned by WithLabels stays valid until that child is removed (Remove,
// Clear) or the registry is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace silt::metrics {

bool ValidMetricName(std::string_view name);
bool ValidLabelName(std::string_view name);

// A value that only goes up (resets when the process restarts).
class Counter {
 public:
  // REQUIRES: by >= 0 (a negative amount is ignored).
  void Increment(double by = 1.0);
  // Mirrors a total kept elsewhere that is itself monotonic (the process's
  // CPU time): sets the value as is.
  void SetTotal(double total) { value_.store(total, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A value that goes up and down.
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double by) { value_.fetch_add(by, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Observations counted into cumulative buckets (upper bounds, ascending),
// plus their sum and count.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  const std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Buckets for durations in seconds, 5 ms .. 10 min.
std::vector<double> DurationBuckets();

enum class MetricType { kCounter, kGauge, kHistogram };

// The children of one metric name. T is Counter, Gauge or Histogram.
template <typename T>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::function<std::unique_ptr<T>()> make)
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        make_(std::move(make)) {}

  // The child with these label values (one per label name, in order),
  // created at zero on first use.
  T& WithLabels(const std::vector<std::string>& values) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<T>& child = children_[values];
    if (child == nullptr) child = make_();
    return *child;
  }
  void Remove(const std::vector<std::string>& values) {
    std::lock_guard<std::mutex> lock(mutex_);
    children_.erase(values);
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    children_.clear();
  }

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Calls fn(label values, child) for every child, sorted by label values,
  // under the family's lock.
  template <typename Fn>
  void ForEach(Fn fn) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [values, child] : children_) fn(values, *child);
  }

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::function<std::unique_ptr<T>()> make_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a family. Registering a name twice returns the first family
  // (when the type matches; a different type is a programming error and
  // aborts, as are invalid names).
  CounterFamily& AddCounter(const std::string& name, const std::string& help,
                            std::vector<std::string> label_names = {});
  GaugeFamily& AddGauge(const std::string& name, const std::string& help,
                        std::vector<std::string> label_names = {});
  HistogramFamily& AddHistogram(const std::string& name, const std::string& help,
                                std::vector<std::string> label_names,
                                std::vector<double> bounds = DurationBuckets());

  // Runs before every exposition (e.g. to read /proc/self for the process
  // metrics, or to compute a gauge from a snapshot). Called under the
  // registry's exposition lock, so refreshers never run concurrently.
  void AddRefresher(std::function<void()> refresh);

  // Every family in registration order, in the text exposition format:
  // "# HELP", "# TYPE", then one line per child (histograms: _bucket with
  // le, _sum, _count). A family without children is listed with its HELP
  // and TYPE only.
  std::string Expose() const;

 private:
  struct Entry {
    MetricType type;
    std::string name;
    std::unique_ptr<CounterFamily> counter;
    std::unique_ptr<GaugeFamily> gauge;
    std::unique_ptr<HistogramFamily> histogram;
  };
  Entry* Find(const std::string& name, MetricType type);

  mutable std::mutex mutex_;  // guards entries_ and refreshers_
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<std::function<void()>> refreshers_;
  mutable std::mutex expose_mutex_;
};

// Text-format helpers, exposed for tests: a sample value ("1", "0.25",
// "+Inf", "NaN"), an escaped label value (\\, \", \n), escaped HELP text
// (\\, \n).
std::string FormatValue(double value);
std::string EscapeLabelValue(std::string_view value);
std::string EscapeHelp(std::string_view help);

}  // namespace silt::metrics
