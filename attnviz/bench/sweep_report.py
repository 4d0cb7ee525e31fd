"""The capture sweep's report: per family and implementation, exact / partial (with the reason) /
none / errors, on the terminal and as the README's coverage section, which
``python -m attnviz.bench sweep --readme README.md`` (or ``--from-json FILE --readme README.md``,
without running again) rewrites between its two markers."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

IMPLEMENTATIONS = ("sdpa", "eager")
BEGIN = "<!-- sweep:begin: written by `python -m attnviz.bench sweep --readme README.md`, do not edit -->"
END = "<!-- sweep:end -->"
#: Verdicts of one implementation, in the order the tables list them.
STATUSES = ("exact", "partial", "none", "errors", "no attention", "not run", "not offered")
STATUS_TEXT = {
    "exact": "exact: every call recomputed within 1e-4 (or the model's own weights), every reported map recorded",
    "partial": "partial: calls recorded, some not exact (the reason below)",
    "none": "none: maps reported, no call recorded",
    "errors": "errors: the capture failed where the model ran",
    "no attention": "no attention: no call and no map (convolutional, recurrent, state-space)",
    "not run": "not run: no inputs made from the config run the model",
    "not offered": "not offered: the implementation cannot be built",
}
#: A family's verdict over its implementations, in the order the tables list them.
FAMILY = ("exact", "partial", "none", "errors", "no attention", "not run", "not offered")
FAMILY_TEXT = {
    "exact": "exact on at least one implementation",
    "partial": "partial on its best implementation",
    "none": "no call recorded",
    "errors": "errors",
    "no attention": "no attention at all",
    "not run": "not run on any implementation",
    "not offered": "not offered: no implementation builds (a library missing, the config incomplete)",
}


def _status(result: dict[str, Any], implementation: str) -> str:
    return str(result.get(implementation, {}).get("status", "not offered"))


def family_verdict(result: dict[str, Any]) -> str:
    """The best of a family's implementations, in ``FAMILY``'s order."""
    statuses = {_status(result, i) for i in IMPLEMENTATIONS}
    for verdict in FAMILY:
        if verdict in statuses:
            return verdict
    return "not run"


def join(paths: list[str]) -> tuple[list[dict[str, Any]], str]:
    """The results of several ``--json`` files (parts of one sweep, reruns) as one list sorted by
    family, and their transformers version: a family in more than one file is taken from the
    last that holds it (a rerun replaces the run before it). Files of different transformers
    versions are refused in one line."""
    saved = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                part = json.load(f)
            saved.append((str(part["transformers"]), list(part["results"])))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}: not a sweep's --json file ({type(exc).__name__}: {exc})") from None
    versions = {version for version, _ in saved}
    if len(versions) != 1:
        raise SystemExit(f"the files come from different transformers versions: {', '.join(sorted(versions))}")
    by_family = {str(r["family"]): r for _, results in saved for r in results}
    return sorted(by_family.values(), key=lambda r: str(r["family"])), saved[0][0]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _said(outcome: dict[str, Any]) -> str:
    status = str(outcome.get("status", "not offered"))
    why = outcome.get("why")
    return f"{status}: {why}" if why and status not in ("exact", "no attention") else status


#: Kinds of input that are a model's media, not its text (``Built.kinds``).
MEDIA = frozenset({"image", "audio", "video", "audio codes"})
#: A plan's label that tried media (``sweep_inputs.plans``: "image: pixels (B, C, H, W)", "packed
#: patches ...", "named inputs (pixel_values_videos)", ...).
_MEDIA_PLAN = re.compile(
    r"^(image|audio|video|packed patches|grid patches|frames|pixels|spectrogram)\b"
    r"|^named inputs \((pixel_values|input_features|input_values|audio|video)"
)


def without_media(result: dict[str, Any]) -> str | None:
    """Why a family that ran did so on none of its media: the first media plan's refusal (kept as
    ``skipped``) where the implementation that ran took no image, audio or video; else None. Its
    calls are exact on what ran, and its media path is not shown: said apart, never silent."""
    ran = [result[i] for i in IMPLEMENTATIONS if isinstance(result.get(i), dict) and result[i].get("inputs")]
    if not ran or any(MEDIA & set(outcome["inputs"]) for outcome in ran):
        return None
    refused = [str(o.get("skipped", "")) for o in ran if _MEDIA_PLAN.search(str(o.get("skipped", "")))]
    return refused[0] if refused else None


def not_exact(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Built families that ran and are not exact on any implementation (with maps to show)."""
    return [r for r in results if r.get("built") == "yes" and family_verdict(r) in ("partial", "none", "errors")]


def lines(results: list[dict[str, Any]], version: str) -> list[str]:
    """The report as markdown lines (the README's section, and the terminal's text)."""
    built = [r for r in results if r.get("built") == "yes"]
    unbuilt = [r for r in results if r.get("built") != "yes"]
    out = [
        f"On transformers {version}: {len(results)} configs, {len(built)} build from a small config"
        + (f" ({', '.join(r['family'] for r in unbuilt)} do not)." if unbuilt else "."),
        "",
        "| verdict per implementation | sdpa | eager |",
        "|---|---|---|",
    ]
    counts = {i: Counter(_status(r, i) for r in built) for i in IMPLEMENTATIONS}
    for status in STATUSES:
        out.append(f"| {STATUS_TEXT[status]} | {counts['sdpa'][status]} | {counts['eager'][status]} |")
    families = Counter(family_verdict(r) for r in built)
    inputs = Counter(
        ", ".join(next(r[i]["inputs"] for i in IMPLEMENTATIONS if r.get(i, {}).get("inputs")))
        for r in built
        if any(r.get(i, {}).get("inputs") for i in IMPLEMENTATIONS)
    )
    out += ["", "| per family | configs |", "|---|---|"]
    out += [f"| {FAMILY_TEXT[v]} | {families[v]} |" for v in FAMILY]
    textual = [r for r in built if without_media(r) is not None]
    out.append(f"| of those that ran, on text only: their media refused (listed below) | {len(textual)} |")
    out += ["", "| inputs the sweep made (families that ran) | configs |", "|---|---|"]
    out += [f"| {kinds} | {n} |" for kinds, n in sorted(inputs.items())]
    out += ["", "Not exact on any implementation that runs, and why:", ""]
    out += ["| family | inputs | sdpa | eager |", "|---|---|---|---|"]
    rows = not_exact(results)
    for r in rows:
        media: list[str] = next((r[i]["inputs"] for i in IMPLEMENTATIONS if r.get(i, {}).get("inputs")), [])
        cells = [_cell(_said(r.get(i, {"status": "not offered"}))) for i in IMPLEMENTATIONS]
        out.append(f"| {_cell(r['family'])} | {', '.join(media)} | {cells[0]} | {cells[1]} |")
    if not rows:  # an empty table reads as a section cut short
        out.append("| (none) | | | |")
    groups = [
        (
            "Ran on text only: every image, audio or video input made was refused (the first refusal)",
            textual,
            lambda r: str(without_media(r)),
        ),
        ("Not run on any implementation", [r for r in built if family_verdict(r) == "not run"], reason),
        ("Not offered", [r for r in built if family_verdict(r) == "not offered"], reason),
        (
            "Not built: a part of another model, or a config that does not build",
            unbuilt,
            lambda r: str(r.get("built", "")),
        ),
    ]
    for title, unrun, why in groups:
        out += ["", f"<details><summary>{title} ({len(unrun)}), and why</summary>", ""]
        out += ["| family | why |", "|---|---|"]
        for r in unrun:
            out.append(f"| {_cell(r['family'])} | {_cell(why(r))} |")
        if not unrun:
            out.append("| (none) | |")
        out += ["", "</details>"]
    return out


#: What a model says when it offers no SDPA path: true of the implementation, not the family's reason.
_NO_SDPA = "does not support an attention implementation"


def reason(result: dict[str, Any]) -> str:
    """Why a family did not run: the reason of an implementation that was built and did not run
    (it says more than "not offered"), else of one whose failure is the config's or a library's
    rather than the model's lack of an SDPA path."""
    ranked = sorted(IMPLEMENTATIONS, key=lambda i: (_status(result, i) != "not run", _NO_SDPA in str(_why(result, i))))
    return next((str(_why(result, i)) for i in ranked if _why(result, i)), "")


def _why(result: dict[str, Any], implementation: str) -> Any:
    return result.get(implementation, {}).get("why")


def section(results: list[dict[str, Any]], version: str) -> str:
    """The README's section, markers included."""
    return "\n".join([BEGIN, *lines(results, version), END])


def write_readme(path: str, results: list[dict[str, Any]], version: str) -> None:
    """Replace the section between the markers of the README at ``path`` with this report."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path} has no sweep section (a line {BEGIN!r} ... {END!r})")
    with open(path, "w", encoding="utf-8") as f:
        f.write(pattern.sub(lambda _: section(results, version), text, count=1))


def read_section(text: str) -> str | None:
    """The section between the markers of a README's text, markers included; None if absent."""
    match = re.search(re.escape(BEGIN) + ".*?" + re.escape(END), text, re.S)
    return match.group(0) if match else None


def report(results: list[dict[str, Any]], version: str) -> None:
    """The report on the terminal, and every family that is not exact with its reasons."""
    print()
    print("\n".join(lines(results, version)))
    print("\nevery reason of those not exact:")
    for r in not_exact(results):
        for i in IMPLEMENTATIONS:
            for reason in r.get(i, {}).get("reasons", []):
                print(f"  {r['family']} ({i}): {reason}")
