/* handeval core: table construction and evaluation. Pure C; see core.h and docs/evaluator.md.
 *
 * Non-flush hands: every rank has an additive weight such that the sum over any multiset of at most
 * seven ranks (each at most four times) is unique. The weights below came from a greedy search
 * (smallest increasing weights with that property, find_weights.c); he_init() re-verifies uniqueness
 * and refuses to run if it does not hold. The sum is mapped by a row-displacement perfect hash,
 * index = (key & MASK) + offset[key >> SHIFT], into a small table of strengths that stays in cache.
 * Flushes: a packed counter per suit (starting at 3, so a fifth card of a suit sets bit 3) and an
 * 8192-entry table indexed by the flush suit's 13-bit rank mask. Tables are built once from the simple
 * reference evaluator further down.
 */
#include "core.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t RANK_WEIGHT[13] = {1,      5,      24,     112,     521,     2247,   9244,
                                         30823,  103066, 250154, 667453,  1526359, 3453520};

#define HASH_SHIFT HE_HASH_SHIFT
#define HASH_MASK HE_HASH_MASK
/* rows up to 7 x the top weight, so even an invalid multiset (a card repeated by a caller that skips
 * validation) hashes inside the tables: a wrong answer, never an out-of-bounds read */
#define NUM_ROWS (((7u * 3453520u) >> HASH_SHIFT) + 1)

uint64_t he_card_key[256]; /* rows 52..255 stay zero, so any byte indexes safely: see batch_loop */
uint64_t he_card_bit[256];
/* {key, bit} per byte value, for the x86-64-v3 batch loop: one 16-byte add per card accumulates both */
typedef uint64_t v2u64 __attribute__((vector_size(16)));
static v2u64 card_key_bit[256];
uint32_t he_hash_offset[NUM_ROWS];
uint16_t *he_rank_table;
#define hash_offset he_hash_offset
#define rank_table he_rank_table
static size_t rank_table_size;
uint16_t he_flush_table[8192];
#define flush_table he_flush_table
static uint8_t category_of[HE_NUM_STRENGTHS + 1];
static uint16_t three_table[16 * 16 * 16 * 2]; /* slack: masked codes 52..63 give ranks 13..15 */
static uint8_t category3_of[HE_NUM_STRENGTHS3 + 1];
static int initialized;
static void choose_batch_impl(void);

/* ---------------------------------------------------------------- reference evaluator ----------
 * "raw" values: category << 20 | up to five 4-bit ranks, most significant first. Raw values order
 * hands correctly; the dense 1..7462 strength is the index of a raw value among all distinct ones. */

static int straight_top(uint32_t mask) {
    for (int top = 12; top >= 4; top--)
        if (((mask >> (top - 4)) & 0x1f) == 0x1f) return top;
    if ((mask & 0x100f) == 0x100f) return 3; /* A-2-3-4-5: the ace plays low (THB-5.13 wheel) */
    return -1;
}

static uint32_t raw_pack(int cat, const int *r, int n) {
    uint32_t raw = (uint32_t)cat << 20;
    for (int i = 0; i < n; i++) raw |= (uint32_t)r[i] << (16 - 4 * i);
    return raw;
}

static uint32_t raw_from_flush_mask(uint32_t mask) {
    int top = straight_top(mask);
    if (top >= 0) return raw_pack(HE_STRAIGHT_FLUSH, &top, 1);
    int r[5], n = 0;
    for (int k = 12; k >= 0 && n < 5; k--)
        if (mask & (1u << k)) r[n++] = k;
    return raw_pack(HE_FLUSH, r, 5);
}

/* Best non-flush five-card hand from rank counts (5..7 cards). */
static uint32_t raw_from_counts(const int cnt[13]) {
    int r[5] = {0}, n = 0, a = -1, b = -1;
    uint32_t present = 0;
    for (int k = 0; k < 13; k++)
        if (cnt[k]) present |= 1u << k;
    for (int k = 12; k >= 0; k--)
        if (cnt[k] >= 4) { a = k; break; }
    if (a >= 0) {
        r[n++] = a;
        for (int k = 12; k >= 0; k--)
            if (k != a && cnt[k]) { r[n++] = k; break; }
        return raw_pack(HE_FOUR_OF_A_KIND, r, n);
    }
    for (int k = 12; k >= 0; k--)
        if (cnt[k] >= 3) { a = k; break; }
    if (a >= 0) {
        for (int k = 12; k >= 0; k--)
            if (k != a && cnt[k] >= 2) { b = k; break; }
        if (b >= 0) { r[0] = a; r[1] = b; return raw_pack(HE_FULL_HOUSE, r, 2); }
    }
    int top = straight_top(present);
    if (top >= 0) return raw_pack(HE_STRAIGHT, &top, 1);
    if (a >= 0) {
        r[n++] = a;
        for (int k = 12; k >= 0 && n < 3; k--)
            if (k != a && cnt[k]) r[n++] = k;
        return raw_pack(HE_THREE_OF_A_KIND, r, 3);
    }
    for (int k = 12; k >= 0; k--)
        if (cnt[k] == 2) {
            if (a < 0) a = k;
            else if (b < 0) b = k;
        }
    if (b >= 0) {
        r[0] = a; r[1] = b; n = 2;
        for (int k = 12; k >= 0; k--)
            if (k != a && k != b && cnt[k]) { r[n++] = k; break; }
        return raw_pack(HE_TWO_PAIR, r, 3);
    }
    if (a >= 0) {
        r[n++] = a;
        for (int k = 12; k >= 0 && n < 4; k--)
            if (k != a && cnt[k]) r[n++] = k;
        return raw_pack(HE_PAIR, r, 4);
    }
    for (int k = 12; k >= 0 && n < 5; k--)
        if (cnt[k]) r[n++] = k;
    return raw_pack(HE_HIGH_CARD, r, 5);
}

static uint32_t *raw_sorted; /* the 7462 distinct raw values, ascending */

static int cmp_u32(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

static int raw_to_strength(uint32_t raw) {
    int lo = 0, hi = HE_NUM_STRENGTHS - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (raw_sorted[mid] == raw) return mid + 1;
        if (raw_sorted[mid] < raw) lo = mid + 1;
        else hi = mid - 1;
    }
    return 0;
}

/* Visit every rank multiset of exactly `size` cards (counts <= 4). */
typedef void (*multiset_fn)(const int cnt[13], uint32_t key, void *ctx);
static void each_multiset(int rank, int left, int cnt[13], uint32_t key, multiset_fn fn, void *ctx) {
    if (rank == 13) {
        if (left == 0) fn(cnt, key, ctx);
        return;
    }
    for (int c = 0; c <= 4 && c <= left; c++) {
        cnt[rank] = c;
        each_multiset(rank + 1, left - c, cnt, key + (uint32_t)c * RANK_WEIGHT[rank], fn, ctx);
    }
    cnt[rank] = 0;
}

typedef struct { uint32_t *keys; uint16_t *values; size_t n; } key_list;

static void collect_raw5(const int cnt[13], uint32_t key, void *ctx) {
    (void)key;
    key_list *kl = ctx;
    kl->keys[kl->n++] = raw_from_counts(cnt);
}

static void collect_key(const int cnt[13], uint32_t key, void *ctx) {
    key_list *kl = ctx;
    kl->keys[kl->n] = key;
    kl->values[kl->n] = (uint16_t)raw_to_strength(raw_from_counts(cnt));
    kl->n++;
}

static int build_strength_scale(void) {
    /* all five-card rank multisets, plus every five-distinct-rank mask as a flush */
    uint32_t *raws = malloc(sizeof(uint32_t) * 16384);
    if (!raws) return -1;
    key_list kl = {raws, NULL, 0};
    int cnt[13] = {0};
    each_multiset(0, 5, cnt, 0, collect_raw5, &kl);
    for (uint32_t m = 0; m < 8192; m++)
        if (__builtin_popcount(m) == 5) raws[kl.n++] = raw_from_flush_mask(m);
    qsort(raws, kl.n, sizeof(uint32_t), cmp_u32);
    size_t d = 0;
    for (size_t i = 0; i < kl.n; i++)
        if (d == 0 || raws[i] != raws[d - 1]) raws[d++] = raws[i];
    if (d != HE_NUM_STRENGTHS) { free(raws); return -1; }
    raw_sorted = raws;
    for (int s = 1; s <= HE_NUM_STRENGTHS; s++) {
        int cat = (int)(raw_sorted[s - 1] >> 20);
        category_of[s] = (uint8_t)(s == HE_NUM_STRENGTHS ? HE_ROYAL_FLUSH : cat);
    }
    return 0;
}

typedef struct { uint32_t key; uint16_t value; } kv;
typedef struct { uint32_t row; uint32_t start, count; } row_info;

static int cmp_kv(const void *x, const void *y) {
    const kv *a = x, *b = y;
    return (a->key > b->key) - (a->key < b->key);
}

static int cmp_row_desc(const void *x, const void *y) {
    const row_info *a = x, *b = y;
    if (a->count != b->count) return (a->count < b->count) - (a->count > b->count);
    return (a->row > b->row) - (a->row < b->row);
}

/* Row-displacement perfect hash over the rank keys of all 5-, 6- and 7-card rank multisets. */
static int build_rank_table(void) {
    size_t cap = 80000;
    uint32_t *keys = malloc(sizeof(uint32_t) * cap);
    uint16_t *vals = malloc(sizeof(uint16_t) * cap);
    kv *items = malloc(sizeof(kv) * cap);
    row_info *rows = calloc(NUM_ROWS, sizeof(row_info));
    int rc = -1;
    if (!keys || !vals || !items || !rows) goto out;
    key_list kl = {keys, vals, 0};
    int cnt[13] = {0};
    for (int size = 5; size <= 7; size++) each_multiset(0, size, cnt, 0, collect_key, &kl);
    for (size_t i = 0; i < kl.n; i++) {
        if (vals[i] == 0) goto out;
        items[i].key = keys[i];
        items[i].value = vals[i];
    }
    qsort(items, kl.n, sizeof(kv), cmp_kv);
    for (size_t i = 1; i < kl.n; i++)
        if (items[i].key == items[i - 1].key) goto out; /* weights not unique: refuse */
    uint32_t nrows = 0;
    for (size_t i = 0; i < kl.n;) {
        uint32_t row = items[i].key >> HASH_SHIFT;
        size_t j = i;
        while (j < kl.n && (items[j].key >> HASH_SHIFT) == row) j++;
        rows[nrows].row = row;
        rows[nrows].start = (uint32_t)i;
        rows[nrows].count = (uint32_t)(j - i);
        nrows++;
        i = j;
    }
    qsort(rows, nrows, sizeof(row_info), cmp_row_desc);
    /* First-fit placement, densest rows first. A bitset of free slots lets one step test 64 candidate
     * offsets at once: bit o of AND_k(free >> col_k) says offset o fits every column of the row. */
    size_t size = kl.n * 8 + (1u << HASH_SHIFT);
    size_t words = size / 64 + 2;
    uint64_t *freeb = malloc(words * sizeof(uint64_t));
    if (!freeb) goto out;
    for (size_t w = 0; w < words; w++) freeb[w] = ~0ull;
    freeb[words - 1] = 0; /* guard word: never free */
    size_t max_end = 0, first_word = 0;
    for (uint32_t r = 0; r < nrows; r++) {
        const kv *it = items + rows[r].start;
        while (first_word < words - 1 && freeb[first_word] == 0) first_word++;
        size_t off = (size_t)-1;
        for (size_t w = first_word; w + 1 < words; w++) {
            uint64_t cand = ~0ull;
            for (uint32_t k = 0; k < rows[r].count && cand; k++) {
                size_t pos = w * 64 + (it[k].key & HASH_MASK);
                size_t q = pos >> 6, b = pos & 63;
                if (q + 1 >= words) { cand = 0; break; }
                uint64_t bitsv = freeb[q] >> b;
                if (b) bitsv |= freeb[q + 1] << (64 - b);
                cand &= bitsv;
            }
            if (cand) { off = w * 64 + (size_t)__builtin_ctzll(cand); break; }
        }
        if (off == (size_t)-1) { free(freeb); goto out; }
        hash_offset[rows[r].row] = (uint32_t)off;
        for (uint32_t k = 0; k < rows[r].count; k++) {
            size_t idx = off + (it[k].key & HASH_MASK);
            freeb[idx >> 6] &= ~(1ull << (idx & 63));
            if (idx + 1 > max_end) max_end = idx + 1;
        }
    }
    free(freeb);
    rank_table_size = max_end;
    rank_table = calloc(max_end + 1, sizeof(uint16_t));
    if (!rank_table) goto out;
    for (uint32_t r = 0; r < nrows; r++) {
        const kv *it = items + rows[r].start;
        for (uint32_t k = 0; k < rows[r].count; k++)
            rank_table[hash_offset[rows[r].row] + (it[k].key & HASH_MASK)] = it[k].value;
    }
    rc = 0;
out:
    free(keys); free(vals); free(items); free(rows);
    return rc;
}

static int build_flush_table(void) {
    for (uint32_t m = 0; m < 8192; m++) {
        if (__builtin_popcount(m) < 5) { flush_table[m] = 0; continue; }
        int s = raw_to_strength(raw_from_flush_mask(m));
        if (s == 0) return -1;
        flush_table[m] = (uint16_t)s;
    }
    return 0;
}

/* ---------------------------------------------------------------- three-card poker ----------
 * TCP-4.1 order (internal categories): high card < pair < flush < straight < trips < straight flush. */
enum { T3_HIGH = 1, T3_PAIR, T3_FLUSH, T3_STRAIGHT, T3_TRIPS, T3_STRAIGHT_FLUSH };

static uint32_t raw3(int a, int b, int c, int suited) { /* a >= b >= c */
    int r[3] = {a, b, c};
    int straight_top3 = -1;
    if (a == b + 1 && b == c + 1) straight_top3 = a;
    if (a == 12 && b == 1 && c == 0) straight_top3 = 1; /* A-2-3: ace low, lowest straight (TCP-4.2) */
    if (a == b && b == c) return raw_pack(T3_TRIPS, r, 1);
    if (straight_top3 >= 0) return raw_pack(suited ? T3_STRAIGHT_FLUSH : T3_STRAIGHT, &straight_top3, 1);
    if (suited) return raw_pack(T3_FLUSH, r, 3);
    if (a == b || b == c) {
        int p[2] = {b, a == b ? c : a};
        return raw_pack(T3_PAIR, p, 2);
    }
    return raw_pack(T3_HIGH, r, 3);
}

static int build_three_table(void) {
    uint32_t raws[13 * 13 * 13 * 2];
    size_t n = 0;
    for (int a = 0; a < 13; a++)
        for (int b = 0; b <= a; b++)
            for (int c = 0; c <= b; c++) {
                for (int suited = 0; suited <= (a != b && b != c); suited++) raws[n++] = raw3(a, b, c, suited);
            }
    qsort(raws, n, sizeof(uint32_t), cmp_u32);
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (d == 0 || raws[i] != raws[d - 1]) raws[d++] = raws[i];
    if (d != HE_NUM_STRENGTHS3) return -1;
    static const uint8_t to_category[] = {0, HE_HIGH_CARD, HE_PAIR, HE_FLUSH, HE_STRAIGHT,
                                          HE_THREE_OF_A_KIND, HE_STRAIGHT_FLUSH};
    for (size_t s = 1; s <= d; s++) category3_of[s] = to_category[raws[s - 1] >> 20];
    category3_of[d] = HE_ROYAL_FLUSH; /* the Mini Royal Flush, A-K-Q suited (TCP-4.1, TCP-5.1) */
    for (int a = 0; a < 13; a++)
        for (int b = 0; b <= a; b++)
            for (int c = 0; c <= b; c++)
                for (int suited = 0; suited <= 1; suited++) {
                    uint32_t raw = raw3(a, b, c, suited && a != b && b != c);
                    uint32_t *hit = bsearch(&raw, raws, d, sizeof(uint32_t), cmp_u32);
                    if (!hit) return -1;
                    three_table[((a * 13 + b) * 13 + c) * 2 + suited] = (uint16_t)(hit - raws + 1);
                }
    return 0;
}

int he_init(void) {
    if (initialized) return initialized > 0 ? 0 : -1;
    initialized = -1;
    for (int c = 0; c < 52; c++) {
        he_card_key[c] = RANK_WEIGHT[c >> 2] + (1ull << (32 + 4 * (c & 3)));
        he_card_bit[c] = 1ull << (16 * (c & 3) + (c >> 2));
    }
    /* any other byte: bit 63, which no card uses (suit s uses bits 16 s .. 16 s + 12) and which every flush
     * lookup masks away; the batch validation reads it as "unknown card" */
    for (int v = 52; v < 256; v++) he_card_bit[v] = 1ull << 63;
    for (int v = 0; v < 256; v++) card_key_bit[v] = (v2u64){he_card_key[v], he_card_bit[v]};
    if (build_strength_scale() || build_rank_table() || build_flush_table() || build_three_table()) return -1;
    choose_batch_impl();
    initialized = 1;
    return 0;
}

/* ---------------------------------------------------------------- fast evaluation ---------- */

int he_eval_key(uint64_t key, uint64_t bits) { return he_eval_key_inline(key, bits); }

int he_eval_n(const uint8_t *cards, int n) {
    uint64_t key = HE_SUIT_BASE, bits = 0;
    for (int i = 0; i < n; i++) {
        key += he_card_key[cards[i]];
        bits |= he_card_bit[cards[i]];
    }
    return he_eval_key(key, bits);
}

static inline __attribute__((always_inline)) int eval7_inline(int c0, int c1, int c2, int c3, int c4, int c5,
                                                              int c6) {
    uint64_t key = HE_SUIT_BASE + he_card_key[c0] + he_card_key[c1] + he_card_key[c2] + he_card_key[c3] +
                   he_card_key[c4] + he_card_key[c5] + he_card_key[c6];
    uint32_t flush = (uint32_t)(key >> 32) & 0x8888u;
    if (__builtin_expect(flush != 0, 0)) {
        /* rare (about 3 % of random hands): build the rank masks only now, halving the hot-path loads */
        uint64_t bits = he_card_bit[c0] | he_card_bit[c1] | he_card_bit[c2] | he_card_bit[c3] | he_card_bit[c4] |
                        he_card_bit[c5] | he_card_bit[c6];
        return flush_table[(bits >> (__builtin_ctz(flush) * 4 - 12)) & 0x1fff];
    }
    uint32_t rk = (uint32_t)key;
    return rank_table[(rk & HASH_MASK) + hash_offset[rk >> HASH_SHIFT]];
}

int he_eval7(int c0, int c1, int c2, int c3, int c4, int c5, int c6) {
    return eval7_inline(c0, c1, c2, c3, c4, c5, c6);
}

/* The same for n (5 or 6, a constant at each use) cards in an array. */
static inline __attribute__((always_inline)) int evaln_inline(const uint8_t *c, const int n) {
    uint64_t key = HE_SUIT_BASE;
    for (int i = 0; i < n; i++) key += he_card_key[c[i]];
    uint32_t flush = (uint32_t)(key >> 32) & 0x8888u;
    if (__builtin_expect(flush != 0, 0)) {
        uint64_t bits = 0;
        for (int i = 0; i < n; i++) bits |= he_card_bit[c[i]];
        return flush_table[(bits >> (__builtin_ctz(flush) * 4 - 12)) & 0x1fff];
    }
    uint32_t rk = (uint32_t)key;
    return rank_table[(rk & HASH_MASK) + hash_offset[rk >> HASH_SHIFT]];
}

int he_eval_omaha(const uint8_t hole[4], const uint8_t *board, int nboard) {
    uint64_t hk[6], hb[6], bk[10], bb[10];
    int nh = 0, nb = 0, best = 0;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            hk[nh] = HE_SUIT_BASE + he_card_key[hole[i]] + he_card_key[hole[j]];
            hb[nh++] = he_card_bit[hole[i]] | he_card_bit[hole[j]];
        }
    for (int i = 0; i < nboard; i++)
        for (int j = i + 1; j < nboard; j++)
            for (int k = j + 1; k < nboard; k++) {
                bk[nb] = he_card_key[board[i]] + he_card_key[board[j]] + he_card_key[board[k]];
                bb[nb++] = he_card_bit[board[i]] | he_card_bit[board[j]] | he_card_bit[board[k]];
            }
    for (int i = 0; i < nh; i++)
        for (int j = 0; j < nb; j++) {
            int s = he_eval_key(hk[i] + bk[j], hb[i] | bb[j]);
            if (s > best) best = s;
        }
    return best;
}

static inline void sort3_desc(int *a, int *b, int *c) {
    int t;
    if (*a < *b) { t = *a; *a = *b; *b = t; }
    if (*b < *c) { t = *b; *b = *c; *c = t; }
    if (*a < *b) { t = *a; *a = *b; *b = t; }
}

int he_eval_three(const uint8_t cards[3]) {
    int a = cards[0] >> 2, b = cards[1] >> 2, c = cards[2] >> 2;
    int suited = ((cards[0] & 3) == (cards[1] & 3)) && ((cards[1] & 3) == (cards[2] & 3));
    sort3_desc(&a, &b, &c);
    return three_table[((a * 13 + b) * 13 + c) * 2 + suited];
}

int he_category(int rule, int strength) {
    if (rule == HE_THREE_CARD) return (strength >= 1 && strength <= HE_NUM_STRENGTHS3) ? category3_of[strength] : 0;
    return (strength >= 1 && strength <= HE_NUM_STRENGTHS) ? category_of[strength] : 0;
}

/* ---------------------------------------------------------------- best cards ---------- */

/* Strongest-first canonical order: by how many of the rank the hand holds, then rank, then suit;
 * a five-high straight (wheel) or a three-card A-2-3 puts the ace last. */
static void canonical_order(uint8_t *cards, int n, int ace_low_straight) {
    int cnt[13] = {0};
    for (int i = 0; i < n; i++) cnt[cards[i] >> 2]++;
    for (int i = 1; i < n; i++) {
        uint8_t x = cards[i];
        int j = i - 1;
        while (j >= 0) {
            uint8_t y = cards[j];
            int kx = cnt[x >> 2] * 64 + x, ky = cnt[y >> 2] * 64 + y;
            if (ky >= kx) break;
            cards[j + 1] = y;
            j--;
        }
        cards[j + 1] = x;
    }
    if (ace_low_straight && (cards[0] >> 2) == 12) {
        uint8_t ace = cards[0];
        memmove(cards, cards + 1, (size_t)(n - 1));
        cards[n - 1] = ace;
    }
}

static int is_wheel(const uint8_t *c5) {
    uint32_t m = 0;
    for (int i = 0; i < 5; i++) m |= 1u << (c5[i] >> 2);
    return m == 0x100f;
}

static void sort_desc(uint8_t *c, int n) {
    for (int i = 1; i < n; i++) {
        uint8_t x = c[i];
        int j = i - 1;
        while (j >= 0 && c[j] < x) { c[j + 1] = c[j]; j--; }
        c[j + 1] = x;
    }
}

static void finish_best5(uint8_t best[5], int strength) {
    int cat = category_of[strength];
    canonical_order(best, 5, (cat == HE_STRAIGHT || cat == HE_STRAIGHT_FLUSH) && is_wheel(best));
}

int he_best_holdem(const uint8_t *cards, int n, uint8_t best[5]) {
    uint8_t c[7];
    memcpy(c, cards, (size_t)n);
    sort_desc(c, n); /* order-independent choice among equal subsets */
    int top = -1;
    /* choose which n-5 cards to drop (0, 1 or 2 of them) */
    for (int i = (n > 5 ? 0 : n); i <= (n > 5 ? n - 1 : n); i++)
        for (int j = (n > 6 ? i + 1 : n); j <= (n > 6 ? n - 1 : n); j++) {
            uint8_t sub[5];
            int k = 0;
            for (int x = 0; x < n; x++)
                if (x != i && x != j) sub[k++] = c[x];
            int s = he_eval_n(sub, 5);
            if (s > top) { top = s; memcpy(best, sub, 5); }
        }
    finish_best5(best, top);
    return top;
}

int he_best_omaha(const uint8_t hole[4], const uint8_t *board, int nboard, uint8_t best[5]) {
    uint8_t h[4], b[5];
    memcpy(h, hole, 4);
    memcpy(b, board, (size_t)nboard);
    sort_desc(h, 4);
    sort_desc(b, nboard);
    int top = -1;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            for (int x = 0; x < nboard; x++)
                for (int y = x + 1; y < nboard; y++)
                    for (int z = y + 1; z < nboard; z++) {
                        uint8_t sub[5] = {h[i], h[j], b[x], b[y], b[z]};
                        int s = he_eval_n(sub, 5);
                        if (s > top) { top = s; memcpy(best, sub, 5); }
                    }
    finish_best5(best, top);
    return top;
}

int he_best_three(const uint8_t cards[3], uint8_t best[3]) {
    int s = he_eval_three(cards);
    memcpy(best, cards, 3);
    int cat = category3_of[s];
    uint32_t m = (1u << (best[0] >> 2)) | (1u << (best[1] >> 2)) | (1u << (best[2] >> 2));
    canonical_order(best, 3, (cat == HE_STRAIGHT || cat == HE_STRAIGHT_FLUSH) && m == 0x1003);
    return s;
}

/* ---------------------------------------------------------------- batch ---------- */

/* Category of a standard strength by comparing with the category starts (see docs/evaluator.md). */
static inline uint8_t category_from_strength(uint32_t s) {
    return (uint8_t)(1 + (s > 1277) + (s > 4137) + (s > 4995) + (s > 5853) + (s > 5863) + (s > 7140) + (s > 7296) +
                     (s > 7452) + (s > 7461));
}

/* One specialised loop per (rule, cards per hand): cpk is a compile-time constant in each, so the card
 * loads, the validation and the evaluation unroll; the first bad hand stops the loop. The caller's
 * buffer is not locked against other threads while the GIL is released, so a byte may change after it
 * was checked: the card tables have 256 rows (zero beyond 51) and three-card codes are masked to 0..63,
 * so that gives a wrong answer, never a bad read. */
static inline __attribute__((always_inline)) int batch_loop(int rule, const int cpk, const int use_popcnt,
                                                            const uint8_t *packed, size_t nhands,
                                                            uint32_t *strengths, uint8_t *cats, size_t *bad_index) {
    const uint8_t *p = packed;
    const uint8_t *cat_table = rule == HE_THREE_CARD ? category3_of : category_of;
    if (use_popcnt && rule == HE_HOLDEM) {
        /* Sum {key, bit} pairs: the bit lane is the union of the card bits unless a card repeats, which
         * carries and leaves fewer bits than cards; bit 63 marks an unknown byte. */
        for (size_t h = 0; h < nhands; h++, p += cpk) {
            v2u64 acc = {HE_SUIT_BASE, 0};
            for (int i = 0; i < cpk; i++) acc += card_key_bit[p[i]];
            uint64_t key = acc[0], bits = acc[1];
            if (__builtin_expect((__builtin_popcountll(bits) != cpk) | (int)(bits >> 63), 0)) {
                *bad_index = h;
                for (int i = 0; i < cpk; i++)
                    if (p[i] >= 52) return HE_BATCH_UNKNOWN_CARD;
                return HE_BATCH_DUPLICATE_CARD;
            }
            strengths[h] = (uint32_t)he_eval_key_inline(key, bits);
        }
        if (cats)
            for (size_t h = 0; h < nhands; h++) cats[h] = category_from_strength(strengths[h]);
        return HE_BATCH_OK;
    }
    for (size_t h = 0; h < nhands; h++, p += cpk) {
        uint8_t c[9];
        uint64_t seen = 0, sum = 0;
        for (int i = 0; i < cpk; i++) {
            uint8_t b = p[i];
            /* one distinct bit per card (bit 63 for a byte >= 52): the sum equals the union exactly when
             * no bit repeats, and bit 63 in the union marks an unknown card */
            seen |= he_card_bit[b];
            if (!use_popcnt) sum += he_card_bit[b];
            c[i] = rule == HE_THREE_CARD ? b & 63 : b; /* three_table has rows for ranks 0..15 only */
        }
        int repeat = use_popcnt ? __builtin_popcountll(seen) != cpk : sum != seen;
        if (__builtin_expect(repeat | (int)(seen >> 63), 0)) {
            *bad_index = h;
            for (int i = 0; i < cpk; i++)
                if (p[i] >= 52) return HE_BATCH_UNKNOWN_CARD;
            return HE_BATCH_DUPLICATE_CARD;
        }
    int s;
        if (rule == HE_THREE_CARD) s = he_eval_three(c);
        else if (rule == HE_OMAHA) s = he_eval_omaha(c, c + 4, 5);
        else if (cpk == 7) s = eval7_inline(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
        else s = evaln_inline(c, cpk);
        strengths[h] = (uint32_t)s;
        if (cats && rule != HE_HOLDEM) cats[h] = cat_table[s];
    }
    if (cats && rule == HE_HOLDEM) /* a separate pass of comparisons, which vectorises */
        for (size_t h = 0; h < nhands; h++) cats[h] = category_from_strength(strengths[h]);
    return HE_BATCH_OK;
}

/* Built twice: for x86-64-v3 (AVX2, BMI2, POPCNT: the duplicate check is then one popcount of the union
 * of card bits) and for the baseline (no POPCNT: the sum of the bits must equal their union). he_init
 * picks one from the CPU it runs on. */
#define BATCH_DISPATCH(use_popcnt)                                                                         \
    do {                                                                                                   \
        if (rule == HE_HOLDEM && cpk == 7)                                                                 \
            return batch_loop(HE_HOLDEM, 7, use_popcnt, packed, nhands, strengths, cats, bad_index);       \
        if (rule == HE_HOLDEM && cpk == 6)                                                                 \
            return batch_loop(HE_HOLDEM, 6, use_popcnt, packed, nhands, strengths, cats, bad_index);       \
        if (rule == HE_HOLDEM && cpk == 5)                                                                 \
            return batch_loop(HE_HOLDEM, 5, use_popcnt, packed, nhands, strengths, cats, bad_index);       \
        if (rule == HE_OMAHA && cpk == 9)                                                                  \
            return batch_loop(HE_OMAHA, 9, use_popcnt, packed, nhands, strengths, cats, bad_index);        \
        if (rule == HE_THREE_CARD && cpk == 3)                                                             \
            return batch_loop(HE_THREE_CARD, 3, use_popcnt, packed, nhands, strengths, cats, bad_index);   \
        return HE_BATCH_BAD_ARGS;                                                                          \
    } while (0)

typedef int (*batch_fn)(int, int, const uint8_t *, size_t, uint32_t *, uint8_t *, size_t *);

static int batch_base(int rule, int cpk, const uint8_t *packed, size_t nhands, uint32_t *strengths, uint8_t *cats,
                      size_t *bad_index) {
    BATCH_DISPATCH(0);
}

__attribute__((target("arch=x86-64-v3"))) static int batch_v3(int rule, int cpk, const uint8_t *packed,
                                                               size_t nhands, uint32_t *strengths, uint8_t *cats,
                                                               size_t *bad_index) {
    BATCH_DISPATCH(1);
}

static batch_fn batch_one = batch_base;

static void choose_batch_impl(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v3")) batch_one = batch_v3;
}

int he_batch_use_baseline(int baseline) {
    if (baseline) batch_one = batch_base;
    else choose_batch_impl();
    return batch_one == batch_v3;
}

/* Large batches are split into contiguous chunks, one thread each (the caller has released the GIL).
 * Every chunk stops at its own first bad hand; the first failing chunk gives the reported index, so the
 * answer is the same as a single pass. */
static int batch_threads = 1;

void he_set_batch_threads(int n) { batch_threads = n < 1 ? 1 : n > HE_MAX_BATCH_THREADS ? HE_MAX_BATCH_THREADS : n; }
int he_get_batch_threads(void) { return batch_threads; }

typedef struct {
    int rule, cpk, status;
    const uint8_t *packed;
    size_t nhands, bad;
    uint32_t *strengths;
    uint8_t *cats;
} batch_job;

static void *batch_worker(void *arg) {
    batch_job *j = arg;
    j->status = batch_one(j->rule, j->cpk, j->packed, j->nhands, j->strengths, j->cats, &j->bad);
    return NULL;
}

int he_batch(int rule, int cpk, const uint8_t *packed, size_t nhands, uint32_t *strengths, uint8_t *cats,
             size_t *bad_index) {
    int nt = batch_threads;
    if (nt <= 1 || nhands < HE_BATCH_THREAD_MIN_HANDS || cpk <= 0)
        return batch_one(rule, cpk, packed, nhands, strengths, cats, bad_index);
    batch_job jobs[HE_MAX_BATCH_THREADS];
    pthread_t tids[HE_MAX_BATCH_THREADS];
    int started[HE_MAX_BATCH_THREADS] = {0};
    size_t per = (nhands + (size_t)nt - 1) / (size_t)nt, at = 0;
    for (int t = 0; t < nt; t++) {
        size_t n = at >= nhands ? 0 : (nhands - at < per ? nhands - at : per);
        jobs[t] = (batch_job){rule, cpk, HE_BATCH_OK, packed + at * (size_t)cpk, n, 0, strengths + at,
                              cats ? cats + at : NULL};
        at += n;
        /* chunk 0 runs on the calling thread; if a thread cannot start, its chunk runs here too */
        if (t > 0 && pthread_create(&tids[t], NULL, batch_worker, &jobs[t]) == 0) started[t] = 1;
    }
    batch_worker(&jobs[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else batch_worker(&jobs[t]);
    }
    size_t offset = 0;
    for (int t = 0; t < nt; t++) {
        if (jobs[t].status != HE_BATCH_OK) {
            *bad_index = offset + jobs[t].bad;
            return jobs[t].status;
        }
        offset += jobs[t].nhands;
    }
    return HE_BATCH_OK;
}

/* ---------------------------------------------------------------- exhaustive passes ---------- */

uint64_t he_enumerate7(uint64_t counts[11], int *distinct) {
    memset(counts, 0, sizeof(uint64_t) * 11);
    uint64_t per[HE_NUM_STRENGTHS + 1];
    memset(per, 0, sizeof per);
    uint64_t n = 0;
    for (int a = 0; a < 52; a++) {
        uint64_t ka = HE_SUIT_BASE + he_card_key[a], ba = he_card_bit[a];
        for (int b = a + 1; b < 52; b++) {
            uint64_t kb = ka + he_card_key[b], bb = ba | he_card_bit[b];
            for (int c = b + 1; c < 52; c++) {
                uint64_t kc = kb + he_card_key[c], bc = bb | he_card_bit[c];
                for (int d = c + 1; d < 52; d++) {
                    uint64_t kd = kc + he_card_key[d], bd = bc | he_card_bit[d];
                    for (int e = d + 1; e < 52; e++) {
                        uint64_t ke = kd + he_card_key[e], be = bd | he_card_bit[e];
                        for (int f = e + 1; f < 52; f++) {
                            uint64_t kf = ke + he_card_key[f], bf = be | he_card_bit[f];
                            for (int g = f + 1; g < 52; g++)
                                per[he_eval_key(kf + he_card_key[g], bf | he_card_bit[g])]++;
                        }
                    }
                }
            }
        }
    }
    int d = 0;
    for (int s = 1; s <= HE_NUM_STRENGTHS; s++) {
        if (per[s]) d++;
        counts[category_of[s]] += per[s];
        n += per[s];
    }
    counts[0] = per[0]; /* must stay 0: a zero strength means a missing table entry */
    n += per[0];
    *distinct = d;
    return n;
}

uint64_t he_enumerate5(uint64_t counts[11], int *distinct) {
    uint64_t per[HE_NUM_STRENGTHS + 1];
    memset(per, 0, sizeof per);
    memset(counts, 0, sizeof(uint64_t) * 11);
    for (int a = 0; a < 52; a++)
        for (int b = a + 1; b < 52; b++)
            for (int c = b + 1; c < 52; c++)
                for (int d = c + 1; d < 52; d++)
                    for (int e = d + 1; e < 52; e++) {
                        uint8_t h[5] = {(uint8_t)a, (uint8_t)b, (uint8_t)c, (uint8_t)d, (uint8_t)e};
                        per[he_eval_n(h, 5)]++;
                    }
    uint64_t n = per[0];
    int dd = 0;
    counts[0] = per[0];
    for (int s = 1; s <= HE_NUM_STRENGTHS; s++) {
        if (per[s]) dd++;
        counts[category_of[s]] += per[s];
        n += per[s];
    }
    *distinct = dd;
    return n;
}
