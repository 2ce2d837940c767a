/* The compiled helper: pure functions on bytes, written against Python's limited C API.
 *
 * It holds no state, reads no Python object's attributes and keeps nothing between calls: each
 * function takes bytes and gives back plain values, and has a Python counterpart or fallback the
 * tests hold it to (tests/core/test_request_body.py, tests/fuzz/test_c_helper.py). The package
 * works without it (`hatch_build.py` leaves it out where no C compiler answers, and
 * `TOOLCALL_MIDDLEWARE_PURE_PYTHON` keeps it unloaded: see toolcall_middleware/core/compiled.py).
 */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* -- a request body's member, found in its bytes ------------------------------------------------
 *
 * `member_span(raw, name)`: where the value of the top-level member `name` of the JSON object
 * `raw` lies, `(start, end)`, found without decoding anything (`core.request.body` reads a
 * request's tools by their bytes: requests that send the same tools decode them once). The last
 * member of that name counts, as for `json.loads`. `None` when the member is not there, or when
 * the bytes are not an object this scanner reads with certainty: a top-level key with an escape
 * (it may spell the name), or anything it does not expect where it looks; the caller then decodes
 * the whole body as usual (which also says what is wrong with a bad one). Strings are skipped by
 * their quotes and escapes and nested values by their brackets, as a JSON parser reads them, so
 * for a body a parser accepts the span is exactly that member's value. */

static inline Py_ssize_t
skip_space(const char *b, Py_ssize_t i, Py_ssize_t n)
{
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    return i;
}

/* `b[i]` opens a string: the index past its closing quote, or -1. A quote ends it when an even
 * number of backslashes comes before it (an odd one escapes it). With `escaped`, says whether
 * the string held a backslash. */
static Py_ssize_t
skip_string(const char *b, Py_ssize_t i, Py_ssize_t n, int *escaped)
{
    Py_ssize_t start = i;
    for (i++; i < n;) {
        const char *quote = memchr(b + i, '"', (size_t)(n - i));
        if (quote == NULL)
            return -1;
        Py_ssize_t end = quote - b, before = end;
        while (b[before - 1] == '\\') /* (stops at the opening quote at the latest) */
            before--;
        if ((end - before) % 2 == 0) {
            if (escaped != NULL && memchr(b + start + 1, '\\', (size_t)(end - start - 1)) != NULL)
                *escaped = 1;
            return end + 1;
        }
        i = end + 1;
    }
    return -1;
}

/* `b[i]` starts a value: the index past it, or -1. Brackets are counted, not matched: a body
 * whose brackets do not match is one the parser refuses anyway. */
static Py_ssize_t
skip_value(const char *b, Py_ssize_t i, Py_ssize_t n)
{
    char c = b[i];
    if (c == '"')
        return skip_string(b, i, n, NULL);
    if (c == '{' || c == '[') {
        Py_ssize_t depth = 0;
        while (i < n) {
            c = b[i];
            if (c == '"') {
                i = skip_string(b, i, n, NULL);
                if (i < 0)
                    return -1;
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return -1;
    }
    /* a number or a literal: up to the next delimiter */
    Py_ssize_t start = i;
    while (i < n && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' &&
           b[i] != '\r')
        i++;
    return i > start ? i : -1;
}

static PyObject *
member_span(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *raw, *name;
    if (!PyArg_ParseTuple(args, "SS:member_span", &raw, &name))
        return NULL;
    const char *b = PyBytes_AsString(raw), *name_bytes = PyBytes_AsString(name);
    Py_ssize_t name_len = PyBytes_Size(name);
    if (b == NULL || name_bytes == NULL || name_len < 0)
        return NULL;
    Py_ssize_t n = PyBytes_Size(raw), i = skip_space(b, 0, n), found_start = -1, found_end = -1;
    int ok = 0;
    if (i < n && b[i] == '{') {
        i = skip_space(b, i + 1, n);
        if (i < n && b[i] == '}')
            ok = 1;
        while (!ok && i < n && b[i] == '"') {
            int escaped = 0;
            Py_ssize_t key_end = skip_string(b, i, n, &escaped);
            if (key_end < 0 || escaped)
                break;
            int match = key_end - i - 2 == name_len && memcmp(b + i + 1, name_bytes, (size_t)name_len) == 0;
            i = skip_space(b, key_end, n);
            if (i >= n || b[i] != ':')
                break;
            i = skip_space(b, i + 1, n);
            if (i >= n)
                break;
            Py_ssize_t value_end = skip_value(b, i, n);
            if (value_end < 0)
                break;
            if (match) {
                found_start = i;
                found_end = value_end;
            }
            i = skip_space(b, value_end, n);
            if (i < n && b[i] == ',') {
                i = skip_space(b, i + 1, n);
                continue;
            }
            if (i < n && b[i] == '}')
                ok = 1;
            break;
        }
        if (ok && skip_space(b, i + 1, n) != n)
            ok = 0; /* something after the object */
    }
    if (!ok || found_start < 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(nn)", found_start, found_end);
}

static PyMethodDef module_methods[] = {
    {"member_span", member_span, METH_VARARGS,
     "member_span(raw, name) -> (start, end) of the value of the JSON object's top-level member, or None:"
     " see toolcall_middleware.core.request.body."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT, "toolcall_middleware.core._scan",
    "Pure functions on bytes (see toolcall_middleware.core.compiled).",
    0, module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    return PyModuleDef_Init(&scan_module);
}
