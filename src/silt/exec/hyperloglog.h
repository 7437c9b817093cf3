// HyperLogLog++ as Spark 3.5's approx_count_distinct computes it
// (HyperLogLogPlusPlusHelper), so estimates equal Spark's to the unit:
//
//   - precision p = ceil(2 log2(1.106 / relativeSD)), at least 4; m = 2^p
//     registers of 6 bits;
//   - a value's 64-bit hash x (Spark's xxhash64 with seed 42, spark_hash.h)
//     picks register x >> (64 - p) and offers it the number of leading zeros
//     of (x << p) | 2^(p-1), plus one; a register keeps the largest offer;
//   - the estimate: the raw HyperLogLog estimate E = alpha_m m^2 / sum 2^-M;
//     linear counting m ln(m / V) (V: empty registers) when some register is
//     empty and that count is at most the precision's threshold (p < 19) or
//     E <= 2.5 m; else E, less the empirical bias of the HLL++ paper
//     (the mean bias of the 6 nearest raw estimates of its table) when p < 19
//     and E < 5 m; rounded half up.
//
// The registers are the whole state: merging takes each register's maximum,
// so the estimate does not depend on how rows were split into batches.
//
// Thread safety: one sketch per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"

namespace silt::exec {

class HyperLogLogPlusPlus {
 public:
  // The precision for `relative_sd`. Errors: InvalidArgument with Spark's
  // message when it gives fewer than 4 bits (relativeSD above ~0.39) or is
  // not a positive number.
  static Result<int> PrecisionFor(double relative_sd);

  // An empty sketch of precision p (4 <= p <= 25, as PrecisionFor gives for
  // any relativeSD Spark can use in memory).
  explicit HyperLogLogPlusPlus(int p);

  int precision() const { return p_; }
  // Offers the value whose Spark xxhash64 is `hash`.
  void Add(uint64_t hash);
  // Takes the larger register of each pair. REQUIRES: same precision.
  void Merge(const HyperLogLogPlusPlus& other);
  // The cardinality estimate, as Spark's.
  int64_t Estimate() const;

  // The registers, one byte each (m bytes), and back. Decode fails
  // (Corruption) on a wrong length or a register above 64 - p + 1.
  void AppendRegisters(std::string* out) const;
  Status MergeRegisters(std::string_view bytes);

 private:
  double EstimateBias(double e) const;

  int p_;
  std::vector<uint8_t> registers_;
};

}  // namespace silt::exec
