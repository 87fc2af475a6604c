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
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(("%eddy", os.path.join(config.eddy_tools_dir, "eddy")))
config.substitutions.append(("%examples", os.path.join(config.eddy_src_root, "examples")))
