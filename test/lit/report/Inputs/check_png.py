"""check_png.py FILE: the screenshot is a PNG that is not blank: it decodes
(zlib, the five row filters), and more than 2% of its pixels are not the
page's background (the most common colour), in more than 20 colours. Prints
the figures; exits 1 otherwise."""
import struct
import sys
import zlib
from collections import Counter


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                sys.exit(f"{path}: unexpected PNG format (depth {depth}, colour type {colour})")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return [row[i:i + 3] for row in rows for i in range(0, stride, channels)], width, height


def main():
    px, width, height = pixels(sys.argv[1])
    counts = Counter(px)
    background, n = counts.most_common(1)[0]
    ink = 1 - n / len(px)
    ok = ink > 0.02 and len(counts) > 20
    print(f"{width}x{height} screenshot: {'not blank' if ok else 'BLANK'} ({ink:.1%} of pixels off the background, "
          f"{len(counts)} colours)")
    return 0 if ok else 1


sys.exit(main())
