"""Arrow IPC streams (lanced's format=arrow answers) read into numpy, with no pyarrow (Debian
has none) and no Python object per value: a number, bool or temporal column is one array over
the answer's bytes (np.frombuffer, no copy: Arrow pads every buffer to 8 bytes), a fixed-size
list an (n, k, ...) array, and a variable-length column (strings, binaries, lists of numbers)
a Ragged: its values and offsets arrays, with per-row views on demand.

What lanced writes (lib/arrow/ipc.c): a Schema message, one DictionaryBatch per dictionary
field, one RecordBatch, the end-of-stream marker; metadata V5, little endian, no
compression. Only the metadata tables read here are walked (Arrow's Message.fbs and
Schema.fbs field numbers); anything malformed raises ArrowError, never reads outside the
answer."""
import struct

import numpy as np

__all__ = ["ArrowError", "Ragged", "read_stream"]


class ArrowError(ValueError):
    """An answer that is not an Arrow IPC stream this reader handles."""


# Schema.fbs: the Type union's tags.
_T_NULL, _T_INT, _T_FLOAT, _T_BINARY, _T_UTF8, _T_BOOL = 1, 2, 3, 4, 5, 6
_T_DATE, _T_TIME, _T_TIMESTAMP = 8, 9, 10
_T_LIST, _T_FIXED_LIST, _T_DURATION = 12, 16, 18
_T_LARGE_BINARY, _T_LARGE_UTF8, _T_LARGE_LIST = 19, 20, 21
# Message.fbs: MessageHeader's tags.
_H_SCHEMA, _H_DICTIONARY, _H_RECORD_BATCH = 1, 2, 3
_UNITS = ("s", "ms", "us", "ns")  # Schema.fbs TimeUnit
_BYTE, _I4, _I8 = np.dtype(np.uint8), np.dtype("<i4"), np.dtype("<i8")


class Ragged:
    """A variable-length column: row i is values[offsets[i]:offsets[i + 1]], None where
    validity (a bool array, or None when no row is null) is False. kind is "utf8" (row i is
    a str), "binary" (bytes) or "list" (a view of values, a numpy array or torch tensor).

    values and offsets are whole arrays (numpy, or torch tensors after lanced.torch's
    conversion): use them directly for vectorised work (np.diff(offsets) are the lengths);
    col[i] and iteration give per-row values; col.rows() a list of them."""

    __slots__ = ("values", "offsets", "validity", "kind")

    def __init__(self, values, offsets, validity=None, kind="list"):
        self.values, self.offsets, self.validity, self.kind = values, offsets, validity, kind

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, i):
        n = len(self)
        if not -n <= i < n:
            raise IndexError("row %d of %d" % (i, n))
        i %= n
        if self.validity is not None and not self.validity[i]:
            return None
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        v = self.values[lo:hi]
        if self.kind == "list":
            return v
        b = v.numpy().tobytes() if hasattr(v, "numpy") else v.tobytes()
        return b.decode("utf-8") if self.kind == "utf8" else b

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def rows(self):
        return list(self)

    def __repr__(self):
        return "Ragged(%s, %d rows, %d values)" % (self.kind, len(self), len(self.values))


# ---- flatbuffers: just enough to walk tables, vectors and strings, every offset checked ----
_U8, _I16, _U16, _I32, _U32, _I64 = (struct.Struct(f) for f in ("<B", "<h", "<H", "<i", "<I", "<q"))


def _get(s, buf, pos):
    if pos < 0 or pos + s.size > len(buf):
        raise ArrowError("arrow: metadata offset %d outside its %d bytes" % (pos, len(buf)))
    return s.unpack_from(buf, pos)[0]


class _Table:
    __slots__ = ("buf", "pos", "vt", "vtlen")

    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        self.vt = pos - _get(_I32, buf, pos)
        self.vtlen = _get(_U16, buf, self.vt)

    def _field(self, i):
        o = 4 + 2 * i
        return _get(_U16, self.buf, self.vt + o) if o + 2 <= self.vtlen else 0

    def scalar(self, i, s, default=0):
        o = self._field(i)
        return _get(s, self.buf, self.pos + o) if o else default

    def table(self, i):
        o = self._field(i)
        if not o:
            return None
        p = self.pos + o
        return _Table(self.buf, p + _get(_U32, self.buf, p))

    def vector(self, i):
        """(start, count) of vector field i; (0, 0) when absent."""
        o = self._field(i)
        if not o:
            return 0, 0
        p = self.pos + o
        p += _get(_U32, self.buf, p)
        return p + 4, _get(_U32, self.buf, p)

    def tables(self, i):
        start, n = self.vector(i)
        return [_Table(self.buf, start + 4 * k + _get(_U32, self.buf, start + 4 * k)) for k in range(n)]

    def string(self, i):
        start, n = self.vector(i)
        if start + n > len(self.buf):
            raise ArrowError("arrow: string outside the metadata")
        return bytes(self.buf[start:start + n]).decode("utf-8", "replace")

    def structs(self, i, width):
        """A vector of structs of two int64s (FieldNode, Buffer) as an (n, 2) int64 array."""
        start, n = self.vector(i)
        if start + n * width > len(self.buf):
            raise ArrowError("arrow: vector outside the metadata")
        return np.frombuffer(self.buf, dtype="<i8", count=2 * n, offset=start).reshape(n, 2)


# ---- schema -----------------------------------------------------------------------------------
class _Field:
    __slots__ = ("name", "tag", "dtype", "width", "children", "dictionary")


def _int_dtype(t):
    bits, signed = t.scalar(0, _I32), t.scalar(1, _U8)
    if bits not in (8, 16, 32, 64):
        raise ArrowError("arrow: %d-bit integers" % bits)
    return np.dtype("<%s%d" % ("i" if signed else "u", bits // 8))


def _field(t):
    f = _Field()
    f.name, f.tag, f.width, f.dtype = t.string(0), t.scalar(2, _U8), 0, None
    typ = t.table(3)
    f.children = [_field(c) for c in t.tables(5)]
    d = t.table(4)
    f.dictionary = d.scalar(0, _I64) if d is not None else None
    if f.dictionary is not None:  # indices: this reader leaves such columns to Client.take
        return f
    if f.tag == _T_INT:
        f.dtype = _int_dtype(typ)
    elif f.tag == _T_FLOAT:
        f.dtype = np.dtype(("<f2", "<f4", "<f8")[typ.scalar(0, _I16)])
    elif f.tag == _T_BOOL:
        f.dtype = np.dtype(bool)
    elif f.tag == _T_DATE:
        f.dtype = np.dtype("<i4") if typ.scalar(0, _I16) == 0 else np.dtype("<i8")
        f.width = "datetime64[D]" if typ.scalar(0, _I16) == 0 else "datetime64[ms]"
    elif f.tag in (_T_TIME, _T_TIMESTAMP, _T_DURATION):
        unit = _UNITS[typ.scalar(0, _I16, 1 if f.tag == _T_TIME else 0)]
        bits = typ.scalar(1, _I32, 32) if f.tag == _T_TIME else 64
        f.dtype = np.dtype("<i4" if bits == 32 else "<i8")
        f.width = ("datetime64[%s]" if f.tag == _T_TIMESTAMP else "timedelta64[%s]") % unit
    elif f.tag == _T_FIXED_LIST:
        f.width = typ.scalar(0, _I32)
    return f


# ---- record batches -----------------------------------------------------------------------
class _Body:
    """A RecordBatch's nodes and buffers, consumed in the order fields appear. They are read
    into Python lists once (tolist): a training loop reads a dozen buffers per answer, and
    indexing numpy rows and converting their items cost more than the rest of the walk."""

    def __init__(self, data, base, length, nodes, buffers, places):
        self.data, self.base, self.length = data, base, length
        self.nodes, self.buffers, self.ni, self.bi = nodes.tolist(), buffers.tolist(), 0, 0
        self.places = places

    def node(self):
        if self.ni >= len(self.nodes):
            raise ArrowError("arrow: fewer field nodes than fields")
        self.ni += 1
        return self.nodes[self.ni - 1]

    def buffer(self, dt=_BYTE, count=None):
        """Buffer bi as count items of numpy dtype dt (all of it when count is None)."""
        if self.bi >= len(self.buffers):
            raise ArrowError("arrow: fewer buffers than the fields need")
        off, length = self.buffers[self.bi]
        self.bi += 1
        if count is None:
            count = length // dt.itemsize
        if off < 0 or length < 0 or count * dt.itemsize > length or off + length > self.length:
            raise ArrowError("arrow: buffer [%d, +%d) outside the %d-byte body" % (off, length, self.length))
        a = np.frombuffer(self.data, dtype=dt, count=count, offset=self.base + off)
        self.places[id(a)] = (a, self.base + off)
        return a

    def bits(self, n):
        b = self.buffer(_BYTE, (n + 7) // 8)
        return np.unpackbits(b, bitorder="little", count=n).astype(bool)

    def validity(self, n, nulls):
        if nulls == 0:
            self.buffer(_BYTE, 0)
            return None
        return self.bits(n)


def _masked(values, valid):
    if valid is None:
        return values
    mask = ~valid.reshape((-1,) + (1,) * (values.ndim - 1))
    return np.ma.MaskedArray(values, mask=np.broadcast_to(mask, values.shape).copy())


def _offsets(body, n, large):
    """n + 1 offsets, checked: from 0 up, never decreasing (a Ragged's rows then never reach
    outside its values, which the caller checks against the last offset)."""
    off = body.buffer(_I8 if large else _I4, n + 1 if n else 0)
    if not n:
        return np.zeros(1, dtype=np.int64)
    if off[0] < 0 or (off[1:] < off[:-1]).any():
        raise ArrowError("arrow: offsets that go backwards or start below 0")
    return off


def _read(f, body):
    """Field f's next array in body: a numpy array (masked when it has nulls) or a Ragged."""
    n, nulls = body.node()
    if f.tag == _T_NULL:
        return np.ma.masked_all(n, dtype=object)
    valid = body.validity(n, nulls)
    if f.dictionary is not None:
        raise ArrowError("arrow: dictionary-encoded column %r: ask for it through Client.take" % f.name)
    if f.tag == _T_BOOL:
        return _masked(body.bits(n), valid)
    if f.dtype is not None:
        v = body.buffer(f.dtype, n)
        if f.width:  # temporal: the integers (widened to 64 bits: numpy's) viewed in their unit
            v = v.astype("<i8", copy=False).view(f.width)
        return _masked(v, valid)
    if f.tag in (_T_BINARY, _T_UTF8, _T_LARGE_BINARY, _T_LARGE_UTF8):
        off = _offsets(body, n, f.tag in (_T_LARGE_BINARY, _T_LARGE_UTF8))
        vals = body.buffer(_BYTE, int(off[-1]) if n else 0)
        return Ragged(vals, off, valid, "utf8" if f.tag in (_T_UTF8, _T_LARGE_UTF8) else "binary")
    if f.tag in (_T_LIST, _T_LARGE_LIST):
        off = _offsets(body, n, f.tag == _T_LARGE_LIST)
        child = _read(f.children[0], body)
        if len(child) < int(off[-1]):
            raise ArrowError("arrow: list offsets past their items")
        return Ragged(child, off, valid, "list")
    if f.tag == _T_FIXED_LIST:
        child = _read(f.children[0], body)
        if isinstance(child, Ragged) or len(child) != n * f.width:
            raise ArrowError("arrow: fixed-size list of %d x %d items has %d" % (n, f.width, len(child)))
        shaped = child.reshape((n, f.width) + child.shape[1:])
        if valid is None:
            where = body.places.get(id(child))
            if where is not None and where[0] is child:
                body.places[id(shaped)] = (shaped, where[1])
            return shaped
        mask = np.ma.getmaskarray(shaped) | ~valid.reshape((-1,) + (1,) * (shaped.ndim - 1))
        return np.ma.MaskedArray(np.ma.getdata(shaped), mask=mask)
    raise ArrowError("arrow: field %r of type tag %d is not read by this client" % (f.name, f.tag))


class Columns(dict):
    """read_stream's answer: {column name: array or Ragged}, and in places where in the answer's
    bytes each array made over them starts: {id(array): (array, byte offset)} (the array kept
    there, so an id is never another's while this lives). lanced.torch hands a batch to the
    main process as those offsets; asking each array for its address took longer."""

    __slots__ = ("places",)


def read_stream(data):
    """An Arrow IPC stream (bytes, bytearray or memoryview) -> {column name: array or Ragged}
    (a dict: Columns), in the schema's order. The arrays are views of data: keep it (they do)
    and do not change it."""
    try:
        return _read_stream(data)
    except ArrowError:
        raise
    except (IndexError, KeyError, TypeError, AttributeError, ValueError, struct.error,
            RecursionError, OverflowError, MemoryError) as ex:
        # Damaged metadata (a missing table, an enum out of range, a nesting too deep): said
        # as what it is rather than as the Python error it tripped.
        raise ArrowError("arrow: damaged answer (%s: %s)" % (type(ex).__name__, ex)) from None


_SCHEMAS = {}  # a Schema message's bytes -> its fields (read-only once made)
_SCHEMAS_MAX = 64


def _schema_fields(meta, header):
    """The fields of a Schema message, walked once per distinct schema: a training loop's
    answers all carry the same one, and the walk is a third of this reader's time."""
    key = bytes(meta)
    fields = _SCHEMAS.get(key)
    if fields is None:
        fields = [_field(t) for t in header.tables(1)]
        if len(_SCHEMAS) >= _SCHEMAS_MAX:
            _SCHEMAS.clear()
        _SCHEMAS[key] = fields
    return fields


def _read_stream(data):
    mv = memoryview(data)
    pos, fields, out, places = 0, None, None, {}
    while pos + 8 <= len(mv):
        ml = _get(_U32, mv, pos)
        if ml == 0xFFFFFFFF:
            ml, pos = _get(_I32, mv, pos + 4), pos + 8
        else:
            pos += 4
        if ml == 0:
            break
        if ml < 0 or pos + ml > len(mv):
            raise ArrowError("arrow: message of %d bytes past the answer's end" % ml)
        meta = mv[pos:pos + ml]
        msg = _Table(meta, _get(_U32, meta, 0))
        htype, header, blen = msg.scalar(1, _U8), msg.table(2), msg.scalar(3, _I64)
        pos += ml
        if header is None or blen < 0 or pos + blen > len(mv):
            raise ArrowError("arrow: message body past the answer's end")
        if htype == _H_SCHEMA:
            fields = _schema_fields(meta, header)
        elif htype in (_H_DICTIONARY, _H_RECORD_BATCH):
            if fields is None:
                raise ArrowError("arrow: a batch before the schema")
            rb = header.table(1) if htype == _H_DICTIONARY else header
            if rb is None:
                raise ArrowError("arrow: a dictionary batch without its data")
            body = _Body(data, pos, blen, rb.structs(1, 16), rb.structs(2, 16), places)
            if htype == _H_DICTIONARY:
                raise ArrowError("arrow: dictionary-encoded columns are not read here (Client.take reads them)")
            out = Columns((f.name, _read(f, body)) for f in fields)
            out.places = places
        pos += blen
    if out is None:
        raise ArrowError("arrow: no record batch in the answer")
    return out
