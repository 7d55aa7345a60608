# Reference for bayesian_pca.test: the top-2 principal subspace of the data
# (eigenvectors of Y^T Y by power iteration, plain Python) and the principal
# angles between it and the span of ppc's posterior means of W.
import csv, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from linear_algebra import top_eigenvectors, principal_angles_2d

data, out = sys.argv[1], sys.argv[2]
Y = [[float(v) for v in r.values()] for r in csv.DictReader(open(data))]
D = len(Y[0])
S = [[sum(r[a] * r[b] for r in Y) for b in range(D)] for a in range(D)]
top = top_eigenvectors(S, 2)
W = [[float(r["mean_0"]), float(r["mean_1"])] for r in csv.DictReader(open(out + "/W.csv"))]
assert len(W) == D
columns = [[W[d][k] for d in range(D)] for k in range(2)]
angles = principal_angles_2d(columns, top)
print("principal angles (degrees): %.2e %.2e" % tuple(angles))
assert max(angles) < 1e-4, angles
print("W spans the top principal subspace")
