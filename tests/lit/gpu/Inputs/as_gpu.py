"""Re-runs the CPU backend's lit tests for the GPU target.

Usage: as_gpu.py --eddy EDDY --examples DIR --tmp DIR [--arch sm_80 ...]
                 [--target kernels|cuda] TEST...

Each TEST is a lit test of tests/lit/cpu whose RUN lines compare
`eddy run --mode=compiled` with the evaluator. Its RUN lines are run in order
(lit's substitutions %eddy, %S, %s, %t and %examples are made here), with
every `--mode=compiled` run switched to `--target=kernels`: the GPU target's
program, kernels as scf.parallel loops, run on the CPU. The lines that check
that run's output (diff, npy_close, FileCheck) then check the kernels' results
against the evaluator's, exactly as they check the CPU target's.

A compiled run the GPU target refuses ("not supported by the GPU target") is
counted as unsupported, and the lines reading its output are skipped. For
each program that compiles, the CUDA object is built for every --arch
(`eddy compile --target=cuda`: every kernel through ptxas).

With --target cuda the compiled runs run on the GPU instead (JIT): the
device tests. Without a device the first such run says "no CUDA device",
and the script prints "skipped: ..." and exits 77 (ctest's skip code).

Prints one summary line per kind of check; exits 1 when anything failed.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True)


def entry_of(cmd, module):
    """The --entry of an `eddy run` command, else the module's only one."""
    m = re.search(r"--entry[ =]@?(\S+)", cmd)
    if m:
        return m.group(1)
    try:
        with open(module) as f:
            names = re.findall(r"func\.func @([\w.$-]+)", f.read())
    except OSError:
        return None
    return names[0] if len(names) == 1 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eddy", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--arch", action="append", default=[])
    ap.add_argument("--target", default="kernels", choices=["kernels", "cuda"])
    ap.add_argument("tests", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    ok = unsupported = failed = objects = 0
    built = set()
    for test in a.tests:
        src = os.path.abspath(test)
        name = os.path.splitext(os.path.basename(src))[0]
        t = os.path.join(a.tmp, name)
        lines = []
        with open(src) as f:
            for line in f:
                if line.startswith("// RUN: "):
                    lines.append(line[len("// RUN: "):].rstrip("\n"))
        skipped_outputs = []
        for line in lines:
            cmd = (line.replace("%eddy", a.eddy)
                   .replace("%examples", a.examples)
                   .replace("%S", os.path.dirname(src))
                   .replace("%s", src).replace("%t", t))
            if any(o in cmd for o in skipped_outputs):
                continue
            compiled = "--mode=compiled" in cmd
            if compiled:
                cmd = cmd.replace("--mode=compiled",
                                  "--mode=compiled --target=" + a.target)
            r = run(cmd)
            out = r.stdout + r.stderr
            if compiled and "no CUDA device" in out:
                print("skipped: " + out.strip().splitlines()[-1])
                return 77
            if compiled and "not supported by the GPU target" in out:
                unsupported += 1
                # The lines that read this run's output are skipped.
                m = re.search(r"--output-dir[ =](\S+)", cmd)
                if m:
                    skipped_outputs.append(m.group(1))
                m = re.search(r">\s*(\S+)", cmd)
                if m:
                    skipped_outputs.append(m.group(1))
                continue
            if r.returncode != 0:
                failed += 1
                print("FAILED: %s\n%s" % (cmd, out[-2000:]))
                continue
            if not compiled:
                continue
            ok += 1
            words = shlex.split(cmd)
            module = words[words.index("run") + 1]
            entry = entry_of(cmd, module)
            if entry is None or "--passes" in cmd:
                continue
            for arch in a.arch:
                if (module, entry, arch) in built:
                    continue
                built.add((module, entry, arch))
                obj = os.path.join(a.tmp, "gpu%d.o" % len(built))
                c = run("%s compile %s --entry %s --target=cuda "
                        "--gpu-arch=%s -o %s" %
                        (a.eddy, shlex.quote(module), shlex.quote(entry),
                         arch, obj))
                if c.returncode != 0:
                    failed += 1
                    print("FAILED (cuda %s): %s @%s\n%s" %
                          (arch, module, entry, (c.stdout + c.stderr)[-2000:]))
                else:
                    objects += 1
    print("%s: %d compiled runs matched, %d not supported" %
          (a.target, ok, unsupported))
    print("cuda: %d objects built (%s)" % (objects, ", ".join(a.arch)))
    print("failed: %d" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
