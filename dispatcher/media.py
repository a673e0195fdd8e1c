"""Media paths clients may name: a relative path inside their tenant's folder of MEDIA_ROOT.

The policy is pure (`media_path_problem`); `locate` only adds the filesystem checks. A task
carries `<tenant>/<path>`, relative to MEDIA_ROOT, which is what workers resolve.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

# The longest file or folder name common filesystems take (ext4, XFS: 255 bytes).
MAX_NAME_BYTES = 255
# Any scheme (`file:`, `http:`) or Windows drive (`C:`) before the first slash.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class MediaRefused(ValueError):
    """Raised when a media path cannot be used; the message is for the client."""


def media_path_problem(path: str) -> str | None:
    """Why `path` is not a plain relative path inside a folder, or None when it is one."""
    if not path:
        return "is empty"
    if "\x00" in path:
        return "contains a NUL character"
    if "\\" in path:
        return "contains a backslash; use '/' between folders"
    if "%" in path:
        return "contains '%'; send the path itself, not percent-encoded"
    if _SCHEME.match(path):
        return "must be a path, not a URL or a drive"
    if path.startswith("/") or path.startswith("~"):
        return "must be relative to your media folder"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "must be normalised: no empty, '.' or '..' segments"
    if any(len(p.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for p in parts):
        return f"has a file or folder name longer than {MAX_NAME_BYTES} bytes"
    return None


def locate(media_root: str | None, tenant: str, path: str) -> str:
    """`<tenant>/<path>` when that file exists inside the tenant's media folder; else refused."""
    problem = media_path_problem(path)
    if problem:
        raise MediaRefused(f"media_path {problem}")
    if not media_root:
        raise MediaRefused("this server accepts no media input (no media folder is configured)")
    if media_path_problem(tenant):
        raise MediaRefused("your account has no media folder")
    try:
        folder = (Path(media_root) / tenant).resolve()
        file = (folder / path).resolve()  # symlinks followed: the target must stay inside too
        found = file.is_relative_to(folder) and file.is_file()
    except (OSError, RuntimeError) as exc:  # unreadable, a name too long, a symlink loop…
        raise MediaRefused("the media file cannot be read") from exc
    if not found:
        raise MediaRefused("no such media file in your media folder")
    return str(PurePosixPath(tenant, path))
