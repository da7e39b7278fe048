/* Plans a small problem with memplan's C API and prints the plan as CSV
 * (id,lower,upper,size,alignment,offset) on stdout, a summary on stderr.
 * The buffers are those of problem.csv beside this file: run.sh feeds both
 * to `memplan validate`. Build and run: examples/c/run.sh */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "memplan.h"

/* Prints the last error and exits when `status` is not MEMPLAN_OK. */
static void check(memplan_status status, const char *what) {
    if (status == MEMPLAN_OK) return;
    char message[512];
    size_t length = 0;
    memplan_last_error(message, sizeof message, &length);
    fprintf(stderr, "plan: %s failed (status %d): %s\n", what, (int)status, message);
    exit(1);
}

#define N 8

int main(void) {
    /* Lifetimes are half-open [start, end): buffer 1 lives at times 0, 1, 2. */
    const uint64_t sizes[N] = {512, 1024, 2048, 2048, 768, 1024, 512, 256};
    const uint64_t starts[N] = {0, 0, 1, 2, 3, 4, 5, 6};
    const uint64_t ends[N] = {8, 3, 4, 5, 5, 6, 7, 8};
    const uint64_t alignments[N] = {1, 64, 64, 64, 256, 1, 1, 1};

    memplan_problem *problem = NULL;
    check(memplan_problem_new(MEMPLAN_LIFETIMES_HALF_OPEN, &problem), "memplan_problem_new");
    check(memplan_problem_add_buffers(problem, N, sizes, starts, ends), "memplan_problem_add_buffers");
    for (size_t i = 0; i < N; i++)
        check(memplan_problem_set_alignment(problem, i, alignments[i]), "memplan_problem_set_alignment");
    /* Buffer 0 (e.g. weights placed by someone else) stays at offset 0. */
    check(memplan_problem_set_fixed_offset(problem, 0, 0), "memplan_problem_set_fixed_offset");

    memplan_options *options = NULL;
    check(memplan_options_new(&options), "memplan_options_new");
    check(memplan_options_set_solver(options, "auto"), "memplan_options_set_solver");
    check(memplan_options_set_time_limit(options, 1.0), "memplan_options_set_time_limit");

    memplan_solution *solution = NULL;
    check(memplan_solve(problem, options, &solution), "memplan_solve");

    uint64_t offsets[N];
    uint64_t makespan = 0, max_load = 0, lower_bound = 0;
    bool optimal = false;
    memplan_stopped stopped = MEMPLAN_STOPPED_NONE;
    char solver[MEMPLAN_SOLVER_NAME_CAPACITY];
    size_t solver_length = 0;
    check(memplan_solution_offsets(solution, offsets, N), "memplan_solution_offsets");
    check(memplan_solution_makespan(solution, &makespan), "memplan_solution_makespan");
    check(memplan_solution_max_load(solution, &max_load), "memplan_solution_max_load");
    check(memplan_solution_lower_bound(solution, &lower_bound), "memplan_solution_lower_bound");
    check(memplan_solution_optimal(solution, &optimal), "memplan_solution_optimal");
    check(memplan_solution_stopped(solution, &stopped), "memplan_solution_stopped");
    check(memplan_solution_solver(solution, solver, sizeof solver, &solver_length),
          "memplan_solution_solver");

    /* The library's own validator agrees (solve checked it already). */
    check(memplan_validate(problem, offsets, N), "memplan_validate");

    printf("id,lower,upper,size,alignment,offset\n");
    for (size_t i = 0; i < N; i++)
        printf("%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", i, starts[i],
               ends[i], sizes[i], alignments[i], offsets[i]);
    fprintf(stderr,
            "makespan %" PRIu64 ", max load %" PRIu64 ", lower bound %" PRIu64
            ", optimal %s, solver %s, stopped %s\n",
            makespan, max_load, lower_bound, optimal ? "yes" : "no", solver,
            stopped == MEMPLAN_STOPPED_NONE        ? "no"
            : stopped == MEMPLAN_STOPPED_TIME_LIMIT ? "at the time limit"
                                                    : "cancelled");

    /* Replanning: the plan's offsets as hints, kept by --stable within the
     * same makespan (every one of them). */
    for (size_t i = 0; i < N; i++)
        check(memplan_problem_set_hint(problem, i, offsets[i]), "memplan_problem_set_hint");
    check(memplan_options_set_stable(options, 1, 1, makespan), "memplan_options_set_stable");
    memplan_solution *stable = NULL;
    check(memplan_solve(problem, options, &stable), "memplan_solve (stable)");
    size_t hints = 0, kept = 0;
    check(memplan_solution_hints_kept(stable, &hints, &kept), "memplan_solution_hints_kept");
    fprintf(stderr, "replanned with the offsets as hints: %zu of %zu kept\n", kept, hints);
    if (kept != N) {
        fprintf(stderr, "expected every hint kept\n");
        return 1;
    }

    /* Two memories: a fast one of half the makespan, a slow one. */
    memplan_pools *pools = NULL;
    check(memplan_pools_new(&pools), "memplan_pools_new");
    check(memplan_pools_add(pools, "fast", makespan / 2, 64), "memplan_pools_add");
    check(memplan_pools_add(pools, "slow", 1u << 20, 64), "memplan_pools_add");
    /* The fixed buffer 0 must say which memory it is in: the slow one. */
    check(memplan_problem_set_pool(problem, 0, 1), "memplan_problem_set_pool");
    memplan_pool_solution *pooled = NULL;
    check(memplan_solve_pools(problem, pools, options, &pooled), "memplan_solve_pools");
    uint32_t pool_of[N];
    uint64_t pool_offsets[N];
    check(memplan_pool_solution_assignment(pooled, pool_of, pool_offsets, N),
          "memplan_pool_solution_assignment");
    for (size_t p = 0; p < 2; p++) {
        size_t count = 0;
        uint64_t used = 0;
        check(memplan_pool_solution_usage(pooled, p, &count, &used), "memplan_pool_solution_usage");
        fprintf(stderr, "pool %s: %zu buffers, %" PRIu64 " bytes used\n", p == 0 ? "fast" : "slow",
                count, used);
    }
    uint64_t spill = 0;
    check(memplan_pool_solution_spill(pooled, 1, &spill), "memplan_pool_solution_spill");
    fprintf(stderr, "bytes x time outside the fast pool: %" PRIu64 "\n", spill);

    memplan_pool_solution_free(pooled);
    memplan_pools_free(pools);
    memplan_solution_free(stable);
    memplan_solution_free(solution);
    memplan_options_free(options);
    memplan_problem_free(problem);
    return 0;
}
