"""Voice assets (issue 17).

whisper.cpp compiled with Emscripten and Whisper tiny.en converted to its format, both
in py/quire_build/whisper.  `--no-voice` builds, and machines where Emscripten
cannot be had, leave them out; the page then hides the microphone and About says why.
"""

from __future__ import annotations

import sys
from pathlib import Path

from quire_build.common import ROOT, DownloadError
from quire_build.downloads import cached_download


def fetch_voice_or_skip(pins: dict, cache: Path) -> dict[str, bytes]:
    from quire_build.whisper import pack  # whisper.cpp, Emscripten, the model converter

    def download(requirement: str, filename: str, sha256: str) -> bytes:
        return cached_download(requirement, filename, sha256, cache)

    try:
        return pack.build_voice(pins["voice"], cache, ROOT / "site", download)
    except (pack.VoiceUnavailable, DownloadError) as exc:
        print(f"warning: building without voice input: {exc}", file=sys.stderr)
        return {}
