/* handeval equity: exact enumeration of the remaining boards, or seeded Monte Carlo. Pure C.
 *
 * Per board every hand's strength is computed; the sole best hand scores a win, a k-way shared best
 * scores a tie for each of the k hands and HE_TIE_UNIT / k equity units (integral: 2520 = lcm(1..10)).
 * Monte Carlo draws the missing board cards without replacement (partial Fisher-Yates over the
 * remaining deck) from xoshiro256** seeded through splitmix64.
 */
#include "core.h"

#include <string.h>

uint64_t he_choose(int n, int k) {
    if (k < 0 || n < 0 || k > n) return 0;
    uint64_t r = 1;
    for (int i = 1; i <= k; i++) {
        /* r * (n - k + i) / i stays exact: r is C(n-k+i-1, i-1) */
        if (r > UINT64_MAX / (uint64_t)(n - k + i)) return UINT64_MAX;
        r = r * (uint64_t)(n - k + i) / (uint64_t)i;
    }
    return r;
}

typedef struct { uint64_t s[4]; } rng_t;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t xoshiro(rng_t *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform integer in [0, n) (Lemire's multiply-shift with rejection: no modulo bias). */
static inline uint32_t bounded(rng_t *r, uint32_t n) {
    uint64_t m = (xoshiro(r) >> 32) * (uint64_t)n;
    uint32_t low = (uint32_t)m;
    if (__builtin_expect(low < n, 0)) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (xoshiro(r) >> 32) * (uint64_t)n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

typedef struct {
    int rule, nhands, need;
    uint64_t hand_key[HE_MAX_EQUITY_HANDS], hand_bits[HE_MAX_EQUITY_HANDS]; /* Hold'em: hole cards */
    uint8_t holes[HE_MAX_EQUITY_HANDS][4];                                   /* Omaha */
    uint64_t pair_key[HE_MAX_EQUITY_HANDS][6], pair_bits[HE_MAX_EQUITY_HANDS][6]; /* Omaha hole pairs */
    uint8_t board[5];
    int nboard;
    he_equity_out *out;
} ctx_t;

/* Score one complete board (key/bits hold the board cards for Hold'em; board[] for Omaha). */
static inline void score(ctx_t *c, uint64_t key, uint64_t bits) {
    int s[HE_MAX_EQUITY_HANDS], best = 0, nbest = 0;
    if (c->rule == HE_HOLDEM) {
        for (int h = 0; h < c->nhands; h++) s[h] = he_eval_key_inline(key + c->hand_key[h], bits | c->hand_bits[h]);
    } else {
        /* NK-1.4: the ten board triples once per board, then 6 x 10 sums per hand */
        uint64_t tk[10], tb[10];
        int n = 0;
        const uint8_t *b = c->board;
        for (int i = 0; i < 5; i++)
            for (int j = i + 1; j < 5; j++)
                for (int k = j + 1; k < 5; k++) {
                    tk[n] = he_card_key[b[i]] + he_card_key[b[j]] + he_card_key[b[k]];
                    tb[n++] = he_card_bit[b[i]] | he_card_bit[b[j]] | he_card_bit[b[k]];
                }
        for (int h = 0; h < c->nhands; h++) {
            int top = 0;
            for (int p = 0; p < 6; p++)
                for (int t = 0; t < 10; t++) {
                    int v = he_eval_key_inline(c->pair_key[h][p] + tk[t], c->pair_bits[h][p] | tb[t]);
                    top = v > top ? v : top;
                }
            s[h] = top;
        }
    }
    for (int h = 0; h < c->nhands; h++) {
        if (s[h] > best) { best = s[h]; nbest = 1; }
        else if (s[h] == best) nbest++;
    }
    he_equity_out *o = c->out;
    if (nbest == 1) {
        for (int h = 0; h < c->nhands; h++)
            if (s[h] == best) { o->wins[h]++; o->shares[h] += HE_TIE_UNIT; }
    } else {
        uint64_t part = HE_TIE_UNIT / (uint64_t)nbest;
        for (int h = 0; h < c->nhands; h++)
            if (s[h] == best) { o->ties[h]++; o->shares[h] += part; }
    }
}

static void enumerate(ctx_t *c, const uint8_t *deck, int ndeck, int start, int depth, uint64_t key,
                      uint64_t bits) {
    if (depth == c->need) {
        score(c, key, bits);
        c->out->samples++;
        return;
    }
    for (int i = start; i <= ndeck - (c->need - depth); i++) {
        c->board[c->nboard + depth] = deck[i];
        enumerate(c, deck, ndeck, i + 1, depth + 1, key + he_card_key[deck[i]], bits | he_card_bit[deck[i]]);
    }
}

int he_equity(const he_equity_in *in, he_equity_out *out) {
    memset(out, 0, sizeof *out);
    int per = in->rule == HE_HOLDEM ? 2 : in->rule == HE_OMAHA ? 4 : 0;
    if (!per || in->nhands < 2 || in->nhands > HE_MAX_EQUITY_HANDS) return -1;
    if (in->nboard < 0 || in->nboard > 5 || in->nboard == 1 || in->nboard == 2 || in->ndead < 0) return -1;
    uint64_t used = 0;
    int nused = 0;
    const uint8_t *lists[3] = {in->holes, in->board, in->dead};
    int sizes[3] = {in->nhands * per, in->nboard, in->ndead};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < sizes[l]; i++) {
            uint8_t x = lists[l][i];
            if (x >= 52 || (used >> x & 1)) return -1;
            used |= 1ull << x;
            nused++;
        }
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.rule = in->rule;
    c.nhands = in->nhands;
    c.nboard = in->nboard;
    c.need = 5 - in->nboard;
    c.out = out;
    if (in->nboard) memcpy(c.board, in->board, (size_t)in->nboard);
    uint8_t deck[52];
    int ndeck = 0;
    for (int x = 0; x < 52; x++)
        if (!(used >> x & 1)) deck[ndeck++] = (uint8_t)x;
    if (ndeck < c.need) return -1;
    for (int h = 0; h < in->nhands; h++) {
        const uint8_t *hole = in->holes + h * per;
        memcpy(c.holes[h], hole, (size_t)per);
        if (per == 4) {
            int p = 0;
            for (int i = 0; i < 4; i++)
                for (int j = i + 1; j < 4; j++, p++) {
                    c.pair_key[h][p] = HE_SUIT_BASE + he_card_key[hole[i]] + he_card_key[hole[j]];
                    c.pair_bits[h][p] = he_card_bit[hole[i]] | he_card_bit[hole[j]];
                }
        }
        c.hand_key[h] = HE_SUIT_BASE + he_card_key[hole[0]] + he_card_key[hole[1]];
        c.hand_bits[h] = he_card_bit[hole[0]] | he_card_bit[hole[1]];
    }
    uint64_t board_key = 0, board_bits = 0;
    for (int i = 0; i < in->nboard; i++) {
        board_key += he_card_key[in->board[i]];
        board_bits |= he_card_bit[in->board[i]];
    }
    uint64_t boards = he_choose(ndeck, c.need);
    if (boards <= in->exact_limit) {
        out->exact = 1;
        enumerate(&c, deck, ndeck, 0, 0, board_key, board_bits);
        return 0;
    }
    if (in->iterations == 0) return -1;
    rng_t rng;
    uint64_t sm = in->seed;
    for (int i = 0; i < 4; i++) rng.s[i] = splitmix64(&sm);
    for (uint64_t it = 0; it < in->iterations; it++) {
        uint64_t key = board_key, bits = board_bits;
        for (int k = 0; k < c.need; k++) {
            int j = k + (int)bounded(&rng, (uint32_t)(ndeck - k));
            uint8_t t = deck[j];
            deck[j] = deck[k];
            deck[k] = t;
            c.board[c.nboard + k] = t;
            key += he_card_key[t];
            bits |= he_card_bit[t];
        }
        score(&c, key, bits);
    }
    out->samples = in->iterations;
    return 0;
}

/* ---- equity against random hands: one hero hand, opponents dealt at random every deal ---- */

/* Omaha strength: the best of the 6 hole pairs x 10 board triples (NK-1.4), stopping early once it
 * exceeds `stop` (the caller only needs to know the hand beats `stop`). */
static inline int omaha_strength(const uint64_t pk[6], const uint64_t pb[6], const uint64_t tk[10],
                                 const uint64_t tb[10], int stop) {
    int top = 0;
    for (int p = 0; p < 6; p++)
        for (int t = 0; t < 10; t++) {
            int v = he_eval_key_inline(pk[p] + tk[t], pb[p] | tb[t]);
            if (v > top) {
                top = v;
                if (top > stop) return top;
            }
        }
    return top;
}

static inline void omaha_pairs(const uint8_t hole[4], uint64_t pk[6], uint64_t pb[6]) {
    int p = 0;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++, p++) {
            pk[p] = HE_SUIT_BASE + he_card_key[hole[i]] + he_card_key[hole[j]];
            pb[p] = he_card_bit[hole[i]] | he_card_bit[hole[j]];
        }
}

int he_equity_vs_random(const he_vs_random_in *in, he_vs_random_out *out) {
    memset(out, 0, sizeof *out);
    int per = in->rule == HE_HOLDEM ? 2 : in->rule == HE_OMAHA ? 4 : 0;
    if (!per || in->nhole != per || in->opponents < 1 || in->opponents > HE_MAX_EQUITY_HANDS - 1) return -1;
    if (in->nboard < 0 || in->nboard > 5 || in->nboard == 1 || in->nboard == 2 || in->iterations == 0) return -1;
    uint64_t used = 0;
    for (int i = 0; i < per + in->nboard; i++) {
        uint8_t x = i < per ? in->hole[i] : in->board[i - per];
        if (x >= 52 || (used >> x & 1)) return -1;
        used |= 1ull << x;
    }
    uint8_t deck[52];
    int ndeck = 0;
    for (int x = 0; x < 52; x++)
        if (!(used >> x & 1)) deck[ndeck++] = (uint8_t)x;
    int need = 5 - in->nboard, draw = in->opponents * per + need;
    if (draw > ndeck) return -1;

    uint64_t board_key = 0, board_bits = 0;
    uint8_t board[5];
    for (int i = 0; i < in->nboard; i++) {
        board[i] = in->board[i];
        board_key += he_card_key[board[i]];
        board_bits |= he_card_bit[board[i]];
    }
    uint64_t hero_key = HE_SUIT_BASE + he_card_key[in->hole[0]] + he_card_key[in->hole[1]];
    uint64_t hero_bits = he_card_bit[in->hole[0]] | he_card_bit[in->hole[1]];
    uint64_t hero_pk[6], hero_pb[6];
    if (per == 4) omaha_pairs(in->hole, hero_pk, hero_pb);

    rng_t rng;
    uint64_t sm = in->seed;
    for (int i = 0; i < 4; i++) rng.s[i] = splitmix64(&sm);
    uint64_t wins = 0, ties = 0, shares = 0;
    for (uint64_t it = 0; it < in->iterations; it++) {
        /* partial Fisher-Yates: deck[0..draw) is a uniform draw without replacement; the board's missing
         * cards first, then the opponents' hands (any fixed assignment of a uniform draw is uniform) */
        for (int k = 0; k < draw; k++) {
            int j = k + (int)bounded(&rng, (uint32_t)(ndeck - k));
            uint8_t t = deck[j];
            deck[j] = deck[k];
            deck[k] = t;
        }
        uint64_t key = board_key, bits = board_bits;
        for (int k = 0; k < need; k++) {
            board[in->nboard + k] = deck[k];
            key += he_card_key[deck[k]];
            bits |= he_card_bit[deck[k]];
        }
        const uint8_t *opp = deck + need;
        int hero, lost = 0, tied = 0;
        if (per == 2) {
            hero = he_eval_key_inline(key + hero_key, bits | hero_bits);
            for (int o = 0; o < in->opponents; o++, opp += 2) {
                int s = he_eval_key_inline(key + HE_SUIT_BASE + he_card_key[opp[0]] + he_card_key[opp[1]],
                                           bits | he_card_bit[opp[0]] | he_card_bit[opp[1]]);
                if (s > hero) { lost = 1; break; }
                tied += s == hero;
            }
        } else {
            uint64_t tk[10], tb[10];
            int n = 0;
            for (int i = 0; i < 5; i++)
                for (int j = i + 1; j < 5; j++)
                    for (int k = j + 1; k < 5; k++) {
                        tk[n] = he_card_key[board[i]] + he_card_key[board[j]] + he_card_key[board[k]];
                        tb[n++] = he_card_bit[board[i]] | he_card_bit[board[j]] | he_card_bit[board[k]];
                    }
            hero = omaha_strength(hero_pk, hero_pb, tk, tb, HE_NUM_STRENGTHS);
            for (int o = 0; o < in->opponents; o++, opp += 4) {
                uint64_t pk[6], pb[6];
                omaha_pairs(opp, pk, pb);
                int s = omaha_strength(pk, pb, tk, tb, hero);
                if (s > hero) { lost = 1; break; }
                tied += s == hero;
            }
        }
        if (lost) continue;
        if (tied) {
            ties++;
            shares += HE_TIE_UNIT / (uint64_t)(tied + 1);
        } else {
            wins++;
            shares += HE_TIE_UNIT;
        }
    }
    out->wins = wins;
    out->ties = ties;
    out->shares = shares;
    out->samples = in->iterations;
    return 0;
}
