#!/usr/bin/env python3
"""Writes pathological model files for the robustness tests.

usage: gen.py KIND [N] > file.ppl

Every generator is deterministic (fixed seeds), so a failure reproduces.
"""
import random
import sys

HEADER = b"@Model class M(K: Long = 2) {\n"


def emit(data):
    sys.stdout.buffer.write(data)


def valid_model(n):
    """A valid model with n vals (about 50 bytes each)."""
    out = [HEADER, b"  val w = Dirichlet(1.0, K)\n"]
    for i in range(n):
        if i % 2 == 0:
            out.append(b"  val gaussian_mean_%06d = Gaussian(%d.5, 1.0)\n" % (i, i % 100))
        else:
            out.append(b"  val category_%06d = ?.map(_ => Categorical(w))\n" % i)
    out.append(b"}\n")
    return b"".join(out)


def one_line_model(n):
    """A valid model of n vals on a single line, separated by ';'."""
    vals = b"; ".join(b"val p%d = Beta(1.0, 2.0)" % i for i in range(n))
    return b"@Model class M() { " + vals + b" }\n"


def one_line_error(n):
    """The one-line model with an unknown name at the very end of the line."""
    vals = b"; ".join(b"val p%d = Beta(1.0, 2.0)" % i for i in range(n))
    return b"@Model class M() { " + vals + b"; val q = Bernoulli(zzz) }\n"


def random_tokens(size):
    """About `size` bytes of random tokens of the language (and a few others)."""
    rng = random.Random(1234)
    words = ["val", "x", "=", "(", ")", "{", "}", "map", ".", "_", "=>", "?", "1.0", "2L",
             "Beta", "Dirichlet", "Categorical", "if", "else", "match", "case", "until",
             "to", "+", "-", "*", "/", ",", ";", "\n", "@Model", "class", ":", "$", "#"]
    out, total = [], 0
    while total < size:
        w = rng.choice(words)
        out.append(w)
        total += len(w) + 1
    return " ".join(out).encode()


def main():
    kind = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 and kind not in ("bytes", "tail-bytes") else 0
    if kind == "nested-parens":
        # val p = Beta(((((1.0))))), 1.0) with n parentheses.
        emit(b"@Model class M() {\n  val p = Beta(" + b"(" * n + b"1.0" + b")" * n + b", 1.0)\n}\n")
    elif kind == "nested-blocks":
        emit(b"@Model class M() {\n  val p = Beta(" + b"{" * n + b"1.0" + b"}" * n + b", 1.0)\n}\n")
    elif kind == "unclosed-parens":
        emit(b"@Model class M() {\n  val p = Beta(" + b"(" * n + b"1.0\n}\n")
    elif kind == "unary-minus":
        # n minus signs: an even count is +1.0, a valid shape.
        emit(b"@Model class M() {\n  val p = Beta(" + b"-" * n + b"1.0, 1.0)\n}\n")
    elif kind == "nested-maps":
        emit(b"@Model class M() {\n  val x = " + b"?.map(_ => " * n + b"Beta(1.0, 1.0)" + b")" * n + b"\n}\n")
    elif kind == "long-sum":
        # 1.0 + 1.0 + ... (n terms): a deep left-leaning tree.
        emit(b"@Model class M() {\n  val p = Beta(" + b" + ".join([b"1.0"] * n) + b", 1.0)\n}\n")
    elif kind == "random-tokens":
        emit(random_tokens(n))
    elif kind == "valid-model":
        emit(valid_model(n))
    elif kind == "one-line-model":
        emit(one_line_model(n))
    elif kind == "one-line-error":
        emit(one_line_error(n))
    elif kind == "many-errors":
        # n vals, each with an unknown name.
        emit(HEADER + b"".join(b"  val v%d = Beta(u%d, 1.0)\n" % (i, i) for i in range(n)) + b"}\n")
    elif kind == "whitespace-comments":
        emit(b"  \t\n\r\n// line comment\n/* block /* nested */ comment */\n\f\n   \n" * max(n, 1))
    elif kind == "bytes":
        # The bytes given in hex (argv[2]) inside a comment of an otherwise valid model.
        emit(b"@Model class M() {\n  // " + bytes.fromhex(sys.argv[2]) + b"\n  val p = Beta(1.0, 1.0)\n}\n")
    elif kind == "tail-bytes":
        # A valid model followed by the bytes given in hex (argv[2]), at the very end of the file.
        emit(b"@Model class M() {\n  val p = Beta(1.0, 1.0)\n}\n" + bytes.fromhex(sys.argv[2]))
    elif kind == "crlf-error":
        emit(b"@Model class M() {\r\n  val p = Beta(1.0, 1.0)\r\n  val q = Beta(1.0, zz)\r\n}\r\n")
    elif kind == "no-final-newline":
        emit(b"@Model class M() {\n  val p = Beta(1.0, 1.0)\n  val q = Bernoulli(zz) }")
    elif kind == "nul":
        emit(b"@Model class M() {\n  val p = Beta(1.0,\x00 1.0)\n}\n")
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
