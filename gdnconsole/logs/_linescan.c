/* One pass over a block of SGLang log text: which lines matter.
 *
 * A serving log is mostly Decode/Prefill batch lines and uvicorn access lines. This finds the others in
 * one pass at memchr speed (Python needs three bytes.count passes for the same answer): it returns the
 * number of lines and, for every line that is not a batch or access line, and for the first and last line
 * of each run of those, its (line index, start, end) — the same records as logs/scan.py's pure-Python walker.
 */
#define _GNU_SOURCE /* memmem */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define FRAME_MAX 96 /* "] " of the frame lies within this many bytes of the line start */

static int starts_with(const char *p, const char *end, const char *word, size_t n) {
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

enum { OTHER = 0, DECODE = 1, PREFILL = 2, ACCESS = 3 };

/* The rank prefix of a frame ("DP1 TP1" in "[2025-05-31 18:31:21 DP1 TP1]"): from the first capital letter
   after the bracket to the closing one; empty on the main process and at tp = 1 (FACTS §1.2). */
typedef struct {
    const char *at;
    Py_ssize_t len;
} Key;

static Key rank_key(const char *line, const char *close) {
    const char *p = line + 1;
    while (p < close && !(*p >= 'A' && *p <= 'Z')) p++;
    Key key = {p, close - p};
    return key;
}

/* A batch line ("[ts( rank)] Decode batch…" / "Prefill batch…") or a uvicorn access line; else OTHER.
   For a batch line, *key is its rank prefix. */
static int kind_of(const char *line, const char *end, Key *key) {
    if (line >= end || *line != '[') return 0;
    const char *limit = line + FRAME_MAX < end ? line + FRAME_MAX : end;
    const char *close = memchr(line, ']', (size_t)(limit - line));
    if (close == NULL || close + 1 >= end || close[1] != ' ') return 0;
    const char *msg = close + 2;
    if (starts_with(msg, end, "Decode batch", 12)) {
        *key = rank_key(line, close);
        return DECODE;
    }
    if (starts_with(msg, end, "Prefill batch", 13)) {
        *key = rank_key(line, close);
        return PREFILL;
    }
    if (starts_with(msg, end, "INFO:     ", 10)) {
        /* access lines: 'client:port - "GET /path HTTP/1.1" 200 OK' */
        return memmem(msg, (size_t)(end - msg), "HTTP/1.1\"", 9) != NULL ? ACCESS : OTHER;
    }
    return OTHER;
}

typedef struct {
    Py_ssize_t index, start, end; /* index -1: none */
} Line;

static int append(PyObject *out, Line line) {
    PyObject *item = Py_BuildValue("(nnn)", line.index, line.start, line.end);
    if (item == NULL) return -1;
    int rc = PyList_Append(out, item);
    Py_DECREF(item);
    return rc;
}

/* A run of batch/access lines is told by a few of its lines: its first line (where serving or warm-up
   begins), its first Prefill and first Decode line (in an excerpt that begins mid-stream they prove the
   server was serving), its last Decode line (the latest throughput and accept length) and its last line.
   The first line is kept when the run starts; the others wait here, in line order, until it ends. */
typedef struct {
    Line first_prefill, first_decode, last_decode, last;
} Run;

static void run_reset(Run *run) {
    run->first_prefill.index = run->first_decode.index = run->last_decode.index = run->last.index = -1;
}

static int end_run(PyObject *out, Run *run) {
    Line keep[4] = {run->first_prefill, run->first_decode, run->last_decode, run->last};
    /* sort the four by index (tiny insertion sort) and append each distinct one */
    for (int i = 1; i < 4; i++) {
        Line x = keep[i];
        int j = i - 1;
        while (j >= 0 && keep[j].index > x.index) {
            keep[j + 1] = keep[j];
            j--;
        }
        keep[j + 1] = x;
    }
    Py_ssize_t previous = -1;
    for (int i = 0; i < 4; i++) {
        if (keep[i].index < 0 || keep[i].index == previous) continue;
        if (append(out, keep[i]) < 0) return -1;
        previous = keep[i].index;
    }
    run_reset(run);
    return 0;
}

/* The rank prefixes of the batch lines seen so far in this call: the first batch line of each rank is
   kept (with DP or PP every rank logs its own batches; a run of them must not hide a rank). */
#define KEYS_MAX 256
typedef struct {
    Key keys[KEYS_MAX];
    int count;
    Key last; /* the previous batch line's prefix: most lines repeat it */
} Ranks;

/* 1 when key was not seen before (and remember it), 0 otherwise. */
static int new_rank(Ranks *ranks, Key key) {
    if (key.len == ranks->last.len && memcmp(key.at, ranks->last.at, (size_t)key.len) == 0) return 0;
    ranks->last = key;
    for (int i = 0; i < ranks->count; i++) {
        if (ranks->keys[i].len == key.len && memcmp(ranks->keys[i].at, key.at, (size_t)key.len) == 0) return 0;
    }
    if (ranks->count == KEYS_MAX) return 0;
    ranks->keys[ranks->count++] = key;
    return 1;
}

/* scan(buf, start, end) -> (lines, [(index, start, end), ...]); [start, end) holds whole lines. */
static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &end)) return NULL;
    if (start < 0 || end > view.len || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start/end outside the buffer");
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const char *base = (const char *)view.buf;
    const char *p = base + start, *stop = base + end;
    Run run;
    run_reset(&run);
    Ranks ranks;
    ranks.count = 0;
    ranks.last.at = NULL;
    ranks.last.len = -1;
    Py_ssize_t index = 0;
    int in_run = 0, failed = 0;
    while (p < stop && !failed) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        const char *line_end = nl ? nl : stop;
        Line line = {index, p - base, line_end - base};
        Key key = {NULL, 0};
        int kind = kind_of(p, line_end, &key);
        if (kind != OTHER) {
            if (in_run && kind != ACCESS && new_rank(&ranks, key)) {
                /* a rank's first batch line: end the run before it and start a new one with it */
                failed = end_run(out, &run) < 0 || append(out, line) < 0;
            } else if (!in_run) {
                if (kind != ACCESS) new_rank(&ranks, key);
                failed = append(out, line) < 0;
                in_run = 1;
            } else {
                run.last = line;
                if (kind == DECODE) {
                    if (run.first_decode.index < 0) run.first_decode = line;
                    run.last_decode = line;
                } else if (kind == PREFILL && run.first_prefill.index < 0) {
                    run.first_prefill = line;
                }
            }
        } else {
            failed = end_run(out, &run) < 0 || append(out, line) < 0;
            in_run = 0;
        }
        index++;
        p = nl ? nl + 1 : stop;
    }
    if (!failed) failed = end_run(out, &run) < 0;
    PyBuffer_Release(&view);
    if (failed) {
        Py_DECREF(out);
        return NULL;
    }
    return Py_BuildValue("(nN)", index, out);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "scan(buf, start, end) -> (lines, [(index, start, end), ...])"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_linescan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__linescan(void) { return PyModule_Create(&module); }
