"""load_time.py CHROMIUM_COMMAND... -- PAGE.html: how long headless Chromium
takes to load PAGE and print its DOM, less the time it takes for an empty
page (the browser's own start), median of 3 each. Prints the seconds."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

sep = sys.argv.index("--")
chromium, page = sys.argv[1:sep], sys.argv[sep + 1]
empty = os.path.join(tempfile.mkdtemp(), "empty.html")
open(empty, "w").write("<!DOCTYPE html><html><body></body></html>")


def load(path, run):
    t = time.perf_counter()
    subprocess.run(chromium + [f"--user-data-dir={tempfile.mkdtemp()}", "--dump-dom", "file://" + path],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=120)
    return time.perf_counter() - t


base = statistics.median(load(empty, i) for i in range(3))
page_t = statistics.median(load(page, i) for i in range(3))
print(f"opens in {max(0.0, page_t - base):.2f} s beyond an empty page ({page_t:.2f} s against {base:.2f} s)")
sys.exit(0 if page_t - base < 2 else 1)
