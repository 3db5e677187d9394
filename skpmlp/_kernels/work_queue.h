// How the native kernels share a call's models among their threads.
//
// The items of a call (models, or early-stopping groups of models) are
// independent, and consecutive items are neighbours in memory: the models
// of a group share each layer's tensor, one model's weights right after
// the last one's, and so do their optimizer states. Handed out one at a
// time, two threads would work on neighbours side by side for the whole
// call, each writing the cache lines where its model's weights end and the
// other's begin at every step. On a 2-core Intel Xeon (Emerald Rapids)
// that cost 8 % of the narrow population's step (benchmarks/step.py
// --population narrow, 2 threads, torch's own threads at 1: 0.76-0.78 ->
// 0.69-0.74 ms a step) and 5-7 % of the small sets' Adam searches
// (vs_gridsearch.py's grid on iris, wine, penguins, diabetes and breast
// cancer; docs/user_guide/performance.rst, "Two threads").
//
// WorkQueue hands out runs of consecutive items instead, each a
// 1 / (2 n_threads) share of the items left (guided self-scheduling): the
// first runs are long and far apart, so threads meet at a boundary only
// where one run ends, and the last runs are single items, so the threads
// still finish together (items of different sizes, models stopping early).
// Which thread trains which model never changes a result: every item's
// arithmetic is its own.

#ifndef SKPMLP_WORK_QUEUE_H
#define SKPMLP_WORK_QUEUE_H

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace skp {

class WorkQueue {
  public:
    WorkQueue(int n_items, int n_threads) : n_items_(n_items), shares_(2 * std::max(1, n_threads)) {}

    // The next run of items, [start, end); false once every item is taken.
    bool take(int& start, int& end) {
        int first = next_.load();
        while (first < n_items_) {
            const int last = first + std::max(1, (n_items_ - first) / shares_);
            if (next_.compare_exchange_weak(first, last)) {  // else first is the new value: try again
                start = first, end = last;
                return true;
            }
        }
        return false;
    }

  private:
    std::atomic<int> next_{0};
    const int n_items_, shares_;
};

// fn(i, state) for every item i in [0, n_items) on n_threads threads (no
// more threads than items; the calling thread is one of them), the items
// taken from a WorkQueue. Each thread makes its own State when it starts and
// destroys it after its last item (scratch buffers, a floating-point mode
// it holds while it works). Returns when every item is done.
template <class State, class Fn> void for_each_item_on_threads(int n_items, int n_threads, Fn fn) {
    n_threads = std::max(1, std::min(n_threads, n_items));
    WorkQueue queue(n_items, n_threads);
    const auto worker = [&]() {
        State state;
        for (int start, end; queue.take(start, end);)
            for (int i = start; i < end; ++i) fn(i, state);
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < n_threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& thread : pool) thread.join();
}

}  // namespace skp

#endif  // SKPMLP_WORK_QUEUE_H
