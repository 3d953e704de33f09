"""run.py GROUP: runs one group (a TestCase class) of test_export.py, or
MODULE.GROUP of another test file here, as one ctest test. Exits 77,
which ctest counts as skipped, when Debian's python3-torch or
python3-torchvision cannot be imported."""
import os
import sys
import unittest

try:
    import torch
    import torchvision  # noqa: F401
except ImportError as e:
    print("skipped: %s (install python3-torch python3-torchvision)" % e)
    sys.exit(77)

# one core, as ctest counts one slot a test: leave the other slots' tests
# (some of them timed) their cores
torch.set_num_threads(1)
os.environ["OMP_NUM_THREADS"] = "1"  # hoffopt, run as a subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# GROUP is a TestCase of test_export.py, or MODULE.GROUP of another file
name = sys.argv[1] if "." in sys.argv[1] else "test_export." + sys.argv[1]
suite = unittest.defaultTestLoader.loadTestsFromName(name)
ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
sys.exit(0 if ok else 1)
