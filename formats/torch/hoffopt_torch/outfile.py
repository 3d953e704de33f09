"""outfile.py: the front end's output files, by the rule formats/fileio.c
follows for the C tool.

Invariants:
- A symlink is followed to the file it names (a dangling one: the file is
  created where it points).
- A regular target (or a new one) is written to a temporary file in the
  target's folder, made with O_EXCL (mkstemp), given the target's mode (a
  new file: 0666 less the umask), and renamed over the target: a reader
  sees the old content or the whole new one, and a failed or interrupted
  write leaves no temporary file behind.
- A target that exists and is not a regular file (a device such as
  /dev/null or /dev/full, a FIFO, a terminal) is opened and written in
  place, never replaced.
- Every failure is an OutputError with one line: "cannot write PATH:
  reason".
"""
import os
import stat
import tempfile


class OutputError(Exception):
    """An output file that cannot be written (one line: path and reason)."""


def _reason(e):
    return e.strerror or str(e) if isinstance(e, OSError) else str(e)


def same_file(a, b):
    """True when paths a and b name the same existing regular file (after
    symlinks), as hoff_same_file does."""
    if not a or not b:
        return False
    try:
        x, y = os.stat(a), os.stat(b)
    except OSError:
        return False
    return stat.S_ISREG(x.st_mode) and (x.st_dev, x.st_ino) == \
        (y.st_dev, y.st_ino)


def refuse_same(out, out_flag, inputs):
    """Raises OutputError when output `out` (given by flag `out_flag`) is
    the same file as one of inputs, a list of (flag, path)."""
    for flag, path in inputs:
        if path is not None and same_file(out, path):
            raise OutputError("%s %s: is the same file as %s %s; refusing "
                              "to overwrite an input" % (out_flag, out, flag,
                                                         path))


def write_file(path, fill, mode="w"):
    """Writes path by the rules above: fill(f) writes the content into the
    open file object f (text mode unless mode is "wb")."""
    try:
        real = os.path.realpath(path)
        st = None
        try:
            st = os.stat(real)
        except FileNotFoundError:
            pass
        if st is not None and not stat.S_ISREG(st.st_mode):
            with open(real, mode) as f:   # a device, FIFO or terminal
                fill(f)
            return
        fd, tmp = tempfile.mkstemp(prefix=".hoffopt_torch.",
                                   dir=os.path.dirname(real))
    except OSError as e:
        raise OutputError("cannot write %s: %s" % (path, _reason(e))) \
            from None
    try:
        if st is not None:
            perm = stat.S_IMODE(st.st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            perm = 0o666 & ~umask
        os.fchmod(fd, perm)
        with os.fdopen(fd, mode) as f:
            fd = None
            fill(f)
        os.replace(tmp, real)
        tmp = None
    except OSError as e:
        raise OutputError("cannot write %s: %s" % (path, _reason(e))) \
            from None
    finally:
        if fd is not None:
            os.close(fd)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
