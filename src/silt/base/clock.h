// Clock: the source of wall time and monotonic time for everything that
// waits, stamps or measures. Injected so tests control time without sleeping.
//
// Thread safety: implementations must be safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>

namespace silt {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the Unix epoch (wall clock, UTC).
  virtual int64_t NowMicros() const = 0;
  // Monotonic microseconds from an arbitrary origin; for durations.
  virtual int64_t MonotonicMicros() const = 0;
  // Blocks for `micros` (a manual clock advances instead).
  virtual void SleepMicros(int64_t micros) = 0;
};

// The process's real clock. Lives for the whole program.
Clock& SystemClock();

// A clock that only moves when told to; SleepMicros advances it.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_micros) : now_(start_micros) {}
  int64_t NowMicros() const override { return now_; }
  int64_t MonotonicMicros() const override { return now_; }
  void SleepMicros(int64_t micros) override { now_ += micros; }
  void Advance(int64_t micros) { now_ += micros; }

 private:
  int64_t now_;
};

// "2026-06-22T08:16:00.123Z" from microseconds since the epoch.
std::string FormatTimestampMillisUtc(int64_t micros);

}  // namespace silt
