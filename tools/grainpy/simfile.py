# SPDX-License-Identifier: MIT
"""Reading and writing `.sim` state files, as docs/sim-format.md describes them.

A file is a 28-byte header and then states until the end of the file; every number is
little-endian, without padding:

    header   char[4] "MBSF", uint32 version (2), nSimBodies, nDOFq (7), nDOFu (6),
             additionalBytesType, additionalBytesPerBody
    state    double time, then per body: uint64 id, r_S (3 doubles, m, frame I), quaternion
             x, y, z, w (K -> I), v_S (3 doubles, m/s, I), omega (3 doubles, rad/s, frame K),
             additionalBytesPerBody bytes

A partial last state (a run that was killed while writing) is ignored, as grain's reader does:
`SimFile.truncated` tells, `truncation_warning()` gives the message. Every problem is a
SimFileError naming the file.

    with SimFile(path) as f:
        print(f.header.bodies, len(f))
        last = f.read_state(-1)           # negative indices count from the end
        bead = last.find(body_id(0, 5))   # bodies by id (distributed runs change the order)

    write(path, [State(0.0, [Body(body_id(0, 0), r=(0, 0, 1))])])
"""

import math
import os
import struct

SIGNATURE = b"MBSF"
VERSION = 2
HEADER = struct.Struct("<4s6I")  # 28 bytes
TIME = struct.Struct("<d")
BODY = struct.Struct("<Q13d")  # id, r (3), q (4), v (3), omega (3): 112 bytes
NDOF_Q = 7
NDOF_U = 6

# Additional bytes per body: type -> (names, struct) in file order (docs/sim-format.md).
# "rank": owner process, "material": material id, "overlap": sum of the penetration depths of the
# body's contacts (m), "geometry": global geometry id. Serial runs write type 0, distributed
# runs type 5.
ADDITIONAL = {
    0: ((), struct.Struct("<")),
    1: (("rank",), struct.Struct("<I")),
    2: (("rank", "material"), struct.Struct("<2I")),
    3: (("rank", "material", "overlap"), struct.Struct("<2Id")),
    4: (("rank", "overlap"), struct.Struct("<Id")),
    5: (("rank", "material", "overlap", "geometry"), struct.Struct("<2IdI")),
}


class SimFileError(ValueError):
    """A file that is not a readable .sim file, or a state that does not exist in it."""


def body_id(group, number):
    """The uint64 id of body `number` of group `group`: (group << 32) | number."""
    return (int(group) << 32) | int(number)


def split_id(bid):
    """(group, number) of a body id."""
    return bid >> 32, bid & 0xFFFFFFFF


def format_id(bid):
    """'(group,number)', as grain prints body ids."""
    return "({},{})".format(*split_id(bid))


class Header:
    """The header: bodies per state and the kind of additional bytes per body."""

    def __init__(self, bodies, additional_type=0, additional_bytes=None):
        self.bodies = bodies
        self.additional_type = additional_type
        if additional_bytes is None:
            if additional_type not in ADDITIONAL:
                raise SimFileError(f"unknown additional-bytes type {additional_type}")
            additional_bytes = ADDITIONAL[additional_type][1].size
        self.additional_bytes = additional_bytes

    @property
    def bytes_per_body(self):
        return BODY.size + self.additional_bytes

    @property
    def bytes_per_state(self):
        return TIME.size + self.bodies * self.bytes_per_body

    def encode(self):
        return HEADER.pack(SIGNATURE, VERSION, self.bodies, NDOF_Q, NDOF_U, self.additional_type,
                           self.additional_bytes)

    @classmethod
    def decode(cls, data, name):
        """The header of the first 28 bytes of `data`; `name` (the file) starts every error."""
        if len(data) < HEADER.size:
            raise SimFileError(f"{name}: too short for a .sim header ({len(data)} bytes, need "
                               f"{HEADER.size})")
        signature, version, bodies, ndof_q, ndof_u, kind, extra = HEADER.unpack_from(data)
        if signature != SIGNATURE:
            raise SimFileError(f"{name}: not a .sim file (signature {signature!r}, expected 'MBSF')")
        if version != VERSION:
            raise SimFileError(f"{name}: unsupported .sim version {version} (grain reads version 2)")
        if ndof_q != NDOF_Q or ndof_u != NDOF_U:
            raise SimFileError(f"{name}: unsupported layout nDOFq={ndof_q}, nDOFu={ndof_u} "
                               "(grain reads 7 and 6)")
        if kind in ADDITIONAL and extra != ADDITIONAL[kind][1].size:
            raise SimFileError(f"{name}: additional-bytes type {kind} has "
                               f"{ADDITIONAL[kind][1].size} bytes per body, header says {extra}")
        return cls(bodies, kind, extra)

    def __eq__(self, other):
        return isinstance(other, Header) and (self.bodies, self.additional_type, self.additional_bytes) == (
            other.bodies, other.additional_type, other.additional_bytes)

    def __repr__(self):
        return (f"Header(bodies={self.bodies}, additional_type={self.additional_type}, "
                f"additional_bytes={self.additional_bytes})")


class Body:
    """One body of a state.

    id: uint64 (body_id(group, number)); r: centre of mass in I (m); q: orientation K -> I as
    (x, y, z, w); v: centre-of-mass velocity in I (m/s); w: angular velocity in K (rad/s);
    extra: the additional data by name ({} for type 0; the raw bytes for an unknown type).
    """

    __slots__ = ("id", "r", "q", "v", "w", "extra")

    def __init__(self, id, r=(0.0, 0.0, 0.0), q=(0.0, 0.0, 0.0, 1.0), v=(0.0, 0.0, 0.0),
                 w=(0.0, 0.0, 0.0), extra=None):
        self.id = id
        self.r = tuple(r)
        self.q = tuple(q)
        self.v = tuple(v)
        self.w = tuple(w)
        self.extra = {} if extra is None else extra

    @property
    def group(self):
        return self.id >> 32

    @property
    def number(self):
        return self.id & 0xFFFFFFFF

    @property
    def speed(self):
        """|v_S| (m/s)."""
        return math.sqrt(sum(c * c for c in self.v))

    def __eq__(self, other):
        return isinstance(other, Body) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self):
        return f"Body({format_id(self.id)}, r={self.r}, q={self.q}, v={self.v}, w={self.w}, extra={self.extra})"


class State:
    """The bodies at one time (s), in file order."""

    def __init__(self, time, bodies):
        self.time = time
        self.bodies = list(bodies)
        self._index = None

    def find(self, bid):
        """The Body with id `bid`, or None."""
        if self._index is None:
            self._index = {b.id: b for b in self.bodies}
        return self._index.get(bid)

    def __eq__(self, other):
        return isinstance(other, State) and self.time == other.time and self.bodies == other.bodies

    def __repr__(self):
        return f"State(time={self.time}, {len(self.bodies)} bodies)"


def _decode_body(data, offset, header):
    bid, *x = BODY.unpack_from(data, offset)
    kind = header.additional_type
    if kind in ADDITIONAL:
        names, layout = ADDITIONAL[kind]
        extra = dict(zip(names, layout.unpack_from(data, offset + BODY.size)))
    else:
        extra = bytes(data[offset + BODY.size:offset + BODY.size + header.additional_bytes])
    return Body(bid, x[0:3], x[3:7], x[7:10], x[10:13], extra)


def _encode_body(body, header):
    out = BODY.pack(body.id, *body.r, *body.q, *body.v, *body.w)
    kind = header.additional_type
    if kind in ADDITIONAL:
        names, layout = ADDITIONAL[kind]
        try:
            return out + layout.pack(*(body.extra[n] for n in names))
        except KeyError as e:
            raise SimFileError(f"body {format_id(body.id)}: additional-bytes type {kind} needs "
                               f"{', '.join(names)}; {e.args[0]} is missing")
    if len(body.extra) != header.additional_bytes:
        raise SimFileError(f"body {format_id(body.id)}: {len(body.extra)} additional bytes, the "
                           f"header says {header.additional_bytes}")
    return out + bytes(body.extra)


class SimFile:
    """A .sim file opened for reading; states are read on demand, by index."""

    def __init__(self, path):
        self.path = os.fspath(path)
        try:
            self._f = open(self.path, "rb")
        except OSError as e:
            raise SimFileError(f"{self.path}: cannot open the file: {e.strerror}") from None
        try:
            size = os.fstat(self._f.fileno()).st_size
            self.header = Header.decode(self._f.read(HEADER.size), self.path)
        except SimFileError:
            self._f.close()
            raise
        self.state_count, self.trailing_bytes = divmod(size - HEADER.size, self.header.bytes_per_state)

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __len__(self):
        """Number of complete states."""
        return self.state_count

    @property
    def truncated(self):
        """True if a partial state follows the last complete one."""
        return self.trailing_bytes > 0

    def truncation_warning(self):
        """The message about a partial last state ('' if there is none)."""
        if not self.truncated:
            return ""
        return (f"{self.path}: ignoring a partial last state ({self.trailing_bytes} bytes after "
                f"state {self.state_count} of {self.header.bytes_per_state} bytes per state)")

    def _index(self, k):
        n = self.state_count
        if not -n <= k < n:
            partial = f", and a partial state of {self.trailing_bytes} bytes" if self.truncated else ""
            raise SimFileError(f"{self.path}: state {k} does not exist (the file has {n} complete "
                               f"states{partial})")
        return k % n

    def _read(self, k, size, offset=0):
        k = self._index(k)
        self._f.seek(HEADER.size + k * self.header.bytes_per_state + offset)
        data = self._f.read(size)
        if len(data) != size:
            raise SimFileError(f"{self.path}: read failed in state {k} (the file shrank?)")
        return k, data

    def read_time(self, k):
        """Time (s) of state k."""
        return TIME.unpack(self._read(k, TIME.size)[1])[0]

    def read_times(self):
        return [self.read_time(k) for k in range(self.state_count)]

    def read_state(self, k):
        """State k (negative: from the end). An id that occurs twice is an error."""
        k, data = self._read(k, self.header.bytes_per_state)
        per_body = self.header.bytes_per_body
        state = State(TIME.unpack_from(data)[0],
                      [_decode_body(data, TIME.size + i * per_body, self.header)
                       for i in range(self.header.bodies)])
        seen = set()
        for b in state.bodies:
            if b.id in seen:
                raise SimFileError(f"{self.path}: state {k}: body id {format_id(b.id)} occurs twice")
            seen.add(b.id)
        return state

    def states(self, which=None):
        """The states of the indices in `which` (all if None), in that order."""
        for k in range(self.state_count) if which is None else which:
            yield self.read_state(k)


def read_states(path, which=None):
    """The states of a .sim file at the indices in `which` (all if None; negative from the end)."""
    with SimFile(path) as f:
        return list(f.states(which))


def encode(states, additional_type=0):
    """The bytes of a .sim file with these states. Every state must have the same number of
    bodies; Body.extra holds the additional data of `additional_type`."""
    states = list(states)
    header = Header(len(states[0].bodies) if states else 0, additional_type)
    parts = [header.encode()]
    for s in states:
        if len(s.bodies) != header.bodies:
            raise SimFileError(f"the state at t = {s.time} s has {len(s.bodies)} bodies, the first "
                               f"has {header.bodies}")
        parts.append(TIME.pack(s.time))
        parts.extend(_encode_body(b, header) for b in s.bodies)
    return b"".join(parts)


def write(path, states, additional_type=0):
    """Writes a .sim file (replacing it) with these states, bodies in the given order (grain's
    serial writer sorts them by id)."""
    data = encode(states, additional_type)
    with open(path, "wb") as f:
        f.write(data)
