"""The production's side of a turnover (keys with ``admin``): organisations to engage, a
delivery's package and status, and the review of what a vendor submitted."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple, Union

from ._base import Base, segment
from ._multipart import FileInput, Progress, Text

if TYPE_CHECKING:  # for annotations only: the type generator imports this package before types.py has them
    from .types import Delivery, DeliveryPackage, Organisation, PackageUpload, SubmissionRow

__all__ = ["TurnoverAdminMethods"]


class TurnoverAdminMethods(Base):
    def add_organisation(
        self,
        name: str,
        ref: Optional[str] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> Organisation:
        """Adds a vendor organisation (201), to engage with :meth:`create_engagement`.

        Without ``ref`` the server makes one from the name. The same name (case aside) or ref
        twice is ``Conflict``.
        """
        return self._write("/admin/organisations", {"name": name, "ref": ref}, idempotency_key)

    # the operation's own name (createOrganisation)
    create_organisation = add_organisation

    def add_delivery_files(
        self,
        delivery_id: int,
        files: Union[FileInput, Sequence[FileInput]],
        labels: Optional[Sequence[Optional[str]]] = None,
        progress: Optional[Progress] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> PackageUpload:
        """Adds files to a delivery's package (201): ``{delivery_id, files: [...]}``, the files
        this call added, each with its media ``id``, ``size`` and ``sha256``.

        ``files``: one path, binary file object or bytes, or a list of them and of
        ``(filename, source)`` pairs. ``labels``: one per file, the name the vendor sees (a file name, unique in the
        package); None, or a None in the list, keeps the file's own name. The body is streamed
        from disk: its length is computed up front from the files' sizes (sent as
        Content-Length) and each file is read in chunks as it is sent, never whole.
        ``progress(sent_bytes, total_bytes)`` is called as each chunk leaves (a retry starts
        again from 0). All files land or none.
        """
        given = _as_list(files)
        names = list(labels) if labels is not None else [None] * len(given)
        if len(names) != len(given):
            raise ValueError(f"labels: {len(names)} given for {len(given)} files (one per file, None for its own name)")
        # the server pairs a `label` part with the file part right after it
        parts: List[Tuple[str, Union[Text, FileInput]]] = []
        for label, file in zip(names, given):
            if label is not None:
                parts.append(("label", Text(label)))
            parts.append(("files", file))
        path = f"/admin/deliveries/{segment(delivery_id)}/files"
        return self._upload(path, [], [], idempotency_key, parts=parts, progress=progress)

    def remove_delivery_file(
        self,
        delivery_id: int,
        media_id: int,
        *,
        idempotency_key: Optional[str] = None,
    ) -> DeliveryPackage:
        """Takes a file out of a delivery's package; answers the package as it is now.

        Vendors no longer see it; the media object is kept for history.
        """
        path = f"/admin/deliveries/{segment(delivery_id)}/files/{segment(media_id)}/remove"
        return self._write(path, None, idempotency_key)

    def set_delivery_status(
        self,
        delivery_id: int,
        status: str,
        note: Optional[str] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> Delivery:
        """Moves a delivery: ``draft → ready → sent → accepted``, ``sent → ready`` (a recall),
        and any state but ``accepted`` to and from ``blocked``; ``sent`` stamps ``sent_at``.

        Another move is ``InvalidTransition`` (a ``Conflict``, code ``invalid_transition``),
        whose detail names where the delivery may go. ``note`` is recorded with the move.
        Answers the delivery.
        """
        body = {"status": status, "note": note}
        return self._write(f"/admin/deliveries/{segment(delivery_id)}/status", body, idempotency_key)

    def review_submission(
        self,
        submission_id: int,
        decision: str,
        note: str,
        reviewed_by: Optional[Union[str, int]] = None,
        accept_delivery: bool = False,
        *,
        idempotency_key: Optional[str] = None,
    ) -> SubmissionRow:
        """Reviews a vendor's submission: ``decision`` ``"accepted"`` or ``"changes_requested"``
        (then ``note`` says what to change). Answers the submission, whose ``status`` is the
        decision and ``review`` is ``{decision, note, reviewed_by, reviewed_at}``.

        ``reviewed_by``: a person of the production (name or id); a key bound to a person
        reviews as that person only. ``accept_delivery=True`` with ``"accepted"`` also moves
        the delivery from ``sent`` to ``accepted`` in the same write.
        """
        body = {
            "decision": decision,
            "note": note,
            "reviewed_by": None if reviewed_by is None else str(reviewed_by),
            "accept_delivery": True if accept_delivery else None,
        }
        return self._write(f"/admin/submissions/{segment(submission_id)}/review", body, idempotency_key)


def _as_list(files: Union[FileInput, Sequence[FileInput]]) -> List[FileInput]:
    """One file (a path, bytes, a file object) or a list of files (as for submit_turnover, a
    ``(filename, source)`` pair goes in a list)."""
    if isinstance(files, (str, bytes, bytearray, memoryview, os.PathLike)) or hasattr(files, "read"):
        return [files]  # type: ignore[list-item]
    return list(files)  # type: ignore[arg-type]
