"""The wheel's agentvcr package, installed in a venv: stand_in() replays a
recorded run of the built-in simulated agent (cursor-agent-sim) from Python,
through subprocess, offline. $CASSETTES holds the cassette recorded by
make dist-check; $EXPECT the output recorded."""

import os
import shutil
import subprocess
import unittest

import agentvcr


class StandInTest(unittest.TestCase):
    def test_replays_a_recorded_call(self):
        s = agentvcr.stand_in(cassettes=os.environ["CASSETTES"], mode="replay")
        self.addCleanup(s.cleanup)
        self.assertTrue(os.path.isabs(s.cassettes))
        self.assertEqual(s.env["AGENTVCR_MODE"], "replay")
        agent = s.bin("cursor-agent")
        self.assertEqual(os.path.basename(agent), "cursor-agent")
        env = dict(os.environ, **s.env)
        out = subprocess.run([agent, "--print", "--output-format", "text", "Summarise README.md"],
                             env=env, capture_output=True, text=True, cwd=os.environ["WORK"])
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(os.environ["EXPECT"]) as f:
            self.assertEqual(out.stdout, f.read())

    def test_a_call_never_recorded_is_a_miss(self):
        s = agentvcr.stand_in(cassettes=os.environ["CASSETTES"], mode="replay")
        self.addCleanup(s.cleanup)
        out = subprocess.run([s.bin("cursor-agent"), "--print", "something else"],
                             env=dict(os.environ, **s.env), capture_output=True, text=True, cwd=os.environ["WORK"])
        self.assertEqual(out.returncode, 2)

    def test_command(self):
        out = subprocess.run([shutil.which("agentvcr"), "version"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("agentvcr v"), out.stdout)

    def test_bad_mode(self):
        with self.assertRaises(ValueError):
            agentvcr.stand_in(cassettes="x", mode="bogus")


if __name__ == "__main__":
    unittest.main()
