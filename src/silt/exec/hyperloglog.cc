#include "silt/exec/hyperloglog.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "silt/exec/hll_tables_internal.h"

namespace silt::exec {

namespace {

// The number of nearest raw estimates whose biases are averaged (the paper's
// k-nearest-neighbour interpolation).
constexpr size_t kBiasNeighbours = 6;

// java.util.Arrays.binarySearch's probe sequence, step for step: the found
// index, or the insertion point when e is absent. Two tables are not quite
// sorted (precision 5 has 128.3464 before 128.3462), so only the same probes
// land on the same index as Spark's.
size_t JavaBinarySearch(const double* a, size_t n, double key) {
  int64_t low = 0;
  int64_t high = static_cast<int64_t>(n) - 1;
  while (low <= high) {
    const int64_t mid = static_cast<int64_t>(static_cast<uint64_t>(low + high) >> 1);
    const double v = a[mid];
    if (v < key) {
      low = mid + 1;
    } else if (v > key) {
      high = mid - 1;
    } else {
      const int64_t vb = std::bit_cast<int64_t>(v);
      const int64_t kb = std::bit_cast<int64_t>(key);
      if (vb == kb) return static_cast<size_t>(mid);
      if (vb < kb) {
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
  }
  return static_cast<size_t>(low);
}

}  // namespace

Result<int> HyperLogLogPlusPlus::PrecisionFor(double relative_sd) {
  const double bits = std::ceil(2.0 * std::log(1.106 / relative_sd) / std::log(2.0));
  // NaN (relativeSD <= 0) fails too, as Spark's NaN.toInt = 0 does.
  if (!(bits >= 4)) {
    return Status::InvalidArgument(
        "[FAILED_FUNCTION_CALL] Failed preparing of the function `approx_count_distinct` for "
        "call: requirement failed: HLL++ requires at least 4 bits for addressing. Use a lower "
        "error, at most 39% (relativeSD = ",
        relative_sd, ")");
  }
  if (bits > 25) {
    // 2^25 registers per group (32 MiB): Spark would need as much per group
    // and buffer; silt refuses rather than exhaust memory.
    return Status::InvalidArgument("the relativeSD of approx_count_distinct is too small (",
                                   relative_sd, " needs 2^", bits,
                                   " registers per group); use at least 0.0002");
  }
  return static_cast<int>(bits);
}

HyperLogLogPlusPlus::HyperLogLogPlusPlus(int p) : p_(p), registers_(size_t{1} << p, 0) {}

void HyperLogLogPlusPlus::Add(uint64_t hash) {
  const size_t idx = static_cast<size_t>(hash >> (64 - p_));
  const uint64_t w = (hash << p_) | (uint64_t{1} << (p_ - 1));
  const uint8_t rank = static_cast<uint8_t>(std::countl_zero(w) + 1);
  if (rank > registers_[idx]) registers_[idx] = rank;
}

void HyperLogLogPlusPlus::Merge(const HyperLogLogPlusPlus& other) {
  for (size_t i = 0; i < registers_.size(); ++i) {
    registers_[i] = std::max(registers_[i], other.registers_[i]);
  }
}

double HyperLogLogPlusPlus::EstimateBias(double e) const {
  const internal::HllBiasTable& table = internal::kHllBiasTables[p_ - 4];
  const double* estimates = table.raw_estimates;
  const size_t n = table.size;
  const size_t nearest = JavaBinarySearch(estimates, n, e);
  auto distance = [&](size_t i) {
    const double diff = e - estimates[i];
    return diff * diff;
  };
  size_t low = nearest + 1 >= kBiasNeighbours ? nearest + 1 - kBiasNeighbours : 0;
  size_t high = std::min(low + kBiasNeighbours, n);
  // Slide the window up while its next estimate is nearer than its first.
  while (high < n && distance(high) < distance(low)) {
    ++low;
    ++high;
  }
  double sum = 0.0;
  for (size_t i = low; i < high; ++i) sum += table.biases[i];
  return sum / static_cast<double>(high - low);
}

int64_t HyperLogLogPlusPlus::Estimate() const {
  const size_t m_count = registers_.size();
  const double m = static_cast<double>(m_count);
  double z_inverse = 0.0;
  double zeros = 0.0;
  for (uint8_t r : registers_) {
    z_inverse += 1.0 / static_cast<double>(uint64_t{1} << r);
    if (r == 0) zeros += 1.0;
  }
  double alpha_m2;
  switch (p_) {
    case 4: alpha_m2 = 0.673 * m * m; break;
    case 5: alpha_m2 = 0.697 * m * m; break;
    case 6: alpha_m2 = 0.709 * m * m; break;
    default: alpha_m2 = (0.7213 / (1.0 + 1.079 / m)) * m * m; break;
  }
  const double e = alpha_m2 / z_inverse;
  auto bias_corrected = [&] { return p_ < 19 && e < 5.0 * m ? e - EstimateBias(e) : e; };
  double estimate;
  if (zeros > 0) {
    const double h = m * std::log(m / zeros);
    estimate =
        (p_ < 19 && h <= internal::kHllThresholds[p_ - 4]) || e <= 2.5 * m ? h : bias_corrected();
  } else {
    estimate = bias_corrected();
  }
  // Java's Math.round: floor(x + 0.5).
  return static_cast<int64_t>(std::floor(estimate + 0.5));
}

void HyperLogLogPlusPlus::AppendRegisters(std::string* out) const {
  out->append(reinterpret_cast<const char*>(registers_.data()), registers_.size());
}

Status HyperLogLogPlusPlus::MergeRegisters(std::string_view bytes) {
  if (bytes.size() != registers_.size()) {
    return Status::Corruption("approx_count_distinct state has ", bytes.size(),
                              " registers where precision ", p_, " has ", registers_.size());
  }
  const uint8_t limit = static_cast<uint8_t>(64 - p_ + 1);
  for (size_t i = 0; i < bytes.size(); ++i) {
    const uint8_t r = static_cast<uint8_t>(bytes[i]);
    if (r > limit) {
      return Status::Corruption("approx_count_distinct state has register ", i, " = ", r,
                                ", above ", limit);
    }
    registers_[i] = std::max(registers_[i], r);
  }
  return Status::OK();
}

}  // namespace silt::exec
