"""The sandbox: runs anyone's snippet in a throwaway, hardened child of a warm zygote.

The boundary is the kernel (namespaces, uid, rlimits, Landlock, seccomp); see docs/sandbox.md.
`SandboxClient` is the way in; `SandboxSettings` holds every limit.
"""

from app.sandbox.admission import Requester, SandboxBusy
from app.sandbox.client import SandboxClient, ZygoteError
from app.sandbox.settings import SandboxSettings

__all__ = ["Requester", "SandboxBusy", "SandboxClient", "SandboxSettings", "ZygoteError"]
