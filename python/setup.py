"""Builds libmixdown (with the Swift runtime linked in: tools/packaging/build-static) from the
checkout this folder lies in, and puts it inside the package. The wheel is tagged for
this platform and any Python 3 (the package loads the library with ctypes)."""
import re
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 carries bdist_wheel; before, the wheel package does
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HEADER = ROOT / "include" / "mixdown.h"


def library_version() -> str:
    text = HEADER.read_text()
    parts = [re.search(rf"#define MIXDOWN_VERSION_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class BuildWithLibrary(build_py):
    """Copies the package, then builds libmixdown into it."""

    def run(self) -> None:
        super().run()
        if not (ROOT / "tools" / "packaging" / "build-static").exists():
            raise SystemExit("mixdown: build from a checkout of Mixdown (pip install ./python); "
                             f"{ROOT} has no tools/packaging/build-static")
        output = subprocess.run([str(ROOT / "tools" / "packaging" / "build-static"), "libmixdown"], check=True,
                                stdout=subprocess.PIPE, text=True).stdout
        built = Path(output.strip().splitlines()[-1]) / "libmixdown.so"
        target = Path(self.build_lib) / "mixdown" / "libmixdown.so"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
        target.chmod(0o755)
        major = library_version().split(".")[0]
        # No path into the build or the toolchain; the SONAME the C API promises; no symbols
        # a debugger would need (the wheel is a quarter of the size without them).
        subprocess.run(["patchelf", "--set-soname", f"libmixdown.so.{major}", "--remove-rpath", str(target)], check=True)
        subprocess.run(["strip", "--strip-unneeded", str(target)], check=True)
        # FFmpeg's libraries are loaded when a job first needs them (Sources/FFmpegLoader), so
        # the library names none of them; named here (after strip, which must not meet the
        # segments patchelf adds), auditwheel grafts them into the wheel as it does the
        # others, and the loader takes the copies the wheel loads with it. The sonames are
        # the loader's own (the headers' major versions), read from its strings.
        sonames = sorted(set(re.findall(rb"lib(?:avformat|avcodec|avutil)\.so\.[0-9]+", target.read_bytes())))
        if len(sonames) != 3:
            raise SystemExit(f"mixdown: libmixdown names {sonames}, not FFmpeg's three libraries")
        for soname in sonames:
            subprocess.run(["patchelf", "--add-needed", soname.decode(), str(target)], check=True)


class NativeDistribution(Distribution):
    """Holds a native library: installed to platlib, in a wheel for this platform."""

    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):
    """A wheel for this platform (it holds a native library) and any Python 3 (ctypes, no
    extension module)."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(version=library_version(), distclass=NativeDistribution, cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel})
