"""Every REST operation of the server, by its OpenAPI ``operationId``.

The client has one method per operation, named as the operationId in snake_case
(``listAssets`` → ``list_assets``). ``TYPE`` names the TypedDict (in ``prodgraph.types``)
generated from the operation's JSON answer: a list's row, or the object itself. Tests check
this table against the served OpenAPI document, so an operation the server adds, moves or
renames fails them until the client has it.
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

__all__ = ["OPERATIONS", "snake"]

# (operationId, method, path, type of the JSON answer: a row for a list; None: not JSON)
OPERATIONS: Tuple[Tuple[str, str, str, Optional[str]], ...] = (
    ("getHealth", "GET", "/healthz", "Health"),
    ("getMediaFileByTicket", "GET", "/media/{path}", None),
    ("callMcp", "POST", "/mcp", "McpResponse"),
    ("getProduction", "GET", "/api/v1/production", "Production"),
    ("listDepartments", "GET", "/api/v1/departments", "Department"),
    ("getDepartment", "GET", "/api/v1/departments/{slug}", "DepartmentDetail"),
    ("listScenes", "GET", "/api/v1/scenes", "Scene"),
    ("listAssets", "GET", "/api/v1/assets", "AssetRow"),
    ("createAsset", "POST", "/api/v1/assets", "CreatedAsset"),
    ("getAsset", "GET", "/api/v1/assets/{node_id}", "Asset"),
    ("listShootDays", "GET", "/api/v1/schedule", "ShootDay"),
    ("listDeliveries", "GET", "/api/v1/deliveries", "Delivery"),
    ("listApprovals", "GET", "/api/v1/approvals", "Approval"),
    ("listScriptChanges", "GET", "/api/v1/script-changes", "ScriptChange"),
    ("listActivity", "GET", "/api/v1/activity", "ActivityEntry"),
    ("listChanges", "GET", "/api/v1/changes", "ChangesPage"),
    ("listJobs", "GET", "/api/v1/jobs", "Job"),
    ("listPeople", "GET", "/api/v1/people", "Person"),
    ("getMediaTicket", "GET", "/api/v1/media-ticket", "MediaTicket"),
    ("addAssetNote", "POST", "/api/v1/assets/{node_id}/notes", "Note"),
    ("landAssetVersion", "POST", "/api/v1/assets/{node_id}/versions", "LandedVersion"),
    ("decideApproval", "POST", "/api/v1/approvals/{approval_id}/decide", "Approval"),
    ("postStorageEvents", "POST", "/api/v1/storage/events", "StorageEventsResult"),
    ("uploadMediaProxy", "POST", "/api/v1/storage/media-proxy", "MediaProxyResult"),
    ("listStorageTasks", "GET", "/api/v1/storage/tasks", "StorageTask"),
    ("ackStorageTask", "POST", "/api/v1/storage/tasks/ack", "StorageTaskAck"),
    ("listBundles", "GET", "/api/v1/bundles", "BundleEntry"),
    ("getSceneBundle", "GET", "/api/v1/bundles/scene/{node_id}", "SceneBundle"),
    ("getCharacterBundle", "GET", "/api/v1/bundles/character/{node_id}", "CharacterBundle"),
    ("listTurnovers", "GET", "/api/v1/turnovers", "Turnover"),
    ("submitTurnover", "POST", "/api/v1/turnovers/{id}/submissions", "Submission"),
    ("listSubmissions", "GET", "/api/v1/submissions", "SubmissionRow"),
    ("getMedia", "GET", "/api/v1/media/{id}", "Media"),
    ("getMediaContent", "GET", "/api/v1/media/{id}/content", None),
    ("getPurchaseOrders", "GET", "/api/v1/purchase-orders", "PurchaseOrders"),
    ("createVisionSessionToken", "POST", "/api/v1/vision/session-token", "VisionSessionToken"),
    ("createLookBrief", "POST", "/api/v1/vision/looks/{version_id}/brief", "LookBrief"),
    ("listEngagements", "GET", "/api/v1/admin/engagements", "Engagement"),
    ("getEngagement", "GET", "/api/v1/admin/engagements/{id}", "Engagement"),
    ("createEngagement", "POST", "/api/v1/admin/engagements", "Engagement"),
    ("archiveEngagement", "POST", "/api/v1/admin/engagements/{id}/archive", "Engagement"),
    ("listGrants", "GET", "/api/v1/admin/grants", "Grant"),
    ("createGrant", "POST", "/api/v1/admin/grants", "Grant"),
    ("revokeGrant", "POST", "/api/v1/admin/grants/{id}/revoke", "Grant"),
    ("listKeys", "GET", "/api/v1/admin/keys", "Key"),
    ("createKey", "POST", "/api/v1/admin/keys", "CreatedKey"),
    ("revokeKey", "POST", "/api/v1/admin/keys/{id}/revoke", "Key"),
    ("listWebhooks", "GET", "/api/v1/admin/webhooks", "Webhook"),
    ("createWebhook", "POST", "/api/v1/admin/webhooks", "CreatedWebhook"),
    ("pauseWebhook", "POST", "/api/v1/admin/webhooks/{id}/pause", "Webhook"),
    ("resumeWebhook", "POST", "/api/v1/admin/webhooks/{id}/resume", "Webhook"),
    ("removeWebhook", "POST", "/api/v1/admin/webhooks/{id}/remove", "Webhook"),
    ("listWebhookDeliveries", "GET", "/api/v1/admin/webhooks/{id}/deliveries", "WebhookDelivery"),
    ("listOrganisations", "GET", "/api/v1/admin/organisations", "Organisation"),
    ("createOrganisation", "POST", "/api/v1/admin/organisations", "Organisation"),
    ("listAudit", "GET", "/api/v1/admin/audit", "AuditEvent"),
    ("listSignInPeople", "GET", "/api/v1/admin/sign-in-people", "AllowedPerson"),
    ("allowSignInPerson", "POST", "/api/v1/admin/sign-in-people", "AllowedPerson"),
    ("withdrawSignInPerson", "DELETE", "/api/v1/admin/sign-in-people/{id}", None),
    ("listConsoleSessions", "GET", "/api/v1/admin/sessions", "SessionSummary"),
    ("revokeConsoleSession", "DELETE", "/api/v1/admin/sessions/{id}", None),
    ("addDeliveryFiles", "POST", "/api/v1/admin/deliveries/{id}/files", "PackageUpload"),
    ("removeDeliveryFile", "POST", "/api/v1/admin/deliveries/{id}/files/{media_id}/remove", "DeliveryPackage"),
    ("setDeliveryStatus", "POST", "/api/v1/admin/deliveries/{id}/status", "Delivery"),
    ("reviewSubmission", "POST", "/api/v1/admin/submissions/{id}/review", "SubmissionRow"),
    ("searchGrantTargets", "GET", "/api/v1/admin/grant-targets", "GrantTarget"),
    ("getEngagementView", "GET", "/api/v1/admin/engagements/{id}/view", "EngagementView"),
    ("getEngagementSceneBundle", "GET", "/api/v1/admin/engagements/{id}/view/bundles/scene/{node_id}", "SceneBundle"),
    (
        "getEngagementCharacterBundle",
        "GET",
        "/api/v1/admin/engagements/{id}/view/bundles/character/{node_id}",
        "CharacterBundle",
    ),
    ("getEngagementMediaContent", "GET", "/api/v1/admin/engagements/{id}/view/media/{media_id}/content", None),
    ("getCurrentKey", "GET", "/api/v1/key", "CurrentKey"),
)


def snake(operation_id: str) -> str:
    """``listShootDays`` → ``list_shoot_days``: the client method of an operation."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()
