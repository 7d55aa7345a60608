#!/bin/sh
# %timeout SECONDS COMMAND...: coreutils timeout, with the limit scaled by
# PPC_TEST_TIME_SCALE (lit.cfg.py sets it for the sanitized build, whose
# runs are several times slower), so a hang still fails and ASan does not.
secs=$1
shift
exec timeout "$((secs * ${PPC_TEST_TIME_SCALE:-1}))" "$@"
