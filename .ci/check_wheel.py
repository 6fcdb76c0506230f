"""Checks what a built wheel holds: the package, its py.typed, nothing else."""

import sys
import zipfile

wheel = sys.argv[1]
names = zipfile.ZipFile(wheel).namelist()
top = {name.split("/")[0] for name in names}
allowed = {"sonnet_like"} | {t for t in top if t.endswith(".dist-info")}
stray = sorted(top - allowed)
assert not stray, f"{wheel} holds more than the package: {stray}"
assert "sonnet_like/py.typed" in names, f"{wheel} has no sonnet_like/py.typed"
odd = [n for n in names if n.startswith("sonnet_like/") and
       not n.endswith((".py", "py.typed"))]
assert not odd, f"{wheel} holds files that are not sources: {odd}"
print(f"{wheel}: {len(names)} files, the package only, py.typed present")
