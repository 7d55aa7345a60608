"""Writes the data of test/lit/chains/lds.test (a seeded generator: the same
files every run): DIR/A.csv, a 3 x 3 transition matrix (columns A0..A2);
DIR/one.csv, one chain of 120 steps x_t = A x_{t-1} + N(0, I / 4) seen as
y_t = x_t + N(0, I / 2) (columns y0..y2); DIR/seqs.csv, 20 sequences of 80
steps of the 2-dimensional system with A = [[0.9, 0.2], [-0.3, 0.8]],
innovations N(0, I / 4), noise N(0, I / 4) (columns seq, y0, y1);
DIR/rotation.csv, one chain of 400 steps of a 2-dimensional state rotating
by 0.3 radians a step and shrinking by 0.98 (innovations N(0, I)), seen
through 3 fixed projections with noise N(0, 0.3^2) (columns t, y: 3 rows a
step). Usage: make_lds.py DIR"""
import math, os, random, sys

rng = random.Random(7)
out = sys.argv[1]


def step(A, x, sd):
    return [sum(a * b for a, b in zip(row, x)) + rng.gauss(0, sd) for row in A]


A3 = [[0.9, 0.2, -0.1], [-0.3, 0.8, 0.05], [0.1, 0.0, 0.7]]
with open(os.path.join(out, "A.csv"), "w") as f:
    f.write("A0,A1,A2\n")
    for row in A3:
        f.write(",".join("%g" % v for v in row) + "\n")
with open(os.path.join(out, "one.csv"), "w") as f:
    f.write("y0,y1,y2\n")
    x = [rng.gauss(0, 1) for _ in range(3)]
    for t in range(120):
        if t:
            x = step(A3, x, 0.5)
        f.write(",".join("%.6f" % (v + rng.gauss(0, 1 / math.sqrt(2))) for v in x) + "\n")
A2 = [[0.9, 0.2], [-0.3, 0.8]]
with open(os.path.join(out, "seqs.csv"), "w") as f:
    f.write("seq,y0,y1\n")
    for s in range(20):
        x = [rng.gauss(0, 1) for _ in range(2)]
        for t in range(80):
            if t:
                x = step(A2, x, 0.5)
            f.write("%d,%s\n" % (s, ",".join("%.6f" % (v + rng.gauss(0, 0.5)) for v in x)))
c, s = math.cos(0.3), math.sin(0.3)
R = [[0.98 * c, -0.98 * s], [0.98 * s, 0.98 * c]]
C = [[1.0, 0.0], [0.5, 1.0], [-1.0, 0.7]]
with open(os.path.join(out, "rotation.csv"), "w") as f:
    f.write("t,y\n")
    x = [1.0, 0.0]
    for t in range(400):
        if t:
            x = step(R, x, 1.0)
        for row in C:
            f.write("%d,%.6f\n" % (t, sum(a * b for a, b in zip(row, x)) + rng.gauss(0, 0.3)))
