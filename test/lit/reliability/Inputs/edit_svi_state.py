"""Edits a stochastic run's state file (a length line, a JSON head, the
buffers' bytes): `step N` sets the head's step, `length N` the first
buffer's length, `head N` the length line alone."""
import json
import sys

path, what, value = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()
newline = data.index(b"\n")
size = int(data[:newline])
head = json.loads(data[newline + 1:newline + 1 + size])
rest = data[newline + 1 + size:]
if what == "step":
    head["step"] = value
elif what == "length":
    head["buffers"][0][2] = value
elif what == "head":
    open(path, "wb").write(b"%d\n" % value + data[newline + 1:])
    sys.exit(0)
else:
    sys.exit("unknown edit " + what)
text = json.dumps(head, separators=(",", ":")).encode()
open(path, "wb").write(b"%d\n" % len(text) + text + rest)
