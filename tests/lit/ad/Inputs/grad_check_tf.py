"""Runs `eddy grad MODEL.pb --wrt all --check` on TensorFlow fixtures
(tests/fixtures/tf/<name>/: model.pb, manifest.json, in_<i>.npy), at the
fixture's own inputs, and prints one line per checked argument with its
errors, then a summary. Standard library only. Exit 1 when a fixture fails.
--refused NAME=TEXT names a fixture whose gradient eddy refuses today, with
TEXT in the error: it must still be refused that way (a fixture that starts
to pass fails the run too, so that the list shrinks as support grows).
--skip NAME=REASON leaves a fixture out, with the reason printed: for inputs
where the program is not differentiable (central differences across a
branch of the data, such as a mask of exact zeros).
--loop-memory POLICY differentiates with `eddy grad --loop-memory=POLICY`.
    python3 grad_check_tf.py EDDY FIXTURES_DIR [--directions N]
                             [--loop-memory POLICY]
                             [--refused NAME=TEXT]... [--skip NAME=REASON]...
                             [NAME...]"""
import json
import os
import re
import subprocess
import sys
import time

ARG = re.compile(r"^  argument (\d+) '([^']*)' \(([^)]*)\): (.*)$")
FD = re.compile(r"finite differences: max abs err (\S+), max rel err ([^;:]+)")
LOW = re.compile(r"gradient vs f64: max abs err (\S+), max rel err ([^:]+)")


def check(eddy, fixtures, name, directions, extra):
    d = os.path.join(fixtures, name)
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    cmd = [eddy, "grad", os.path.join(d, manifest["graph"]), "--wrt", "all",
           "--check", "--check-directions", str(directions), "-o", os.devnull] + extra
    for fetch in manifest["fetches"]:
        cmd += ["--fetch", fetch["name"]]
    for i, feed in enumerate(manifest["feeds"]):
        cmd += ["--input", "%s=%s" % (feed["name"],
                                      os.path.join(d, "in_%d.npy" % i))]
    p = subprocess.run(cmd, capture_output=True, text=True)
    rows = []
    for line in p.stderr.splitlines():
        m = ARG.match(line)
        if not m:
            continue
        fd, low = FD.search(m.group(4)), LOW.search(m.group(4))
        status = m.group(4).rsplit(": ", 1)[-1] if fd else m.group(4)
        rows.append((m.group(2), m.group(3),
                     fd.group(2) if fd else "-", low.group(2) if low else "-",
                     status))
    return p.returncode, rows, p.stderr


def take_pairs(args, flag):
    """The NAME=TEXT values of every `flag NAME=TEXT` in args (removed from it)."""
    pairs = {}
    while flag in args:
        i = args.index(flag)
        name, text = args[i + 1].split("=", 1)
        pairs[name] = text
        del args[i:i + 2]
    return pairs


def main():
    args = sys.argv[1:]
    directions = 3
    if "--directions" in args:
        i = args.index("--directions")
        directions = int(args[i + 1])
        del args[i:i + 2]
    extra = []
    if "--loop-memory" in args:
        i = args.index("--loop-memory")
        extra = ["--loop-memory=" + args[i + 1]]
        del args[i:i + 2]
    refused, skipped = take_pairs(args, "--refused"), take_pairs(args, "--skip")
    eddy, fixtures, names = args[0], args[1], args[2:]
    if not names:
        names = sorted(n for n in os.listdir(fixtures)
                       if os.path.isfile(os.path.join(fixtures, n,
                                                      "manifest.json")))
    failed, inputs, known = [], 0, 0
    start = time.time()
    for name in names:
        if name in skipped:
            print("%-22s skipped: %s" % (name, skipped[name]))
            continue
        rc, rows, err = check(eddy, fixtures, name, directions, extra)
        if name in refused:
            if rc != 0 and refused[name] in err:
                known += 1
                print("%-22s refused, as expected: %s" % (name, refused[name]))
            else:
                failed.append(name)
                sys.stdout.write("%s: expected a refusal with '%s', got exit "
                                 "%d\n%s" % (name, refused[name], rc, err))
            continue
        checked = [r for r in rows if r[4] in ("ok", "MISMATCH")]
        inputs += len(checked)
        if rc != 0 or not checked or any(r[4] != "ok" for r in checked):
            failed.append(name)
            sys.stdout.write("%s: FAILED (exit %d)\n%s" % (name, rc, err))
        for r in rows:
            print("%-22s %-6s %-22s fd %-9s low %-9s %s" % ((name,) + r))
    print("%d fixtures, %d arguments checked in %.1f s, %d refused as "
          "expected, %d skipped: %s" %
          (len(names), inputs, time.time() - start, known,
           sum(1 for n in names if n in skipped),
           "all ok" if not failed else "FAILED " + " ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
