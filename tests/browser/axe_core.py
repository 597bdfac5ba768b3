"""axe-core, the accessibility checker the browser tests inject into pages: fetched once from
the npm registry (a pinned version, its tarball checked against the registry's integrity hash)
into .venv, so nothing vendored sits in the repository. `make test` fetches it; the tests'
fixture fetches it too when it is missing.

    python -m tests.browser.axe_core   # fetch it (prints its path)
"""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import urllib.request
from pathlib import Path

VERSION = "4.10.3"
TARBALL = f"https://registry.npmjs.org/axe-core/-/axe-core-{VERSION}.tgz"
# the registry's "dist.integrity" of that version (npm view axe-core@4.10.3 dist.integrity)
INTEGRITY = "sha512-Xm7bpRXnDSX2YE2YFfBk2FnF0ep6tmG7xPh8iHee8MIcrgq762Nkce856dYtJYLkuIoYZvGfTs/PbZhideTcEg=="
PATH = Path(__file__).resolve().parents[2] / ".venv" / f"axe-core-{VERSION}.min.js"


def fetch() -> Path:
    """The path of axe.min.js, downloaded and checked first if it is not there yet."""
    if PATH.exists():
        return PATH
    with urllib.request.urlopen(TARBALL, timeout=60) as response:
        tarball = response.read()
    algorithm, expected = INTEGRITY.split("-", 1)
    actual = base64.b64encode(hashlib.new(algorithm, tarball).digest()).decode()
    if actual != expected:
        raise RuntimeError(f"{TARBALL}: integrity {algorithm}-{actual}, expected {INTEGRITY}")
    with tarfile.open(fileobj=io.BytesIO(tarball)) as archive:
        member = archive.extractfile("package/axe.min.js")
        assert member is not None
        script = member.read()
    PATH.parent.mkdir(parents=True, exist_ok=True)
    partial = PATH.with_suffix(".part")
    partial.write_bytes(script)
    partial.replace(PATH)  # whole or absent, never half written
    return PATH


if __name__ == "__main__":
    print(fetch())
