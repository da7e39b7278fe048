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

    memplan_solution_free(solution);
    memplan_options_free(options);
    memplan_problem_free(problem);
    return 0;
}
