import csv, json, os, sys
data, a, b = sys.argv[1:4]
years = [int(r["year"]) for r in csv.DictReader(open(data))]
flow = [float(r["flow"]) for r in csv.DictReader(open(data))]
reg = [float(r["p_0"]) > 0.5 for r in csv.DictReader(open(os.path.join(a, "regime.csv")))]
switches = [years[t] for t in range(1, len(reg)) if reg[t] != reg[t - 1]]
assert switches == [1899], switches
print("one switch, in 1899")
level = [float(r["mean"]) for r in csv.DictReader(open(os.path.join(a, "level.csv")))]
cut = years.index(1899)
before, after = sum(flow[:cut]) / cut, sum(flow[cut:]) / (len(flow) - cut)
first = 0 if reg[0] else 1  # the regime of the early years
assert abs(level[first] - before) < 0.01 * before and abs(level[1 - first] - after) < 0.01 * after, (level, before, after)
print("levels agree with the regimes' mean flows")
ea, eb = (json.load(open(os.path.join(d, "summary.json")))["elbo"][-1] for d in (a, b))
assert abs(ea - eb) < 1e-8 * abs(ea), (ea, eb)
print("same optimum from both seeds")
