"""agentvcr for Python: the agentvcr binary, and stand_in(), which points
an agent SDK or a subprocess at a stand-in that replays (or records) the
agent's runs from a cassette directory.

    import agentvcr
    s = agentvcr.stand_in(cassettes="testdata/cassettes")   # mode from AGENTVCR_MODE
    options = ClaudeAgentOptions(cli_path=s.bin("claude"), env=s.env)
    subprocess.run([s.bin("cursor-agent"), "--print", "hi"], env={**os.environ, **s.env})

See https://github.com/agentvcr/agentvcr/blob/main/docs/sdk.md.
"""

import os
import re
import shutil
import stat
import sys
import tempfile

__all__ = ["StandIn", "binary_path", "stand_in", "__version__"]

__version__ = "0.0.0-unreleased"

MODES = ("replay", "record", "once", "passthrough", "rerun")


def binary_path():
    """The absolute path of the agentvcr binary: $AGENTVCR_BINARY when set,
    else the one this wheel installed."""
    given = os.environ.get("AGENTVCR_BINARY")
    if given:
        return os.path.abspath(given)
    name = "agentvcr.exe" if sys.platform == "win32" else "agentvcr"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            "agentvcr: no binary at %s: reinstall the agentvcr wheel of your platform, "
            "or set AGENTVCR_BINARY to an agentvcr binary" % path
        )
    if sys.platform != "win32" and not os.access(path, os.X_OK):
        # An installer that dropped the executable bit.
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class StandIn:
    """A private directory holding the agentvcr binary under agent names,
    and the environment the stand-in reads (see stand_in)."""

    def __init__(self, cassettes, mode=None, real_agent=None, run_log=None, binary=None):
        if not cassettes:
            raise ValueError('stand_in: give the cassette directory: stand_in(cassettes="testdata/cassettes")')
        mode = mode or os.environ.get("AGENTVCR_MODE") or "replay"
        if mode not in MODES:
            raise ValueError("stand_in: mode %r is not one of %s" % (mode, ", ".join(MODES)))
        self.cassettes = os.path.abspath(os.fspath(cassettes))
        self.mode = mode
        self._exe = os.path.abspath(binary) if binary else binary_path()
        self.dir = tempfile.mkdtemp(prefix="agentvcr-")
        env = {"AGENTVCR_MODE": mode, "AGENTVCR_CASSETTES": self.cassettes}
        real = real_agent or os.environ.get("AGENTVCR_REAL_AGENT")
        if real:
            # A path is made absolute here; a bare name is looked up in PATH
            # by the stand-in, past itself.
            env["AGENTVCR_REAL_AGENT"] = os.path.abspath(real) if re.search(r"[\\/]", real) else real
        if run_log:
            env["AGENTVCR_RUN_LOG"] = os.path.abspath(os.fspath(run_log))
        self.env = env
        self._made = {}

    def bin(self, name):
        """The absolute path of an executable that stands in for the agent
        name ("claude", "codex", "qwen", "cursor-agent", ...): a link to
        agentvcr-standin beside the agentvcr binary (which starts faster and
        hands a call that runs the real agent to that agentvcr), else to the
        agentvcr binary (NAME.exe on Windows), or a copy of it where links
        are not allowed."""
        if not isinstance(name, str) or not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", name):
            raise ValueError("stand_in: bin(%r): give an agent's program name, such as 'claude'" % (name,))
        if name in self._made:
            return self._made[name]
        path = os.path.join(self.dir, name + ".exe" if sys.platform == "win32" else name)
        _place(self._exe, _lean_beside(self._exe), path)
        self._made[name] = path
        return path

    @property
    def path(self):
        """PATH with dir first, for code that finds the agent by name."""
        return self.dir + os.pathsep + os.environ.get("PATH", "")

    def cleanup(self):
        """Removes dir."""
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()


def stand_in(cassettes, mode=None, real_agent=None, run_log=None, binary=None):
    """A stand-in over the cassette directory cassettes (made absolute
    against the current directory). mode defaults to $AGENTVCR_MODE, else
    "replay"; real_agent (default $AGENTVCR_REAL_AGENT) is the real CLI run
    to record. Use .bin(name) as the agent's executable and .env (the
    AGENTVCR_* variables) in its environment."""
    return StandIn(cassettes, mode=mode, real_agent=real_agent, run_log=run_log, binary=binary)


def _lean_beside(exe):
    """The lean stand-in beside the agentvcr binary exe, or None."""
    lean = os.path.join(os.path.dirname(exe), "agentvcr-standin.exe" if sys.platform == "win32" else "agentvcr-standin")
    if not os.path.isfile(lean):
        return None
    if sys.platform != "win32" and not os.access(lean, os.X_OK):
        try:  # an installer that dropped the executable bit, as binary_path()
            os.chmod(lean, os.stat(lean).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        except OSError:
            return None
    return lean


def _place(exe, lean, path):
    if sys.platform != "win32":
        for target in ([lean] if lean else []) + [exe]:
            try:
                os.symlink(target, path)
                return
            except OSError:
                pass
    try:
        os.link(exe, path)
        return
    except OSError:
        pass
    shutil.copyfile(exe, path)
    os.chmod(path, 0o755)
