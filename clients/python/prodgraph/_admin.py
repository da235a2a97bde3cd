"""Administration (keys with ``admin``), the storage agent, vision, health and MCP."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._base import Base, segment
from ._multipart import FileInput
from ._paging import Paged
from .types import (
    AllowedPerson,
    AuditEvent,
    SessionSummary,
    CharacterBundle,
    CreatedKey,
    CurrentKey,
    EngagementView,
    GrantTarget,
    Organisation,
    SceneBundle,
    CreatedWebhook,
    Engagement,
    Grant,
    Health,
    Key,
    LookBrief,
    McpResponse,
    MediaProxyResult,
    StorageEventsResult,
    StorageTask,
    StorageTaskAck,
    VisionSessionToken,
    Webhook,
    WebhookDelivery,
)

__all__ = ["AdminMethods"]


class AdminMethods(Base):
    # -- engagements and grants -----------------------------------------------------------------

    def list_engagements(self, *, include_archived: Optional[bool] = None) -> Paged[Engagement]:
        """Vendor engagements (archived ones with ``include_archived=True``)."""
        return self._list("/admin/engagements", {"include_archived": include_archived})

    def get_engagement(self, engagement_id: int) -> Engagement:
        """One engagement, archived or not, as the list shows it (404 when unknown)."""
        return self._get(f"/admin/engagements/{segment(engagement_id)}")

    def create_engagement(
        self,
        ref: str,
        organisation_id: int,
        departments: Optional[Sequence[str]] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> Engagement:
        """Engages an organisation as a vendor (201)."""
        body = {"ref": ref, "organisation_id": organisation_id, "departments": _list(departments)}
        return self._write("/admin/engagements", body, idempotency_key)

    def archive_engagement(self, engagement_id: int, *, idempotency_key: Optional[str] = None) -> Engagement:
        """Archives an engagement: its keys and grants stop working at once."""
        return self._write(f"/admin/engagements/{segment(engagement_id)}/archive", None, idempotency_key)

    def list_grants(
        self,
        *,
        engagement_id: Optional[int] = None,
        include_inactive: Optional[bool] = None,
    ) -> Paged[Grant]:
        """What engagements reach (live ones; revoked and expired too with ``include_inactive``)."""
        return self._list("/admin/grants", {"engagement_id": engagement_id, "include_inactive": include_inactive})

    def create_grant(
        self,
        engagement_id: int,
        kind: str,
        *,
        node_id: Optional[int] = None,
        delivery_id: Optional[int] = None,
        access: Optional[str] = None,
        expires_at: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Grant:
        """Grants an engagement a scene, a character, a delivery (read/submit) or its own POs."""
        body = {
            "engagement_id": engagement_id,
            "kind": kind,
            "node_id": node_id,
            "delivery_id": delivery_id,
            "access": access,
            "expires_at": expires_at,
        }
        return self._write("/admin/grants", body, idempotency_key)

    def revoke_grant(self, grant_id: int, *, idempotency_key: Optional[str] = None) -> Grant:
        """Revokes a grant: what it reached answers 404 to the vendor on its next request."""
        return self._write(f"/admin/grants/{segment(grant_id)}/revoke", None, idempotency_key)

    def list_organisations(self) -> Paged[Organisation]:
        """The production's organisations (to engage one as a vendor), with live engagements."""
        return self._list("/admin/organisations")

    def search_grant_targets(self, kind: str, q: Optional[str] = None, *, limit: Optional[int] = None) -> List[GrantTarget]:
        """What a grant can name: ``kind`` ``scene`` (by number or slugline), ``character`` or ``delivery``."""
        return self._get("/admin/grant-targets", {"q": q, "kind": kind, "limit": limit})

    # -- see as vendor -------------------------------------------------------------------------

    def get_engagement_view(self, engagement_id: int) -> EngagementView:
        """What an engagement's keys see right now: bundles, turnovers, POs, its submissions."""
        return self._get(f"/admin/engagements/{segment(engagement_id)}/view")

    def get_engagement_scene_bundle(self, engagement_id: int, node_id: int) -> SceneBundle:
        """A scene bundle exactly as this engagement gets it (404 when it may not)."""
        return self._get(f"/admin/engagements/{segment(engagement_id)}/view/bundles/scene/{segment(node_id)}")

    def get_engagement_character_bundle(self, engagement_id: int, node_id: int) -> CharacterBundle:
        """A character bundle exactly as this engagement gets it (404 when it may not)."""
        return self._get(f"/admin/engagements/{segment(engagement_id)}/view/bundles/character/{segment(node_id)}")

    def get_engagement_media_content(self, engagement_id: int, media_id: int) -> bytes:
        """A media object's bytes, if this engagement may fetch them (404 otherwise)."""
        url = self._api(f"/admin/engagements/{segment(engagement_id)}/view/media/{segment(media_id)}/content")
        _, raw = self._transport.request("GET", url, headers={"Accept": "*/*"}, retryable=True)
        return raw

    # -- keys ----------------------------------------------------------------------------------

    def get_current_key(self) -> CurrentKey:
        """The key this client uses: its scopes, production and engagement (any key may ask)."""
        return self._get("/key")

    def list_keys(self, *, engagement_id: Optional[int] = None) -> Paged[Key]:
        """The production's keys (prefixes only; tokens are never stored), or one engagement's."""
        return self._list("/admin/keys", {"engagement_id": engagement_id})

    def create_key(
        self,
        label: str,
        *,
        scopes: Optional[Sequence[str]] = None,
        engagement_id: Optional[int] = None,
        person_id: Optional[int] = None,
        expires_at: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> CreatedKey:
        """Mints a key; its ``token`` is in this answer only (a replay of the call answers null).

        ``expires_at`` (an ISO 8601 instant): refused after it with ``KeyExpired``.
        """
        body = {
            "label": label,
            "scopes": _list(scopes),
            "engagement_id": engagement_id,
            "person_id": person_id,
            "expires_at": expires_at,
        }
        return self._write("/admin/keys", body, idempotency_key)

    def revoke_key(self, key_id: int, *, idempotency_key: Optional[str] = None) -> Key:
        """Revokes a key at once."""
        return self._write(f"/admin/keys/{segment(key_id)}/revoke", None, idempotency_key)

    # -- the audit trail ------------------------------------------------------------------------

    def list_audit(
        self,
        *,
        actor: Optional[str] = None,
        engagement_id: Optional[int] = None,
        action: Optional[str] = None,
        object_type: Optional[str] = None,
        object_id: Optional[int] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> Paged[AuditEvent]:
        """The audit trail, newest first, page by page: who did what, when, from where.

        ``action`` is one action (``grant.add``) or a family (``grant``); ``since``/``until``
        are ISO 8601 instants.
        """
        query = {
            "actor": actor,
            "engagement_id": engagement_id,
            "action": action,
            "object_type": object_type,
            "object_id": object_id,
            "since": since,
            "until": until,
        }
        return self._paged("/admin/audit", query, limit)

    # -- console sign-in: who may sign in, and the live sessions --------------------------------

    def list_sign_in_people(self) -> Paged[AllowedPerson]:
        """The people allowed to sign in to the console with the studio's identity provider."""
        return self._list("/admin/sign-in-people")

    def allow_sign_in_person(
        self,
        email: str,
        role: str,
        *,
        person_id: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> AllowedPerson:
        """Lets ``email`` sign in with ``role`` (``admin``, ``coordinator`` or ``viewer``); again: changes the role."""
        body = {"email": email, "role": role, "person_id": person_id}
        return self._write("/admin/sign-in-people", body, idempotency_key)

    def withdraw_sign_in_person(self, allowed_id: int) -> None:
        """Withdraws a person's sign-in; their live sessions end at once."""
        self._delete(f"/admin/sign-in-people/{segment(allowed_id)}")

    def list_console_sessions(self) -> Paged[SessionSummary]:
        """The console's live sessions (who, role, since, last seen)."""
        return self._list("/admin/sessions")

    def revoke_console_session(self, session_id: int) -> None:
        """Ends a console session at the server."""
        self._delete(f"/admin/sessions/{segment(session_id)}")

    # -- webhooks ------------------------------------------------------------------------------

    def list_webhooks(self) -> Paged[Webhook]:
        """Webhook subscriptions and their delivery state."""
        return self._list("/admin/webhooks")

    def create_webhook(
        self,
        url: str,
        *,
        kinds: Optional[Sequence[str]] = None,
        after: Optional[str] = None,
        engagement_id: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> CreatedWebhook:
        """Subscribes a URL to changes (some ``kinds``, or all); ``secret`` is in this answer only.

        With ``engagement_id`` it is an engagement webhook: sent only what that engagement's own
        keys can see (its turnovers, their sent packages, its own submissions and their
        reviews, its grants); each body then names the ``engagement_id``.
        """
        body = {"url": url, "kinds": _list(kinds), "after": after, "engagement_id": engagement_id}
        return self._write("/admin/webhooks", body, idempotency_key)

    def pause_webhook(self, webhook_id: int, *, idempotency_key: Optional[str] = None) -> Webhook:
        return self._write(f"/admin/webhooks/{segment(webhook_id)}/pause", None, idempotency_key)

    def resume_webhook(self, webhook_id: int, *, idempotency_key: Optional[str] = None) -> Webhook:
        return self._write(f"/admin/webhooks/{segment(webhook_id)}/resume", None, idempotency_key)

    def remove_webhook(self, webhook_id: int, *, idempotency_key: Optional[str] = None) -> Webhook:
        return self._write(f"/admin/webhooks/{segment(webhook_id)}/remove", None, idempotency_key)

    def list_webhook_deliveries(self, webhook_id: int, *, limit: Optional[int] = None) -> Paged[WebhookDelivery]:
        """A subscription's delivery attempts, newest first (``limit`` of them)."""
        return self._list(f"/admin/webhooks/{segment(webhook_id)}/deliveries", {"limit": limit})

    # -- storage agent -------------------------------------------------------------------------

    def post_storage_events(
        self,
        filespace: str,
        events: Sequence[Mapping[str, Any]],
        *,
        idempotency_key: Optional[str] = None,
    ) -> StorageEventsResult:
        """Reports filespace events (create, modify, delete, move); refused ones are listed."""
        return self._write("/storage/events", {"filespace": filespace, "events": list(events)}, idempotency_key)

    def upload_media_proxy(
        self,
        filespace: str,
        path: str,
        file: FileInput,
        *,
        idempotency_key: Optional[str] = None,
    ) -> MediaProxyResult:
        """Uploads a JPEG stand-in for a file in a filespace, streamed from ``file``."""
        fields = [("filespace", filespace), ("path", path)]
        return self._upload("/storage/media-proxy", fields, [("file", file)], idempotency_key)

    def list_storage_tasks(self) -> Paged[StorageTask]:
        """Moves an administrator queued for the storage agent."""
        return self._list("/storage/tasks")

    def ack_storage_task(
        self,
        task_id: int,
        ok: bool,
        note: Optional[str] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> StorageTaskAck:
        """Reports a storage task done (``ok=True``) or failed."""
        return self._write("/storage/tasks/ack", {"task_id": task_id, "ok": ok, "note": note}, idempotency_key)

    # -- vision --------------------------------------------------------------------------------

    def create_vision_session_token(self, model: Optional[str] = None) -> VisionSessionToken:
        """A short-lived provider token for one model. Each call mints one: never retried."""
        return self._post_unkeyed("/vision/session-token", {"model": model} if model else {})

    def create_look_brief(self, version_id: int) -> LookBrief:
        """A released still's look brief (palette, exposure, colour), computed by the server."""
        _, answer = self._transport.json(
            "POST", self._api(f"/vision/looks/{segment(version_id)}/brief"), retryable=True
        )
        return answer

    # -- service -------------------------------------------------------------------------------

    def get_health(self) -> Health:
        """``{"status": "ok"}`` once the server's database answers (no key needed)."""
        _, answer = self._transport.json("GET", self._transport.url("/healthz"), retryable=True, auth=False)
        return answer

    def call_mcp(self, method: str, params: Optional[Dict[str, Any]] = None, *, id: int = 1) -> McpResponse:
        """One JSON-RPC 2.0 call to the server's MCP endpoint; the answer as it comes.

        Not retried once sent: an MCP call may write (``submit_turnover``) and carries no key.
        """
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        data = json.dumps(message, separators=(",", ":")).encode("utf-8")
        _, answer = self._transport.json("POST", self._transport.url("/mcp"), body=data, retryable=False)
        return answer


def _list(values: Optional[Sequence[str]]) -> Optional[List[str]]:
    return None if values is None else list(values)
