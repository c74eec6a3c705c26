/* Factorise byte spans of one buffer: codes in order of first appearance, and the values.

   Why: reading a million comparisons from CSV is mostly mapping four million fields to
   player, task and outcome codes. rating/csvfast.py does it with numpy (hashes, a bucket
   table, a verifying sort); this does the same in one pass over a hash table, each match
   checked byte for byte, so the result is exact and never needs the careful path.

   factorize(buffer, starts, ends) -> (codes, values)
     buffer: bytes-like; starts, ends: contiguous int64 buffers of equal length with
     0 <= start <= end <= len(buffer) (checked); codes: a bytearray of int64, one per span;
     values: the distinct spans as bytes, in order of first appearance.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static uint64_t hash(const unsigned char *p, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3ULL;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    return h;
}

/* Double the table and put every code back at its hash. */
static int grow(int64_t **slots, Py_ssize_t *size, const uint64_t *hashes, Py_ssize_t count) {
    Py_ssize_t bigger = *size * 2, mask = bigger - 1;
    int64_t *table = PyMem_Calloc(bigger, sizeof(int64_t));
    if (!table) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t c = 0; c < count; c++) {
        Py_ssize_t k = (Py_ssize_t)(hashes[c] & mask);
        while (table[k])
            k = (k + 1) & mask;
        table[k] = c + 1;
    }
    PyMem_Free(*slots);
    *slots = table;
    *size = bigger;
    return 1;
}

static int int64_buffer(PyObject *obj, Py_buffer *view) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return 0;
    if (view->itemsize != 8 || !view->format || !strchr("qlQL", view->format[0]) ||
        view->format[1] != '\0') {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "starts and ends must be contiguous int64 arrays");
        return 0;
    }
    return 1;
}

static PyObject *factorize(PyObject *self, PyObject *args) {
    PyObject *starts_obj, *ends_obj, *codes = NULL, *values = NULL, *result = NULL;
    Py_buffer data, starts = {0}, ends = {0};
    int64_t *slots = NULL, *firsts = NULL; /* slot: code + 1 (0 empty); firsts: span of code */
    uint64_t *hashes = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*OO", &data, &starts_obj, &ends_obj))
        return NULL;
    if (!int64_buffer(starts_obj, &starts))
        goto done;
    if (!int64_buffer(ends_obj, &ends))
        goto done;
    Py_ssize_t n = starts.len / 8;
    if (ends.len / 8 != n) {
        PyErr_SetString(PyExc_ValueError, "starts and ends differ in length");
        goto done;
    }
    const int64_t *s = starts.buf, *e = ends.buf;
    const unsigned char *buf = data.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i] < 0 || s[i] > e[i] || e[i] > data.len) {
            PyErr_SetString(PyExc_ValueError, "a span lies outside the buffer");
            goto done;
        }
    }
    Py_ssize_t size = 1024; /* grows with the distinct values, not the spans: few players
                               keep their table in the CPU cache */
    slots = PyMem_Calloc(size, sizeof(int64_t));
    firsts = PyMem_Malloc((n + 1) * sizeof(int64_t));
    hashes = PyMem_Malloc((n + 1) * sizeof(uint64_t));
    codes = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (!slots || !firsts || !hashes || !codes) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    int64_t *out = (int64_t *)PyByteArray_AS_STRING(codes);
    Py_ssize_t count = 0, mask = size - 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len = (Py_ssize_t)(e[i] - s[i]);
        const unsigned char *p = buf + s[i];
        uint64_t h = hash(p, len);
        Py_ssize_t k = (Py_ssize_t)(h & mask);
        for (;;) {
            int64_t slot = slots[k];
            if (slot == 0) {
                firsts[count] = i;
                hashes[count] = h;
                slots[k] = ++count;
                out[i] = count - 1;
                if (2 * count > size && !grow(&slots, &size, hashes, count))
                    goto done;
                mask = size - 1;
                break;
            }
            Py_ssize_t j = firsts[slot - 1];
            if (hashes[slot - 1] == h && e[j] - s[j] == len && memcmp(buf + s[j], p, len) == 0) {
                out[i] = slot - 1;
                break;
            }
            k = (k + 1) & mask;
        }
    }
    values = PyList_New(count);
    if (!values)
        goto done;
    for (Py_ssize_t c = 0; c < count; c++) {
        Py_ssize_t j = firsts[c];
        PyObject *value = PyBytes_FromStringAndSize((const char *)buf + s[j], e[j] - s[j]);
        if (!value)
            goto done;
        PyList_SET_ITEM(values, c, value);
    }
    result = PyTuple_Pack(2, codes, values);
done:
    PyMem_Free(slots);
    PyMem_Free(firsts);
    PyMem_Free(hashes);
    Py_XDECREF(codes);
    Py_XDECREF(values);
    if (starts.obj)
        PyBuffer_Release(&starts);
    if (ends.obj)
        PyBuffer_Release(&ends);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"factorize", factorize, METH_VARARGS, "Codes and distinct values of byte spans."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_spans",
    .m_doc = "Factorise byte spans of one buffer.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__spans(void) { return PyModule_Create(&module); }
