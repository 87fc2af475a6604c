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

With --bundle DIR nothing runs compiled: each compiled run becomes a case
for a GPU machine without eddy (bench/gpu/bundle.sh, device.py's lit
phase). The other RUN lines run as usual (they make the modules and inputs);
the lines that read a compiled run's output are skipped. Each case gets
DIR/PROGRAM/runN/ with in/argI.npy (`eddy run --write-inputs`) and either
expected/I.npy (the evaluator's results) or, where the evaluator fails, the
CPU target's error message in case.json (the compiled code must fail the
same way). PROGRAM is one (module, entry, --passes) and one executable;
DIR/build.list names each program's module and entry for bundle.sh, and
DIR/excluded.txt the runs left out and why.
"""
import argparse
import json
import os
import re
import shlex
import shutil
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


def compiled_run(cmd):
    """An `eddy run ... --mode=compiled` command as [eddy, run, MODULE, flags...],
    without `not`, the mode, --output-dir and redirections."""
    part = next(p for p in cmd.split("|") if "--mode=compiled" in p)
    words, out, skip = shlex.split(part), [], False
    for i, w in enumerate(words):
        if skip:
            skip = False
        elif (i == 0 and w == "not") or w == "--mode=compiled" or \
                w.startswith("--output-dir=") or w.startswith("--target="):
            pass
        elif w in (">", "2>", "--output-dir"):
            skip = True
        elif w.startswith(">") or w.startswith("2>"):
            pass
        else:
            out.append(w)
    return out


def error_line(text):
    """The first line of eddy's output that reports an error (without a leading
    `error: `), else its last line."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("error: "):
            return ln[len("error: "):]
        if "error: " in ln:
            return ln
    return lines[-1] if lines else ""


class Bundle:
    """The compiled runs of the tests as cases for bench/gpu (see the head)."""

    def __init__(self, eddy, out):
        self.eddy, self.out = eddy, out
        self.programs = {}  # (module, entry, passes) -> {"name", "runs", ...}
        self.runs = set()
        self.excluded = []
        os.makedirs(out, exist_ok=True)

    def add(self, test, line, cmd):
        """One compiled run: `line` as the test writes it, `cmd` substituted."""
        words = compiled_run(cmd)
        module = words[words.index("run") + 1]
        flags = words[words.index("run") + 2:]
        entry = entry_of(" ".join(flags), module)
        passes = None
        for i, w in enumerate(flags):
            if w.startswith("--passes="):
                passes = w[len("--passes="):]
            elif w == "--passes" and i + 1 < len(flags):
                passes = flags[i + 1]
        if (module, entry, tuple(flags)) in self.runs:
            return
        self.runs.add((module, entry, tuple(flags)))
        if entry is None:
            self.excluded.append((test, line, "no --entry and several functions"))
            return
        key = (module, entry, passes)
        prog = self.programs.get(key)
        if prog is None:
            stem = os.path.splitext(test)[0]
            name = "%s.%s" % (stem, entry)
            taken = {p["name"] for p in self.programs.values()}
            k = 2
            while name in taken:
                name = "%s.%s.%d" % (stem, entry, k)
                k += 1
            d = os.path.join(self.out, name)
            os.makedirs(d, exist_ok=True)
            ir = module
            if passes:
                ir = os.path.join(d, "model.eddy")
                r = run("%s opt %s --passes=%s -o %s" % (
                    self.eddy, shlex.quote(module), shlex.quote(passes), ir))
                if r.returncode != 0:
                    self.excluded.append((test, line, "eddy opt failed: " +
                                          error_line(r.stdout + r.stderr)))
                    return
            prog = {"name": name, "test": test, "module": module, "ir": ir,
                    "entry": entry, "passes": passes, "runs": []}
            self.programs[key] = prog
        d = os.path.join(self.out, prog["name"], "run%d" % len(prog["runs"]))
        os.makedirs(d, exist_ok=True)
        rest = " ".join(shlex.quote(w) for w in words)
        r = run("%s --mode=eval --write-inputs %s/in --output-dir %s/expected" %
                (rest, d, d))
        case = {"command": line, "test": test}
        if r.returncode == 0:
            count = sum(ln.startswith("result ") for ln in r.stdout.splitlines())
            missing = [i for i in range(count) if not os.path.exists(
                os.path.join(d, "expected", "%d.npy" % i))]
            if missing:
                self.excluded.append((test, line, "result %d has no .npy form "
                                      "(a TensorList)" % missing[0]))
                return
            case["outputs"] = count
        else:
            why = error_line(r.stdout + r.stderr)
            if "cannot write result" in why:
                self.excluded.append((test, line, why))
                return
            # The evaluator fails: the CPU target's message is the reference.
            c = run(rest + " --mode=compiled")
            if c.returncode == 0:
                self.excluded.append((test, line, "the evaluator fails (%s) but "
                                      "the CPU target does not" % why))
                return
            case["eval_error"] = why
            case["error"] = error_line(c.stdout + c.stderr)
        ins = sorted(os.listdir(os.path.join(d, "in"))) if os.path.isdir(
            os.path.join(d, "in")) else None
        if ins is None or ins != sorted("arg%d.npy" % i for i in range(len(ins))):
            self.excluded.append((test, line, "its arguments were not written: " +
                                  error_line(r.stdout + r.stderr)))
            return
        case["inputs"] = ["in/arg%d.npy" % i for i in range(len(ins))]
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
        prog["runs"].append(os.path.basename(d))

    def finish(self):
        """Writes build.list and excluded.txt; returns (programs, runs, errors)."""
        runs = errors = 0
        with open(os.path.join(self.out, "build.list"), "w") as f:
            for p in self.programs.values():
                d = os.path.join(self.out, p["name"])
                # The directories of the runs left out, and of programs without runs.
                for r in os.listdir(d):
                    if r.startswith("run") and r not in p["runs"]:
                        shutil.rmtree(os.path.join(d, r))
                if not p["runs"]:
                    shutil.rmtree(d)
                    continue
                runs += len(p["runs"])
                errors += sum(
                    "error" in json.load(open(os.path.join(
                        self.out, p["name"], r, "case.json"))) for r in p["runs"])
                with open(os.path.join(self.out, p["name"], "program.json"), "w") as g:
                    json.dump({k: p[k] for k in ("test", "entry", "passes", "runs")},
                              g, indent=1)
                f.write("%s\t%s\t%s\n" % (p["name"], p["ir"], p["entry"]))
        with open(os.path.join(self.out, "excluded.txt"), "w") as f:
            for test, cmd, why in self.excluded:
                f.write("%s: %s\n  %s\n" % (test, why, cmd))
        return sum(1 for p in self.programs.values() if p["runs"]), runs, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eddy", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--arch", action="append", default=[])
    ap.add_argument("--target", default="kernels", choices=["kernels", "cuda"])
    ap.add_argument("--bundle", metavar="DIR",
                    help="write the compiled runs as cases for bench/gpu")
    ap.add_argument("tests", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    bundle = Bundle(a.eddy, a.bundle) if a.bundle else None
    ok = unsupported = failed = objects = 0
    programs_built = set()
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
            compiled = "--mode=compiled" in cmd
            if bundle and compiled:
                bundle.add(os.path.basename(src), line, cmd)
                # The lines that read this run's output are skipped.
                m = re.search(r"--output-dir[ =](\S+)", cmd)
                if m:
                    skipped_outputs.append(m.group(1))
                m = re.search(r"[^2]>\s*(\S+)", cmd)
                if m:
                    skipped_outputs.append(m.group(1))
                continue
            if any(o in cmd for o in skipped_outputs):
                continue
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
                    programs_built.add((module, entry))
    if bundle:
        programs, runs, errors = bundle.finish()
        print("bundle: %d programs, %d runs (%d expect an error), %d left out" %
              (programs, runs, errors, len(bundle.excluded)))
        print("failed: %d" % failed)
        return 1 if failed else 0
    print("%s: %d compiled runs matched, %d not supported" %
          (a.target, ok, unsupported))
    print("cuda: %d objects built for %d programs (%s)" %
          (objects, len(programs_built), ", ".join(a.arch)))
    print("failed: %d" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
