"""Drives `ppc repl` on a terminal, as a person would, under tmux: types
lines (tmux send-keys), waits for what should appear (capture-pane, polled,
with a timeout: no fixed sleeps), presses Tab and Ctrl-C. Prints one line
per step ("ok: ..." or "FAILED: ..." with the screen) and exits 1 on the
first failure.

    tmux_session.py PPC EXAMPLES WORKDIR
"""
import os
import re
import subprocess
import sys
import time

PPC, EXAMPLES, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
SOCKET = f"ppc-repl-test-{os.getpid()}"
HISTORY = os.path.join(WORK, "history")


def tmux(*args):
    return subprocess.run(["tmux", "-L", SOCKET] + list(args), capture_output=True, text=True)


def screen():
    return tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "repl").stdout


def wait_for(text, timeout=30, after=0):
    """Waits until `text` appears on the screen at least `after` + 1 times."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if screen().count(text) > after:
            return True
        time.sleep(0.05)
    return False


def step(name, ok):
    if ok:
        print("ok:", name, flush=True)
        return
    print("FAILED:", name, "\n--- screen ---\n" + screen(), flush=True)
    if os.environ.get("TMUX_TEST_KEEP"):
        return sys.exit(1)
    tmux("kill-server")
    sys.exit(1)


def type_line(line):
    tmux("send-keys", "-t", "repl", "-l", line)
    tmux("send-keys", "-t", "repl", "Enter")


def main():
    if subprocess.run(["which", "tmux"], capture_output=True).returncode != 0:
        print("FAILED: tmux is not installed (build.sh installs it)")
        return 1
    # The shell around ppc ignores Ctrl-C (ppc handles it) and records how
    # ppc ended; the pane stays after it so that the end can be read.
    status_file = os.path.join(WORK, "status")
    script = (f'trap "" INT; env PPC_HISTORY={HISTORY} TERM=xterm {PPC} repl; '
              f'echo "exit status $?" > {status_file}')
    tmux("start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
         "new-session", "-d", "-s", "repl", "-x", "200", "-y", "60", "sh", "-c", script)
    step("the prompt", wait_for("ppc> "))
    # A file name completed with Tab.
    tmux("send-keys", "-t", "repl", "-l", f":load {EXAMPLES}/lda.p")
    tmux("send-keys", "-t", "repl", "Tab")
    step("tab completion of a file name", wait_for(f":load {EXAMPLES}/lda.ppl"))
    tmux("send-keys", "-t", "repl", "Enter")
    step("load", wait_for("loaded "))
    type_line(":param V=500 K=5")
    step("param", wait_for("parameters set"))
    type_line(f":data {EXAMPLES}/data/ap_small_d200_w500.csv --map theta=doc --map x=word --weight count")
    step("data", wait_for("data bound: 2 latent variables (phi, theta)"))
    type_line(f":vocab {EXAMPLES}/data/ap_small_d200_w500_vocab.txt")
    step("vocabulary", wait_for("vocabulary: 500 words"))
    type_line(":infer 5")
    step("infer", wait_for("iteration 5: ELBO -97154.99"))
    type_line(":top phi 5")
    step("topics", wait_for("phi: top 5 of each row") and wait_for("[4] "))
    type_line("val oops = Dirichlet(1.0,, K)")
    step("a malformed line: its error and position", wait_for("lda.ppl:9:28: error: unexpected ','"))
    type_line(":infer 3")
    step("the session goes on, the trace continues", wait_for("iteration 8: ELBO -95010.41"))
    # Tab completion: a command, then a variable name.
    tmux("send-keys", "-t", "repl", "-l", ":sh")
    tmux("send-keys", "-t", "repl", "Tab")
    tmux("send-keys", "-t", "repl", "-l", "the")
    tmux("send-keys", "-t", "repl", "Tab")
    step("tab completion of a command and a variable", wait_for("ppc> :show theta"))
    tmux("send-keys", "-t", "repl", "Enter")
    step("show", wait_for("theta: Dirichlet<5> posterior, 200 elements"))
    # Ctrl-C stops a long :infer after the current iteration, keeping the state.
    before = screen().count("iteration ")
    type_line(":infer 1000000")
    step("a long :infer runs", wait_for("iteration ", after=before))
    time.sleep(0.3)
    tmux("send-keys", "-t", "repl", "C-c")
    step("Ctrl-C interrupts it", wait_for("interrupted after "))
    type_line(":time")
    step("the session is alive after Ctrl-C", wait_for("last compile:"))
    tmux("send-keys", "-t", "repl", "C-c")  # at the prompt: nothing ends
    interrupted = re.search(r"interrupted after \d+ iterations?; iteration (\d+): ELBO (\S+)", screen())
    step("Ctrl-C reports the last finished iteration", interrupted is not None)
    type_line(":elbo")
    last = f"iteration {interrupted.group(1)}: ELBO {interrupted.group(2)}"
    step(":elbo ends with that iteration", wait_for(last, after=1) and wait_for("more; :elbo all)"))
    type_line(":quit")
    deadline = time.time() + 10
    while time.time() < deadline and not os.path.exists(status_file):
        time.sleep(0.05)
    status = open(status_file).read().strip() if os.path.exists(status_file) else "still running"
    step(":quit ends the session with status 0", status == "exit status 0" or print(status))
    # libedit's history file escapes blanks as \040.
    history = open(HISTORY).read().replace("\\040", " ") if os.path.exists(HISTORY) else ""
    step("the history file keeps the lines", ":infer 3" in history and ":load " in history and ":quit" in history)
    tmux("kill-server")
    return 0


sys.exit(main())
