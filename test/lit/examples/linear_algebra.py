# Small dense linear algebra in plain Python for the examples' references
# (CI's Python has no numpy): solve/inverse by Gauss-Jordan with partial
# pivoting, log-determinants by Cholesky, symmetric eigenvectors by power
# iteration with deflation.
def inverse(A):
    n = len(A)
    M = [list(map(float, A[i])) + [1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(M[r][c]))
        M[c], M[p] = M[p], M[c]
        piv = M[c][c]
        M[c] = [v / piv for v in M[c]]
        for r in range(n):
            if r != c and M[r][c] != 0.0:
                f = M[r][c]
                M[r] = [a - f * b for a, b in zip(M[r], M[c])]
    return [row[n:] for row in M]

def logdet(A):
    """log det A of a positive-definite matrix, by Cholesky."""
    import math
    n = len(A)
    L = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = A[i][j] - sum(L[i][k] * L[j][k] for k in range(j))
            L[i][j] = math.sqrt(s) if i == j else s / L[j][j]
    return 2.0 * sum(math.log(L[i][i]) for i in range(n))

def matvec(A, x):
    return [sum(a * b for a, b in zip(row, x)) for row in A]

def dot(x, y):
    return sum(a * b for a, b in zip(x, y))

def top_eigenvectors(S, k, iters=20000):
    """The k leading eigenvectors of the symmetric matrix S."""
    n = len(S)
    S = [row[:] for row in S]
    vecs = []
    for j in range(k):
        v = [1.0 / (i + 1 + j) for i in range(n)]
        for _ in range(iters):
            w = matvec(S, v)
            norm = dot(w, w) ** 0.5
            v = [a / norm for a in w]
        lam = dot(v, matvec(S, v))
        vecs.append(v)
        S = [[S[a][b] - lam * v[a] * v[b] for b in range(n)] for a in range(n)]
    return vecs

def orthonormal(cols):
    out = []
    for c in cols:
        w = list(c)
        for q in out:
            p = dot(w, q)
            w = [a - p * b for a, b in zip(w, q)]
        norm = dot(w, w) ** 0.5
        out.append([a / norm for a in w])
    return out

def principal_angles_2d(A, B):
    """Principal angles (degrees) between the spans of two pairs of vectors."""
    import math
    qa, qb = orthonormal(A), orthonormal(B)
    M = [[dot(x, y) for y in qb] for x in qa]
    # singular values of the 2x2 M: eigenvalues of M^T M
    a = M[0][0] ** 2 + M[1][0] ** 2
    d = M[0][1] ** 2 + M[1][1] ** 2
    b = M[0][0] * M[0][1] + M[1][0] * M[1][1]
    disc = math.sqrt(max(0.0, (a - d) ** 2 / 4 + b * b))
    s = [math.sqrt(max(0.0, (a + d) / 2 + disc)), math.sqrt(max(0.0, (a + d) / 2 - disc))]
    return [math.degrees(math.acos(min(1.0, v))) for v in s]
