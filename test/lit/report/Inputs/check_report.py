"""check_report.py REPORT.html OUT_DIR [words...]: the report has the
elements a person looks for: a plot per latent variable (one `variable`
section for each posterior CSV that --out wrote in OUT_DIR), the ELBO trace
and its inset, the factor graph and the schedule drawn as SVG, the model's
text; no script and nothing fetched from the network; and, when given,
these words (a topic's top words from --vocab). Prints what it found."""
import os
import re
import sys

html = open(sys.argv[1], encoding="utf-8").read()
out = sys.argv[2]
posteriors = sorted(f[:-4] for f in os.listdir(out) if f.endswith(".csv") and not f.endswith(".predicted.csv"))
sections = sorted(re.findall(r'<div class="variable" id="var-([^"]+)">', html))
checks = [
    ("a plot per latent variable " + ", ".join(posteriors), sections == posteriors),
    ("every variable's section has an SVG", all(
        "<svg" in html.split(f'id="var-{v}"', 1)[1].split('<div class="variable"', 1)[0] for v in sections)),
    ("the ELBO trace", 'aria-label="ELBO trace"' in html or 'aria-label="ELBO estimates"' in html),
    ("its relative change on a log scale", "relative ELBO change per iteration, log scale" in html),
    ("the factor graph as SVG", re.search(r'aria-label="factor graph"><svg', html) is not None),
    ("the schedule as SVG", re.search(r'aria-label="schedule"><svg', html) is not None),
    ("the model text", '<section id="model">' in html),
    ("no script", "<script" not in html.lower()),
    ("nothing from the network", re.search(r'(src|href)="https?:', html) is None),
]
for w in sys.argv[3:]:
    checks.append((f"the word '{w}'", f">{w}<" in html))
for name, ok in checks:
    print(("ok: " if ok else "MISSING: ") + name)
print(f"{len(html) / 1e6:.2f} MB")
sys.exit(0 if all(ok for _, ok in checks) else 1)
