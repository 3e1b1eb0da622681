/* Thin CPython binding over core.c / equity.c. The Python API (handeval/api.py) validates arguments and
 * builds the result objects; this file only converts buffers and releases the GIL around the C loops.
 * Every entry point still guards card codes itself so that no input can crash the process. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core.h"

static PyObject *invalid_hand_cls; /* handeval.errors.InvalidHand, registered at import */

static PyObject *raise_invalid(const char *field, const char *reason, const char *message) {
    PyObject *cls = invalid_hand_cls ? invalid_hand_cls : PyExc_ValueError;
    if (!invalid_hand_cls) {
        PyErr_SetString(cls, message);
        return NULL;
    }
    PyObject *args = Py_BuildValue("(s)", message);
    PyObject *kwargs = Py_BuildValue("{s:s,s:s}", "field", field, "reason", reason);
    if (args && kwargs) {
        PyObject *exc = PyObject_Call(cls, args, kwargs);
        if (exc) {
            PyErr_SetObject(cls, exc);
            Py_DECREF(exc);
        }
    }
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return NULL;
}

static PyObject *register_invalid_hand(PyObject *self, PyObject *cls) {
    (void)self;
    Py_XINCREF(cls);
    Py_XSETREF(invalid_hand_cls, cls);
    Py_RETURN_NONE;
}

/* strength7(c0, ..., c6): the fastest single-hand call (METH_FASTCALL, no Python wrapper). */
static PyObject *strength7(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "strength7() takes exactly 7 card codes (%zd given)", nargs);
        return NULL;
    }
    int c[7];
    uint64_t seen = 0, sum = 0;
    for (int i = 0; i < 7; i++) {
        long v = PyLong_AsLong(args[i]);
        if (v == -1 && PyErr_Occurred()) return NULL;
        if (v < 0 || v > 51) return raise_invalid("cards", "UNKNOWN_CARD", "card code out of range 0..51");
        c[i] = (int)v;
        seen |= 1ull << v;
        sum += 1ull << v;
    }
    /* a repeated card is never a real hand; the sum equals the union of bits only when all differ */
    if (sum != seen) return raise_invalid("cards", "DUPLICATE_CARD", "duplicate card");
    return PyLong_FromLong(he_eval7(c[0], c[1], c[2], c[3], c[4], c[5], c[6]));
}

static int codes_ok(const uint8_t *p, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (p[i] >= 52) return 0;
    return 1;
}

/* evaluate(rule, hole: bytes, board: bytes) -> (strength, category, best: bytes) */
static PyObject *evaluate(PyObject *self, PyObject *args) {
    (void)self;
    int rule;
    const char *hole, *board;
    Py_ssize_t nhole, nboard;
    if (!PyArg_ParseTuple(args, "iy#y#", &rule, &hole, &nhole, &board, &nboard)) return NULL;
    const uint8_t *h = (const uint8_t *)hole, *b = (const uint8_t *)board;
    if (!codes_ok(h, nhole) || !codes_ok(b, nboard))
        return raise_invalid("hole_cards", "UNKNOWN_CARD", "card code out of range 0..51");
    uint64_t seen = 0;
    for (Py_ssize_t i = 0; i < nhole + nboard; i++) {
        uint8_t x = i < nhole ? h[i] : b[i - nhole];
        if (seen >> x & 1) return raise_invalid(i < nhole ? "hole_cards" : "board", "DUPLICATE_CARD", "duplicate card");
        seen |= 1ull << x;
    }
    uint8_t best[5];
    int strength, nbest = 5;
    if (rule == HE_HOLDEM && nhole + nboard >= 5 && nhole + nboard <= 7) {
        uint8_t all[7];
        memcpy(all, h, (size_t)nhole);
        memcpy(all + nhole, b, (size_t)nboard);
        strength = he_best_holdem(all, (int)(nhole + nboard), best);
    } else if (rule == HE_OMAHA && nhole == 4 && nboard >= 3 && nboard <= 5) {
        strength = he_best_omaha(h, b, (int)nboard, best);
    } else if (rule == HE_THREE_CARD && nhole + nboard == 3) {
        uint8_t all[3];
        memcpy(all, h, (size_t)nhole);
        memcpy(all + nhole, b, (size_t)nboard);
        strength = he_best_three(all, best);
        nbest = 3;
    } else {
        return raise_invalid("hole_cards", "WRONG_CARD_COUNT", "wrong number of cards for the rule");
    }
    return Py_BuildValue("iiy#", strength, he_category(rule, strength), (const char *)best, (Py_ssize_t)nbest);
}

static PyObject *category(PyObject *self, PyObject *args) {
    (void)self;
    int rule, strength;
    if (!PyArg_ParseTuple(args, "ii", &rule, &strength)) return NULL;
    return PyLong_FromLong(he_category(rule, strength));
}

/* batch(rule, cards_per_hand, packed, out_strengths, out_categories) -> (status, bad_index)
 * out_strengths must hold n uint32 values and out_categories n bytes (writable buffers). */
static PyObject *batch(PyObject *self, PyObject *args) {
    (void)self;
    int rule, cpk;
    Py_buffer in, outs, outc;
    if (!PyArg_ParseTuple(args, "iiy*w*w*", &rule, &cpk, &in, &outs, &outc)) return NULL;
    PyObject *result = NULL;
    if (cpk <= 0 || in.len % cpk != 0) {
        PyErr_SetString(PyExc_ValueError, "buffer length is not a multiple of cards_per_hand");
        goto done;
    }
    size_t n = (size_t)(in.len / cpk);
    if ((size_t)outs.len < n * sizeof(uint32_t) || (size_t)outc.len < n) {
        PyErr_SetString(PyExc_ValueError, "output buffers too small");
        goto done;
    }
    size_t bad = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = he_batch(rule, cpk, in.buf, n, outs.buf, outc.buf, &bad);
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("in", status, (Py_ssize_t)bad);
done:
    PyBuffer_Release(&in);
    PyBuffer_Release(&outs);
    PyBuffer_Release(&outc);
    return result;
}

static PyObject *tuple_u64(const uint64_t *v, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (!x) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* equity(rule, nhands, holes, board, dead, iterations, seed, exact_limit)
 *   -> (wins, ties, shares, samples, exact); shares are in units of 1/TIE_UNIT pot. */
static PyObject *equity(PyObject *self, PyObject *args) {
    (void)self;
    he_equity_in in;
    memset(&in, 0, sizeof in);
    const char *holes, *board, *dead;
    Py_ssize_t nholes, nboard, ndead;
    unsigned long long iterations, seed, exact_limit;
    if (!PyArg_ParseTuple(args, "iiy#y#y#KKK", &in.rule, &in.nhands, &holes, &nholes, &board, &nboard, &dead,
                          &ndead, &iterations, &seed, &exact_limit))
        return NULL;
    int per = in.rule == HE_HOLDEM ? 2 : 4;
    if (in.nhands < 2 || in.nhands > HE_MAX_EQUITY_HANDS || nholes != (Py_ssize_t)in.nhands * per || nboard > 5 ||
        ndead > 52) {
        PyErr_SetString(PyExc_ValueError, "bad equity arguments");
        return NULL;
    }
    in.holes = (const uint8_t *)holes;
    in.board = (const uint8_t *)board;
    in.nboard = (int)nboard;
    in.dead = (const uint8_t *)dead;
    in.ndead = (int)ndead;
    in.iterations = iterations;
    in.seed = seed;
    in.exact_limit = exact_limit;
    he_equity_out out;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = he_equity(&in, &out);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        PyErr_SetString(PyExc_ValueError, "invalid equity input");
        return NULL;
    }
    PyObject *w = tuple_u64(out.wins, in.nhands), *t = tuple_u64(out.ties, in.nhands),
             *s = tuple_u64(out.shares, in.nhands);
    PyObject *r = (w && t && s) ? Py_BuildValue("OOOKO", w, t, s, (unsigned long long)out.samples,
                                                out.exact ? Py_True : Py_False)
                                : NULL;
    Py_XDECREF(w);
    Py_XDECREF(t);
    Py_XDECREF(s);
    return r;
}

/* equity_vs_random(rule, hole, board, opponents, iterations, seed) -> (wins, ties, shares, samples);
 * shares are in units of 1/TIE_UNIT pot. */
static PyObject *equity_vs_random(PyObject *self, PyObject *args) {
    (void)self;
    he_vs_random_in in;
    memset(&in, 0, sizeof in);
    const char *hole, *board;
    Py_ssize_t nhole, nboard;
    unsigned long long iterations, seed;
    if (!PyArg_ParseTuple(args, "iy#y#iKK", &in.rule, &hole, &nhole, &board, &nboard, &in.opponents,
                          &iterations, &seed))
        return NULL;
    if (nhole > 4 || nboard > 5) {
        PyErr_SetString(PyExc_ValueError, "bad equity_vs_random arguments");
        return NULL;
    }
    in.hole = (const uint8_t *)hole;
    in.nhole = (int)nhole;
    in.board = (const uint8_t *)board;
    in.nboard = (int)nboard;
    in.iterations = iterations;
    in.seed = seed;
    he_vs_random_out out;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = he_equity_vs_random(&in, &out);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        PyErr_SetString(PyExc_ValueError, "invalid equity_vs_random input");
        return NULL;
    }
    return Py_BuildValue("KKKK", (unsigned long long)out.wins, (unsigned long long)out.ties,
                         (unsigned long long)out.shares, (unsigned long long)out.samples);
}

static PyObject *enumerate_impl(int seven) {
    uint64_t counts[11];
    int distinct;
    uint64_t n;
    Py_BEGIN_ALLOW_THREADS
    n = seven ? he_enumerate7(counts, &distinct) : he_enumerate5(counts, &distinct);
    Py_END_ALLOW_THREADS
    PyObject *t = tuple_u64(counts, 11);
    if (!t) return NULL;
    PyObject *r = Py_BuildValue("OiK", t, distinct, (unsigned long long)n);
    Py_DECREF(t);
    return r;
}

static PyObject *enumerate7(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    return enumerate_impl(1);
}

static PyObject *enumerate5(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    return enumerate_impl(0);
}

static PyObject *set_batch_threads(PyObject *self, PyObject *arg) {
    (void)self;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    he_set_batch_threads((int)(n > 1000 ? 1000 : n));
    return PyLong_FromLong(he_get_batch_threads());
}

static PyObject *batch_use_baseline(PyObject *self, PyObject *arg) {
    (void)self;
    int flag = PyObject_IsTrue(arg);
    if (flag < 0) return NULL;
    return PyBool_FromLong(he_batch_use_baseline(flag));
}

static PyMethodDef methods[] = {
    {"strength7", (PyCFunction)(void (*)(void))strength7, METH_FASTCALL,
     "strength7(c0, ..., c6) -> int: strength (1..7462) of seven card codes; no duplicate check."},
    {"evaluate", evaluate, METH_VARARGS, "evaluate(rule, hole, board) -> (strength, category, best)"},
    {"category", category, METH_VARARGS, "category(rule, strength) -> int (0 when out of range)"},
    {"batch", batch, METH_VARARGS, "batch(rule, cpk, packed, out_strengths, out_categories) -> (status, index)"},
    {"equity", equity, METH_VARARGS,
     "equity(rule, nhands, holes, board, dead, iterations, seed, exact_limit) -> (wins, ties, shares, n, exact)"},
    {"equity_vs_random", equity_vs_random, METH_VARARGS,
     "equity_vs_random(rule, hole, board, opponents, iterations, seed) -> (wins, ties, shares, n)"},
    {"enumerate7", enumerate7, METH_NOARGS, "enumerate7() -> (category counts, distinct strengths, hands)"},
    {"enumerate5", enumerate5, METH_NOARGS, "enumerate5() -> (category counts, distinct strengths, hands)"},
    {"set_batch_threads", set_batch_threads, METH_O,
     "set_batch_threads(n) -> int: threads for one large batch (1..8); returns the value in force"},
    {"_batch_use_baseline", batch_use_baseline, METH_O,
     "tests: force the baseline batch loop (True) or choose by CPU (False); returns whether x86-64-v3 is used"},
    {"_register_invalid_hand", register_invalid_hand, METH_O, "internal: the InvalidHand class to raise"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_core", "handeval C core binding", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void) {
    if (he_init() != 0) {
        PyErr_SetString(PyExc_ImportError, "handeval: lookup table self-check failed");
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "NUM_STRENGTHS", HE_NUM_STRENGTHS) ||
        PyModule_AddIntConstant(m, "NUM_STRENGTHS3", HE_NUM_STRENGTHS3) ||
        PyModule_AddIntConstant(m, "TIE_UNIT", HE_TIE_UNIT) ||
        PyModule_AddIntConstant(m, "BATCH_UNKNOWN_CARD", HE_BATCH_UNKNOWN_CARD) ||
        PyModule_AddIntConstant(m, "BATCH_DUPLICATE_CARD", HE_BATCH_DUPLICATE_CARD) ||
        PyModule_AddIntConstant(m, "BATCH_BAD_ARGS", HE_BATCH_BAD_ARGS)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
