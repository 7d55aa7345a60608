"""Writes 10 sequences of x_t = 0.8 x_{t-1} + N(0, 0.5^2), observed as
y_t = x_t + N(0, 0.3^2) (a seeded generator: the same file every run).
Usage: make_ar.py OUT.csv"""
import random, sys

rng = random.Random(2)
with open(sys.argv[1], "w") as f:
    f.write("seq,y\n")
    for s in range(10):
        x = rng.gauss(0, 1)
        for t in range(rng.randint(3, 40)):
            if t:
                x = 0.8 * x + rng.gauss(0, 0.5)
            f.write("%d,%.5f\n" % (s, x + rng.gauss(0, 0.3)))
