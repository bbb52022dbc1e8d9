"""Reading a registry through `tokreg serve` (its `/index.json` and `/content/HASH`: see
serve/pages/content.py), with the standard library's urllib only, read-only.

    >>> content("http://127.0.0.1:8750", "xxh3-128:9f2c…")   # checked against the hash
    >>> load("http://127.0.0.1:8750", "gpt-mini@2")          # a Tokenizer, as tokreg.load gives

Content is checked against the hash it was asked by as it arrives: a server (or anything
between) cannot hand over other content. `TOKREG_SERVE_TOKEN` is sent as `Authorization: Bearer` for
a server started with --token. `TOKREG_OFFLINE=1` refuses before any connection.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Optional

from ..content import content_hash
from ..encoding.content_cache import MAX_BYTES
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError, IntegrityError, NotFoundError
from .sources import offline

TIMEOUT = 30.0
INDEX_FORMAT = "tokreg-index"


def _get(base: str, path: str) -> Optional[bytes]:
    """The body of GET base+path; None on 404. Any other failure is one InputError line."""
    url = base.rstrip("/") + path
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{base!r} is not a tokreg serve URL (http://HOST:PORT)")
    if offline():
        raise InputError(f"TOKREG_OFFLINE=1: not connecting to {base}")
    req = urllib.request.Request(url, headers={"Accept": "application/octet-stream, application/json"})
    token = os.environ.get("TOKREG_SERVE_TOKEN")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as res:  # noqa: S310 (schemes checked above)
            body: bytes = res.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        hint = "; set TOKREG_SERVE_TOKEN to the server's --token" if e.code == 401 else ""
        raise InputError(f"{base} answered {e.code} {e.reason} for {path}{hint}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        why = getattr(e, "reason", None) or e
        raise InputError(f"cannot reach {base}: {why}") from None
    if len(body) > MAX_BYTES:
        raise InputError(f"{base}{path} is larger than any tokenizer's content; is it a tokreg serve?")
    return body


def content(base: str, hash_label: str) -> Optional[bytes]:
    """The content of `hash_label` served at `base`, checked against it; None when not served."""
    body = _get(base, "/content/" + urllib.parse.quote(hash_label, safe=":"))
    if body is None:
        return None
    actual = content_hash(body)
    if actual != hash_label:
        raise IntegrityError(
            f"{base} served content hashing to {actual} for {hash_label}; refused", expected=hash_label, actual=actual
        )
    return body


def index(base: str) -> dict[str, Any]:
    """The served index: {name: {"versions": {"N": {"hash", "sha256"}}, "aliases": {alias: N}}}."""
    body = _get(base, "/index.json")
    try:
        doc = json.loads(body) if body is not None else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or doc.get("format") != INDEX_FORMAT or not isinstance(doc.get("names"), dict):
        raise InputError(f"{base} has no tokreg index (/index.json); is it a `tokreg serve` of tokreg 0.8 or newer?")
    names: dict[str, Any] = doc["names"]
    return names


def resolve(base: str, ref: str) -> tuple[str, str]:
    """(name@N, hash) that `ref` names on the server: `name` (latest), `name@N`, `name@ALIAS`,
    or a hash prefix naming one content."""
    names = index(base)
    if ":" in ref:
        hits = sorted(
            {
                (n, int(k), v["hash"])
                for n, e in names.items()
                for k, v in e["versions"].items()
                if v["hash"].startswith(ref)
            }
        )
        if not hits:
            raise NotFoundError(f"{base} serves no version with hash {ref!r}")
        if len({h for _, _, h in hits}) > 1:
            raise NotFoundError(f"hash prefix {ref!r} is ambiguous at {base}; give more digits")
        n, k, h = hits[0]
        return f"{n}@{k}", h
    name, _, at = ref.partition("@")
    entry = names.get(name)
    if entry is None or not entry["versions"]:
        shown = ", ".join(sorted(names)[:20]) or "none"
        raise NotFoundError(f"{base} serves no tokenizer {name!r} (it serves: {shown})")
    numbers = {int(k): v["hash"] for k, v in entry["versions"].items()}
    if not at:
        number = max(numbers)
    elif at.isdigit():
        number = int(at)
    elif at in entry.get("aliases", {}):
        number = int(entry["aliases"][at])
    else:
        raise NotFoundError(f"{base} has no {name}@{at} (versions {', '.join(map(str, sorted(numbers)))})")
    if number not in numbers:
        raise NotFoundError(f"{base} has no {name}@{number} (versions {', '.join(map(str, sorted(numbers)))})")
    return f"{name}@{number}", numbers[number]


def load(base: str, ref: str) -> Tokenizer:
    """The tokenizer `ref` names on the server at `base`, its content checked on arrival."""
    label, hash_label = resolve(base, ref)
    raw = content(base, hash_label)
    if raw is None:
        raise NotFoundError(f"{base} lists {label} but does not serve its content {hash_label}")
    return Tokenizer(raw, ref=label, expect_hash=hash_label)
