"""Writes sequences of symbols from a 2-state hidden Markov model (a seeded
generator: the same file every run), one row per symbol: seq,x.
Usage: make_sequences.py OUT.csv SEQUENCES SEED"""
import random, sys

out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
A = [[0.9, 0.1], [0.2, 0.8]]
B = [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]


def draw(p):
    u, c = rng.random(), 0.0
    for i, v in enumerate(p):
        c += v
        if u < c:
            return i
    return len(p) - 1


with open(out, "w") as f:
    f.write("seq,x\n")
    for s in range(n):
        z = draw([0.5, 0.5])
        for t in range(rng.randint(1, 25)):
            if t:
                z = draw(A[z])
            f.write("%d,%d\n" % (s, draw(B[z])))
