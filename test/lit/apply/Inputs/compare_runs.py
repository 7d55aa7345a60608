# compare_runs.py FORTY FIRST SECOND: the runs' --out directories. Checks
# that FIRST's ELBO trace is FORTY's first half, SECOND's is its second half
# (relative 1e-9), and that SECOND's posteriors equal FORTY's (relative 1e-9).
import csv, json, os, sys

forty, first, second = sys.argv[1:4]
trace = lambda d: json.load(open(os.path.join(d, "summary.json")))["elbo"]
a, b, c = trace(forty), trace(first), trace(second)
rel = lambda x, y: abs(x - y) / max(abs(x), abs(y), 1e-300)
assert len(a) == 40 and len(b) == 20 and len(c) == 20, (len(a), len(b), len(c))
assert all(rel(a[i], b[i]) <= 1e-12 for i in range(20)), "the first run is not the first 20 iterations"
print("the first run's trace is the first 20 of 40")
worst = max(rel(a[20 + i], c[i]) for i in range(20))
assert worst <= 1e-9, "resumed trace differs: %g" % worst
print("the resumed run's trace is the last 20 of 40 (largest relative difference %.3g)" % worst)
names = sorted(f[:-4] for f in os.listdir(forty) if f.endswith(".csv"))
for n in names:
    ra = list(csv.DictReader(open(os.path.join(forty, n + ".csv"))))
    rc = list(csv.DictReader(open(os.path.join(second, n + ".csv"))))
    assert len(ra) == len(rc), n
    for x, y in zip(ra, rc):
        assert x.keys() == y.keys(), n
        for k in x:
            assert rel(float(x[k]), float(y[k])) <= 1e-9 or abs(float(x[k]) - float(y[k])) <= 1e-300, (n, k, x[k], y[k])
print(", ".join(names) + " equal after 40 iterations")
