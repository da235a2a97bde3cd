"""The production graph for production-wide keys: reads, and the four pipeline writes."""

from __future__ import annotations

from datetime import datetime
from typing import Optional, Union

from ._base import Base, segment
from ._multipart import FileInput
from ._paging import Paged
from .types import (
    ActivityEntry,
    Approval,
    Asset,
    AssetRow,
    CreatedAsset,
    Delivery,
    Department,
    DepartmentDetail,
    Job,
    LandedVersion,
    Note,
    Person,
    Production,
    Scene,
    ScriptChange,
    ShootDay,
)

__all__ = ["GraphMethods"]

When = Union[str, datetime]


class GraphMethods(Base):
    # -- reads ---------------------------------------------------------------------------------

    def get_production(self) -> Production:
        """The production, with live counts (``stats``)."""
        return self._get("/production")

    def list_departments(self) -> Paged[Department]:
        """Every department (slug, mission, key roles)."""
        return self._list("/departments")

    def get_department(self, slug: str) -> DepartmentDetail:
        """One department: its crew (no contact details) and asset count."""
        return self._get(f"/departments/{segment(slug)}")

    def list_scenes(self, *, updated_since: Optional[When] = None, limit: Optional[int] = None) -> Paged[Scene]:
        """Every scene in script order; ``limit`` is the page size."""
        return self._paged("/scenes", {"updated_since": updated_since}, limit)

    def list_assets(
        self,
        *,
        department: Optional[str] = None,
        kind: Optional[str] = None,
        status: Optional[str] = None,
        released: Optional[bool] = None,
        updated_since: Optional[When] = None,
        limit: Optional[int] = None,
    ) -> Paged[AssetRow]:
        """Every asset row matching the filters, in the production's order."""
        query = {
            "department": department,
            "kind": kind,
            "status": status,
            "released": released,
            "updated_since": updated_since,
        }
        return self._paged("/assets", query, limit)

    def get_asset(self, node_id: int) -> Asset:
        """One asset in full: versions, notes, ingredients, scenes, costumes."""
        return self._get(f"/assets/{segment(node_id)}")

    def list_shoot_days(self, *, episode_id: Optional[int] = None) -> Paged[ShootDay]:
        """The shoot schedule: days with their scene strips (``episode_id`` marks an episode's)."""
        return self._list("/schedule", {"episode_id": episode_id})

    def list_deliveries(self, *, updated_since: Optional[When] = None, limit: Optional[int] = None) -> Paged[Delivery]:
        """Every delivery, with its gating approval."""
        return self._paged("/deliveries", {"updated_since": updated_since}, limit)

    def list_approvals(
        self,
        *,
        status: Optional[str] = None,
        updated_since: Optional[When] = None,
        limit: Optional[int] = None,
    ) -> Paged[Approval]:
        """Approval chains, oldest first, and whose step is current (``status`` filters)."""
        return self._paged("/approvals", {"status": status, "updated_since": updated_since}, limit)

    def list_script_changes(
        self,
        *,
        status: Optional[str] = None,
        episode_id: Optional[int] = None,
        all_episodes: Optional[bool] = None,
    ) -> Paged[ScriptChange]:
        """Detected script changes (``status``; an episode's, or ``all_episodes``)."""
        query = {"status": status, "episode_id": episode_id, "all_episodes": all_episodes}
        return self._list("/script-changes", query)

    def list_activity(
        self,
        *,
        before: Optional[When] = None,
        updated_since: Optional[When] = None,
        limit: Optional[int] = None,
    ) -> Paged[ActivityEntry]:
        """The activity feed, newest first, back to the first entry (``limit`` ≤ 200 a page)."""
        return self._paged("/activity", {"before": before, "updated_since": updated_since}, limit, 200)

    def list_jobs(
        self,
        *,
        before: Optional[When] = None,
        updated_since: Optional[When] = None,
        limit: Optional[int] = None,
    ) -> Paged[Job]:
        """Generation jobs, newest first (``limit`` ≤ 200 a page)."""
        return self._paged("/jobs", {"before": before, "updated_since": updated_since}, limit, 200)

    def list_people(self) -> Paged[Person]:
        """The crew (no contact details)."""
        return self._list("/people")

    # -- writes (each sends an Idempotency-Key, reused on every retry) ---------------------------

    def create_asset(
        self,
        label: str,
        *,
        kind: Optional[str] = None,
        department: Optional[str] = None,
        status: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> CreatedAsset:
        """Creates an asset (201)."""
        body = {"label": label, "kind": kind, "department": department, "status": status}
        return self._write("/assets", body, idempotency_key)

    def add_asset_note(
        self,
        node_id: int,
        text: str,
        author: Optional[str] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> Note:
        """Adds a note to an asset (on its latest version, or its activity when it has none)."""
        return self._write(f"/assets/{segment(node_id)}/notes", {"text": text, "author": author}, idempotency_key)

    def land_asset_version(
        self,
        node_id: int,
        file: FileInput,
        note: Optional[str] = None,
        variant: Optional[str] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> LandedVersion:
        """Lands a new version from an image or video, streamed from ``file``.

        ``file`` is a path, a binary file object, bytes, or ``(filename, source)``.
        """
        fields = [("note", note), ("variant", variant)]
        return self._upload(f"/assets/{segment(node_id)}/versions", fields, [("file", file)], idempotency_key)

    def decide_approval(
        self,
        approval_id: int,
        decision: str,
        decided_by: Optional[str] = None,
        note: Optional[str] = None,
        step: Optional[int] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> Approval:
        """Decides an approval (``approved`` or ``changes``); ``step`` guards a chain (409 if stale)."""
        body = {"decision": decision, "decided_by": decided_by, "note": note, "step": step}
        return self._write(f"/approvals/{segment(approval_id)}/decide", body, idempotency_key)
