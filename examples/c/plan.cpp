// Plans the activations of a small training step with memplan's C API from
// C++: RAII owners for the handles, errors as exceptions, and a solve in a
// worker thread that the main thread may cancel. Prints the plan as CSV
// (id,lower,upper,size,offset; inclusive lifetimes) on stdout and a summary
// on stderr. Build and run: examples/c/run.sh
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "memplan.h"

namespace {

// Throws the last error when `status` is not MEMPLAN_OK.
void check(memplan_status status, const char *what) {
    if (status == MEMPLAN_OK) return;
    std::string message(512, '\0');
    size_t length = 0;
    memplan_last_error(&message[0], message.size(), &length);
    message.resize(length < message.size() ? length : message.size() - 1);
    throw std::runtime_error(std::string(what) + " failed (status " + std::to_string(status) +
                             "): " + message);
}

template <class T, memplan_status (*Free)(T *)>
struct Deleter {
    void operator()(T *p) const { Free(p); }
};
using Problem = std::unique_ptr<memplan_problem, Deleter<memplan_problem, memplan_problem_free>>;
using Options = std::unique_ptr<memplan_options, Deleter<memplan_options, memplan_options_free>>;
using Solution =
    std::unique_ptr<memplan_solution, Deleter<memplan_solution, memplan_solution_free>>;
using Cancel = std::unique_ptr<memplan_cancel, Deleter<memplan_cancel, memplan_cancel_free>>;

struct Buffers {
    std::vector<uint64_t> sizes, starts, ends;
    void add(uint64_t size, uint64_t first, uint64_t last) {
        sizes.push_back(size);
        starts.push_back(first);
        ends.push_back(last);
    }
};

// A forward and backward pass over `layers` layers, inclusive [first, last]
// steps: activation i lives from forward step i to backward step
// 2 * layers - 1 - i; each step also has a short-lived workspace.
Buffers training_step(uint64_t layers) {
    Buffers b;
    const uint64_t last_step = 2 * layers - 1;
    for (uint64_t i = 0; i < layers; i++) {
        const uint64_t activation = 4096 * (1 + (i * 7) % 5);
        b.add(activation, i, last_step - i);
        b.add(1024 * (1 + i % 3), i, i);                          // forward workspace
        b.add(2048 * (1 + (i * 5) % 4), last_step - i, last_step - i);  // gradient
    }
    return b;
}

}  // namespace

int main() {
    try {
        const Buffers buffers = training_step(24);
        const size_t n = buffers.sizes.size();

        memplan_problem *p = nullptr;
        check(memplan_problem_new(MEMPLAN_LIFETIMES_INCLUSIVE, &p), "memplan_problem_new");
        Problem problem(p);
        check(memplan_problem_add_buffers(problem.get(), n, buffers.sizes.data(),
                                          buffers.starts.data(), buffers.ends.data()),
              "memplan_problem_add_buffers");
        for (size_t i = 0; i < n; i++)
            check(memplan_problem_set_alignment(problem.get(), i, 256),
                  "memplan_problem_set_alignment");

        memplan_options *o = nullptr;
        check(memplan_options_new(&o), "memplan_options_new");
        Options options(o);
        check(memplan_options_set_solver(options.get(), "auto"), "memplan_options_set_solver");
        check(memplan_options_set_time_limit(options.get(), 10.0),
              "memplan_options_set_time_limit");
        memplan_cancel *c = nullptr;
        check(memplan_cancel_new(&c), "memplan_cancel_new");
        Cancel cancel(c);
        check(memplan_options_set_cancel(options.get(), cancel.get()),
              "memplan_options_set_cancel");

        // Solve in a worker thread; give it two seconds, then cancel: it
        // returns its best plan so far.
        auto solving = std::async(std::launch::async, [&]() {
            memplan_solution *s = nullptr;
            check(memplan_solve(problem.get(), options.get(), &s), "memplan_solve");
            return Solution(s);
        });
        if (solving.wait_for(std::chrono::seconds(2)) != std::future_status::ready)
            check(memplan_cancel_raise(cancel.get()), "memplan_cancel_raise");
        const Solution solution = solving.get();

        std::vector<uint64_t> offsets(n);
        uint64_t makespan = 0, max_load = 0;
        bool optimal = false;
        memplan_stopped stopped = MEMPLAN_STOPPED_NONE;
        char solver[MEMPLAN_SOLVER_NAME_CAPACITY];
        size_t solver_length = 0;
        check(memplan_solution_offsets(solution.get(), offsets.data(), offsets.size()),
              "memplan_solution_offsets");
        check(memplan_solution_makespan(solution.get(), &makespan), "memplan_solution_makespan");
        check(memplan_solution_max_load(solution.get(), &max_load), "memplan_solution_max_load");
        check(memplan_solution_optimal(solution.get(), &optimal), "memplan_solution_optimal");
        check(memplan_solution_stopped(solution.get(), &stopped), "memplan_solution_stopped");
        check(memplan_solution_solver(solution.get(), solver, sizeof solver, &solver_length),
              "memplan_solution_solver");

        std::printf("id,lower,upper,size,offset\n");
        for (size_t i = 0; i < n; i++)
            std::printf("b%zu,%llu,%llu,%llu,%llu\n", i,
                        static_cast<unsigned long long>(buffers.starts[i]),
                        static_cast<unsigned long long>(buffers.ends[i]),
                        static_cast<unsigned long long>(buffers.sizes[i]),
                        static_cast<unsigned long long>(offsets[i]));
        std::fprintf(stderr, "%zu buffers, makespan %llu, max load %llu, optimal %s, solver %s%s\n",
                     n, static_cast<unsigned long long>(makespan),
                     static_cast<unsigned long long>(max_load), optimal ? "yes" : "no", solver,
                     stopped == MEMPLAN_STOPPED_CANCELLED ? ", cancelled" : "");
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "plan: %s\n", e.what());
        return 1;
    }
}
