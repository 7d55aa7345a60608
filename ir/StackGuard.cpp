#include "ir/StackGuard.h"

#include <exception>
#include <pthread.h>

namespace ppc {
namespace {
thread_local const char *stackBase = nullptr;
thread_local size_t stackBudget = 0;

struct Task {
  const std::function<void()> *fn;
  size_t budget;
  std::exception_ptr error;
};

void *trampoline(void *arg) {
  auto *task = static_cast<Task *>(arg);
  char probe;
  stackBase = &probe;
  stackBudget = task->budget;
  try {
    (*task->fn)();
  } catch (...) {
    task->error = std::current_exception();
  }
  return nullptr;
}
} // namespace

void runWithLargeStack(size_t stackBytes, const std::function<void()> &fn) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's frames are several times larger (redzones around every
  // local): the same inputs get the same nesting with a stack to match.
  stackBytes *= 4;
#endif
  Task task{&fn, stackBytes - stackBytes / 8, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stackBytes);
  pthread_t thread;
  if (pthread_create(&thread, &attr, trampoline, &task) != 0) {
    pthread_attr_destroy(&attr);
    fn(); // no thread available: run here, unguarded but still bounded by the OS
    return;
  }
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
  if (task.error)
    std::rethrow_exception(task.error);
}

bool stackExhausted() {
  if (!stackBase)
    return false;
  char probe;
  return static_cast<size_t>(stackBase - &probe) > stackBudget;
}

} // namespace ppc
