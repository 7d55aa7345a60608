import csv, json, math, os, sys
a, b, data = sys.argv[1:4]
wa = next(csv.DictReader(open(os.path.join(a, "w.csv"))))
wb = next(csv.DictReader(open(os.path.join(b, "w.csv"))))
for k in wa:
    assert abs(float(wa[k]) - float(wb[k])) <= 1e-9 * max(1.0, abs(float(wb[k]))), (k, wa[k], wb[k])
logc = sum(math.log(math.comb(int(r["trials"]), int(r["y"]))) for r in csv.DictReader(open(data)))
ea = json.load(open(os.path.join(a, "summary.json")))["elbo"][-1]
eb = json.load(open(os.path.join(b, "summary.json")))["elbo"][-1]
assert abs((ea - logc) - eb) <= 1e-9 * abs(eb), (ea, eb, logc)
print("same q(w) and ELBO up to the binomial coefficients")
