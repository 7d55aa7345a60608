"""Special functions the tests' independent references share (written here,
not ppc's: the recurrence to x >= 6, then the asymptotic series, whose
error is below 1e-13 there)."""
import math


def digamma(x):
    r = 0.0
    while x < 6:
        r -= 1 / x
        x += 1
    f = 1 / (x * x)
    return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))
