# lit configuration for eddy's IR-in, IR-out and diagnostic tests.
import os
import lit.formats

config.name = "eddy"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".eddy", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.eddy_obj_root, "tests", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.eddy_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "EDDY_NUM_THREADS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(("%eddy", os.path.join(config.eddy_tools_dir, "eddy")))
config.substitutions.append(("%examples", os.path.join(config.eddy_src_root, "examples")))
config.substitutions.append(("%docs", os.path.join(config.eddy_src_root, "docs")))

# %cc-eddyrt: the system C compiler with the flags to build a program that
# links a compiled model against this build's libeddyrt (sanitizer flags
# follow the build's EDDY_SANITIZE, read from its CMake cache).
import os
import re

obj = config.eddy_obj_root
flags = ""
blas = ""
try:
    with open(os.path.join(obj, "CMakeCache.txt")) as f:
        cache = f.read()
    if re.search(r"^EDDY_SANITIZE:BOOL=(ON|1|TRUE)$", cache, re.M):
        flags = " -fsanitize=address,undefined"
        config.available_features.add("sanitize")
    # libeddyrt calls OpenBLAS for large f32 matmuls when built with it.
    m = re.search(r"^EDDY_RT_BLAS_LIBS:INTERNAL=(.+)$", cache, re.M)
    if m:
        blas = " " + m.group(1).replace(";", " ")
except OSError:
    pass
# A host CPU with fused multiply-add (x86 `fma`): compiled code that may
# contract multiplies and adds (--fp-contract=fast) then gets FMAs.
try:
    with open("/proc/cpuinfo") as f:
        if re.search(r"^flags\s*:.*\bfma\b", f.read(), re.M):
            config.available_features.add("host-fma")
except OSError:
    pass
config.substitutions.append(
    ("%cc-eddyrt",
     "cc -std=c11 -Wall -Wextra -Werror%s -I%s -I%s" %
     (flags, os.path.join(config.eddy_src_root, "runtime"), "%t.dir")))
config.substitutions.append(
    ("%link-eddyrt",
     "%s%s -lm -lpthread" % (os.path.join(obj, "runtime", "libeddy_rt.a"), blas)))
