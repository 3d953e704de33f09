"""test_frontend.py: the front end's outputs, its command line and FORMAT v2.

Groups (tests/torch/run.py test_frontend.GROUP, one ctest test each):
- Outputs: outfile.py's rules, the cases of the C tool's tests: a device
  (/dev/null written in place, /dev/full a one-line error), a FIFO written
  in place, a symlink followed, an output equal to the model's file
  refused, the mode kept, a failed write leaving nothing behind.
- Args: a table of 100+ command lines; each returns the expected exit
  code, never a traceback, and one line on stderr when it fails.
- V2: train graphs are `version 2, repeat: true`; ops that draw random
  numbers are `recomputable: false`; anything else stays version 1.
"""
import contextlib
import io
import json
import os
import shlex
import stat
import threading
import unittest

import torch
import torch.nn as nn

from test_export import V1, Tmp, hoffopt  # noqa: F401 (sys.path)
import hoffopt_torch
from hoffopt_torch.__main__ import main
from hoffopt_torch.outfile import OutputError

TINY = '''import torch
def f():
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                               torch.nn.Linear(4, 2)), (torch.ones(2, 3),)
def notuple():
    return torch.nn.Linear(2, 2)
def boom():
    raise RuntimeError("factory failed\\nsecond line")
def nz():
    class M(torch.nn.Module):
        def forward(self, x):
            return x.nonzero()
    return M(), (torch.ones(3),)
def loss(out):
    return out.pow(2).sum()
def badloss(out):
    return out
x = 3
'''


def devices(d):
    """Private copies of /dev/null and /dev/full (char 1:3 and 1:7) in
    folder d, so that a regression replaces these, not the machine's; None
    when mknod is not permitted."""
    try:
        null, full = os.path.join(d, "null"), os.path.join(d, "full")
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        return null, full
    except OSError:
        return None


def run_main(argv):
    """main(argv) in this process: (exit code, stderr); fails the test on
    an exception escaping main (a traceback)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), \
            contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    return rc, err.getvalue()


class Outputs(Tmp, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.model = self.path("m2.py")
        with open(self.model, "w") as f:
            f.write(TINY)
        self.g = hoffopt_torch.export(nn.Linear(3, 2), torch.ones(1, 3),
                                      mode="infer")

    def text(self):
        return json.dumps(self.g)

    def test_devices_written_in_place(self):
        devs = devices(self.dir)
        if devs is None:
            self.skipTest("mknod not permitted (not root)")
        null, full = devs
        hoffopt_torch.write(self.g, null)
        self.assertTrue(stat.S_ISCHR(os.lstat(null).st_mode))
        with self.assertRaises(OutputError) as cm:
            hoffopt_torch.write(self.g, full)
        self.assertEqual(str(cm.exception), "cannot write %s: No space "
                         "left on device" % full)
        self.assertTrue(stat.S_ISCHR(os.lstat(full).st_mode))
        rc, err = run_main([self.model + ":f", "-o", full])
        self.assertEqual((rc, err), (2, "hoffopt_torch: cannot write "
                                     "%s: No space left on device\n" % full))
        self.assertTrue(stat.S_ISCHR(os.lstat(full).st_mode))
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["full", "m2.py", "null"])

    def test_fifo_written_in_place(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(
            target=lambda: got.append(open(fifo).read()), daemon=True)
        reader.start()
        hoffopt_torch.write(self.g, fifo)
        reader.join(30)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(len(got), 1)
        self.assertEqual(json.loads(got[0]), self.g)
        self.assertEqual(sorted(os.listdir(self.dir)), ["fifo", "m2.py"])

    def test_symlink_followed(self):
        target = self.path("real.json")
        with open(target, "w") as f:
            f.write("old")
        link = self.path("link.json")
        os.symlink("real.json", link)
        hoffopt_torch.write(self.g, link)
        self.assertTrue(os.path.islink(link))
        with open(target) as f:
            self.assertEqual(json.load(f), self.g)
        # a dangling link: the file is made where it points
        os.symlink("new.json", self.path("dangling.json"))
        hoffopt_torch.write(self.g, self.path("dangling.json"))
        self.assertTrue(os.path.islink(self.path("dangling.json")))
        with open(self.path("new.json")) as f:
            self.assertEqual(json.load(f), self.g)

    def test_output_equal_to_model_file_refused(self):
        with open(self.model) as f:
            before = f.read()
        os.symlink("m2.py", self.path("alias.py"))
        for out in (self.model, self.path("alias.py"),
                    os.path.join(self.dir, ".", "m2.py")):
            rc, err = run_main([self.model + ":f", "-o", out])
            self.assertEqual(rc, 2, err)
            self.assertIn("same file as model", err)
            self.assertEqual(len(err.splitlines()), 1, err)
        # the loss file too
        lf = self.path("l.py")
        with open(lf, "w") as f:
            f.write(TINY)
        rc, err = run_main([self.model + ":f", "--loss", lf + ":loss",
                            "-o", lf])
        self.assertEqual(rc, 2, err)
        self.assertIn("same file as --loss", err)
        with open(self.model) as f:
            self.assertEqual(f.read(), before)

    def test_mode_kept(self):
        p = self.path("g.json")
        with open(p, "w") as f:
            f.write("old")
        os.chmod(p, 0o640)
        hoffopt_torch.write(self.g, p)
        self.assertEqual(stat.S_IMODE(os.stat(p).st_mode), 0o640)
        os.chmod(p, 0o604)
        rc, err = run_main([self.model + ":f", "-o", p])
        self.assertEqual(rc, 0, err)
        self.assertEqual(stat.S_IMODE(os.stat(p).st_mode), 0o604)
        # a new file: 0666 less the umask
        old = os.umask(0o027)
        try:
            hoffopt_torch.write(self.g, self.path("new.json"))
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat(self.path("new.json"))
                                      .st_mode), 0o640)

    def test_missing_folder_and_folder(self):
        for out, why in ((self.path("no/such/g.json"),
                          "No such file or directory"),
                         (self.dir, "Is a directory")):
            rc, err = run_main([self.model + ":f", "-o", out])
            self.assertEqual((rc, err), (2, "hoffopt_torch: cannot write "
                                         "%s: %s\n" % (out, why)))

    def test_failed_write_leaves_old_content_and_no_temporary(self):
        p = self.path("g.json")
        with open(p, "w") as f:
            f.write("old")
        g = dict(self.g)
        g["ops"] = [object()]  # json cannot write it: fails mid-file
        with self.assertRaises(TypeError):
            hoffopt_torch.write(g, p)
        with open(p) as f:
            self.assertEqual(f.read(), "old")
        self.assertEqual(sorted(os.listdir(self.dir)), ["g.json", "m2.py"])


# The table: (command line, expected exit code). {M}: the tiny model file,
# {D}: a fresh folder, {O}: an output path in it, {NULL} and {FULL}:
# private copies of /dev/null and /dev/full (or the real ones, not root).
# 0: written, 2: usage, bad input or an output that cannot be written.
# Never a traceback.
ARGS = [
    # usage
    ("", 2), ("-o {O}", 2), ("{M}:f", 2), ("--bogus", 2),
    ("{M}:f -o {O} --bogus", 2), ("{M}:f -o", 2), ("{M}:f -o {O} extra", 2),
    ("{M}:f --output", 2), ("-h", 0), ("--help", 0), ("run --help", 0),
    ("{M}:f -o {O} -o {O}", 0),
    # the model spec
    ("nocolon -o {O}", 2), (": -o {O}", 2), ("{M}: -o {O}", 2),
    ("{M}:nosuch -o {O}", 2), ("{M}:x -o {O}", 2),
    ("{M}:notuple -o {O}", 2), ("{M}:boom -o {O}", 2),
    ("{M}:nz -o {O}", 2), ("{D}/missing.py:f -o {O}", 2),
    ("{D}:f -o {O}", 2), ("/dev/null:f -o {O}", 2),
    ("{M}:f:g -o {O}", 2), ("torchvision: -o {O}", 2),
    ("torchvision:nosuch -o {O}", 2), ("torchvision:resnet18x -o {O}", 2),
    ("torchvision:../resnet18 -o {O}", 2),
    ("torchvision:resnet18 --image-size 1 --mode infer -o {O}", 0),
    ("torchvision:squeezenet1_0 --image-size 16 --mode infer -o {O}", 2),
    # --mode
    ("{M}:f --mode train -o {O}", 0), ("{M}:f --mode infer -o {O}", 0),
    ("{M}:f --mode eval -o {O}", 2), ("{M}:f --mode -o {O}", 2),
    ("{M}:f --mode= -o {O}", 2), ("{M}:f --mode=infer -o {O}", 0),
    ("{M}:f --mode TRAIN -o {O}", 2),
    # --batch and --image-size
    ("{M}:f --batch 2 -o {O}", 0), ("{M}:f --batch 0 -o {O}", 2),
    ("{M}:f --batch -1 -o {O}", 2), ("{M}:f --batch x -o {O}", 2),
    ("{M}:f --batch 1.5 -o {O}", 2), ("{M}:f --batch '' -o {O}", 2),
    ("{M}:f --batch 1e3 -o {O}", 2), ("{M}:f --batch 0x10 -o {O}", 2),
    ("{M}:f --batch=3 -o {O}", 0), ("{M}:f --image-size 0 -o {O}", 2),
    ("{M}:f --image-size -5 -o {O}", 2), ("{M}:f --image-size abc -o {O}", 2),
    ("{M}:f --image-size 32 -o {O}", 0),
    ("{M}:f --batch 99999999999999999999999 -o {O}", 0),
    # --machine
    ("{M}:f --machine h200 -o {O}", 0), ("{M}:f --machine gh200 -o {O}", 0),
    ("{M}:f --machine supernode -o {O}", 0),
    ("{M}:f --machine h100-pcie5 -o {O}", 0),
    ("{M}:f --machine tpu -o {O}", 2), ("{M}:f --machine '' -o {O}", 2),
    ("{M}:f --machine H200 -o {O}", 2), ("{M}:f --machine -o {O}", 2),
    # homes
    ("{M}:f --weights-home host -o {O}", 0),
    ("{M}:f --weights-home device -o {O}", 0),
    ("{M}:f --weights-home nvme -o {O}", 2),
    ("{M}:f --weights-home '' -o {O}", 2),
    ("{M}:f --weights-home remote -o {O}", 2),
    ("{M}:f --machine supernode --weights-home remote -o {O}", 0),
    ("{M}:f --optimizer-home host -o {O}", 0),
    ("{M}:f --optimizer-home device -o {O}", 0),
    ("{M}:f --optimizer-home disk -o {O}", 2),
    # --optimizer
    ("{M}:f --optimizer none -o {O}", 0), ("{M}:f --optimizer adam -o {O}", 0),
    ("{M}:f --optimizer sgd -o {O}", 2),
    ("{M}:f --optimizer adam --mode infer -o {O}", 0),
    # --loss
    ("{M}:f --loss nosuch:fn -o {O}", 2), ("{M}:f --loss nosuch -o {O}", 2),
    ("{M}:f --loss : -o {O}", 2), ("{M}:f --loss math:nosuch -o {O}", 2),
    ("{M}:f --loss math:pi -o {O}", 2),
    ("{M}:f --loss os.path:join -o {O}", 2),
    ("{M}:f --loss {M}:loss -o {O}", 0),
    ("{M}:f --loss {M}:badloss -o {O}", 2),
    ("{M}:f --loss {M}:nosuch -o {O}", 2), ("{M}:f --loss {M}:x -o {O}", 2),
    ("{M}:f --loss {D}/no.py:loss -o {O}", 2),
    ("{M}:f --loss .:loss -o {O}", 2), ("{M}:f --loss '..:x' -o {O}", 2),
    ("{M}:f --loss torch:sum -o {O}", 0),
    # other flags
    ("{M}:f --bf16 -o {O}", 0), ("{M}:f --bf16=1 -o {O}", 2),
    ("{M}:f --name N -o {O}", 0), ("{M}:f --name '' -o {O}", 0),
    ("{M}:f --v1 -o {O}", 0), ("{M}:f --name -o {O}", 2),
    # outputs
    ("{M}:f -o {D}/no/g.json", 2), ("{M}:f -o {D}", 2),
    ("{M}:f -o {FULL}", 2), ("{M}:f -o {NULL}", 0),
    ("{M}:f -o {M}", 2), ("{M}:f -o {D}/../m2.py", 2),
    ("{M}:f -o ''", 2), ("{M}:f -o /proc/version", 2),
    ("{M}:f --loss {M}:loss -o {M}", 2),
    ("{M}:f -o '{D}/with space.json'", 0), ("{M}:f -o {D}/ünï.json", 0),
    # run: usage and inputs
    ("run", 2), ("run {M}:f", 2), ("run {M}:f --graph {D}/none.json", 2),
    ("run {M}:f --graph {D}/none.json --schedule {D}/none.json", 2),
    ("run {M}:f --graph {M} --schedule {M}", 2),
    ("run {M}:f --graph /dev/null --schedule /dev/null", 2),
    ("run {M}:f --graph {D} --schedule {D}", 2),
    ("run {M}:f --graph {O} --schedule {O} --device tpu", 2),
    ("run {M}:f --graph {O} --schedule {O} --bogus", 2),
    ("run nocolon --graph {O} --schedule {O}", 2),
    ("run {M}:f --graph {O} --schedule {O} --emit-python {M}", 2),
    ("run {M}:f --graph {O} --schedule {O} --runs 0", 2),
    ("run {M}:f --graph {O} --schedule {O} --warmup -1", 2),
    ("run {M}:f --graph {O} --schedule {O} --seed x", 2),
    # --measure and --times-from
    ("{M}:f --measure 0 -o {O}", 2), ("{M}:f --measure x -o {O}", 2),
    ("{M}:f --measure 2 --times-from {M} -o {O}", 2),
    ("{M}:f --times-from {D}/no.json -o {O}", 2),
    ("{M}:f --times-from {M} -o {O}", 2),
    ("{M}:f --times-from {D} -o {O}", 2),
    ("{M}:f --mode infer --measure 1 -o {O}", 0),
]


class Args(Tmp, unittest.TestCase):
    def test_table(self):
        self.assertGreaterEqual(len(ARGS), 100)
        model = self.path("m2.py")
        with open(model, "w") as f:
            f.write(TINY)
        seen = set()
        null, full = devices(self.dir) or ("/dev/null", "/dev/full")
        for k, (line, want) in enumerate(ARGS):
            self.assertNotIn(line, seen)
            seen.add(line)
            d = os.path.join(self.dir, "d%d" % k)
            os.mkdir(d)
            out = os.path.join(d, "g.json")
            argv = [a.format(M=model, D=d, O=out, NULL=null, FULL=full)
                    for a in shlex.split(line)]
            with self.subTest(line=line):
                rc, err = run_main(argv)
                self.assertNotIn("Traceback", err)
                self.assertEqual(rc, want, "%s: %s" % (line, err))
                if rc == 2:
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertTrue(err.startswith("hoffopt_torch: "), err)
                if want == 2:
                    self.assertFalse(os.path.exists(out), line)
                left = [n for n in os.listdir(d) if n.startswith(".")]
                self.assertEqual(left, [], line)   # no temporary file
        with open(model) as f:
            self.assertEqual(f.read(), TINY)


# h100-pcie5 without its duplex factors: a machine that needs no v2 field
PLAIN = {"device": {"memory_bytes": 80000000000, "flops_per_s": 756e12,
                    "mem_bandwidth_Bps": 2e12},
         "tiers": [{"name": "host", "h2d_Bps": 55e9, "d2h_Bps": 55e9}]}


class V2(Tmp, unittest.TestCase):
    def test_train_repeat_infer_v1(self):
        m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        g = hoffopt_torch.export(m, torch.randn(2, 4), mode="train",
                                 machine=PLAIN)
        self.assertEqual((g["version"], g["repeat"]), (2, True))
        self.assertFalse(any("recomputable" in o for o in g["ops"]))
        # key order: version, then repeat, before the machine
        self.assertEqual(list(g)[:5], ["format", "version", "name", "repeat",
                                       "meta"])
        g = hoffopt_torch.export(m, torch.randn(2, 4), mode="infer",
                                 machine=PLAIN)
        self.assertEqual(g["version"], 1)
        self.assertNotIn("repeat", g)
        g = hoffopt_torch.export(m, torch.randn(2, 4), mode="train",
                                 repeat=False, machine=PLAIN)
        self.assertEqual(g["version"], 1)
        g = hoffopt_torch.export(m, torch.randn(2, 4), mode="train",
                                 v1=True)
        self.assertEqual(g["version"], 1)
        self.assertNotIn("repeat", g)

    def test_duplex_presets(self):
        # the presets carry gen's duplex factors: any graph on them is v2;
        # v1=True strips them
        m = nn.Linear(4, 4)
        g = hoffopt_torch.export(m, torch.randn(2, 4), mode="infer")
        self.assertEqual(g["version"], 2)
        self.assertNotIn("repeat", g)
        self.assertEqual((g["machine"]["tiers"][0]["h2d_duplex_factor"],
                          g["machine"]["tiers"][0]["d2h_duplex_factor"]),
                         (0.92, 0.92))
        g = hoffopt_torch.export(m, torch.randn(2, 4), mode="infer",
                                 machine="a100-pcie4", v1=True)
        self.assertEqual(g["version"], 1)
        self.assertEqual(g["machine"]["tiers"][0],
                         {"name": "host", "h2d_Bps": 25e9, "d2h_Bps": 24e9,
                          "latency_s": 10e-6,
                          "capacity_bytes": 1000000000000})
        self.assertIn("h2d_duplex_factor",
                      hoffopt_torch.PRESETS["a100-pcie4"]["tiers"][0])

    def test_random_ops_not_recomputable(self):
        class R(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                self.drop = nn.Dropout(0.5)

            def forward(self, x):
                y = self.drop(self.lin(x)) + torch.rand_like(x)
                z = torch.randn(2, 4) * y
                idx = torch.randperm(4)
                return z[:, idx] + torch.empty_like(z).normal_() + \
                    torch.empty_like(z).uniform_()
        g = hoffopt_torch.export(R(), torch.randn(2, 4), mode="infer",
                                 machine=PLAIN)
        self.assertEqual(g["version"], 2)
        self.assertNotIn("repeat", g)
        marked = sorted(o["id"].split("/")[1].split("#")[0]
                        for o in g["ops"] if o.get("recomputable") is False)
        # the module is in train mode for infer? no: eval, so no dropout
        self.assertEqual(marked, ["normal_", "rand_like", "randn",
                                  "randperm", "uniform_"])
        for o in g["ops"]:
            if "recomputable" in o:
                self.assertIs(o["recomputable"], False)
        g = hoffopt_torch.export(R(), torch.randn(2, 4), mode="train")
        marked = [o["id"] for o in g["ops"] if "recomputable" in o]
        self.assertIn("drop/bernoulli_#2", marked)
        self.assertEqual(len(marked), 6)
        g = hoffopt_torch.export(R(), torch.randn(2, 4), mode="infer",
                                 v1=True)
        self.assertEqual(g["version"], 1)
        self.assertFalse(any("recomputable" in o for o in g["ops"]))

    @unittest.skipIf(V1, "the hoffopt binary does not plan FORMAT v2 "
                     "repeat graphs yet")
    def test_hoffopt_reads_them(self):
        p = self.path("g.json")
        hoffopt_torch.export(nn.Sequential(nn.Linear(4, 4), nn.Dropout()),
                             torch.randn(2, 4), mode="train", path=p)
        hoffopt("analyze", p)
        s = self.path("s.json")
        hoffopt("--greedy", p, "-o", s)
        r = json.loads(hoffopt("simulate", p, s, "--json").stdout)
        self.assertTrue(r["valid"])


if __name__ == "__main__":
    unittest.main()
