/* Offline tool (not part of the extension): the greedy search that produced RANK_WEIGHT in core.c.
 *
 * For rank 0, 1, 2, ... in turn it takes the smallest weight above the previous one such that the sums
 * over every multiset of at most seven ranks (each rank at most four times) among the ranks chosen so
 * far are all different. core.c re-verifies the property at import for the 5-, 6- and 7-card multisets.
 *
 *   cc -O2 libs/handeval/find_weights.c -o /tmp/find_weights && /tmp/find_weights   (several minutes)
 *   expected: 1 5 24 112 521 2247 9244 30823 103066 250154 667453 1526359 3453520
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t weight[13];
static uint8_t *taken;  /* one byte per possible sum */
static uint32_t *marks; /* sums marked for the candidate under test, to clear them again */
static size_t nmarks;
static int unique;

static void visit(int rank, int top, int left, uint32_t sum) {
    if (!unique) return;
    if (rank > top) {
        if (taken[sum]) {
            unique = 0;
            return;
        }
        taken[sum] = 1;
        marks[nmarks++] = sum;
        return;
    }
    for (int c = 0; c <= 4 && c <= left && unique; c++) visit(rank + 1, top, left - c, sum + (uint32_t)c * weight[rank]);
}

int main(void) {
    taken = calloc((size_t)1 << 28, 1);
    marks = malloc(sizeof(uint32_t) * 2000000);
    if (!taken || !marks) return 1;
    weight[0] = 1;
    printf("%u", weight[0]);
    for (int top = 1; top < 13; top++) {
        for (uint32_t candidate = weight[top - 1] + 1;; candidate++) {
            weight[top] = candidate;
            unique = 1;
            nmarks = 0;
            visit(0, top, 7, 0);
            for (size_t k = 0; k < nmarks; k++) taken[marks[k]] = 0;
            if (unique) break;
        }
        printf(" %u", weight[top]);
        fflush(stdout);
    }
    printf("\n");
    return 0;
}
