"""Make PyPI's (CUDA) torchvision importable beside CPU torch, for the oracle base venv only.

With its compiled ``_C.so`` removed, ``torchvision/_meta_registrations.py`` still registers fake kernels
for ``torchvision::nms``/``qnms``, operators that no longer exist, and the import fails. SGLang only needs
a constant from torchvision, so those registrations are wrapped to become no-ops when they fail.
Idempotent: a patched file is left alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

GUARD = "_logsleuth_register_fake"
HELPER = f"""

def {GUARD}(name):  # added by logsleuth scripts/oracle/shim_torchvision.py
    def decorate(fn):
        try:
            return torch.library.register_fake(name)(fn)
        except Exception:  # the operator does not exist without torchvision's compiled _C
            return fn

    return decorate

"""


def patch(path: Path) -> bool:
    """Return True when the file was changed."""
    text = path.read_text()
    if GUARD in text:
        return False
    targets = (
        '@torch.library.register_fake("torchvision::nms")',
        '@torch.library.register_fake("torchvision::qnms")',
    )
    for target in targets:
        if target not in text:
            raise SystemExit(f"{path}: expected {target!r}; torchvision layout changed, update this shim")
        text = text.replace(target, target.replace("torch.library.register_fake", GUARD))
    # The helper goes right before the first guarded use, after the module's imports.
    first = text.index(f"@{GUARD}(")
    text = text[:first] + HELPER.lstrip("\n") + "\n" + text[first:]
    path.write_text(text)
    return True


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: shim_torchvision.py PATH/TO/torchvision/_meta_registrations.py")
    print("patched" if patch(Path(sys.argv[1])) else "already patched")
