import csv, os, sys
data, out = sys.argv[1:3]
years = [int(r["year"]) for r in csv.DictReader(open(data))]
level = [float(r["mean"]) for r in csv.DictReader(open(os.path.join(out, "level.csv")))]
before, after = level[years.index(1890)], level[years.index(1910)]
assert 150 < before - after < 350, (before, after)
print("the level falls across 1899")
noise = next(csv.DictReader(open(os.path.join(out, "noise.csv"))))
drift = next(csv.DictReader(open(os.path.join(out, "drift.csv"))))
# 1 / E[precision] as a variance
vn = float(noise["rate"]) / float(noise["shape"])
vd = float(drift["rate"]) / float(drift["shape"])
assert 8000 < vn < 20000 and 500 < vd < 6000, (vn, vd)
print("the variances are plausible")
