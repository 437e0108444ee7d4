"""`cmake --install` puts the package where python3 finds it under the prefix, and the installed
package runs the installed binary: no source tree, no build tree, no PATH, no SHAPESCOPE_BIN."""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import support

BUILD = os.environ.get("SHAPESCOPE_BUILD_DIR")
CMAKE = os.environ.get("SHAPESCOPE_CMAKE", "cmake")
PYTHON_DIR = os.environ.get("SHAPESCOPE_PYTHON_DIR")


@unittest.skipIf(BUILD is None or PYTHON_DIR is None,
                 "run by CTest, which names the build folder and the package's install folder")
class Installed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory(prefix="shapescope-python-install-")
        cls.prefix = Path(cls.folder.name) / "prefix"
        cls.install = subprocess.run([CMAKE, "--install", BUILD, "--prefix", str(cls.prefix)], capture_output=True,
                                     text=True)
        cls.elsewhere = Path(cls.folder.name) / "elsewhere"
        cls.elsewhere.mkdir()

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def setUp(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)

    def python(self, code):
        """python3 in another folder with only the installed package on its path."""
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(self.prefix / PYTHON_DIR), "PYTHONDONTWRITEBYTECODE": "1",
               "HOME": os.environ.get("HOME", "/")}
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=self.elsewhere)

    def test_the_package_is_installed_whole(self):
        package = self.prefix / PYTHON_DIR / "shapescope"
        source = support.ROOT / "python" / "shapescope"
        self.assertEqual(sorted(p.name for p in package.glob("*.py")),
                         sorted([p.name for p in source.glob("*.py")] + ["_layout.py"]))
        self.assertTrue((self.prefix / "bin" / "shapescope").is_file())

    def test_the_installed_package_runs_the_installed_binary(self):
        store = support.SWEEP
        out = self.python("import shapescope\n"
                          "print(shapescope.__file__)\n"
                          "print(shapescope.find_binary())\n"
                          f"r = shapescope.export(db={str(store)!r}, n=4096)\n"
                          "print(r.points[0].kernel)\n")
        self.assertEqual(out.returncode, 0, out.stderr)
        module, binary, kernel = out.stdout.splitlines()
        self.assertEqual(Path(module), self.prefix / PYTHON_DIR / "shapescope" / "__init__.py")
        self.assertEqual(Path(binary), self.prefix / "bin" / "shapescope")
        self.assertEqual(kernel, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")

    @unittest.skipUnless(Path("/usr/bin/python3").exists(), "no system python3 (/usr/bin/python3)")
    def test_the_system_python_reads_the_folder_under_usr(self):
        """The .deb installs under /usr: the system's python3 must look in /usr/PYTHON_DIR."""
        out = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('\\n'.join(sys.path))"],
                             capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
        self.assertIn(f"/usr/{PYTHON_DIR}", out.stdout.splitlines())


if __name__ == "__main__":
    unittest.main()
