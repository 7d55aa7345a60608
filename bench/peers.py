"""The Python packages the bench scripts need, with one clear message where
one is missing (a fresh machine has none of them).

Debian's python3-sklearn and python3-gensim (and the numpy and scipy they
bring) are seen only by /usr/bin/python3, not by another interpreter that may
come first on PATH.
"""
import importlib
import os
import sys

INSTALL = "apt-get install python3-sklearn python3-gensim"


def require(*modules):
    """Exits with what to install if any of `modules` cannot be imported."""
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {sys.executable} cannot import {', '.join(missing)}; "
                 f"install the peers with `{INSTALL}` and run the script with /usr/bin/python3")
