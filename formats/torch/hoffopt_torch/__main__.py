"""__main__.py: the command line of hoffopt_torch.

    python3 -m hoffopt_torch torchvision:resnet50 --batch 64 -o g.json
    python3 -m hoffopt_torch path/to/file.py:factory -o g.json

A torchvision classification model is built with weights=None on the meta
device and fed (batch, 3, size, size) images; factory() returns (model,
example_inputs) and is called with factories routed to meta. Exit codes:
0 written, 2 bad usage, an output that cannot be written, or a model the
tracer cannot follow (one line on stderr naming the module and the op),
3 an internal error (one line); nothing is written on failure. No error
prints a traceback. Outputs follow outfile.py (an output equal to an
input, e.g. the model's own source file, is refused).
"""
import argparse
import importlib
import importlib.util
import os
import signal
import sys
import time

import torch

from .export import export, write
from .machines import PRESETS
from .outfile import OutputError, refuse_same
from .trace import ExportError, build_on_meta


class UsageError(Exception):
    """Bad usage: one line, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (UsageError) instead of usage text and
    sys.exit."""

    def error(self, message):
        raise UsageError(message)


def _first_line(e):
    s = str(e).strip()
    return "%s: %s" % (type(e).__name__, s.splitlines()[0]) if s else \
        type(e).__name__


def _user_code(what, fn, *args):
    """Runs user code (a model file, a factory, a loss module): an
    exception it raises is bad input, one line naming what failed."""
    try:
        return fn(*args)
    except (ExportError, ValueError, UsageError, OutputError):
        raise
    except Exception as e:
        raise ValueError("%s: %s" % (what, _first_line(e))) from None


def _torchvision(name, batch, size):
    try:
        import torchvision
    except ImportError:
        raise ValueError("torchvision: not installed (Debian: "
                         "python3-torchvision)")
    models = torchvision.models
    names = models.list_models(module=models) \
        if hasattr(models, "list_models") else []
    if name not in names:
        raise ValueError("torchvision:%s: no such classification model%s"
                         % (name, " (e.g. resnet50, vit_b_16)"))

    def factory():
        return models.get_model(name, weights=None)
    model = _user_code("torchvision:%s" % name, build_on_meta, factory)
    x = torch.empty(batch, 3, size, size, device="meta")
    return model, (x,), name


def _load_file(path, what):
    """The module of a .py file, run once (its errors are bad input)."""
    if not os.path.isfile(path):
        raise ValueError("%s: %s: no such file" % (what, path))
    mod_name = "hoffopt_torch_user_" + \
        os.path.splitext(os.path.basename(path))[0]
    s = importlib.util.spec_from_file_location(mod_name, path)
    if s is None:
        raise ValueError("%s: %s: not a Python file" % (what, path))
    mod = importlib.util.module_from_spec(s)
    d = os.path.dirname(os.path.abspath(path))
    if d not in sys.path:
        sys.path.insert(0, d)
    _user_code("%s: %s" % (what, path), s.loader.exec_module, mod)
    return mod


def _from_file(spec, build=build_on_meta):
    path, _, fn = spec.rpartition(":")
    mod = _load_file(path, "model")
    factory = getattr(mod, fn, None)
    if not fn or not callable(factory):
        raise ValueError("model: %s: no function \"%s\"" % (path, fn))
    res = _user_code("%s:%s" % (path, fn), build, factory)
    if not (isinstance(res, tuple) and len(res) == 2):
        raise ValueError("%s:%s: must return (model, example_inputs)"
                         % (path, fn))
    return res[0], res[1], fn


def _loss(spec):
    if spec is None:
        return None
    path, _, fn = spec.rpartition(":")
    if not path or not fn:
        raise ValueError("--loss %s: module:function or file.py:function"
                         % spec)
    if path.endswith(".py"):
        mod = _load_file(path, "--loss")
    else:
        try:
            mod = importlib.import_module(path)
        except ImportError as e:
            raise ValueError("--loss %s: cannot import module \"%s\" (%s)"
                             % (spec, path, _first_line(e))) from None
        except Exception as e:
            raise ValueError("--loss %s: %s" % (spec, _first_line(e))) \
                from None
    f = getattr(mod, fn, None)
    if not callable(f):
        raise ValueError("--loss %s: no function \"%s\"" % (spec, fn))
    return f


def _input_files(model, loss):
    """(flag, path) of the files a run reads: the model's source file and
    a loss file, so that no output overwrites them."""
    files = []
    if model and not model.startswith("torchvision:") and ":" in model:
        files.append(("model", model.rpartition(":")[0]))
    if loss and ":" in loss and loss.rpartition(":")[0].endswith(".py"):
        files.append(("--loss", loss.rpartition(":")[0]))
    return files


def main(argv=None):
    """The command line: returns the exit code; errors are one line on
    stderr, never a traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(argv)
    except BaseException as e:   # --help and signals exit by SystemExit
        if not isinstance(e, Exception) and \
                not isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return _fail(e)


def _real_model(spec, batch, size, seed):
    """(model, inputs, name) with real weights, built on the CPU with the
    RNG seeded: what the replay and --measure run."""
    torch.manual_seed(seed)
    if spec.startswith("torchvision:"):
        name = spec.split(":", 1)[1]
        _torchvision(name, 1, 1)                 # checks the name
        import torchvision
        model = _user_code(spec, lambda: torchvision.models.get_model(
            name, weights=None))
        x = torch.randn(batch, 3, size, size)
        return model, (x,), name
    if ":" in spec:
        return _from_file(spec, build=lambda f: f())
    raise ValueError("model: torchvision:NAME or file.py:factory, not "
                     "\"%s\"" % spec)


def _model_args(ap, for_export=False):
    """The model's options, shared by export, run and an emitted script;
    export's output and machine options sit among them, where its --help
    has always listed them."""
    ap.add_argument("model", help="torchvision:NAME or path/file.py:factory "
                    "(factory() returns (model, example_inputs))")
    if for_export:
        ap.add_argument("-o", "--output", required=True,
                        help="graph.json path")
    ap.add_argument("--mode", choices=("train", "infer"), default="train")
    ap.add_argument("--batch", type=int, default=1,
                    help="torchvision: images a batch (default 1)")
    ap.add_argument("--image-size", type=int, default=224,
                    help="torchvision: image side (default 224)")
    if for_export:
        ap.add_argument("--machine", default="h100-pcie5",
                        help="a preset of hoffopt gen (%s)"
                        % ", ".join(PRESETS))
        ap.add_argument("--weights-home", default="device",
                        help="device or a tier name (default device)")
        ap.add_argument("--optimizer-home", default=None,
                        help="device or a tier name (default: the first "
                        "tier)")
    ap.add_argument("--optimizer", choices=("adam", "none"), default="adam",
                    help="train: add Adam's update ops (default adam)")
    ap.add_argument("--loss", default=None,
                    help="module:function or file.py:function taking the "
                    "outputs (default: sum of the first output)")


def _run(argv):
    """`run`: the replay of a plan (replay.py), checked against eager."""
    from . import replay
    ap = Parser(prog="python3 -m hoffopt_torch run",
                description="Replay a schedule inside PyTorch on real "
                "tensors and check it against the same step run eagerly.")
    _model_args(ap)
    ap.add_argument("--graph", required=True, help="the graph export wrote")
    ap.add_argument("--schedule", required=True, help="a schedule for it")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--seed", type=int, default=0,
                    help="weights, inputs and random ops (default 0)")
    ap.add_argument("--emit-python", default=None, metavar="FILE",
                    help="write the GraphModule's code as a script")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the comparison with eager PyTorch")
    ap.add_argument("--runs", type=int, default=1, metavar="N",
                    help="replay N times (each from the start state) and "
                    "report each wall time and the median (default 1)")
    ap.add_argument("--warmup", type=int, default=0, metavar="N",
                    help="replay N times first, untimed (caches, the "
                    "allocator; as --measure's 2 warm-up runs; default 0)")
    a = ap.parse_args(argv)
    if a.batch < 1 or a.image_size < 1:
        raise ValueError("--batch and --image-size must be >= 1")
    if a.runs < 1:
        raise ValueError("--runs must be >= 1")
    if a.warmup < 0:
        raise ValueError("--warmup must be >= 0")
    if a.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA device")
    if a.emit_python:
        refuse_same(a.emit_python, "--emit-python",
                    _input_files(a.model, a.loss) +
                    [("--graph", a.graph), ("--schedule", a.schedule)])
    graph = replay.load_json(a.graph, "--graph")
    sched = replay.load_json(a.schedule, "--schedule")
    if not isinstance(graph, dict) or not isinstance(sched, dict):
        raise ValueError("--graph, --schedule: JSON objects required")
    model, inputs, _ = _real_model(a.model, a.batch, a.image_size, a.seed)
    opt = None if a.optimizer == "none" or a.mode == "infer" else "adam"
    rp = replay.prepare(model, inputs, graph, sched, mode=a.mode,
                        optimizer=opt, loss=_loss(a.loss), device=a.device,
                        seed=a.seed)
    if a.emit_python:
        script = ["run"] + _absolute(argv, ("--graph", "--schedule"),
                                     a.model)
        _emit(rp, a.emit_python, script)
    for _ in range(a.warmup):
        rp.run()
    walls = []
    for _ in range(a.runs):
        res = None
        res = rp.run()
        walls.append(res.wall_s)
    if a.runs > 1:
        print("replay wall times: %s s; median %.3f s"
              % (", ".join("%.3f" % w for w in walls),
                 sorted(walls)[len(walls) // 2]))
    return _report(rp, res, not a.no_check)


def _absolute(argv, flags, model):
    """argv without --emit-python and --no-check, its files made
    absolute."""
    out, skip = [], False
    for i, x in enumerate(argv):
        if skip:
            skip = False
            continue
        if x == "--emit-python":
            skip = True
            continue
        if x.startswith("--emit-python=") or x == "--no-check":
            continue   # the script always compares with eager
        if i > 0 and argv[i - 1] in flags and ":" not in x:
            x = os.path.abspath(x)
        elif x == model and ":" in x and not x.startswith("torchvision:"):
            path, _, fn = x.rpartition(":")
            x = os.path.abspath(path) + ":" + fn
        elif i > 0 and argv[i - 1] == "--loss" and \
                x.rpartition(":")[0].endswith(".py"):
            path, _, fn = x.rpartition(":")
            x = os.path.abspath(path) + ":" + fn
        out.append(x)
    return out


def _emit(rp, path, argv):
    from . import replay
    from .outfile import write_file
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    header = ('"""The plan replayed by hoffopt_torch: the torch.fx '
              'GraphModule\'s code,\none aten call or cache operation a '
              'line, the schedule\'s step in a comment.\nRun as a '
              'script: replays the step and compares it with eager '
              'PyTorch."""\nimport sys\n\nimport torch\nfrom torch import '
              'device  # noqa: F401\n\nsys.path.insert(0, %r)\ninf, nan = '
              'float("inf"), float("nan")\n' % pkg)
    footer = ('\n\nif __name__ == "__main__":\n    from hoffopt_torch.'
              '__main__ import run_emitted\n    sys.exit(run_emitted('
              'forward, %r))\n' % (argv,))
    text = replay.emit_python(rp.gm, header, footer)
    write_file(path, lambda f: f.write(text))


def run_emitted(forward, argv):
    """An emitted script's main: the same replay, with its forward."""
    from . import replay
    try:
        a = argv[1:]
        ap = Parser()
        _model_args(ap)
        for f in ("--graph", "--schedule", "--device", "--seed", "--runs",
                  "--warmup"):
            ap.add_argument(f)
        ap.add_argument("--no-check", action="store_true")
        o = ap.parse_args(a)
        model, inputs, _ = _real_model(o.model, o.batch, o.image_size,
                                       int(o.seed or 0))
        opt = None if o.optimizer == "none" or o.mode == "infer" else "adam"
        rp = replay.prepare(model, inputs, o.graph, o.schedule, mode=o.mode,
                            optimizer=opt, loss=_loss(o.loss),
                            device=o.device or "cpu", seed=int(o.seed or 0))
        return _report(rp, rp.run(lambda pool: forward(None, pool)),
                       not o.no_check)
    except Exception as e:
        return _fail(e)


def _report(rp, res, check):
    """Prints the replay's figures (and the comparison): exit 0 when
    bit-equal (or unchecked), 3 when not."""
    print("replay: %d steps, device-side peak %d B (at step %s), %.3f s, "
          "%d storages released" % (len(rp.plan.steps), res.peak,
                                   res.peak_step, res.wall_s,
                                   res.pool.released))
    if not check:
        return 0
    n, bad = rp.compare(res)
    if bad:
        print("hoffopt_torch: not bit-equal to eager PyTorch: %d of %d "
              "tensors differ (%s)" % (len(bad), n, ", ".join(bad[:5])),
              file=sys.stderr)
        return 3
    print("bit-equal to eager PyTorch: %d tensors (loss or outputs, "
          "gradients, parameters, moments, buffers)" % n)
    return 0


def _fail(e):
    from .replay import PlanError
    if isinstance(e, PlanError):
        print("hoffopt_torch: invalid schedule: %s" % e, file=sys.stderr)
        return 1
    if isinstance(e, (ExportError, ValueError, UsageError, OutputError)):
        print("hoffopt_torch: %s" % e, file=sys.stderr)
        return 2
    if isinstance(e, KeyboardInterrupt):
        print("hoffopt_torch: interrupted", file=sys.stderr)
        return 130
    if isinstance(e, SystemExit):
        return e.code if isinstance(e.code, int) else 0
    print("hoffopt_torch: internal error: %s" % _first_line(e),
          file=sys.stderr)
    return 3


def _main(argv):
    if argv and argv[0] == "run":
        return _run(argv[1:])
    ap = Parser(
        prog="python3 -m hoffopt_torch",
        description="Trace a PyTorch model on the meta device into "
                    "hoffopt's graph.json.")
    _model_args(ap, for_export=True)
    ap.add_argument("--bf16", action="store_true",
                    help="count floating tensors as bf16 (Adam's moments "
                    "keep their dtype)")
    ap.add_argument("--name", default=None, help="graph name")
    ap.add_argument("--v1", action="store_true",
                    help="write FORMAT v1 (no repeat, no recomputable)")
    ap.add_argument("--measure", nargs="?", const=7, type=int, default=None,
                    metavar="N", help="time each op on this machine's CPU "
                    "inside the replay (2 warm-up runs, then N, default "
                    "7; the median) and write time_s")
    ap.add_argument("--times-from", default=None, metavar="TRACE",
                    help="time_s from a PyTorch profiler (Kineto) trace "
                    "of the same step")
    a = ap.parse_args(argv)
    if a.measure is not None and a.measure < 1:
        raise ValueError("--measure: runs must be >= 1")
    if a.measure is not None and a.times_from:
        raise ValueError("--measure and --times-from: one or the other")
    t0 = time.perf_counter()
    if a.batch < 1 or a.image_size < 1:
        raise ValueError("--batch and --image-size must be >= 1")
    refuse_same(a.output, "-o", _input_files(a.model, a.loss) +
                [("--times-from", a.times_from)])
    trace = None
    if a.times_from:
        from .replay import load_json
        trace = load_json(a.times_from, "--times-from")
        if not isinstance(trace, (dict, list)):
            raise ValueError("--times-from %s: not a Chrome/Kineto trace "
                             "object" % a.times_from)
    if a.model.startswith("torchvision:"):
        model, inputs, name = _torchvision(a.model.split(":", 1)[1],
                                           a.batch, a.image_size)
    elif ":" in a.model:
        model, inputs, name = _from_file(a.model)
    else:
        raise ValueError("model: torchvision:NAME or file.py:factory, "
                         "not \"%s\"" % a.model)
    opt = None if a.optimizer == "none" or a.mode == "infer" else "adam"
    loss = _loss(a.loss)
    timed = a.measure is not None or trace is not None
    g = export(model, inputs, path=None if timed else a.output,
               mode=a.mode, machine=a.machine, weights_home=a.weights_home,
               optimizer=opt, loss=loss, bf16=a.bf16,
               optimizer_home=a.optimizer_home,
               name=a.name or "%s-%s" % (name, a.mode), v1=a.v1)
    if timed:
        from . import replay
        if trace is not None:
            times, miss = replay.times_from_trace(g, trace)
            if miss:
                print("hoffopt_torch: --times-from: %d of %d ops not "
                      "matched, kept on the roofline: %s%s"
                      % (len(miss), len(g["ops"]), ", ".join(miss[:8]),
                         ", ..." if len(miss) > 8 else ""), file=sys.stderr)
        else:
            rm, rin, _ = _real_model(a.model, a.batch, a.image_size, 0)
            links = {}
            times = replay.measure(rm, rin, g, mode=a.mode, optimizer=opt,
                                   loss=loss, reps=a.measure, links=links)
            _measured_links(g, links)
        for o, t in zip(g["ops"], times):
            if t is not None:
                o["time_s"] = t
        write(g, a.output)
    print("hoffopt_torch: %s: %d ops, %d tensors, %d parameters; traced "
          "and written in %.2f s"
          % (a.output, len(g["ops"]), len(g["tensors"]), g["meta"]["params"],
             time.perf_counter() - t0), file=sys.stderr)
    return 0


def _measured_links(g, links):
    """The tiers' rates set to what the replay's own copies measured (on
    the CPU the device side and the tiers are host memory: the preset's
    link is not this machine's); said on stderr."""
    said = []
    for t in g["machine"].get("tiers", []):
        for k, v in sorted(links.get(t["name"], {}).items()):
            t[k] = float("%.4g" % v)
            said.append("%s %s %.3g GB/s" % (t["name"], k[:3], v / 1e9))
    if said:
        print("hoffopt_torch: --measure: tier rates of the replay's own "
              "copies: %s" % ", ".join(said), file=sys.stderr)


def _on_term(signum, frame):
    raise SystemExit(128 + signum)  # unwinds: no temporary file is left


if __name__ == "__main__":
    for sig in (signal.SIGTERM, signal.SIGHUP):  # SIGINT: KeyboardInterrupt
        signal.signal(sig, _on_term)
    sys.exit(main())
