#include "silt/exec/quantile_summary.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace silt::exec {

namespace {

// Spark's head buffer size and compression threshold
// (QuantileSummaries.defaultHeadSize, defaultCompressThreshold).
constexpr size_t kHeadSize = 50000;
constexpr size_t kCompressThreshold = 10000;

// Scala's Ordering.Double (java.lang.Double.compare): -0.0 before 0.0, NaN
// after everything.
bool JavaDoubleLess(double a, double b) {
  if (std::isnan(a)) return false;  // NaN is the largest; NaNs are equal
  if (std::isnan(b)) return true;
  if (a != b) return a < b;
  return std::signbit(a) && !std::signbit(b);
}

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <typename T>
bool Get(std::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(v, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

}  // namespace

void QuantileSummary::Insert(double value) {
  head_.push_back(value);
  compressed_ = false;
  if (head_.size() >= kHeadSize) {
    FoldHead();
    if (samples_.size() >= kCompressThreshold) Compress();
  }
}

void QuantileSummary::FoldHead() {
  if (head_.empty()) return;
  std::sort(head_.begin(), head_.end(), JavaDoubleLess);
  std::vector<Sample> merged;
  merged.reserve(samples_.size() + head_.size());
  size_t sample_idx = 0;
  int64_t current_count = count_;
  for (size_t ops = 0; ops < head_.size(); ++ops) {
    const double v = head_[ops];
    while (sample_idx < samples_.size() && samples_[sample_idx].value <= v) {
      merged.push_back(samples_[sample_idx++]);
    }
    ++current_count;
    // A new minimum or the new maximum is exact; others carry GK's
    // uncertainty at the current count.
    const bool exact = merged.empty() || (sample_idx == samples_.size() && ops == head_.size() - 1);
    const int64_t delta = exact ? 0
                                : static_cast<int64_t>(std::floor(
                                      2 * relative_error_ * static_cast<double>(current_count)));
    merged.push_back(Sample{v, 1, delta});
  }
  while (sample_idx < samples_.size()) merged.push_back(samples_[sample_idx++]);
  samples_ = std::move(merged);
  count_ = current_count;
  head_.clear();
}

std::vector<QuantileSummary::Sample> QuantileSummary::CompressSamples(
    const std::vector<Sample>& samples, double merge_threshold) {
  if (samples.empty()) return {};
  // Built from the largest down, then reversed.
  std::vector<Sample> out;
  Sample head = samples.back();
  // From the second-largest sample down to the second (the smallest is
  // never folded).
  for (size_t i = samples.size() - 1; i-- > 1;) {
    const Sample& s = samples[i];
    if (static_cast<double>(s.g + head.g + head.delta) < merge_threshold) {
      head.g += s.g;
    } else {
      out.push_back(head);
      head = s;
    }
  }
  out.push_back(head);
  const Sample& smallest = samples.front();
  if (smallest.value <= head.value && samples.size() > 1) out.push_back(smallest);
  std::reverse(out.begin(), out.end());
  return out;
}

void QuantileSummary::Compress() {
  FoldHead();
  samples_ = CompressSamples(samples_, 2 * relative_error_ * static_cast<double>(count_));
  compressed_ = true;
}

void QuantileSummary::Merge(const QuantileSummary& other) {
  if (!compressed_) Compress();
  if (other.count_ == 0) return;
  if (count_ == 0) {
    samples_ = other.samples_;
    count_ = other.count_;
    relative_error_ = other.relative_error_;
    compressed_ = true;
    return;
  }
  const double merged_error = std::max(relative_error_, other.relative_error_);
  const int64_t merged_count = count_ + other.count_;
  const int64_t self_extra = static_cast<int64_t>(
      std::floor(2 * other.relative_error_ * static_cast<double>(other.count_)));
  const int64_t other_extra =
      static_cast<int64_t>(std::floor(2 * relative_error_ * static_cast<double>(count_)));
  std::vector<Sample> merged;
  merged.reserve(samples_.size() + other.samples_.size());
  size_t a = 0;
  size_t b = 0;
  while (a < samples_.size() && b < other.samples_.size()) {
    if (samples_[a].value < other.samples_[b].value) {
      Sample s = samples_[a++];
      if (b > 0) s.delta += self_extra;
      merged.push_back(s);
    } else {
      Sample s = other.samples_[b++];
      if (a > 0) s.delta += other_extra;
      merged.push_back(s);
    }
  }
  while (a < samples_.size()) merged.push_back(samples_[a++]);
  while (b < other.samples_.size()) merged.push_back(other.samples_[b++]);
  samples_ = CompressSamples(merged, 2 * merged_error * static_cast<double>(merged_count));
  count_ = merged_count;
  relative_error_ = merged_error;
  compressed_ = true;
}

std::optional<std::vector<double>> QuantileSummary::Query(const std::vector<double>& percentages) {
  if (!compressed_) Compress();
  if (samples_.empty()) return std::nullopt;
  int64_t max_span = std::numeric_limits<int64_t>::min();
  for (const Sample& s : samples_) max_span = std::max(max_span, s.delta + s.g);
  const double target_error = static_cast<double>(max_span / 2);
  std::vector<size_t> order(percentages.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return JavaDoubleLess(percentages[x], percentages[y]);
  });
  std::vector<double> result(percentages.size(), 0.0);
  size_t index = 0;
  int64_t min_rank = samples_[0].g;
  const size_t last = samples_.size() - 1;
  for (size_t pos : order) {
    const double q = percentages[pos];
    if (q <= relative_error_) {
      result[pos] = samples_.front().value;
      continue;
    }
    if (q >= 1 - relative_error_) {
      result[pos] = samples_.back().value;
      continue;
    }
    const int64_t rank = static_cast<int64_t>(std::ceil(q * static_cast<double>(count_)));
    size_t i = index;
    bool found = false;
    while (i < last) {
      const int64_t max_rank = min_rank + samples_[i].delta;
      if (static_cast<double>(max_rank) - target_error <= static_cast<double>(rank) &&
          static_cast<double>(rank) <= static_cast<double>(min_rank) + target_error) {
        found = true;
        break;
      }
      ++i;
      min_rank += samples_[i].g;
    }
    if (found) {
      index = i;
      result[pos] = samples_[i].value;
    } else {
      // Spark's walk ends on the largest sample with its rank reset.
      index = last;
      min_rank = 0;
      result[pos] = samples_.back().value;
    }
  }
  return result;
}

void QuantileSummary::AppendState(std::string* out) const {
  Put<int64_t>(out, count_);
  Put<uint32_t>(out, static_cast<uint32_t>(samples_.size()));
  for (const Sample& s : samples_) {
    Put<double>(out, s.value);
    Put<int64_t>(out, s.g);
    Put<int64_t>(out, s.delta);
  }
}

Status QuantileSummary::ReadState(std::string_view* in) {
  auto corrupt = [] { return Status::Corruption("malformed percentile_approx state"); };
  int64_t count;
  uint32_t n;
  if (!Get(in, &count) || !Get(in, &n) || count < 0) return corrupt();
  if (in->size() / 24 < n) return corrupt();
  std::vector<Sample> samples(n);
  for (Sample& s : samples) {
    if (!Get(in, &s.value) || !Get(in, &s.g) || !Get(in, &s.delta) || s.g < 0 || s.delta < 0) {
      return corrupt();
    }
  }
  samples_ = std::move(samples);
  count_ = count;
  head_.clear();
  compressed_ = true;
  return Status::OK();
}

}  // namespace silt::exec
