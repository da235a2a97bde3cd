"""The mirror's turnover packages and reviews (a vendor key's view of ``GET /turnovers``).

Each turnover whose delivery was sent (or accepted) shows its package: the plates, EDL, LUT
and reference the production sent. The mirror keeps them in
``DIR/turnovers/<delivery id>-<title slug>/<media id>-<label slug>.<ext>``: each file fetched
once, SHA-256 checked before it is kept, a cut download resumed from its ``.part`` (or fetched
again whole when the part was not this file's), and a file taken out of the package (or a
turnover recalled, or its grant ended) removed, unless ``--keep``. The turnover rows also carry
the engagement's own submissions with the production's review; each review not seen before is
reported: a line in the log, counted in the summary, listed in ``Mirror.new_reviews``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Sequence, Tuple

from ._base import segment
from ._download import download, file_name
from .errors import ChecksumMismatch, NotFound

if TYPE_CHECKING:
    from .mirror import Mirror

__all__ = ["Packages"]

DECISIONS = {"accepted": "accepted", "changes_requested": "changes requested"}


class Packages:
    """One run's work on the packages and reviews, for ``mirror``."""

    def __init__(self, mirror: "Mirror") -> None:
        self.m = mirror
        # media id → {"file", "sha256", "turnover"}: the package files the mirror keeps
        self.kept: Dict[str, Dict[str, Any]] = mirror.state.setdefault("package", {})
        # delivery id → its folder, named once (a later change of title does not move it)
        self.folders: Dict[str, str] = mirror.state.setdefault("turnover_folders", {})

    # -- packages ------------------------------------------------------------------------------

    def sync(self, turnovers: Sequence[Mapping[str, Any]]) -> None:
        wanted: Dict[str, Tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        for row in turnovers:
            for file in row.get("package") or []:
                wanted[str(file["id"])] = (row, file)
        for n, (row, file) in enumerate(wanted.values(), 1):
            self.m.progress.show(f"prodgraph mirror: package files {n}/{len(wanted)} · {self.m._media_line()}")
            self._file(row, file)
            self.m._maybe_save()
        for key in sorted(set(self.kept) - set(wanted)):
            rel = self.kept.pop(key)["file"]
            self.m._remove(rel)
            _rmdir_if_empty(self.m.root / rel.rsplit("/", 1)[0])
        showing = {str(row["id"]) for row in turnovers if row.get("package")}
        for key in sorted(set(self.folders) - showing):
            _rmdir_if_empty(self.m.root / self.folders.pop(key))
        self.m._count("packages", len(showing))
        self.m._count("package_files", len(wanted))

    def folder(self, row: Mapping[str, Any]) -> str:
        key = str(row["id"])
        if key not in self.folders:
            slug = re.sub(r"[^A-Za-z0-9]+", "-", str(row.get("title") or "")).strip("-").lower()[:60].strip("-")
            self.folders[key] = f"turnovers/{row['id']}-{slug or 'turnover'}"
        return self.folders[key]

    def files(self) -> List[str]:
        return [f["file"] for f in self.kept.values()]

    def _file(self, row: Mapping[str, Any], file: Mapping[str, Any]) -> None:
        """One package file: kept when it is already here whole, else fetched (resumed from
        its part), verified, and recorded."""
        kept = self.kept.get(str(file["id"]))
        if kept and kept.get("sha256") == file.get("sha256") and self.m._intact(kept["file"]):
            return
        name = file_name(file["id"], str(file.get("label") or ""), str(file.get("content_type") or ""))
        rel = kept["file"] if kept else f"{self.folder(row)}/{name}"
        if not self.m._may_write(rel, file.get("sha256")):
            return
        part = self.m.root / (rel + ".part")
        before = part.stat().st_size if part.exists() else 0
        try:
            path = self._download(rel, file)
        except NotFound:
            return  # out of reach since the list was read: gone from the list next run
        except ChecksumMismatch:
            # the part held other bytes (a file replaced under the same name, a disk error):
            # the download dropped it, and the whole file is fetched once more
            before = 0
            path = self._download(rel, file)
        self.m.fetched_bytes += max(0, path.stat().st_size - before)
        self.m._record(rel)
        self.kept[str(file["id"])] = {"file": rel, "sha256": file.get("sha256"), "turnover": row["id"]}
        self.m._count("package_fetched")

    def _download(self, rel: str, file: Mapping[str, Any]) -> Any:
        url = self.m.client._api(f"/media/{segment(file['id'])}/content")
        return download(
            self.m.client._transport,
            lambda _refresh: url,
            self.m.root / rel,
            sha256=file.get("sha256"),
            size=file.get("size"),
            fallback_name=f"media-{file['id']}",
        )

    # -- reviews -------------------------------------------------------------------------------

    def reviews(self, turnovers: Sequence[Mapping[str, Any]]) -> None:
        """Counts the reviews of the key's own submissions and reports each one not seen before
        (a new review, or a submission reviewed again)."""
        seen: Dict[str, Any] = self.m.state.setdefault("reviews", {})
        total = 0
        for row in turnovers:
            for submission in row.get("submissions") or []:
                review = submission.get("review")
                if not review:
                    continue
                total += 1
                stamp = [review.get("decision"), review.get("reviewed_at")]
                if seen.get(str(submission["id"])) == stamp:
                    continue
                seen[str(submission["id"])] = stamp
                self.m.new_reviews.append(_review(row, submission, review))
                self.m._count("reviews_new")
                self.m.progress.say(_line(row, submission, review))
        self.m._count("reviews", total)


def _review(row: Mapping[str, Any], submission: Mapping[str, Any], review: Mapping[str, Any]) -> Dict[str, Any]:
    return {
        "turnover_id": row["id"],
        "turnover": row.get("title"),
        "submission_id": submission["id"],
        "submission": submission.get("title"),
        "decision": review.get("decision"),
        "note": review.get("note"),
        "reviewed_by": review.get("reviewed_by"),
        "reviewed_at": review.get("reviewed_at"),
    }


def _line(row: Mapping[str, Any], submission: Mapping[str, Any], review: Mapping[str, Any]) -> str:
    decision = DECISIONS.get(str(review.get("decision")), str(review.get("decision")))
    by = f" by {review['reviewed_by']}" if review.get("reviewed_by") else ""
    note = f": {review['note']}" if review.get("note") else ""
    return (
        f"review: submission {submission['id']} \"{submission.get('title', '')}\" on turnover {row['id']}"
        f" \"{row.get('title', '')}\": {decision}{by}{note}"
    )


def _rmdir_if_empty(folder: Any) -> None:
    try:
        folder.rmdir()  # only once the mirror emptied it
    except OSError:
        pass  # not empty (a file kept, or one of the user's), or already gone: left as it is
