# Held-out RMSE of ppc's posterior means (E u . E v + E c) against the
# global mean and the per-bill mean of the training votes.
import csv, math, os, sys

data, out = sys.argv[1], sys.argv[2]
def rows(name):
    return [(int(r["member"]), int(r["bill"]), float(r["vote"])) for r in csv.DictReader(open(os.path.join(data, name)))]
train, test = rows("house_votes_train.csv"), rows("house_votes_test.csv")
u = [[float(r["mean_0"]), float(r["mean_1"])] for r in csv.DictReader(open(out + "/u.csv"))]
v = [[float(r["mean_0"]), float(r["mean_1"])] for r in csv.DictReader(open(out + "/v.csv"))]
c = [float(r["mean"]) for r in csv.DictReader(open(out + "/c.csv"))]
g = sum(x for _, _, x in train) / len(train)
bills = {b: [x for _, bb, x in train if bb == b] for b in range(len(v))}
bill_mean = {b: sum(xs) / len(xs) for b, xs in bills.items()}
def rmse(predict):
    return math.sqrt(sum((predict(m, b) - x) ** 2 for m, b, x in test) / len(test))
r_global = rmse(lambda m, b: g)
r_bill = rmse(lambda m, b: bill_mean[b])
r_ppc = rmse(lambda m, b: sum(p * q for p, q in zip(u[m], v[b])) + c[b])
print("held-out RMSE: global mean %.4f, per-bill mean %.4f, ppc %.4f" % (r_global, r_bill, r_ppc))
assert r_ppc < r_bill and r_ppc < r_global, (r_ppc, r_bill, r_global)
print("ppc beats both baselines")
