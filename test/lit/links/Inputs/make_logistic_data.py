"""Writes N rows of D standard-normal inputs x0..x{D-1} and y ~ Bernoulli(sigmoid(w . x))
for fixed weights (a seeded generator: the same file every run).
Usage: make_logistic_data.py OUT.csv N SEED"""
import math, random, sys

out, N, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w = [1.5, -2.0, 0.5]
rng = random.Random(seed)
with open(out, "w") as f:
    f.write("x0,x1,x2,y\n")
    for _ in range(N):
        x = [rng.gauss(0, 1) for _ in w]
        p = 1 / (1 + math.exp(-sum(a * b for a, b in zip(w, x))))
        f.write("%.6f,%.6f,%.6f,%d\n" % (x[0], x[1], x[2], rng.random() < p))
