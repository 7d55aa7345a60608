"""subnormal_values.py OUT: the run's --subnormals (summary.json) and how many
values of its posterior CSVs are subnormal (0 < |v| < 2^-1022)."""
import csv
import json
import os
import sys

out = sys.argv[1]
mode = json.load(open(os.path.join(out, "summary.json")))["options"]["subnormals"]
count = 0
for f in sorted(os.listdir(out)):
    if f.endswith(".csv"):
        for row in list(csv.reader(open(os.path.join(out, f))))[1:]:
            count += sum(1 for v in row if 0 < abs(float(v)) < 2.2250738585072014e-308)
print(f"{mode}: {count} subnormal values")
