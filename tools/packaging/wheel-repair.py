"""`auditwheel repair` that also grafts the libraries manylinux lets a wheel take from the
system but a minimal system lacks.

PEP 600's policies let a wheel rely on libX11, libXext, libXrender, libICE, libSM, libGL,
GLib, GObject, libexpat and libatomic being installed. Debian's FFmpeg libraries pull in
X11, GLib and expat (through VA-API, VDPAU and librsvg), and a Debian minbase system or a
slim container has none of them: the wheel then fails at `import mixdown`, as
tools/testing/wheel showed. So the policies are narrowed, for this repair only, to the C
library's own libraries and libgcc_s, libstdc++ and zlib (which every Debian, Ubuntu or
Fedora base system holds), and everything else is grafted. The wheel stays manylinux: it
relies on a subset of what its policy allows.

Usage: python repair.py WHEEL -w OUTDIR   (the arguments of `auditwheel repair`)
"""
import json
import sys
import tempfile
from pathlib import Path

import auditwheel.policy as policy
from auditwheel.main import main

KEEP = {
    "libc.so.6", "libm.so.6", "libmvec.so.1", "libanl.so.1", "libdl.so.2", "librt.so.1", "libnsl.so.1",
    "libutil.so.1", "libpthread.so.0", "libresolv.so.2", "libgcc_s.so.1", "libstdc++.so.6", "libz.so.1",
}

source = policy._POLICY_JSON_MAP[policy.Libc.GLIBC]
policies = json.loads(source.read_text())
for p in policies:
    p["lib_whitelist"] = [name for name in p["lib_whitelist"] if name in KEEP]
narrowed = Path(tempfile.mkdtemp()) / "manylinux-policy.json"
narrowed.write_text(json.dumps(policies))
policy._POLICY_JSON_MAP[policy.Libc.GLIBC] = narrowed

sys.argv = ["auditwheel", "repair", *sys.argv[1:]]
sys.exit(main())
