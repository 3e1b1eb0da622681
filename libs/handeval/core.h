/* handeval core: poker hand evaluation in plain C (no Python.h).
 *
 * Card code = 4 * rank_index + suit_index (deuce = 0 ... ace = 12; clubs, diamonds, hearts, spades = 0..3).
 * Standard strengths (Hold'em / Omaha, 5..7 cards) run 1..7462, higher wins, equal exactly on a tie.
 * Three-card strengths run 1..741 on their own scale.
 */
#ifndef HANDEVAL_CORE_H
#define HANDEVAL_CORE_H

#include <stddef.h>
#include <stdint.h>

enum { HE_HOLDEM = 1, HE_OMAHA = 2, HE_THREE_CARD = 3 };

/* Category numbers match the proto HandCategory / Python Category enum. */
enum {
    HE_HIGH_CARD = 1, HE_PAIR = 2, HE_TWO_PAIR = 3, HE_THREE_OF_A_KIND = 4, HE_STRAIGHT = 5,
    HE_FLUSH = 6, HE_FULL_HOUSE = 7, HE_FOUR_OF_A_KIND = 8, HE_STRAIGHT_FLUSH = 9, HE_ROYAL_FLUSH = 10
};

#define HE_NUM_STRENGTHS 7462
#define HE_NUM_STRENGTHS3 741

/* Batch validation failures (he_batch return codes). */
enum { HE_BATCH_OK = 0, HE_BATCH_UNKNOWN_CARD = 1, HE_BATCH_DUPLICATE_CARD = 2, HE_BATCH_BAD_ARGS = 3 };

/* Build the lookup tables; idempotent. Returns 0, or -1 if a table self-check failed. */
int he_init(void);

/* Strength of 5, 6 or 7 distinct valid cards (no checks). */
int he_eval_n(const uint8_t *cards, int n);
int he_eval7(int c0, int c1, int c2, int c3, int c4, int c5, int c6);
/* Omaha: exactly two of the four hole cards and three of the 3..5 board cards (NK-1.4). */
int he_eval_omaha(const uint8_t hole[4], const uint8_t *board, int nboard);
/* Three-card poker (TCP-4.1): straight beats flush, A-2-3 lowest straight. */
int he_eval_three(const uint8_t cards[3]);

/* Category (HE_* above) of a strength under a rule; 0 for an out-of-range strength. */
int he_category(int rule, int strength);

/* Strength plus the best cards (5, or 3 for three-card) in canonical strongest-first order.
 * The result depends only on the set of cards, never on their order. Returns the strength. */
int he_best_holdem(const uint8_t *cards, int n, uint8_t best[5]);
int he_best_omaha(const uint8_t hole[4], const uint8_t *board, int nboard, uint8_t best[5]);
int he_best_three(const uint8_t cards[3], uint8_t best[3]);

/* Evaluate nhands hands of cards_per_hand bytes each. Validates every byte (< 52) and distinctness
 * within each hand; stops at the first bad hand, sets *bad_index and returns HE_BATCH_UNKNOWN_CARD or
 * HE_BATCH_DUPLICATE_CARD. cats may be NULL. */
int he_batch(int rule, int cards_per_hand, const uint8_t *packed, size_t nhands, uint32_t *strengths,
             uint8_t *cats, size_t *bad_index);

/* Threads for one large batch (he_batch splits batches of at least HE_BATCH_THREAD_MIN_HANDS hands);
 * 1 = single-threaded (the default until the caller sets it). */
#define HE_MAX_BATCH_THREADS 8
#define HE_BATCH_THREAD_MIN_HANDS 65536
void he_set_batch_threads(int n);
/* Tests: force the baseline batch loop (1) or pick by CPU again (0); returns 1 if the x86-64-v3 loop is in use. */
int he_batch_use_baseline(int baseline);
int he_get_batch_threads(void);

/* Exhaustive pass over all C(52,7) seven-card hands: counts[c] per category (index 1..10), and the
 * number of distinct strengths seen. Returns the number of hands. */
uint64_t he_enumerate7(uint64_t counts[11], int *distinct);
/* Same over all C(52,5) five-card hands. */
uint64_t he_enumerate5(uint64_t counts[11], int *distinct);

/* ---- internal fast path shared with equity.c ---- */
extern uint64_t he_card_key[256];  /* rank weight (low 32 bits) + suit counter increment (high bits) */
extern uint64_t he_card_bit[256];  /* bit 16 * suit + rank */
#define HE_SUIT_BASE (0x3333ull << 32) /* each 4-bit suit counter starts at 3: five of a suit sets bit 3 */
#define HE_HASH_SHIFT 11
#define HE_HASH_MASK ((1u << HE_HASH_SHIFT) - 1)
extern uint32_t he_hash_offset[];
extern uint16_t *he_rank_table;
extern uint16_t he_flush_table[8192];
int he_eval_key(uint64_t key, uint64_t bits);

/* Strength from a summed key (HE_SUIT_BASE + card keys) and the OR of the card bits. */
static inline int he_eval_key_inline(uint64_t key, uint64_t bits) {
    uint32_t flush = (uint32_t)(key >> 32) & 0x8888u;
    if (__builtin_expect(flush != 0, 0)) {
        int shift = __builtin_ctz(flush) * 4 - 12; /* flag bit 4s+3 -> suit s -> mask at bit 16s */
        return he_flush_table[(bits >> shift) & 0x1fff];
    }
    uint32_t rk = (uint32_t)key;
    return he_rank_table[(rk & HE_HASH_MASK) + he_hash_offset[rk >> HE_HASH_SHIFT]];
}

/* ---- equity (equity.c) ---- */
#define HE_MAX_EQUITY_HANDS 10
#define HE_TIE_UNIT 2520u /* lcm(1..10): a k-way tie adds 2520 / k, so equity shares stay integral */

typedef struct {
    int rule;              /* HE_HOLDEM or HE_OMAHA */
    int nhands;            /* 2..10 */
    const uint8_t *holes;  /* nhands * (2 or 4) cards */
    const uint8_t *board;  /* 0, 3, 4 or 5 cards */
    int nboard;
    const uint8_t *dead;
    int ndead;
    uint64_t iterations;   /* Monte Carlo samples when not exact */
    uint64_t seed;         /* PRNG seed (non-zero chosen by the caller) */
    uint64_t exact_limit;  /* enumerate exactly when the number of boards <= this */
} he_equity_in;

typedef struct {
    uint64_t wins[HE_MAX_EQUITY_HANDS];
    uint64_t ties[HE_MAX_EQUITY_HANDS];
    uint64_t shares[HE_MAX_EQUITY_HANDS]; /* in units of 1 / HE_TIE_UNIT of a pot */
    uint64_t samples;
    int exact;
} he_equity_out;

/* Returns 0, or -1 on invalid input (caller validates first; this only guards against crashes). */
int he_equity(const he_equity_in *in, he_equity_out *out);
/* Equity of one hand against `opponents` hands dealt uniformly at random from the unseen cards, the board
 * completed at random too: Monte Carlo over `iterations` deals (xoshiro256** seeded like he_equity). */
typedef struct {
    int rule;              /* HE_HOLDEM or HE_OMAHA */
    const uint8_t *hole;   /* 2 (Hold'em) or 4 (Omaha) cards */
    int nhole;
    const uint8_t *board;  /* 0, 3, 4 or 5 cards */
    int nboard;
    int opponents;         /* 1..HE_MAX_EQUITY_HANDS - 1 */
    uint64_t iterations;   /* deals, >= 1 */
    uint64_t seed;         /* PRNG seed (non-zero chosen by the caller) */
} he_vs_random_in;

typedef struct {
    uint64_t wins;    /* deals the hand won alone */
    uint64_t ties;    /* deals it shared the best hand */
    uint64_t shares;  /* in units of 1 / HE_TIE_UNIT of a pot */
    uint64_t samples;
} he_vs_random_out;

/* Returns 0, or -1 on invalid input (caller validates first; this only guards against crashes). */
int he_equity_vs_random(const he_vs_random_in *in, he_vs_random_out *out);
/* Number of ways to choose k of n (saturating at UINT64_MAX). */
uint64_t he_choose(int n, int k);

#endif
