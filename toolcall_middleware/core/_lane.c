/* The text lane's usual chunk in C: `toolcall_middleware.core.lane._lane` without the interpreter.
 *
 * `lane.py` builds a lane as a Python closure and, where this module was compiled, wraps it in
 * `text_lane(...)` from here: a built-in function of one argument that does the usual chunk (text,
 * escaped or not, with no byte that may start a marker; whitespace held before or after it) the
 * way the Python lane does, byte for byte and state for state, and hands every other chunk (a
 * text of whitespace only, a lane whose layout rules depend on more) to the Python lane
 * (`fallback`) before changing anything. The Python lane stays the reference: the property tests
 * in tests/core/test_fast_paths.py run both against the general path.
 *
 * What a taken chunk changes, as in Python: `template.used = True`; with a holder, its `_held_ws`
 * (a held space is written before the text, trailing spaces are held back); with a tracker (a
 * text mode), its `_prev`, `_last` and `_after_call`.
 *
 * The module also finds a request body's member in its bytes (`member_span`, at the end), so
 * that requests which send the same tools decode them once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <structmember.h>

/* `tp_dealloc` of the collected types here whose `tp_clear` lets go of everything they hold. */
static void
cleared_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    Py_TYPE(self)->tp_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* What a byte of a chunk's text means to the lane (a table per lane). */
#define STOP 1   /* a raw control character, or the first byte of a marker: not this lane's */
#define ESCAPE 2 /* a backslash or a quote: the string is unescaped (`string_text`) */
#define HIGH 4   /* part of a multi-byte UTF-8 character: the text must be valid UTF-8 */
/* The most trailing whitespace a holder holds (`textscan.HELD_WHITESPACE`, checked by the tests):
 * a chunk ending in more goes to the Python lane, which holds only that much of it. */
#define HELD_WHITESPACE 128

static PyObject *str_used, *str_held_ws, *str_prev, *str_last, *str_after_call, *str_space, *str_empty;

/* A plain attribute the lanes read or write per chunk (a text mode's `_prev`, a template's
 * `used`, ...): in its slot, where the object's type keeps it in one (`__slots__`: the classes
 * the lanes work on declare these), else through the attribute protocol. A slot is only used
 * when the type's own attribute of that name is the slot's descriptor and attribute access is
 * the generic one, so both ways are the same. */
typedef struct {
    PyObject *name;    /* interned, module-lifetime */
    Py_ssize_t offset; /* of the slot in the object, or 0: the attribute protocol */
} Field;

static void
field_init(Field *f, PyObject *obj, PyObject *name)
{
    f->name = name;
    f->offset = 0;
    if (obj == NULL || obj == Py_None)
        return;
    PyTypeObject *type = Py_TYPE(obj);
    if (type->tp_getattro != PyObject_GenericGetAttr || type->tp_setattro != PyObject_GenericSetAttr)
        return;
    PyObject *found = PyObject_GetAttr((PyObject *)type, name);
    if (found == NULL) {
        PyErr_Clear();
        return;
    }
    if (Py_IS_TYPE(found, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)found)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY) &&
            PyObject_TypeCheck(obj, PyDescr_TYPE(found)))
            f->offset = member->offset;
    }
    Py_DECREF(found);
}

/* getattr(obj, name): a new reference, or NULL with an error set */
static PyObject *
field_get(PyObject *obj, const Field *f)
{
    if (f->offset != 0) {
        PyObject *value = *(PyObject **)((char *)obj + f->offset);
        if (value != NULL)
            return Py_NewRef(value);
    }
    return PyObject_GetAttr(obj, f->name); /* (an empty slot: its AttributeError) */
}

/* setattr(obj, name, value) */
static int
field_set(PyObject *obj, const Field *f, PyObject *value)
{
    if (f->offset == 0)
        return PyObject_SetAttr(obj, f->name, value);
    PyObject **slot = (PyObject **)((char *)obj + f->offset);
    PyObject *old = *slot;
    *slot = Py_NewRef(value);
    Py_XDECREF(old);
    return 0;
}

/* What both lanes know of a chunk's frame: the host's bytes around the text's string body, the
 * largest event they take, what each byte of a text means to them, the template to tell of a
 * match, and for escaped text the characters that may start a marker. */
typedef struct {
    PyObject *head, *tail; /* bytes around the text's string body in the host's event */
    PyObject *template_;   /* learns that its shape was matched */
    Field used;            /* template.used */
    PyObject *firsts;      /* str: the first character of each marker */
    Py_ssize_t cap;
    unsigned char table[256];
} Frame;

static int
frame_traverse(Frame *f, visitproc visit, void *arg)
{
    Py_VISIT(f->head);
    Py_VISIT(f->tail);
    Py_VISIT(f->template_);
    Py_VISIT(f->firsts);
    return 0;
}

static void
frame_clear(Frame *f)
{
    Py_CLEAR(f->head);
    Py_CLEAR(f->tail);
    Py_CLEAR(f->template_);
    Py_CLEAR(f->firsts);
}

static int
frame_init(Frame *f, PyObject *head, PyObject *tail, Py_ssize_t cap, PyObject *table, PyObject *template_,
           PyObject *firsts)
{
    if (PyBytes_GET_SIZE(table) != 256) {
        PyErr_SetString(PyExc_ValueError, "the byte table must have 256 entries");
        return -1;
    }
    f->head = Py_NewRef(head);
    f->tail = Py_NewRef(tail);
    f->template_ = Py_NewRef(template_);
    field_init(&f->used, template_, str_used);
    f->firsts = Py_NewRef(firsts);
    f->cap = cap;
    memcpy(f->table, PyBytes_AS_STRING(table), 256);
    return 0;
}

/* `raw` (bytes) is a whole event in the frame, no longer than the cap: its string body `b[:n]`
 * (n > 0) and the flags of its bytes, and 1; else 0. */
static int
frame_body(const Frame *f, PyObject *raw, const unsigned char **body, Py_ssize_t *length, unsigned *flags)
{
    Py_ssize_t size = PyBytes_GET_SIZE(raw);
    Py_ssize_t head_len = PyBytes_GET_SIZE(f->head), tail_len = PyBytes_GET_SIZE(f->tail);
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(raw);
    if (size <= head_len + tail_len || size > f->cap || memcmp(p, PyBytes_AS_STRING(f->head), head_len) != 0 ||
        memcmp(p + size - tail_len, PyBytes_AS_STRING(f->tail), tail_len) != 0)
        return 0;
    const unsigned char *b = p + head_len;
    Py_ssize_t n = size - head_len - tail_len;
    unsigned seen = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        seen |= f->table[b[i]];
    *body = b;
    *length = n;
    *flags = seen;
    return 1;
}

/* Whether `text` holds a character a marker starts with: 1, 0, or -1 on an error. */
static int
may_start_marker(const Frame *f, PyObject *text)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), count = PyUnicode_GET_LENGTH(f->firsts);
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t at = PyUnicode_FindChar(text, PyUnicode_READ_CHAR(f->firsts, k), 0, len, 1);
        if (at != -1)
            return at == -2 ? -1 : 1;
    }
    return 0;
}

typedef struct {
    PyObject_HEAD
    Frame f;
    PyObject *out_open, *out_close;  /* bytes around the text in the client's (quotes included) */
    PyObject *holder;                /* holds back trailing whitespace, or NULL */
    PyObject *tracker;               /* a text mode's note of its last characters, or NULL */
    Field held_ws, prev, last, after_call; /* holder._held_ws; tracker._prev, ._last, ._after_call */
    PyObject *fallback;              /* the Python lane: every chunk this one does not take */
    PyObject *writer;                /* `lane.Writer` (a Responses client), or NULL: `out_open`/`out_close` */
    PyObject *encode, *encode_ascii; /* json's encode_basestring(_ascii): escaped text written again */
    int holds_spaces;
    int simple_take;                 /* the Python lane's `take` of a text not ending in whitespace is `held + text` */
} LaneState;

static int
lane_traverse(LaneState *self, visitproc visit, void *arg)
{
    Py_VISIT(self->out_open);
    Py_VISIT(self->out_close);
    Py_VISIT(self->holder);
    Py_VISIT(self->tracker);
    Py_VISIT(self->fallback);
    Py_VISIT(self->writer);
    Py_VISIT(self->encode);
    Py_VISIT(self->encode_ascii);
    return frame_traverse(&self->f, visit, arg);
}

static int
lane_clear(LaneState *self)
{
    Py_CLEAR(self->out_open);
    Py_CLEAR(self->out_close);
    Py_CLEAR(self->holder);
    Py_CLEAR(self->tracker);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->writer);
    Py_CLEAR(self->encode);
    Py_CLEAR(self->encode_ascii);
    frame_clear(&self->f);
    return 0;
}

static PyTypeObject LaneStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolcall_middleware.core._lane.LaneState",
    .tp_basicsize = sizeof(LaneState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)lane_traverse,
    .tp_clear = (inquiry)lane_clear,
    .tp_dealloc = cleared_dealloc,
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

static PyObject *framed(LaneState *s, int space, const unsigned char *b, Py_ssize_t n);

/* The client's bytes for the text `(" " if space) + b[:n]` (valid UTF-8, no escapes): between
 * `out_open` and `out_close`, or `writer(text, token)`, the token being the text in quotes. */
static PyObject *
out(LaneState *s, int space, const unsigned char *b, Py_ssize_t n)
{
    if (s->writer == NULL)
        return framed(s, space, b, n);
    PyObject *token = framed(s, space, b, n); /* (a writer's lane frames with quotes) */
    if (token == NULL)
        return NULL;
    PyObject *text = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(token) + 1, PyBytes_GET_SIZE(token) - 2, "strict");
    PyObject *result = text == NULL ? NULL : PyObject_CallFunctionObjArgs(s->writer, text, token, NULL);
    Py_XDECREF(text);
    Py_DECREF(token);
    return result;
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
    if (field_set(s->tracker, &s->prev, prev) < 0 || field_set(s->tracker, &s->last, last) < 0)
        return -1;
    return field_set(s->tracker, &s->after_call, Py_False);
}

/* The held whitespace: 0 none, 1 one space, 2 anything else (or -1 on an error). */
static int
held_kind(LaneState *s)
{
    PyObject *held = field_get(s->holder, &s->held_ws);
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

/* The value of the hex digit `c`, or -1 */
static int
hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The four hex digits at `p` as a code unit, or -1 */
static long
hex4(const unsigned char *p)
{
    long value = 0;
    for (int k = 0; k < 4; k++) {
        int digit = hex_value(p[k]);
        if (digit < 0)
            return -1;
        value = (value << 4) | digit;
    }
    return value;
}

/* `c` in UTF-8 at `out` (a lone surrogate as its three bytes, read back with "surrogatepass");
 * the bytes written. */
static Py_ssize_t
put_utf8(unsigned char *out, Py_UCS4 c)
{
    if (c < 0x80) {
        out[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (unsigned char)(0xC0 | (c >> 6));
        out[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (c >> 12));
        out[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (c >> 18));
    out[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

/* The text of the string body `b[:n]` (no raw control character in it): decoded, and unescaped
 * as json's scanner (`json.decoder.scanstring`, strict) reads `b[:n] + '"'`: its escapes, a
 * `\uXXXX` high surrogate joined with a low one that follows it as an escape, any other
 * surrogate kept alone. NULL with no error set when it is not exactly one string's body (bad
 * UTF-8, a bad escape, a quote that ends it early). */
static PyObject *
string_text(const unsigned char *b, Py_ssize_t n, unsigned flags)
{
    if (flags & HIGH) { /* the raw text must be valid UTF-8 (as decoding it first, strictly) */
        PyObject *check = PyUnicode_DecodeUTF8((const char *)b, n, "strict");
        if (check == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                PyErr_Clear();
            return NULL;
        }
        if (!(flags & ESCAPE))
            return check;
        Py_DECREF(check);
    }
    if (!(flags & ESCAPE))
        return PyUnicode_DecodeASCII((const char *)b, n, "strict");
    unsigned char small[256];
    unsigned char *out = n <= (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc(n); /* never longer */
    if (out == NULL)
        return PyErr_NoMemory();
    Py_ssize_t size = 0, i = 0;
    int bad = 0;
    while (i < n && !bad) {
        unsigned char c = b[i];
        if (c == '"') {
            bad = 1; /* an unescaped quote ends the string early */
            break;
        }
        if (c != '\\') {
            out[size++] = c;
            i++;
            continue;
        }
        if (i + 1 >= n) {
            bad = 1; /* the backslash would escape the closing quote */
            break;
        }
        unsigned char e = b[i + 1];
        i += 2;
        switch (e) {
        case '"': out[size++] = '"'; break;
        case '\\': out[size++] = '\\'; break;
        case '/': out[size++] = '/'; break;
        case 'b': out[size++] = '\b'; break;
        case 'f': out[size++] = '\f'; break;
        case 'n': out[size++] = '\n'; break;
        case 'r': out[size++] = '\r'; break;
        case 't': out[size++] = '\t'; break;
        case 'u': {
            long unit = i + 4 <= n ? hex4(b + i) : -1;
            if (unit < 0) {
                bad = 1;
                break;
            }
            i += 4;
            Py_UCS4 code = (Py_UCS4)unit;
            if (code >= 0xD800 && code <= 0xDBFF && i + 6 <= n && b[i] == '\\' && b[i + 1] == 'u') {
                long low = hex4(b + i + 2);
                if (low < 0) {
                    bad = 1; /* (json's scanner reads the second escape as a pair's, and fails) */
                    break;
                }
                if (low >= 0xDC00 && low <= 0xDFFF) {
                    code = 0x10000 + ((code - 0xD800) << 10) + ((Py_UCS4)low - 0xDC00);
                    i += 6;
                }
            }
            size += put_utf8(out + size, code);
            break;
        }
        default:
            bad = 1;
        }
    }
    PyObject *text = bad ? NULL : PyUnicode_DecodeUTF8((const char *)out, size, "surrogatepass");
    if (out != small)
        PyMem_Free(out);
    return text;
}

/* `framing.utf8.token_bytes(text)`: `text` as one JSON string token (quotes included) in UTF-8,
 * every non-ASCII character escaped where it has no UTF-8 form (a lone surrogate). */
static PyObject *
token_bytes(LaneState *s, PyObject *text)
{
    PyObject *token = PyObject_CallOneArg(s->encode, text);
    if (token == NULL)
        return NULL;
    PyObject *bytes = PyUnicode_Check(token) ? PyUnicode_AsUTF8String(token) : PyBytes_FromObject(token);
    Py_DECREF(token);
    if (bytes != NULL || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
        return bytes;
    PyErr_Clear();
    token = PyObject_CallOneArg(s->encode_ascii, text);
    if (token == NULL)
        return NULL;
    bytes = PyUnicode_Check(token) ? PyUnicode_AsUTF8String(token) : PyBytes_FromObject(token);
    Py_DECREF(token);
    return bytes;
}

static int
is_layout_ws(Py_UCS4 c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n'; /* textscan.WHITESPACE */
}

/* `out(take(text))` for a lane whose `take` is simple (`simple_take`): `text` (not empty, no
 * character a marker may start with) goes out after the whitespace held before it; its own
 * trailing whitespace is held back where the lane holds it (`holds_spaces`), and the tracker
 * notes its last characters. A text of whitespace only: the Python lane (`raw`), which knows
 * what the machine does with it. */
static PyObject *
take_out(LaneState *s, PyObject *raw, PyObject *text)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), kept = len;
    while (kept > 0 && is_layout_ws(PyUnicode_READ_CHAR(text, kept - 1)))
        kept--;
    if (kept == 0 || (s->holder != NULL && s->holds_spaces && len - kept > HELD_WHITESPACE))
        return PyObject_CallOneArg(s->fallback, raw);
    PyObject *held = NULL, *emitted = NULL, *body = NULL, *new_held = NULL, *result = NULL;
    if (s->holder != NULL) {
        held = field_get(s->holder, &s->held_ws);
        if (held == NULL)
            return NULL;
        if (!PyUnicode_Check(held)) {
            Py_DECREF(held);
            return PyObject_CallOneArg(s->fallback, raw);
        }
    }
    Py_ssize_t upto = s->holds_spaces ? kept : len;
    PyObject *own = upto == len ? Py_NewRef(text) : PyUnicode_Substring(text, 0, upto);
    if (own == NULL)
        goto done;
    if (held != NULL && PyUnicode_GET_LENGTH(held) > 0) {
        emitted = PyUnicode_Concat(held, own);
        Py_DECREF(own);
    }
    else
        emitted = own;
    if (emitted == NULL)
        goto done;
    body = token_bytes(s, emitted); /* the text as a JSON string token, quotes included */
    if (body == NULL)
        goto done;
    if (!PyBytes_Check(body) || PyBytes_GET_SIZE(body) < 2) {
        PyErr_SetString(PyExc_TypeError, "encode_basestring must give a quoted JSON string");
        goto done;
    }
    /* Taken: the state moves on as `take` moves it. */
    if (field_set(s->f.template_, &s->f.used, Py_True) < 0)
        goto done;
    if (s->tracker != NULL) {
        PyObject *prev = PyUnicode_Substring(text, len - 1, len);
        PyObject *last = prev == NULL ? NULL : PyUnicode_Substring(text, kept - 1, kept);
        int failed = last == NULL || track(s, prev, last) < 0;
        Py_XDECREF(prev);
        Py_XDECREF(last);
        if (failed)
            goto done;
    }
    if (s->holder != NULL) {
        new_held = upto == len ? Py_NewRef(str_empty) : PyUnicode_Substring(text, upto, len);
        if (new_held == NULL || field_set(s->holder, &s->held_ws, new_held) < 0)
            goto done;
    }
    PyObject *token = framed(s, 0, (const unsigned char *)PyBytes_AS_STRING(body) + 1, PyBytes_GET_SIZE(body) - 2);
    if (s->writer == NULL || token == NULL)
        result = token;
    else {
        result = PyObject_CallFunctionObjArgs(s->writer, emitted, token, NULL); /* (framed in quotes) */
        Py_DECREF(token);
    }
done:
    Py_XDECREF(new_held);
    Py_XDECREF(body);
    Py_XDECREF(emitted);
    Py_XDECREF(held);
    return result;
}

/* A chunk whose text has escapes: decoded (as json does), it is the lane's when no marker may
 * start in it, it does not end in whitespace and nothing but one space is held; it goes out
 * encoded again as `token_bytes` does. Any other: the Python lane, before anything changes. */
static PyObject *
escaped_chunk(LaneState *s, PyObject *raw, const unsigned char *b, Py_ssize_t n, unsigned flags)
{
    if (!s->simple_take)
        return PyObject_CallOneArg(s->fallback, raw);
    PyObject *text = string_text(b, n, flags);
    if (text == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE; /* bad UTF-8, a bad escape, an unescaped quote */
    }
    PyObject *result = NULL;
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int marker = len == 0 ? 1 : may_start_marker(&s->f, text);
    if (marker != 0) {
        result = marker < 0 ? NULL : Py_NewRef(Py_None); /* nothing, or a marker may start */
        goto done;
    }
    result = take_out(s, raw, text);
done:
    Py_DECREF(text);
    return result;
}

/* `take_out` for the plain text `b[:n]` (valid UTF-8, no escapes) */
static PyObject *
plain_take_out(LaneState *s, PyObject *raw, const unsigned char *b, Py_ssize_t n)
{
    if (!s->simple_take)
        return PyObject_CallOneArg(s->fallback, raw);
    PyObject *text = PyUnicode_DecodeUTF8((const char *)b, n, "strict");
    if (text == NULL)
        return NULL;
    PyObject *result = take_out(s, raw, text);
    Py_DECREF(text);
    return result;
}

static PyObject *
lane_call(PyObject *self_, PyObject *raw)
{
    LaneState *s = (LaneState *)self_;
    if (!PyBytes_CheckExact(raw))
        return PyObject_CallOneArg(s->fallback, raw);
    const unsigned char *b;
    Py_ssize_t n;
    unsigned flags;
    if (!frame_body(&s->f, raw, &b, &n, &flags) || (flags & STOP))
        Py_RETURN_NONE; /* another shape; a raw control character; a marker may start */
    if (flags & ESCAPE)
        return escaped_chunk(s, raw, b, n, flags);
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
            if (!s->holds_spaces || kept == 0 || held == 2 || n - kept > HELD_WHITESPACE)
                return plain_take_out(s, raw, b, n);
            /* Held back: a block (or the reasoning's end) may follow; the rest goes as it came,
             * after a space held before it. */
            if (field_set(s->f.template_, &s->f.used, Py_True) < 0)
                return NULL;
            PyObject *ws = n - kept == 1 ? Py_NewRef(str_space)
                                         : PyUnicode_DecodeUTF8((const char *)b + kept, n - kept, "strict");
            if (ws == NULL)
                return NULL;
            int failed = field_set(s->holder, &s->held_ws, ws);
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
            return out(s, held, b, kept);
        }
        if (held == 2)
            return plain_take_out(s, raw, b, n); /* other whitespace: escaped on the way out */
        if (field_set(s->f.template_, &s->f.used, Py_True) < 0)
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
            if (field_set(s->holder, &s->held_ws, str_empty) < 0)
                return NULL;
            space = 1; /* the usual held space (a word's, before the next one) */
        }
    }
    else if (field_set(s->f.template_, &s->f.used, Py_True) < 0)
        return NULL;
    return out(s, space, b, n);
}

static PyMethodDef lane_def = {"lane", lane_call, METH_O,
                               "A whole SSE event as it came -> the client's bytes for it, or None."};

static PyObject *
text_lane(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *head, *tail, *table, *out_open, *out_close, *holder, *tracker, *template_, *fallback, *writer;
    PyObject *firsts, *encode, *encode_ascii;
    Py_ssize_t cap;
    int holds_spaces, simple_take;
    if (!PyArg_ParseTuple(args, "O!O!nO!O!O!OOpOOOUpOO:text_lane", &PyBytes_Type, &head, &PyBytes_Type, &tail, &cap,
                          &PyBytes_Type, &table, &PyBytes_Type, &out_open, &PyBytes_Type, &out_close, &holder,
                          &tracker, &holds_spaces, &template_, &fallback, &writer, &firsts, &simple_take,
                          &encode, &encode_ascii))
        return NULL;
    LaneState *s = PyObject_GC_New(LaneState, &LaneStateType);
    if (s == NULL)
        return NULL;
    memset(&s->f, 0, sizeof(Frame));
    s->out_open = Py_NewRef(out_open);
    s->out_close = Py_NewRef(out_close);
    s->holder = holder == Py_None ? NULL : Py_NewRef(holder);
    s->tracker = tracker == Py_None ? NULL : Py_NewRef(tracker);
    field_init(&s->held_ws, holder, str_held_ws);
    field_init(&s->prev, tracker, str_prev);
    field_init(&s->last, tracker, str_last);
    field_init(&s->after_call, tracker, str_after_call);
    s->fallback = Py_NewRef(fallback);
    s->writer = writer == Py_None ? NULL : Py_NewRef(writer);
    s->encode = Py_NewRef(encode);
    s->encode_ascii = Py_NewRef(encode_ascii);
    s->holds_spaces = holds_spaces;
    s->simple_take = simple_take;
    if (frame_init(&s->f, head, tail, cap, table, template_, firsts) < 0) {
        Py_DECREF(s);
        return NULL;
    }
    PyObject_GC_Track(s);
    PyObject *lane = PyCFunction_NewEx(&lane_def, (PyObject *)s, NULL);
    Py_DECREF(s);
    return lane;
}

/* -- the lane inside a call's body ------------------------------------------------------------
 *
 * `quiet_lane(...)` is `lane.quiet_lane` for a block whose quiet feed is `JsonSegment.feed_inside`
 * (Hermes, llama_function): a piece of the arguments that cannot end the call goes into the
 * segment (its tracker's string state moved on, the piece appended to its parts) and the client
 * gets nothing (`b""`). A piece with a marker's first character in it, or after a part of one
 * carried over, is the Python lane's (`fallback`: it may still be one `feed_inside` takes, a
 * piece of the end marker); any other: `None`, nothing changed, as in Python. The segment's
 * `size` counts what it takes; a piece that would take it past its `limit` is not taken (`None`).
 */

static PyObject *str_carry, *str_in_string, *str_skip, *str_parts, *str_size, *empty_bytes;

typedef struct {
    PyObject_HEAD
    Frame f;
    PyObject *tracker; /* the segment's JsonStringTracker: `in_string`, `_skip`, `_carry` */
    PyObject *segment; /* the JsonSegment: `_parts` */
    PyObject *fallback; /* the Python lane, for a piece a marker may be in */
    Field carry, in_string, skip, parts, size;
    Py_ssize_t limit; /* the segment's `limit`, or -1 for none */
} QuietState;

static int
quiet_traverse(QuietState *self, visitproc visit, void *arg)
{
    Py_VISIT(self->tracker);
    Py_VISIT(self->segment);
    Py_VISIT(self->fallback);
    return frame_traverse(&self->f, visit, arg);
}

static int
quiet_clear(QuietState *self)
{
    Py_CLEAR(self->tracker);
    Py_CLEAR(self->segment);
    Py_CLEAR(self->fallback);
    frame_clear(&self->f);
    return 0;
}

static PyTypeObject QuietStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolcall_middleware.core._lane.QuietState",
    .tp_basicsize = sizeof(QuietState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)quiet_traverse,
    .tp_clear = (inquiry)quiet_clear,
    .tp_dealloc = cleared_dealloc,
};

static PyObject *
quiet_call(PyObject *self_, PyObject *raw)
{
    QuietState *s = (QuietState *)self_;
    const unsigned char *b;
    Py_ssize_t n;
    unsigned flags;
    if (!PyBytes_CheckExact(raw) || !frame_body(&s->f, raw, &b, &n, &flags) || (flags & STOP))
        Py_RETURN_NONE; /* another shape (or not bytes); a raw control character: not a JSON string */
    PyObject *text = string_text(b, n, flags);
    if (text == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    PyObject *result = NULL, *carry = NULL, *state = NULL, *skip_obj = NULL, *parts = NULL, *size_obj = NULL;
    if (len == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    size_obj = field_get(s->segment, &s->size);
    Py_ssize_t size = size_obj == NULL ? -1 : PyLong_AsSsize_t(size_obj);
    if (size == -1 && PyErr_Occurred())
        goto done;
    if (s->limit >= 0 && size + len > s->limit) {
        result = Py_NewRef(Py_None); /* past the limit: the general path lets the call go */
        goto done;
    }
    /* `cannot_find`: nothing carried from the piece before, no marker's first character in it */
    carry = field_get(s->tracker, &s->carry);
    if (carry == NULL)
        goto done;
    int marker = !PyUnicode_Check(carry) || PyUnicode_GET_LENGTH(carry) != 0 ? 1 : may_start_marker(&s->f, text);
    if (marker != 0) {
        result = marker < 0 ? NULL : PyObject_CallOneArg(s->fallback, raw);
        goto done;
    }
    /* `find(text)`, which can find nothing here: the string state moves on */
    state = field_get(s->tracker, &s->in_string);
    skip_obj = state == NULL ? NULL : field_get(s->tracker, &s->skip);
    if (skip_obj == NULL)
        goto done;
    int in_string = PyObject_IsTrue(state);
    Py_ssize_t i = PyLong_AsSsize_t(skip_obj), skip = 0;
    if (in_string < 0 || (i == -1 && PyErr_Occurred()))
        goto done;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    while (i < len) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (in_string) {
            if (c == '\\') {
                i += 2;
                if (i > len) {
                    skip = i - len;
                    break;
                }
                continue;
            }
            if (c == '"')
                in_string = 0;
        }
        else if (c == '"')
            in_string = 1;
        i++;
    }
    PyObject *skip_new = PyLong_FromSsize_t(skip);
    if (skip_new == NULL)
        goto done;
    int failed = field_set(s->tracker, &s->in_string, in_string ? Py_True : Py_False) < 0 ||
                 field_set(s->tracker, &s->skip, skip_new) < 0;
    Py_DECREF(skip_new);
    if (failed)
        goto done;
    parts = field_get(s->segment, &s->parts);
    if (parts == NULL || PyList_Append(parts, text) < 0 || field_set(s->f.template_, &s->f.used, Py_True) < 0)
        goto done;
    PyObject *size_new = PyLong_FromSsize_t(size + len);
    failed = size_new == NULL || field_set(s->segment, &s->size, size_new) < 0;
    Py_XDECREF(size_new);
    if (failed)
        goto done;
    result = Py_NewRef(empty_bytes);
done:
    Py_XDECREF(size_obj);
    Py_XDECREF(parts);
    Py_XDECREF(skip_obj);
    Py_XDECREF(state);
    Py_XDECREF(carry);
    Py_DECREF(text);
    return result;
}

static PyMethodDef quiet_def = {"lane", quiet_call, METH_O,
                                "A whole SSE event inside a call's body -> b'' (taken quietly), or None."};

static PyObject *
quiet_lane(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *head, *tail, *table, *tracker, *segment, *template_, *firsts, *fallback;
    Py_ssize_t cap, limit;
    if (!PyArg_ParseTuple(args, "O!O!nO!OOOUOn:quiet_lane", &PyBytes_Type, &head, &PyBytes_Type, &tail, &cap,
                          &PyBytes_Type, &table, &tracker, &segment, &template_, &firsts, &fallback, &limit))
        return NULL;
    QuietState *s = PyObject_GC_New(QuietState, &QuietStateType);
    if (s == NULL)
        return NULL;
    memset(&s->f, 0, sizeof(Frame));
    s->tracker = Py_NewRef(tracker);
    s->segment = Py_NewRef(segment);
    s->fallback = Py_NewRef(fallback);
    field_init(&s->carry, tracker, str_carry);
    field_init(&s->in_string, tracker, str_in_string);
    field_init(&s->skip, tracker, str_skip);
    field_init(&s->parts, segment, str_parts);
    field_init(&s->size, segment, str_size);
    s->limit = limit;
    if (frame_init(&s->f, head, tail, cap, table, template_, firsts) < 0) {
        Py_DECREF(s);
        return NULL;
    }
    PyObject_GC_Track(s);
    PyObject *lane = PyCFunction_NewEx(&quiet_def, (PyObject *)s, NULL);
    Py_DECREF(s);
    return lane;
}

/* -- the ASGI shell's send for the usual message ------------------------------------------------
 *
 * `sender(request, route, send)` is `_Request._send` (asgi.py) for a body message the lane
 * (`route.lane`) takes: the client's message goes to the server's `send`, with the keep-alive's
 * accounting on `route.clock` (`sending` while it is written, `last` once it was), and no
 * coroutine of ours around it. Any other message is `request._general(message)`; a lane that raised,
 * `request._lane_failed(message, error)`; while a ping is written, `request.keepalive.send(piece)`.
 */

static PyObject *str_keepalive, *str_general, *str_lane_failed,
    *str_send, *str_throw, *str_close, *str_type, *str_body, *str_more_body, *str_body_type;

/* The keep-alive's clock (`keepalive.Clock` in Python): what the sender keeps per message, as
 * plain fields, so that counting a message costs no attribute lookups. `last` is
 * `time.monotonic()`'s clock. */
typedef struct {
    PyObject_HEAD
    Py_ssize_t sending; /* messages being written outside the keep-alive's lock: no ping starts */
    double last;        /* when the last message (or ping) was written */
    char pinging;       /* a ping is being written: a message waits for the lock */
} Clock;

static PyMemberDef clock_members[] = {
    {"sending", T_PYSSIZET, offsetof(Clock, sending), 0, "messages being written outside the lock"},
    {"last", T_DOUBLE, offsetof(Clock, last), 0, "when the last message (or ping) was written, time.monotonic()"},
    {"pinging", T_BOOL, offsetof(Clock, pinging), 0, "a ping is being written"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject ClockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolcall_middleware.core._lane.Clock",
    .tp_basicsize = sizeof(Clock),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_members = clock_members,
    .tp_doc = "Clock(): the keep-alive's per-message accounting (sending, last, pinging).",
};

/* time.monotonic() */
static double
monotonic_now(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyTime_t now;
    if (PyTime_MonotonicRaw(&now) < 0)
        return 0.0;
#else
    _PyTime_t now = _PyTime_GetMonotonicClock();
#endif
    return (double)now / 1e9;
}

/* The server's `send(piece)` under way: an awaitable that is its iterator too, passing every
 * step through, and doing the keep-alive's accounting once it ends (however it ends). Only for a
 * send that suspends in its first step, or that is not a coroutine: one that ends in its first
 * step (taken in the call, see `sender_call`) needs none. */
typedef struct {
    PyObject_HEAD
    PyObject *awaitable; /* what the server's send returned */
    PyObject *iterator;  /* its `__await__()`, once awaited */
    PyObject *pending;   /* what its first step yielded, taken in the call: yielded first */
    Clock *clock;
    int ended;
} Sending;

static int
sending_traverse(Sending *self, visitproc visit, void *arg)
{
    Py_VISIT(self->awaitable);
    Py_VISIT(self->iterator);
    Py_VISIT(self->pending);
    Py_VISIT(self->clock);
    return 0;
}

static int
sending_clear(Sending *self)
{
    Py_CLEAR(self->awaitable);
    Py_CLEAR(self->iterator);
    Py_CLEAR(self->pending);
    Py_CLEAR(self->clock);
    return 0;
}

/* The message is written (`written`) or its send failed or was dropped: `sending -= 1`, and
 * `last = monotonic()` when written. */
static void
sending_end(Sending *self, int written)
{
    if (self->ended || self->clock == NULL)
        return;
    self->ended = 1;
    self->clock->sending -= 1;
    if (written)
        self->clock->last = monotonic_now();
}

static void
sending_dealloc(Sending *self)
{
    PyObject_GC_UnTrack(self);
    sending_end(self, 0); /* never awaited to its end: no longer being written */
    sending_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
sending_await(Sending *self)
{
    if (self->iterator == NULL && PyCoro_CheckExact(self->awaitable)) {
        /* A coroutine (every Python server's send) is stepped itself, as `await` steps it: its
         * `__await__()` wrapper would end each message in a StopIteration raised and caught. */
        self->iterator = Py_NewRef(self->awaitable);
    }
    if (self->iterator == NULL) {
        PyAsyncMethods *async = Py_TYPE(self->awaitable)->tp_as_async;
        if (async == NULL || async->am_await == NULL) {
            PyErr_Format(PyExc_TypeError, "the server's send returned %.100s, which cannot be awaited",
                         Py_TYPE(self->awaitable)->tp_name);
            sending_end(self, 0);
            return NULL;
        }
        self->iterator = async->am_await(self->awaitable);
        if (self->iterator == NULL) {
            sending_end(self, 0);
            return NULL;
        }
    }
    return Py_NewRef(self);
}

/* One step with `arg`: what the server's send yields, or NULL when it ended (StopIteration set
 * for its return value when `raise_stop`, or when that value is not None) or raised. */
static PyObject *
sending_step(Sending *self, PyObject *arg, int raise_stop)
{
    if (self->iterator == NULL) {
        PyObject *started = sending_await(self);
        if (started == NULL)
            return NULL;
        Py_DECREF(started);
    }
    PyObject *result = NULL;
    if (self->pending != NULL) { /* the step taken in the call yielded this: the awaiter gets it now */
        result = self->pending;
        self->pending = NULL;
        return result;
    }
    PySendResult status = PyIter_Send(self->iterator, arg, &result);
    if (status == PYGEN_NEXT)
        return result;
    if (status == PYGEN_ERROR) {
        sending_end(self, 0);
        return NULL;
    }
    sending_end(self, 1);
    if (result == Py_None && !raise_stop) {
        Py_DECREF(result);
        return NULL; /* an iterator's end: the await's value is None */
    }
    PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, result);
    Py_DECREF(result);
    if (stop != NULL) {
        PyErr_SetObject(PyExc_StopIteration, stop);
        Py_DECREF(stop);
    }
    return NULL;
}

static PyObject *
sending_next(Sending *self)
{
    return sending_step(self, Py_None, 0);
}

static PyObject *
sending_send(Sending *self, PyObject *arg)
{
    return sending_step(self, arg, 1);
}

/* `throw` and `close` go to the server's send as they would through `await` in a coroutine. */
static PyObject *
sending_throw(Sending *self, PyObject *args)
{
    Py_CLEAR(self->pending);
    if (self->iterator == NULL) {
        PyObject *started = sending_await(self);
        if (started == NULL)
            return NULL;
        Py_DECREF(started);
    }
    PyObject *throw = PyObject_GetAttr(self->iterator, str_throw);
    if (throw == NULL) {
        sending_end(self, 0);
        return NULL;
    }
    PyObject *result = PyObject_Call(throw, args, NULL);
    Py_DECREF(throw);
    if (result == NULL)
        sending_end(self, PyErr_ExceptionMatches(PyExc_StopIteration));
    return result;
}

static PyObject *
sending_close(Sending *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *result = Py_None;
    Py_CLEAR(self->pending);
    if (self->iterator != NULL) {
        PyObject *close = PyObject_GetAttr(self->iterator, str_close);
        if (close == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                sending_end(self, 0);
                return NULL;
            }
            PyErr_Clear();
        }
        else {
            result = PyObject_CallNoArgs(close);
            Py_DECREF(close);
        }
    }
    sending_end(self, 0);
    return result == Py_None ? Py_NewRef(Py_None) : result;
}

static PyMethodDef sending_methods[] = {
    {"send", (PyCFunction)sending_send, METH_O, NULL},
    {"throw", (PyCFunction)sending_throw, METH_VARARGS, NULL},
    {"close", (PyCFunction)sending_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyAsyncMethods sending_async = {.am_await = (unaryfunc)sending_await};

static PyTypeObject SendingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolcall_middleware.core._lane.Sending",
    .tp_basicsize = sizeof(Sending),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)sending_traverse,
    .tp_clear = (inquiry)sending_clear,
    .tp_dealloc = (destructor)sending_dealloc,
    .tp_as_async = &sending_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)sending_next,
    .tp_methods = sending_methods,
};

/* An awaitable that is done at once: a message the client gets nothing for. */
static PyObject *
nothing_next(PyObject *Py_UNUSED(self))
{
    return NULL;
}

static PyObject *
nothing_send(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(arg))
{
    PyErr_SetNone(PyExc_StopIteration);
    return NULL;
}

static PyObject *
nothing_throw(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *type, *value = NULL, *tb = NULL;
    if (!PyArg_UnpackTuple(args, "throw", 1, 3, &type, &value, &tb))
        return NULL;
    if (PyExceptionInstance_Check(type))
        PyErr_SetObject((PyObject *)Py_TYPE(type), type);
    else
        PyErr_SetObject(type, value);
    return NULL;
}

static PyObject *
nothing_close(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(ignored))
{
    Py_RETURN_NONE;
}

static PyMethodDef nothing_methods[] = {
    {"send", (PyCFunction)nothing_send, METH_O, NULL},
    {"throw", (PyCFunction)nothing_throw, METH_VARARGS, NULL},
    {"close", (PyCFunction)nothing_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyAsyncMethods nothing_async = {.am_await = (unaryfunc)PyObject_SelfIter};

static PyObject *nothing; /* the one instance */
static PyObject *piece_template; /* the client's message, its body to be set */

static PyTypeObject NothingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolcall_middleware.core._lane.Nothing",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_as_async = &nothing_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)nothing_next,
    .tp_methods = nothing_methods,
};

/* What the request's send reads per message (`asgi._Route` in Python): the lane while a stream is
 * rewritten, the keep-alive's clock once it runs. Plain fields, so that reading them costs no
 * attribute lookups; the request writes them as attributes. */
typedef struct {
    PyObject_HEAD
    PyObject *lane;  /* None: no lane now */
    PyObject *clock; /* None: no keep-alive */
} Route;

static int
route_traverse(Route *self, visitproc visit, void *arg)
{
    Py_VISIT(self->lane);
    Py_VISIT(self->clock);
    return 0;
}

static int
route_clear(Route *self)
{
    Py_CLEAR(self->lane);
    Py_CLEAR(self->clock);
    return 0;
}

static PyObject *
route_new(PyTypeObject *type, PyObject *Py_UNUSED(args), PyObject *Py_UNUSED(kwargs))
{
    Route *self = (Route *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->lane = Py_NewRef(Py_None);
        self->clock = Py_NewRef(Py_None);
    }
    return (PyObject *)self;
}

static int
route_set(PyObject **field, PyObject *value)
{
    Py_XSETREF(*field, Py_NewRef(value != NULL ? value : Py_None));
    return 0;
}

static PyObject *
route_get_lane(Route *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->lane);
}

static int
route_set_lane(Route *self, PyObject *value, void *Py_UNUSED(closure))
{
    return route_set(&self->lane, value);
}

static PyObject *
route_get_clock(Route *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->clock);
}

static int
route_set_clock(Route *self, PyObject *value, void *Py_UNUSED(closure))
{
    if (value != NULL && value != Py_None && !PyObject_TypeCheck(value, &ClockType)) {
        PyErr_SetString(PyExc_TypeError, "Route.clock must be a Clock or None");
        return -1;
    }
    return route_set(&self->clock, value);
}

static PyGetSetDef route_getset[] = {
    {"lane", (getter)route_get_lane, (setter)route_set_lane, "the lane while a stream is rewritten, or None", NULL},
    {"clock", (getter)route_get_clock, (setter)route_set_clock, "the keep-alive's Clock once it runs, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RouteType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolcall_middleware.core._lane.Route",
    .tp_basicsize = sizeof(Route),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = route_new,
    .tp_traverse = (traverseproc)route_traverse,
    .tp_clear = (inquiry)route_clear,
    .tp_dealloc = cleared_dealloc,
    .tp_getset = route_getset,
    .tp_doc = "Route(): what the C send reads per message (lane, clock); see asgi._Route.",
};

typedef struct {
    PyObject_HEAD
    PyObject *request, *send;
    Route *route;
} SenderState;

static int
sender_traverse(SenderState *self, visitproc visit, void *arg)
{
    Py_VISIT(self->request);
    Py_VISIT(self->send);
    Py_VISIT(self->route);
    return 0;
}

static int
sender_clear(SenderState *self)
{
    Py_CLEAR(self->request);
    Py_CLEAR(self->send);
    Py_CLEAR(self->route);
    return 0;
}

static PyTypeObject SenderStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolcall_middleware.core._lane.SenderState",
    .tp_basicsize = sizeof(SenderState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)sender_traverse,
    .tp_clear = (inquiry)sender_clear,
    .tp_dealloc = cleared_dealloc,
};

#define BODY_TYPE "http.response.body"
#define BODY_TYPE_LENGTH ((Py_ssize_t)(sizeof(BODY_TYPE) - 1))

/* The usual body message of a stream being rewritten: its body, or NULL (no error) for any other. */
static PyObject *
usual_body(PyObject *message)
{
    if (!PyDict_CheckExact(message))
        return NULL;
    PyObject *type = PyDict_GetItemWithError(message, str_type);
    if (type == NULL || (type != str_body_type && (!PyUnicode_Check(type) || !PyUnicode_IS_COMPACT_ASCII(type) ||
                                                   PyUnicode_GET_LENGTH(type) != BODY_TYPE_LENGTH ||
                                                   memcmp(PyUnicode_DATA(type), BODY_TYPE, BODY_TYPE_LENGTH) != 0)))
        return NULL; /* (an app's own "http.response.body" is seldom our interned one: compared as bytes) */
    PyObject *more = PyDict_GetItemWithError(message, str_more_body);
    if (more == NULL || (more != Py_True && PyObject_IsTrue(more) != 1))
        return NULL;
    PyObject *body = PyDict_GetItemWithError(message, str_body);
    return body != NULL && PyBytes_CheckExact(body) ? body : NULL;
}

static PyObject *
sender_call(PyObject *self_, PyObject *message)
{
    SenderState *s = (SenderState *)self_;
    PyObject *lane = Py_NewRef(s->route->lane);
    PyObject *body = lane == Py_None ? NULL : usual_body(message);
    if (body == NULL) {
        Py_DECREF(lane);
        if (PyErr_Occurred())
            return NULL;
        return PyObject_CallMethodOneArg(s->request, str_general, message);
    }
    Py_INCREF(body);
    PyObject *out = PyObject_CallOneArg(lane, body);
    Py_DECREF(body);
    Py_DECREF(lane);
    if (out == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return NULL;
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb != NULL)
            PyException_SetTraceback(value, tb);
        PyObject *failed = PyObject_CallMethodObjArgs(s->request, str_lane_failed, message, value, NULL);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return failed;
    }
    if (out == Py_None) {
        Py_DECREF(out);
        return PyObject_CallMethodOneArg(s->request, str_general, message);
    }
    if (!PyBytes_Check(out) || PyBytes_GET_SIZE(out) == 0) {
        Py_DECREF(out);
        return Py_NewRef(nothing); /* nothing for the client */
    }
    PyObject *piece = PyDict_Copy(piece_template); /* {type, body, more_body: True}: a copy is one memcpy */
    if (piece == NULL || PyDict_SetItem(piece, str_body, out) < 0) {
        Py_XDECREF(piece);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(out);
    PyObject *clock = Py_NewRef(s->route->clock);
    PyObject *result = NULL;
    if (clock == Py_None)
        result = PyObject_CallOneArg(s->send, piece); /* no keep-alive */
    else if (!PyObject_TypeCheck(clock, &ClockType))
        PyErr_SetString(PyExc_TypeError, "route.clock must be a Clock");
    else if (((Clock *)clock)->pinging) {
        PyObject *keepalive = PyObject_GetAttr(s->request, str_keepalive);
        if (keepalive != NULL) {
            result = PyObject_CallMethodOneArg(keepalive, str_send, piece); /* after the ping being written */
            Py_DECREF(keepalive);
        }
    }
    else {
        Clock *counted = (Clock *)clock;
        counted->sending += 1;
        PyObject *awaitable = PyObject_CallOneArg(s->send, piece);
        if (awaitable == NULL)
            counted->sending -= 1; /* (never written) */
        else if (PyCoro_CheckExact(awaitable)) {
            /* The step `await` would take first, taken here: a server's send usually ends in it
             * (it writes to its transport and returns), and then the message is written with no
             * awaitable of ours around it. `await send(...)` sees the same: the call and the
             * await follow each other, an error raises from that line, a suspended send goes
             * on (what it yielded first goes up to the loop first) inside a `Sending`. */
            PyObject *yielded = NULL;
            PySendResult status = PyIter_Send(awaitable, Py_None, &yielded);
            if (status == PYGEN_RETURN) {
                counted->sending -= 1;
                counted->last = monotonic_now();
                Py_DECREF(yielded); /* (an ASGI send returns None) */
                result = Py_NewRef(nothing);
            }
            else if (status == PYGEN_ERROR)
                counted->sending -= 1;
            else {
                Sending *sending = PyObject_GC_New(Sending, &SendingType);
                if (sending == NULL) {
                    Py_DECREF(yielded);
                    PyObject *close = PyObject_CallMethodNoArgs(awaitable, str_close);
                    Py_XDECREF(close);
                    counted->sending -= 1;
                }
                else {
                    sending->awaitable = Py_NewRef(awaitable);
                    sending->iterator = Py_NewRef(awaitable);
                    sending->pending = yielded;
                    sending->clock = (Clock *)Py_NewRef(clock);
                    sending->ended = 0;
                    PyObject_GC_Track(sending);
                    result = (PyObject *)sending;
                }
            }
            Py_DECREF(awaitable);
        }
        else {
            Sending *sending = PyObject_GC_New(Sending, &SendingType);
            if (sending == NULL)
                counted->sending -= 1;
            else {
                sending->awaitable = Py_NewRef(awaitable);
                sending->iterator = NULL;
                sending->pending = NULL;
                sending->clock = (Clock *)Py_NewRef(clock);
                sending->ended = 0;
                PyObject_GC_Track(sending);
                result = (PyObject *)sending;
            }
            Py_DECREF(awaitable);
        }
    }
    Py_DECREF(clock);
    Py_DECREF(piece);
    return result;
}

static PyMethodDef sender_def = {"send", sender_call, METH_O,
                                 "The ASGI send the app is given: the usual message in C, any other in Python."};

static PyObject *
sender(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *request, *route, *send;
    if (!PyArg_ParseTuple(args, "OO!O:sender", &request, &RouteType, &route, &send))
        return NULL;
    SenderState *s = PyObject_GC_New(SenderState, &SenderStateType);
    if (s == NULL)
        return NULL;
    s->request = Py_NewRef(request);
    s->route = (Route *)Py_NewRef(route);
    s->send = Py_NewRef(send);
    PyObject_GC_Track(s);
    PyObject *made = PyCFunction_NewEx(&sender_def, (PyObject *)s, NULL);
    Py_DECREF(s);
    return made;
}

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
    Py_buffer raw, name;
    if (!PyArg_ParseTuple(args, "y*y*:member_span", &raw, &name))
        return NULL;
    const char *b = raw.buf;
    Py_ssize_t n = raw.len, i = skip_space(b, 0, n), found_start = -1, found_end = -1;
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
            int match = key_end - i - 2 == name.len && memcmp(b + i + 1, name.buf, (size_t)name.len) == 0;
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
    PyBuffer_Release(&raw);
    PyBuffer_Release(&name);
    if (!ok || found_start < 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(nn)", found_start, found_end);
}

static PyMethodDef module_methods[] = {
    {"text_lane", text_lane, METH_VARARGS,
     "text_lane(head, tail, cap, table, out_open, out_close, holder, tracker, holds_spaces, template, fallback, writer,"
     " firsts, simple_take, encode_basestring, encode_basestring_ascii)"
     " -> lane: see toolcall_middleware.core.lane."},
    {"quiet_lane", quiet_lane, METH_VARARGS,
     "quiet_lane(head, tail, cap, table, tracker, segment, template, firsts, fallback, limit) -> lane: see"
     " toolcall_middleware.core.lane.quiet_lane."},
    {"sender", sender, METH_VARARGS,
     "sender(request, route, send) -> the ASGI send for toolcall_middleware.asgi's request: see _Request._send."},
    {"member_span", member_span, METH_VARARGS,
     "member_span(raw, name) -> (start, end) of the value of the JSON object's top-level member, or None:"
     " see toolcall_middleware.core.request.body."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef lane_module = {
    PyModuleDef_HEAD_INIT, "toolcall_middleware.core._lane",
    "The text lane's usual chunk in C (see toolcall_middleware.core.lane), and a request body's member found"
    " in its bytes (see toolcall_middleware.core.request.body).",
    -1, module_methods,
};

PyMODINIT_FUNC
PyInit__lane(void)
{
    if (PyType_Ready(&LaneStateType) < 0 || PyType_Ready(&SendingType) < 0 || PyType_Ready(&NothingType) < 0 ||
        PyType_Ready(&SenderStateType) < 0 || PyType_Ready(&ClockType) < 0 || PyType_Ready(&RouteType) < 0 ||
        PyType_Ready(&QuietStateType) < 0)
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
    str_keepalive = PyUnicode_InternFromString("keepalive");
    str_carry = PyUnicode_InternFromString("_carry");
    str_in_string = PyUnicode_InternFromString("in_string");
    str_skip = PyUnicode_InternFromString("_skip");
    str_parts = PyUnicode_InternFromString("_parts");
    str_size = PyUnicode_InternFromString("size");
    empty_bytes = PyBytes_FromStringAndSize(NULL, 0);
    if (!str_carry || !str_in_string || !str_skip || !str_parts || !str_size || !empty_bytes)
        return NULL;
    str_general = PyUnicode_InternFromString("_general");
    str_lane_failed = PyUnicode_InternFromString("_lane_failed");
    str_send = PyUnicode_InternFromString("send");
    str_throw = PyUnicode_InternFromString("throw");
    str_close = PyUnicode_InternFromString("close");
    str_type = PyUnicode_InternFromString("type");
    str_body = PyUnicode_InternFromString("body");
    str_more_body = PyUnicode_InternFromString("more_body");
    str_body_type = PyUnicode_InternFromString(BODY_TYPE);
    if (!str_keepalive || !str_general || !str_lane_failed ||
        !str_send || !str_throw || !str_close || !str_type || !str_body || !str_more_body || !str_body_type)
        return NULL;
    piece_template = PyDict_New(); /* (the keys the interned ones a server looks up) */
    if (piece_template == NULL || PyDict_SetItem(piece_template, str_type, str_body_type) < 0 ||
        PyDict_SetItem(piece_template, str_body, empty_bytes) < 0 ||
        PyDict_SetItem(piece_template, str_more_body, Py_True) < 0)
        return NULL;
    nothing = PyObject_New(PyObject, &NothingType);
    if (nothing == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&lane_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Clock", (PyObject *)&ClockType) < 0 ||
        PyModule_AddObjectRef(m, "Route", (PyObject *)&RouteType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *flags = Py_BuildValue("{sisisi}", "STOP", STOP, "ESCAPE", ESCAPE, "HIGH", HIGH);
    if (flags == NULL || PyModule_AddObject(m, "FLAGS", flags) < 0) {
        Py_XDECREF(flags);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "HELD_WHITESPACE", HELD_WHITESPACE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
