// The Greenwald-Khanna quantile summary as Spark 3.5's percentile_approx
// keeps it (QuantileSummaries inside ApproximatePercentile's digest), step
// for step, so that the same values in the same order give Spark's answers:
//
//   - values go to a head buffer; at 50,000 buffered values the buffer is
//     sorted and merged into the samples (each new sample (v, g = 1,
//     delta = floor(2 eps n), delta 0 for a new minimum or maximum), and the
//     samples are compressed when there are 10,000 or more;
//   - compressing folds, from the second-largest sample down to the second,
//     a sample into its successor while g + g' + delta' < 2 eps n; the
//     smallest and largest samples stay;
//   - merging two compressed summaries interleaves their samples by value
//     (ties: the other summary's first), adds to each sample from one side
//     floor(2 eps' n') of the other side's uncertainty once the other side
//     has contributed, and compresses with the larger error;
//   - a quantile q: the smallest sample for q <= eps, the largest for
//     q >= 1 - eps, else the first sample whose rank range
//     [minRank, minRank + delta] is within (max(g + delta) / 2, integer
//     division) of ceil(q n), walking the quantiles in increasing order.
//
// eps is percentile_approx's relative error, 1 / accuracy. A summary is
// "compressed" once its head buffer is folded and compressed; Spark
// compresses before serializing, merging and answering, and so does the
// caller (Compress()).
//
// Thread safety: one summary per thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"

namespace silt::exec {

class QuantileSummary {
 public:
  struct Sample {
    double value;
    int64_t g;
    int64_t delta;
  };

  explicit QuantileSummary(double relative_error) : relative_error_(relative_error) {}

  double relative_error() const { return relative_error_; }
  // Values inserted (folded or buffered).
  int64_t count() const { return count_ + static_cast<int64_t>(head_.size()); }
  bool compressed() const { return compressed_; }

  void Insert(double value);
  // Folds the head buffer in and compresses (Spark's compress()).
  void Compress();
  // Merges `other` (compressed) into this summary, this one on the left
  // (Spark's this.merge(other)); compresses this one first when it is not.
  void Merge(const QuantileSummary& other);
  // The quantiles `percentages` (each in [0, 1]) in their order; nullopt for
  // an empty summary. Compresses first when needed (so not const).
  std::optional<std::vector<double>> Query(const std::vector<double>& percentages);

  // The state of a compressed summary: i64 count, u32 n, then n x (f64
  // value, i64 g, i64 delta). REQUIRES: compressed().
  void AppendState(std::string* out) const;
  // Reads a state written by AppendState from the front of `*in` into an
  // empty summary (advancing it). Errors: Corruption on a truncated state
  // or a negative count, g or delta.
  Status ReadState(std::string_view* in);

 private:
  void FoldHead();
  static std::vector<Sample> CompressSamples(const std::vector<Sample>& samples,
                                             double merge_threshold);

  double relative_error_;
  std::vector<Sample> samples_;
  int64_t count_ = 0;  // values in samples_
  std::vector<double> head_;
  // Spark's empty digest starts compressed.
  bool compressed_ = true;
};

}  // namespace silt::exec
