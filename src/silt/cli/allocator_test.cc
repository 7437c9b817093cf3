#include "silt/cli/allocator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#endif

namespace silt::cli {
namespace {

TEST(AllocatorTest, OneArenaOnlyForAQueryOnOneThread) {
  EXPECT_EQ(ArenaLimitFor(1), 1);
  EXPECT_EQ(ArenaLimitFor(0), 1);
  EXPECT_EQ(ArenaLimitFor(2), 0);
  EXPECT_EQ(ArenaLimitFor(8), 0);
  EXPECT_EQ(ArenaLimitFor(std::nullopt), std::thread::hardware_concurrency() <= 1 ? 1 : 0);
}

#if defined(__GLIBC__)
// The arenas glibc has made so far (malloc_info lists one <heap> each).
int CountArenas() {
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  if (out == nullptr) return -1;
  malloc_info(0, out);
  std::fclose(out);
  int count = 0;
  for (std::string_view rest(text, size); !rest.empty();) {
    const size_t at = rest.find("<heap nr=");
    if (at == std::string_view::npos) break;
    ++count;
    rest.remove_prefix(at + 1);
  }
  std::free(text);
  return count;
}

// In a child process (the arena limit is process-wide and cannot be
// undone): ConfigureArenas(parallelism), then four threads that allocate at
// once. Exits 0 when they made no new arena, 1 when they did.
int NewArenasInChild(int parallelism) {
  const pid_t pid = fork();
  if (pid == 0) {
    ConfigureArenas(parallelism);
    const int before = CountArenas();
    std::vector<std::thread> threads;
    std::atomic<int> ready{0};
    for (int idx = 0; idx < 4; ++idx) {
      threads.emplace_back([&ready] {
        ++ready;
        while (ready.load() < 4) {
        }
        void* block = std::malloc(1000);
        std::free(block);
      });
    }
    for (std::thread& thread : threads) thread.join();
    _exit(CountArenas() > before ? 1 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(AllocatorTest, ThreadsOfAOneThreadQueryMakeNoArena) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr) GTEST_SKIP() << "GLIBC_TUNABLES is set";
  EXPECT_EQ(NewArenasInChild(1), 0);
  // glibc's default: threads allocating at once get arenas of their own.
  EXPECT_EQ(NewArenasInChild(4), 1);
}
#endif

}  // namespace
}  // namespace silt::cli
