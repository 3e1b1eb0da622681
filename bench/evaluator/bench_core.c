/* C-core benchmark for handeval, compiled by bench/evaluator/run.py with the system cc and the same
 * flags as the extension. The core is included as a unit so the evaluator inlines into the loop, as it
 * does inside handeval's own batch and equity loops.
 *
 * usage: bench_core HANDS REPS -> lines "random7 <evals/s wall> <evals/s cpu>", "exhaustive7 <s wall> <s cpu>",
 *        "mc <samples/s wall> <samples/s cpu>"
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include "core.c"
#include "equity.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_s(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Wall time and this thread's CPU time: on a shared machine the CPU time leaves out the time other
 * tenants held the core. Both are printed; run.py reports both medians. */
typedef struct { double wall, cpu; } stamp;
static stamp now(void) { return (stamp){clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_THREAD_CPUTIME_ID)}; }
static void report(const char *name, stamp t0, double work, int as_time) {
    stamp t1 = now();
    double w = t1.wall - t0.wall, c = t1.cpu - t0.cpu;
    if (as_time) printf("%s %.6f %.6f\n", name, w, c);
    else printf("%s %.0f %.0f\n", name, work / w, work / c);
    fflush(stdout);
}

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) { return splitmix64(&state); }

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 4000000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (he_init() != 0) return 1;
    uint8_t *hands = malloc(n * 7);
    if (!hands) return 1;
    for (size_t i = 0; i < n; i++) { /* random distinct cards per hand */
        uint64_t used = 0;
        for (int k = 0; k < 7;) {
            int c = (int)(next() % 52);
            if (used >> c & 1) continue;
            used |= 1ull << c;
            hands[i * 7 + k++] = (uint8_t)c;
        }
    }
    volatile uint64_t sink = 0;
    for (int r = 0; r < reps; r++) {
        stamp t0 = now();
        uint64_t sum = 0;
        const uint8_t *p = hands;
        for (size_t i = 0; i < n; i++, p += 7) sum += (uint64_t)he_eval7(p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
        sink += sum;
        report("random7", t0, (double)n, 0);
    }
    for (int r = 0; r < (reps + 1) / 2; r++) {
        uint64_t counts[11];
        int distinct;
        stamp t0 = now();
        uint64_t total = he_enumerate7(counts, &distinct);
        if (total != 133784560ull || distinct != 4824) return 2;
        report("exhaustive7", t0, 0, 1);
    }
    uint8_t holes[4] = {51, 50, 47, 46}; /* AsAh vs KsKh, pre-flop */
    for (int r = 0; r < reps; r++) {
        he_equity_in in = {HE_HOLDEM, 2, holes, NULL, 0, NULL, 0, 5000000, (uint64_t)r + 1, 0};
        he_equity_out out;
        stamp t0 = now();
        if (he_equity(&in, &out) != 0) return 3;
        report("mc", t0, (double)out.samples, 0);
    }
    (void)sink;
    free(hands);
    return 0;
}
