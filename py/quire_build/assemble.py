"""Every file of ``dist/`` in memory: the site, the packed assets, ``bundle.js`` (what the
page loads), the service worker with its precache list, and the manifest; then written
so that a server never sees half a build."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from quire_build.common import BOOT_DYNLIBS, ROOT, VIRTUAL_BASE, BuildError, project_version, sha256_bytes
from quire_build.images import file_image, image_asset, wheel_files
from quire_build.kiosk import CONFIG as KIOSK_CONFIG
from quire_build.library import BUNDLE_HEAD, BUNDLE_JS, COURSE_ASSET, DROP_IN
from quire_build.ocr import ocr_assets
from quire_build.pack import pack, pack_name
from quire_build.precompile import SNAPSHOT_ASSET, STARTUP_FILES, compile_pycs
from quire_build.wheel import build_quire_wheel


# QuireStore, in the order the page loads it too (index.html): the worker's IndexedDB.
STORE_SCRIPTS = ("assets/store-db.js", "assets/store-seal.js", "assets/store-library.js", "assets/store-tabs.js")


def engine_source(runtime: dict[str, bytes], root: Path = ROOT) -> bytes:
    """The whole worker as one script: Pyodide's loader and our worker code.

    A blob: worker opened from file:// cannot importScripts anything else, so
    Pyodide's ``pyodide.asm.js`` is defined up front; ``loadPyodide`` then skips
    loading it because ``_createPyodideModule`` already exists.
    """
    parts = [runtime["pyodide.asm.js"], runtime["pyodide.js"]]
    for rel in ("engine/worker-assets.js", "engine/worker-snapshot.js", "engine/kernels.js", *STORE_SCRIPTS,
                # The worker's own files (worker.js names what each holds), each after what it uses.
                "engine/worker-quiet.js", "engine/worker-lease.js", "engine/worker-report.js",
                "engine/worker-images.js", "engine/worker-boot.js", "engine/worker-study-order.js",
                "engine/worker-lazy.js",
                "engine/worker-writer.js", "engine/worker.js"):
        parts.append((root / "site" / rel).read_bytes())
    return b"\n;\n".join(parts)


def site_files(root: Path = ROOT) -> dict[str, bytes]:
    files = {}
    for path in sorted((root / "site").rglob("*")):
        rel = path.relative_to(root / "site").as_posix()
        if path.is_file() and not rel.startswith("engine/") and rel != "sw.js":
            files[rel] = path.read_bytes()
    for path in sorted((root / "prompts").glob("*.md")):
        files[f"prompts/{path.name}"] = path.read_bytes()
    return files


def build_id(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(f"{name}\0{sha256_bytes(files[name])}\n".encode())
    return h.hexdigest()[:16]


def assemble(pins: dict, runtime: dict[str, bytes], wheels: dict[str, bytes], root: Path = ROOT,
             ocr: dict[str, bytes] | None = None, snapshot: dict | None = None, voice: dict[str, bytes] | None = None,
             pyc_cache: Path | None = None, embedder: dict[str, bytes] | None = None,
             kiosk: bytes | None = None, course: tuple[bytes, dict] | None = None) -> dict[str, bytes]:
    """Every file of dist/, in memory, keyed by relative path.

    ``runtime`` is as :func:`trim_runtime` returns it.  With ``pyc_cache`` (and Node on
    the machine) the boot images carry byte-compiled modules.  ``kiosk`` replaces the site's
    ``assets/kiosk-config.js`` (:func:`quire_build.kiosk.kiosk_config`); ``course`` is the
    course vault and its about record (:func:`quire_build.library.read_course`)."""
    files = site_files(root)
    files[DROP_IN] = b""  # the drop-in course's slot: empty until a teacher puts a vault there (docs/courses.md)
    if kiosk is not None:
        files[KIOSK_CONFIG] = kiosk
    quire_name, quire_wheel = build_quire_wheel(root)
    wheels = {**wheels, quire_name: quire_wheel}
    assets = {}

    strip = pins["pyodide"].get("strip", [])

    def image(wheel: bytes, dynlibs: list[str] = ()) -> bytes:
        contents = wheel_files(wheel, strip)
        missing = [n for n in dynlibs if n not in contents]
        if missing:
            have = sorted(n for n in contents if n.endswith(".so"))
            raise BuildError(f"BOOT_DYNLIBS names {missing}, which the wheel does not have; its libraries: {have}")
        if pyc_cache is not None:
            contents.update(compile_pycs(contents, runtime, pyc_cache, root))
        return file_image(contents)

    def add(name: str, data: bytes, group: str) -> None:
        add_asset(files, assets, name, data, group)
        if name in STARTUP_FILES:
            assets[name]["first"] = True  # the page hands these over before the other boot files

    lock = json.loads(runtime["pyodide-lock.json"])["packages"]
    lazy_files = {lock[p]["file_name"] for p in pins["pyodide"]["lazy_packages"]}
    image_files = {lock[p]["file_name"]: p for p in pins["pyodide"]["boot_packages"]}
    for name, data in runtime.items():
        if name in ("pyodide.asm.js", "pyodide.js"):
            continue  # they travel inside engine.js
        if name in image_files:
            add(image_asset(name), image(data, BOOT_DYNLIBS.get(image_files[name], [])), "boot")  # written into site-packages by the worker
            continue
        add(name, data, "lazy" if name in lazy_files else "boot")
    if snapshot:
        add(SNAPSHOT_ASSET, snapshot["data"], "boot")
    boot_wheels = set(pins["boot_wheels"]["names"]) | {"quire"}
    for name, data in sorted(wheels.items()):
        if name.split("-")[0] in boot_wheels:
            add(image_asset(name), image(data), "boot")  # installed before ready: no zip work in Python
        else:
            add(f"wheels/{name}", data, "lazy")  # installed with micropip right after ready
    add("engine.js", engine_source(runtime, root), "engine")
    for name, data in sorted(ocr_assets(pins, ocr or {}, root).items()):
        add(name, data, "ocr")  # loaded only when a scanned page needs them
    for name, data in sorted((voice or {}).items()):
        add(name, data, "voice")  # loaded only when someone presses a microphone button
    for name, data in sorted((embedder or {}).items()):
        add(name, data, "embedder")  # loaded only when asked for (site/assets/embedder.js)

    bundle = {
        "build": None,  # finish() names the build by its files
        "version": project_version(root),
        "pyodide": pins["pyodide"]["version"],
        "base": VIRTUAL_BASE,
        "bootImages": [{"package": p, "asset": image_asset(lock[p]["file_name"]), "dynlibs": BOOT_DYNLIBS.get(p, [])}
                       for p in pins["pyodide"]["boot_packages"]],
        "installerPackages": pins["pyodide"]["installer_packages"],
        "lazyPackages": pins["pyodide"]["lazy_packages"],
        "wheelImages": [{"package": n.split("-")[0], "asset": image_asset(n)}
                        for n in sorted(wheels) if n.split("-")[0] in boot_wheels],
        "lazyWheels": [f"wheels/{n}" for n in sorted(wheels) if n.split("-")[0] not in boot_wheels],
        "assets": assets,
        "snapshot": ({"asset": SNAPSHOT_ASSET, "sha256": snapshot["sha256"], "memoryBase": snapshot["memoryBase"]}
                     if snapshot else None),
    }
    return finish(with_course(files, bundle, course), bundle, root)


def add_asset(files: dict[str, bytes], assets: dict, name: str, data: bytes, group: str) -> None:
    """``data`` packed as ``assets/pack/<name>.js`` (:func:`quire_build.pack.pack`), listed in ``assets``."""
    script, gz = pack(name, data)
    files[pack_name(name)] = script
    assets[name] = {"src": pack_name(name), "size": len(data), "sha256": sha256_bytes(data), "gz": gz, "group": group}


def with_course(files: dict[str, bytes], bundle: dict, course: tuple[bytes, dict] | None) -> dict[str, bytes]:
    """``files`` and ``bundle`` with the course vault in place of any earlier one (none: no course)."""
    old = bundle["assets"].pop(COURSE_ASSET, None)
    if old:
        files.pop(old["src"], None)
    bundle.pop("course", None)
    if course:
        data, about = course
        add_asset(files, bundle["assets"], COURSE_ASSET, data, "course")  # loaded only when offered and taken
        bundle["course"] = {**about, "asset": COURSE_ASSET}
    return files


def finish(files: dict[str, bytes], bundle: dict, root: Path = ROOT) -> dict[str, bytes]:
    """``files`` with what is made from them: ``bundle.js`` (what the page loads), the service worker
    with its precache list, and the manifest.  The build id names every other file's content."""
    bundle_id = build_id(files)
    bundle["build"] = bundle_id
    files[BUNDLE_JS] = (BUNDLE_HEAD + json.dumps(bundle, indent=1, sort_keys=True) + ";\n").encode()
    precache = sorted(["./"] + list(files))
    sw = (root / "site" / "sw.js").read_text(encoding="utf-8")
    sw = sw.replace("__BUILD__", bundle_id).replace("__FILES__", json.dumps(precache))
    files["sw.js"] = sw.encode()
    files["manifest.json"] = manifest(files, bundle_id)
    return files


def manifest(files: dict[str, bytes], bundle_id: str) -> bytes:
    listing = {name: {"size": len(data), "sha256": sha256_bytes(data)} for name, data in sorted(files.items())}
    total = sum(entry["size"] for entry in listing.values())
    return (json.dumps({"build": bundle_id, "total_bytes": total, "files": listing}, indent=1) + "\n").encode()


def write_dist(files: dict[str, bytes], dist: Path) -> None:
    """Write into a sibling folder, then swap, so a server never sees half a build."""
    tmp = dist.with_name(dist.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for name, data in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    old = dist.with_name(dist.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if dist.exists():
        dist.rename(old)
    tmp.rename(dist)
    shutil.rmtree(old, ignore_errors=True)
