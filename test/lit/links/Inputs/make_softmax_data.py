"""Writes N rows of inputs x0, x1 (standard normal) and x2 = 1 (an
intercept), and y in {0, 1, 2} drawn from softmax(W x) for fixed W (a
seeded generator). Usage: make_softmax_data.py OUT.csv N SEED"""
import math, random, sys

out, N, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
W = [[2.0, 0.0, 0.5], [-1.0, 1.5, 0.0], [-1.0, -1.5, -0.5]]
rng = random.Random(seed)
with open(out, "w") as f:
    f.write("x0,x1,x2,y\n")
    for _ in range(N):
        x = [rng.gauss(0, 1), rng.gauss(0, 1), 1.0]
        e = [sum(w * v for w, v in zip(row, x)) for row in W]
        m = max(e)
        p = [math.exp(v - m) for v in e]
        u, c, y = rng.random() * sum(p), 0.0, 2
        for k, v in enumerate(p):
            c += v
            if u < c:
                y = k
                break
        f.write("%.6f,%.6f,1,%d\n" % (x[0], x[1], y))
