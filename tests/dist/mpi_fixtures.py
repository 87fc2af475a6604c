#!/usr/bin/env python3
"""eddy run --mode=distributed under `mpirun -n 2` and `-n 3`: TensorFlow
fixtures (v1 and v2, loops, nested loops, conds, loop gradients) under
random placements from fixed seeds print what --mode=interp prints, to the
last digit; an error on one rank stops every rank and rank 0 reports it,
naming the rank and the loop frame. Skips (77) when mpirun is missing."""
import json, os, shutil, subprocess, sys, tempfile

FIXTURES = ["nested_v1", "nested_v2", "nested_grad_v1", "nested_grad_v2",
            "cond_v1", "cond_in_while_v2", "while_cond_loop_grad_v2",
            "dyn_loop_v1", "lstm_grad_v2", "cond_with_loop_grad_v1",
            "while_two_conds_v2", "keras_lstm_v1"]


def main():
    eddy, src, mpirun = sys.argv[1], sys.argv[2], shutil.which("mpirun")
    if not mpirun:
        print("mpirun not found: skipped")
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    mpi = [mpirun, "--oversubscribe"]
    failed = 0
    for i, name in enumerate(FIXTURES):
        d = os.path.join(src, "tests", "fixtures", "tf", name)
        mf = json.load(open(os.path.join(d, "manifest.json")))
        args = [os.path.join(d, "model.pb")]
        for f in mf["feeds"]:
            args += ["--input", "%s=%s" % (f["name"], os.path.join(d, f["file"]))]
        for f in mf["fetches"]:
            args += ["--fetch", f["name"]]
        args += ["--preview", "all"]
        ref = subprocess.run([eddy, "run"] + args + ["--mode=interp"],
                             capture_output=True, text=True, env=env)
        for n in (2, 3):
            got = subprocess.run(
                mpi + ["-n", str(n), eddy, "run"] + args +
                ["--mode=distributed", "--placement=random:%d" % (20 + i + n),
                 "--workers", "1", "--timeout-ms", "60000"],
                capture_output=True, text=True, env=env, timeout=120)
            ok = ref.returncode == 0 and got.returncode == 0 and \
                got.stdout == ref.stdout and ref.stdout
            print("%-26s %d ranks %s" % (name, n, "ok" if ok else "FAIL"))
            if not ok:
                failed += 1
                print(ref.stdout, ref.stderr, got.stdout, got.stderr)
    # An error on rank 1 (the loop placed there runs past its limit).
    with tempfile.TemporaryDirectory() as tmp:
        pl = os.path.join(tmp, "placement")
        open(pl, "w").write("# the whole program on rank 1\n* 1\n")
        d = os.path.join(src, "tests", "fixtures", "tf", "nested_v2")
        mf = json.load(open(os.path.join(d, "manifest.json")))
        got = subprocess.run(
            mpi + ["-n", "2", eddy, "run", os.path.join(d, "model.pb"),
                   "--input", "x=" + os.path.join(d, mf["feeds"][0]["file"]),
                   "--fetch", mf["fetches"][0]["name"], "--mode=distributed",
                   "--placement", pl, "--max-iterations", "1"],
            capture_output=True, text=True, env=env, timeout=120)
        ok = got.returncode != 0 and "rank 1:" in got.stderr and \
            "frame 'while_" in got.stderr and "iterations" in got.stderr \
            and got.stderr.count("error:") == 1
        print("error on rank 1 %s" % ("ok" if ok else "FAIL"))
        if not ok:
            failed += 1
            print(got.stdout, got.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
