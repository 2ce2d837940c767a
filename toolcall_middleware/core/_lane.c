/* The text lane's usual chunk in C: `toolcall_middleware.core.lane._lane` without the interpreter.
 *
 * `lane.py` builds a lane as a Python closure and, where this module was compiled, wraps it in
 * `text_lane(...)` from here: a built-in function of one argument that does the usual chunk (plain
 * text: no escape, no byte that may start a marker, nothing held but one space) the way the Python
 * lane does, byte for byte and state for state, and hands every other chunk to the Python lane
 * (`fallback`) before changing anything. The Python lane stays the reference: the property tests
 * in tests/core/test_fast_paths.py run both against the general path.
 *
 * What a taken chunk changes, as in Python: `template.used = True`; with a holder, its `_held_ws`
 * (a held space is written before the text, trailing spaces are held back); with a tracker (a
 * text mode), its `_prev`, `_last` and `_after_call`.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* What a byte of a chunk's text means to the lane (a table per lane). */
#define STOP 1   /* a raw control character, or the first byte of a marker: not this lane's */
#define ESCAPE 2 /* a backslash or a quote: the Python lane decodes the string */
#define HIGH 4   /* part of a multi-byte UTF-8 character: the text must be valid UTF-8 */

static PyObject *str_used, *str_held_ws, *str_prev, *str_last, *str_after_call, *str_space, *str_empty;

typedef struct {
    PyObject_HEAD
    PyObject *head, *tail;           /* bytes around the text's string body in the host's event */
    PyObject *out_open, *out_close;  /* bytes around it in the client's (quotes included) */
    PyObject *holder;                /* holds back trailing whitespace, or NULL */
    PyObject *tracker;               /* a text mode's note of its last characters, or NULL */
    PyObject *template_;             /* learns that its shape was matched */
    PyObject *fallback;              /* the Python lane: every chunk this one does not take */
    Py_ssize_t cap;
    int holds_spaces;
    unsigned char table[256];
} LaneState;

static int
lane_traverse(LaneState *self, visitproc visit, void *arg)
{
    Py_VISIT(self->head);
    Py_VISIT(self->tail);
    Py_VISIT(self->out_open);
    Py_VISIT(self->out_close);
    Py_VISIT(self->holder);
    Py_VISIT(self->tracker);
    Py_VISIT(self->template_);
    Py_VISIT(self->fallback);
    return 0;
}

static int
lane_clear(LaneState *self)
{
    Py_CLEAR(self->head);
    Py_CLEAR(self->tail);
    Py_CLEAR(self->out_open);
    Py_CLEAR(self->out_close);
    Py_CLEAR(self->holder);
    Py_CLEAR(self->tracker);
    Py_CLEAR(self->template_);
    Py_CLEAR(self->fallback);
    return 0;
}

static void
lane_dealloc(LaneState *self)
{
    PyObject_GC_UnTrack(self);
    lane_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject LaneStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolcall_middleware.core._lane.LaneState",
    .tp_basicsize = sizeof(LaneState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)lane_traverse,
    .tp_clear = (inquiry)lane_clear,
    .tp_dealloc = (destructor)lane_dealloc,
};

/* The last character of the valid UTF-8 text `b[:n]` (n > 0), as a str. */
static PyObject *
last_char(const unsigned char *b, Py_ssize_t n)
{
    if (b[n - 1] < 0x80)
        return PyUnicode_FromOrdinal(b[n - 1]); /* a cached one-character string */
    Py_ssize_t i = n - 1;
    while (i > 0 && (b[i] & 0xC0) == 0x80)
        i--;
    return PyUnicode_DecodeUTF8((const char *)b + i, n - i, "strict");
}

/* `open + (b" " if space) + b[:n] + close` */
static PyObject *
framed(LaneState *s, int space, const unsigned char *b, Py_ssize_t n)
{
    Py_ssize_t lo = PyBytes_GET_SIZE(s->out_open), lc = PyBytes_GET_SIZE(s->out_close);
    PyObject *out = PyBytes_FromStringAndSize(NULL, lo + space + n + lc);
    if (out == NULL)
        return NULL;
    char *p = PyBytes_AS_STRING(out);
    memcpy(p, PyBytes_AS_STRING(s->out_open), lo);
    p += lo;
    if (space)
        *p++ = ' ';
    memcpy(p, b, n);
    memcpy(p + n, PyBytes_AS_STRING(s->out_close), lc);
    return out;
}

/* `tracker._prev, tracker._last, tracker._after_call = prev, last, False` */
static int
track(LaneState *s, PyObject *prev, PyObject *last)
{
    if (PyObject_SetAttr(s->tracker, str_prev, prev) < 0 || PyObject_SetAttr(s->tracker, str_last, last) < 0)
        return -1;
    return PyObject_SetAttr(s->tracker, str_after_call, Py_False);
}

/* The held whitespace: 0 none, 1 one space, 2 anything else (or -1 on an error). */
static int
held_kind(LaneState *s)
{
    PyObject *held = PyObject_GetAttr(s->holder, str_held_ws);
    if (held == NULL)
        return -1;
    int kind;
    if (!PyUnicode_Check(held))
        kind = 2;
    else {
        Py_ssize_t n = PyUnicode_GET_LENGTH(held);
        kind = n == 0 ? 0 : (n == 1 && PyUnicode_READ_CHAR(held, 0) == ' ') ? 1 : 2;
    }
    Py_DECREF(held);
    return kind;
}

static PyObject *
lane_call(PyObject *self_, PyObject *raw)
{
    LaneState *s = (LaneState *)self_;
    if (!PyBytes_CheckExact(raw))
        return PyObject_CallOneArg(s->fallback, raw);
    Py_ssize_t size = PyBytes_GET_SIZE(raw);
    Py_ssize_t head_len = PyBytes_GET_SIZE(s->head), tail_len = PyBytes_GET_SIZE(s->tail);
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(raw);
    if (size <= head_len + tail_len || size > s->cap || memcmp(p, PyBytes_AS_STRING(s->head), head_len) != 0 ||
        memcmp(p + size - tail_len, PyBytes_AS_STRING(s->tail), tail_len) != 0)
        Py_RETURN_NONE;
    const unsigned char *b = p + head_len;
    Py_ssize_t n = size - head_len - tail_len;
    unsigned flags = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        flags |= s->table[b[i]];
    if (flags & STOP)
        Py_RETURN_NONE; /* a raw control character; a marker may start */
    if (flags & ESCAPE)
        return PyObject_CallOneArg(s->fallback, raw);
    if (flags & HIGH) {
        PyObject *text = PyUnicode_DecodeUTF8((const char *)b, n, "strict");
        if (text == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                return NULL;
            PyErr_Clear();
            Py_RETURN_NONE; /* the SSE decoder replaces bad bytes: its text is not this one */
        }
        Py_DECREF(text);
    }
    int space = 0; /* a held space goes out before the text */
    if (s->holder != NULL) {
        int held = held_kind(s);
        if (held < 0)
            return NULL;
        if (b[n - 1] == ' ') {
            Py_ssize_t kept = n;
            while (kept > 0 && b[kept - 1] == ' ')
                kept--;
            if (!s->holds_spaces || kept == 0 || held != 0)
                return PyObject_CallOneArg(s->fallback, raw);
            /* Held back: a block (or the reasoning's end) may follow; the rest goes as it came. */
            if (PyObject_SetAttr(s->template_, str_used, Py_True) < 0)
                return NULL;
            PyObject *ws = n - kept == 1 ? Py_NewRef(str_space)
                                         : PyUnicode_DecodeUTF8((const char *)b + kept, n - kept, "strict");
            if (ws == NULL)
                return NULL;
            int failed = PyObject_SetAttr(s->holder, str_held_ws, ws);
            Py_DECREF(ws);
            if (failed < 0)
                return NULL;
            if (s->tracker != NULL) {
                PyObject *last = last_char(b, kept);
                if (last == NULL)
                    return NULL;
                failed = track(s, str_space, last);
                Py_DECREF(last);
                if (failed < 0)
                    return NULL;
            }
            return framed(s, 0, b, kept);
        }
        if (held == 2)
            return PyObject_CallOneArg(s->fallback, raw); /* other whitespace: escaped on the way out */
        if (PyObject_SetAttr(s->template_, str_used, Py_True) < 0)
            return NULL;
        if (s->tracker != NULL) {
            PyObject *last = last_char(b, n);
            if (last == NULL)
                return NULL;
            int failed = track(s, last, last);
            Py_DECREF(last);
            if (failed < 0)
                return NULL;
        }
        if (held == 1) {
            if (PyObject_SetAttr(s->holder, str_held_ws, str_empty) < 0)
                return NULL;
            space = 1; /* the usual held space (a word's, before the next one) */
        }
    }
    else if (PyObject_SetAttr(s->template_, str_used, Py_True) < 0)
        return NULL;
    return framed(s, space, b, n);
}

static PyMethodDef lane_def = {"lane", lane_call, METH_O,
                               "A whole SSE event as it came -> the client's bytes for it, or None."};

static PyObject *
text_lane(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *head, *tail, *table, *out_open, *out_close, *holder, *tracker, *template_, *fallback;
    Py_ssize_t cap;
    int holds_spaces;
    if (!PyArg_ParseTuple(args, "O!O!nO!O!O!OOpOO:text_lane", &PyBytes_Type, &head, &PyBytes_Type, &tail, &cap,
                          &PyBytes_Type, &table, &PyBytes_Type, &out_open, &PyBytes_Type, &out_close, &holder,
                          &tracker, &holds_spaces, &template_, &fallback))
        return NULL;
    if (PyBytes_GET_SIZE(table) != 256) {
        PyErr_SetString(PyExc_ValueError, "the byte table must have 256 entries");
        return NULL;
    }
    LaneState *s = PyObject_GC_New(LaneState, &LaneStateType);
    if (s == NULL)
        return NULL;
    s->head = Py_NewRef(head);
    s->tail = Py_NewRef(tail);
    s->out_open = Py_NewRef(out_open);
    s->out_close = Py_NewRef(out_close);
    s->holder = holder == Py_None ? NULL : Py_NewRef(holder);
    s->tracker = tracker == Py_None ? NULL : Py_NewRef(tracker);
    s->template_ = Py_NewRef(template_);
    s->fallback = Py_NewRef(fallback);
    s->cap = cap;
    s->holds_spaces = holds_spaces;
    memcpy(s->table, PyBytes_AS_STRING(table), 256);
    PyObject_GC_Track(s);
    PyObject *lane = PyCFunction_NewEx(&lane_def, (PyObject *)s, NULL);
    Py_DECREF(s);
    return lane;
}

static PyMethodDef module_methods[] = {
    {"text_lane", text_lane, METH_VARARGS,
     "text_lane(head, tail, cap, table, out_open, out_close, holder, tracker, holds_spaces, template, fallback)"
     " -> lane: see toolcall_middleware.core.lane."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef lane_module = {
    PyModuleDef_HEAD_INIT, "toolcall_middleware.core._lane",
    "The text lane's usual chunk in C (see toolcall_middleware.core.lane).", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__lane(void)
{
    if (PyType_Ready(&LaneStateType) < 0)
        return NULL;
    str_used = PyUnicode_InternFromString("used");
    str_held_ws = PyUnicode_InternFromString("_held_ws");
    str_prev = PyUnicode_InternFromString("_prev");
    str_last = PyUnicode_InternFromString("_last");
    str_after_call = PyUnicode_InternFromString("_after_call");
    str_space = PyUnicode_InternFromString(" ");
    str_empty = PyUnicode_InternFromString("");
    if (!str_used || !str_held_ws || !str_prev || !str_last || !str_after_call || !str_space || !str_empty)
        return NULL;
    PyObject *m = PyModule_Create(&lane_module);
    if (m == NULL)
        return NULL;
    PyObject *flags = Py_BuildValue("{sisisi}", "STOP", STOP, "ESCAPE", ESCAPE, "HIGH", HIGH);
    if (flags == NULL || PyModule_AddObject(m, "FLAGS", flags) < 0) {
        Py_XDECREF(flags);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
