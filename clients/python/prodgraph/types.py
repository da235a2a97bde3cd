"""Typed shapes of the server's answers (TypedDicts), generated from its OpenAPI document.

Do not edit: run ``python clients/python/tools/generate_types.py`` against a server instead.
The tests regenerate this module from the live document and fail when it differs.
Answers may carry fields added later (the API only ever adds): read them as ordinary dict keys.
"""

# fmt: off
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

__all__ = ['ActivityEntry', 'ActivityEntryNode', 'AllowedPerson', 'Approval', 'ApprovalStep', 'ApprovalSubject', 'Asset', 'AssetRow', 'AssetScene', 'AuditEvent', 'BundleEntry', 'Change', 'ChangesPage', 'CharacterBundle', 'CharacterBundleCharacter', 'CharacterBundleCostume', 'CharacterBundleCostumeIngredient', 'CharacterBundleEntry', 'CostReportLine', 'CreatedAsset', 'CreatedKey', 'CreatedWebhook', 'CurrentKey', 'CurrentKeyEngagement', 'CurrentKeyProduction', 'Delivery', 'DeliveryGatingApproval', 'DeliveryPackage', 'Department', 'DepartmentDetail', 'DepartmentMember', 'Engagement', 'EngagementOrganisation', 'EngagementView', 'EngagementViewSubmission', 'EngagementViewSubmissionMedia', 'ErrorBody', 'Grant', 'GrantTarget', 'Health', 'Ingredient', 'Job', 'Key', 'LandedVersion', 'LockedVersion', 'LookBrief', 'LookBriefColour', 'LookBriefExposure', 'LookBriefImage', 'LookBriefPalette', 'McpResponse', 'McpResponseError', 'Media', 'MediaFile', 'MediaProxyResult', 'MediaTicket', 'Note', 'Organisation', 'PackageUpload', 'Person', 'Production', 'ProductionStats', 'PurchaseOrder', 'PurchaseOrders', 'ReleasedVersion', 'Review', 'Scene', 'SceneBundle', 'SceneBundleApproval', 'SceneBundleAsset', 'SceneBundleDepartmentNote', 'SceneBundleEntry', 'SceneBundleScene', 'SceneBundleShootDay', 'ScriptChange', 'SessionSummary', 'ShootDay', 'ShootDayScene', 'StorageEventsResult', 'StorageEventsResultRefused', 'StorageTask', 'StorageTaskAck', 'Submission', 'SubmissionRow', 'Turnover', 'TurnoverSubmission', 'VersionNote', 'VersionSummary', 'VisionSessionToken', 'Webhook', 'WebhookDelivery', 'WebhookDeliveryChange']


class Health(TypedDict):
    status: Literal['ok']


class _McpResponseErrorRequired(TypedDict):
    code: int
    message: str


class McpResponseError(_McpResponseErrorRequired, total=False):
    data: Any


class _McpResponseRequired(TypedDict):
    jsonrpc: Literal['2.0']
    id: Optional[Union[str, int]]


class McpResponse(_McpResponseRequired, total=False):
    result: Dict[str, Any]
    error: McpResponseError


class ProductionStats(TypedDict):
    departments: int
    open_approvals: int
    deliveries_in_flight: int
    scenes: int
    nodes: int


class _ProductionRequired(TypedDict):
    id: int
    title: str
    logline: str
    status: str
    phase: str
    accent: Literal['slate', 'red', 'orange', 'amber', 'green', 'teal', 'cyan', 'blue', 'indigo', 'violet', 'rose']
    format: Literal['single', 'episodic']
    stats: ProductionStats


class Production(_ProductionRequired, total=False):
    season_number: int


class Department(TypedDict):
    id: int
    slug: str
    name: str
    cluster: str
    phases: List[str]
    mission: str
    key_roles: List[str]
    privacy: Literal['open', 'restricted']
    unveiled: bool
    updated_at: str


class DepartmentMember(TypedDict):
    id: int
    name: str
    role: str
    is_hod: bool


class DepartmentDetail(TypedDict):
    id: int
    slug: str
    name: str
    cluster: str
    registry: Dict[str, Any]
    people: List[DepartmentMember]
    assets: int


class _SceneRequired(TypedDict):
    node_id: int
    number: str
    slugline: str
    synopsis: str
    status: Literal['planned', 'active', 'blocked', 'done', 'omitted']
    revision_color: str
    elements: Dict[str, Any]
    updated_at: str


class Scene(_SceneRequired, total=False):
    episode_id: int
    episode_code: str
    retired_at: str


class _AssetRowRequired(TypedDict):
    node_id: int
    label: str
    kind: str
    status: Literal['planned', 'active', 'blocked', 'done']
    department: Optional[str]
    versions: int
    updated_at: str


class AssetRow(_AssetRowRequired, total=False):
    retired_at: str


class CreatedAsset(TypedDict):
    node_id: int
    label: str
    kind: str
    status: Literal['planned', 'active', 'blocked', 'done']
    department: Optional[str]
    versions: int
    created_at: str
    updated_at: str


class VersionNote(TypedDict):
    id: int
    text: str
    author: Optional[str]
    created_at: str


class Ingredient(TypedDict):
    id: int
    kind: str
    label: str
    relation: Optional[str]
    media_path: Optional[str]
    media_id: Optional[int]


class _ReleasedVersionRequired(TypedDict):
    id: int
    version: int
    variant: str
    status: str
    released: Literal[True]
    locked: Literal[False]
    notes: List[VersionNote]
    ingredients: List[Ingredient]


class ReleasedVersion(_ReleasedVersionRequired, total=False):
    note: Optional[str]
    media_path: Optional[str]
    media_id: Optional[int]
    created_by: Optional[str]
    created_by_person_id: Optional[int]
    archived: bool
    created_at: Optional[str]
    updated_at: str


class LockedVersion(TypedDict):
    id: int
    version: int
    variant: str
    status: str
    released: Literal[False]
    locked: Literal[True]
    notes: List[VersionNote]


class _AssetSceneRequired(TypedDict):
    node_id: int
    number: str
    slugline: str
    status: str


class AssetScene(_AssetSceneRequired, total=False):
    episode_id: int
    episode_code: str


class _AssetRequired(TypedDict):
    node_id: int
    label: str
    kind: str
    status: Literal['planned', 'active', 'blocked', 'done']
    department: Optional[str]
    versions: List[Union[ReleasedVersion, LockedVersion]]
    created_at: str
    updated_at: str
    scenes: List[AssetScene]


class Asset(_AssetRequired, total=False):
    costumes: List[AssetRow]
    worn_by: List[AssetRow]


class _ShootDaySceneRequired(TypedDict):
    node_id: int
    number: str
    slugline: str


class ShootDayScene(_ShootDaySceneRequired, total=False):
    episode_id: int
    episode_code: str
    marked: bool


class _ShootDayRequired(TypedDict):
    id: int
    day_number: int
    date: str
    general_call: Optional[str]
    status: str
    scenes: List[ShootDayScene]
    updated_at: str


class ShootDay(_ShootDayRequired, total=False):
    marked: bool


class DeliveryGatingApproval(TypedDict):
    id: int
    title: str
    status: Literal['pending', 'approved', 'changes_requested', 'rejected']


class MediaFile(TypedDict):
    id: int
    label: str
    kind: str
    content_type: str
    size: int
    sha256: str


class Review(TypedDict):
    decision: Literal['accepted', 'changes_requested']
    note: str
    reviewed_by: Optional[str]
    reviewed_at: str


class _SubmissionRowRequired(TypedDict):
    id: int
    delivery_id: int
    engagement_id: Optional[int]
    status: Literal['submitted', 'accepted', 'changes_requested']
    title: str
    note: str
    media: List[MediaFile]
    created_at: str
    review: Optional[Review]


class SubmissionRow(_SubmissionRowRequired, total=False):
    retired_at: str


class _DeliveryRequired(TypedDict):
    id: int
    title: str
    kind: Literal['external', 'internal']
    status: Literal['draft', 'blocked', 'ready', 'sent', 'accepted']
    due: Optional[str]
    from_department: Optional[str]
    to_department: Optional[str]
    external_to: Optional[str]
    spec: List[Dict[str, Any]]
    sent_at: Optional[str]
    gating_approval: Optional[DeliveryGatingApproval]
    package: List[MediaFile]
    submissions: List[SubmissionRow]
    submissions_total: int
    updated_at: str


class Delivery(_DeliveryRequired, total=False):
    retired_at: str


class ApprovalSubject(TypedDict):
    node_id: int
    label: str
    kind: str
    version_id: Optional[int]
    version: Optional[int]


class ApprovalStep(TypedDict):
    position: int
    person_id: Optional[int]
    person_name: Optional[str]
    role: Optional[str]
    current: bool
    decision: Optional[str]
    decided_by: Optional[str]
    note: Optional[str]
    decided_at: Optional[str]


class Approval(TypedDict):
    id: int
    title: str
    mode: Literal['decision', 'chain']
    status: Literal['pending', 'approved', 'changes_requested', 'rejected']
    due: Optional[str]
    department: Optional[str]
    subject: Optional[ApprovalSubject]
    current_step: Optional[int]
    steps: List[ApprovalStep]
    created_at: str
    updated_at: str


class _ScriptChangeRequired(TypedDict):
    id: int
    change: str
    summary: str
    status: Literal['pending', 'approved', 'dismissed']
    detected_at: str
    updated_at: str
    scene: Optional[AssetScene]


class ScriptChange(_ScriptChangeRequired, total=False):
    episode_id: int
    episode_code: str


class ActivityEntryNode(TypedDict):
    node_id: int
    label: str
    kind: str


class ActivityEntry(TypedDict):
    id: int
    at: str
    actor: str
    verb: str
    summary: str
    node: Optional[ActivityEntryNode]


class Change(TypedDict):
    cursor: str
    at: str
    kind: Literal['production', 'episode', 'organisation', 'department', 'person', 'scene', 'asset', 'version', 'ingredient', 'note', 'department_note', 'media', 'approval', 'delivery', 'shoot_day', 'submission', 'purchase_order', 'cost_report', 'script_change', 'job', 'engagement', 'grant', 'storage_event', 'storage_task']
    id: int
    op: Literal['created', 'updated', 'retired']
    actor: Optional[str]


class ChangesPage(TypedDict):
    changes: List[Change]
    next_cursor: str
    more: bool


class Job(TypedDict):
    id: int
    kind: Literal['image', 'video']
    model: str
    prompt: str
    status: str
    media_path: Optional[str]
    media_id: Optional[int]
    created_at: str
    finished_at: Optional[str]
    updated_at: str


class Person(TypedDict):
    id: int
    name: str
    role: str
    department: Optional[str]
    is_hod: bool
    is_admin: bool
    updated_at: str


class MediaTicket(TypedDict):
    ticket: str
    expires_at: str
    production_id: int


class Note(TypedDict):
    id: int
    node_id: int
    landed_on: Literal['version', 'activity']
    version_id: Optional[int]
    version: Optional[int]
    text: str
    author: str
    created_at: str


class LandedVersion(TypedDict):
    id: int
    node_id: int
    version: int
    variant: str
    status: str
    released: bool
    locked: bool
    note: Optional[str]
    media_id: int
    media_path: Optional[str]
    content_type: str
    size: int
    sha256: str
    created_by: str
    created_by_person_id: Optional[int]
    created_at: str


class StorageEventsResultRefused(TypedDict):
    index: int
    dedupe_key: Optional[str]
    reason: str


class StorageEventsResult(TypedDict):
    accepted: int
    duplicates: int
    refused: List[StorageEventsResultRefused]


class MediaProxyResult(TypedDict):
    ok: bool
    media_path: str
    bytes: int


class StorageTask(TypedDict):
    id: int
    op: Literal['move']
    from_path: str
    to_path: str
    approved_by: str
    approved_at: str
    status: Literal['pending', 'done', 'failed']
    note: Optional[str]
    settled_at: Optional[str]


class StorageTaskAck(TypedDict):
    ok: bool
    already_settled: bool
    task: StorageTask


class _SceneBundleEntryRequired(TypedDict):
    kind: Literal['scene']
    node_id: int
    number: str
    slugline: str
    status: str
    expires_at: Optional[str]


class SceneBundleEntry(_SceneBundleEntryRequired, total=False):
    episode_id: int
    episode_code: str


class CharacterBundleEntry(TypedDict):
    kind: Literal['character']
    node_id: int
    label: str
    status: str
    expires_at: Optional[str]


BundleEntry = Union[SceneBundleEntry, CharacterBundleEntry]


class _SceneBundleSceneRequired(TypedDict):
    node_id: int
    number: str
    slugline: str
    synopsis: str
    status: str
    revision_color: str
    elements: Dict[str, Any]


class SceneBundleScene(_SceneBundleSceneRequired, total=False):
    episode_id: int
    episode_code: str


class _VersionSummaryRequired(TypedDict):
    id: int
    version: int
    variant: str
    status: str
    released: Literal[True]


class VersionSummary(_VersionSummaryRequired, total=False):
    note: Optional[str]
    media_path: Optional[str]
    media_id: Optional[int]
    created_by: Optional[str]
    created_by_person_id: Optional[int]
    archived: bool
    created_at: Optional[str]
    updated_at: str


class SceneBundleAsset(TypedDict):
    node_id: int
    label: str
    kind: str
    status: str
    released_versions: List[VersionSummary]


class SceneBundleShootDay(TypedDict):
    id: int
    day_number: int
    date: str
    status: str
    general_call: Optional[str]


class SceneBundleApproval(TypedDict):
    id: int
    title: str
    status: str
    mode: str
    due: Optional[str]


class SceneBundleDepartmentNote(TypedDict):
    id: int
    summary: str
    created_at: Optional[str]


class SceneBundle(TypedDict):
    version: int
    scene: SceneBundleScene
    assets: List[SceneBundleAsset]
    shoot_days: List[SceneBundleShootDay]
    approvals: List[SceneBundleApproval]
    department_notes: List[SceneBundleDepartmentNote]
    etag: str


class CharacterBundleCharacter(TypedDict):
    node_id: int
    label: str
    status: str


class _CharacterBundleCostumeIngredientRequired(TypedDict):
    id: int
    kind: str
    label: str


class CharacterBundleCostumeIngredient(_CharacterBundleCostumeIngredientRequired, total=False):
    relation: Optional[str]
    media_path: Optional[str]
    media_id: Optional[int]


class CharacterBundleCostume(TypedDict):
    node_id: int
    label: str
    status: str
    released_versions: List[VersionSummary]
    ingredients: List[CharacterBundleCostumeIngredient]


class CharacterBundle(TypedDict):
    version: int
    character: CharacterBundleCharacter
    costumes: List[CharacterBundleCostume]
    etag: str


class TurnoverSubmission(TypedDict):
    id: int
    status: Literal['submitted', 'accepted', 'changes_requested']
    title: str
    created_at: str
    media: List[MediaFile]
    review: Optional[Review]


class _TurnoverRequired(TypedDict):
    id: int
    title: str
    status: Literal['draft', 'blocked', 'ready', 'sent', 'accepted']
    spec: List[Dict[str, Any]]
    can_submit: bool
    package: List[MediaFile]
    submissions: List[TurnoverSubmission]
    updated_at: str


class Turnover(_TurnoverRequired, total=False):
    due: Optional[str]
    external_to: Optional[str]
    sent_at: Optional[str]
    retired_at: str


class Submission(TypedDict):
    id: int
    delivery_id: int
    status: Literal['submitted']
    title: str
    note: str
    media: List[MediaFile]
    created_at: Optional[str]


class _MediaRequired(TypedDict):
    id: int
    kind: str
    label: str


class Media(_MediaRequired, total=False):
    node_id: Optional[int]
    delivery_id: Optional[int]
    work_item_id: Optional[int]
    created_by: Optional[str]
    created_at: Optional[str]
    updated_at: str
    content_type: str
    size: int
    sha256: str


class _PurchaseOrderRequired(TypedDict):
    id: int
    department_id: Optional[int]
    account: str
    vendor: str
    description: str
    amount: float
    status: Literal['open', 'partial', 'closed']
    date: str


class PurchaseOrder(_PurchaseOrderRequired, total=False):
    updated_at: str


class _CostReportLineRequired(TypedDict):
    account: str


class CostReportLine(_CostReportLineRequired, total=False):
    description: Optional[str]
    budget: Optional[float]
    actual: Optional[float]
    committed: Optional[float]


class PurchaseOrders(TypedDict):
    purchase_orders: List[PurchaseOrder]
    line: List[CostReportLine]
    week_of: Optional[str]


class VisionSessionToken(TypedDict):
    token: str
    expires_at: str
    model: str
    provider: str


class LookBriefImage(TypedDict):
    width: int
    height: int
    aspect_ratio: float


class LookBriefPalette(TypedDict):
    hex: str
    share: float
    name: str


class LookBriefExposure(TypedDict):
    mean_luma: float
    key: Literal['low', 'mid', 'high']
    contrast: float
    clipped_highlights: float
    crushed_shadows: float


class LookBriefColour(TypedDict):
    saturation: float
    warmth: Literal['warm', 'neutral', 'cool']
    dominant_hue: Optional[Literal['red', 'orange', 'yellow', 'green', 'cyan', 'blue', 'purple', 'magenta']]


class LookBrief(TypedDict):
    version_id: int
    node_id: int
    label: str
    version: int
    image: LookBriefImage
    palette: List[LookBriefPalette]
    exposure: LookBriefExposure
    colour: LookBriefColour
    summary: str
    method: str
    generated_at: str


class EngagementOrganisation(TypedDict):
    id: int
    ref: Optional[str]
    name: str


class Engagement(TypedDict):
    id: int
    ref: Optional[str]
    organisation: EngagementOrganisation
    departments: List[str]
    source: Literal['document', 'admin']
    live_grants: int
    keys: int
    created_at: str
    archived_at: Optional[str]


class Grant(TypedDict):
    id: int
    engagement_id: int
    engagement_ref: Optional[str]
    kind: Literal['scene', 'character', 'delivery', 'own_po']
    node_id: Optional[int]
    node_label: Optional[str]
    episode_code: Optional[str]
    delivery_id: Optional[int]
    delivery_title: Optional[str]
    access: Optional[Literal['read', 'submit']]
    expires_at: Optional[str]
    revoked_at: Optional[str]
    live: bool
    source: Literal['document', 'admin']
    created_at: str


class Key(TypedDict):
    id: int
    prefix: str
    label: str
    scopes: List[Literal['read', 'write', 'submit:turnover', 'read:money', 'admin', 'metrics']]
    engagement_id: Optional[int]
    engagement_ref: Optional[str]
    person_id: Optional[int]
    person_name: Optional[str]
    created_at: str
    last_used_at: Optional[str]
    revoked_at: Optional[str]
    expires_at: Optional[str]


class CreatedKey(TypedDict):
    id: int
    prefix: str
    label: str
    scopes: List[Literal['read', 'write', 'submit:turnover', 'read:money', 'admin', 'metrics']]
    engagement_id: Optional[int]
    engagement_ref: Optional[str]
    person_id: Optional[int]
    person_name: Optional[str]
    created_at: str
    last_used_at: Optional[str]
    revoked_at: Optional[str]
    expires_at: Optional[str]
    token: Optional[str]


class Webhook(TypedDict):
    id: int
    url: str
    kinds: Optional[List[Literal['production', 'episode', 'organisation', 'department', 'person', 'scene', 'asset', 'version', 'ingredient', 'note', 'department_note', 'media', 'approval', 'delivery', 'shoot_day', 'submission', 'purchase_order', 'cost_report', 'script_change', 'job', 'engagement', 'grant', 'storage_event', 'storage_task']]]
    active: bool
    cursor: str
    failures: int
    next_attempt_at: Optional[str]
    last_error: Optional[str]
    last_delivered_at: Optional[str]
    created_at: str
    created_by: str
    engagement_id: Optional[int]


class CreatedWebhook(TypedDict):
    id: int
    url: str
    kinds: Optional[List[Literal['production', 'episode', 'organisation', 'department', 'person', 'scene', 'asset', 'version', 'ingredient', 'note', 'department_note', 'media', 'approval', 'delivery', 'shoot_day', 'submission', 'purchase_order', 'cost_report', 'script_change', 'job', 'engagement', 'grant', 'storage_event', 'storage_task']]]
    active: bool
    cursor: str
    failures: int
    next_attempt_at: Optional[str]
    last_error: Optional[str]
    last_delivered_at: Optional[str]
    created_at: str
    created_by: str
    engagement_id: Optional[int]
    secret: Optional[str]


class WebhookDeliveryChange(TypedDict):
    cursor: str
    kind: Optional[str]
    id: Optional[int]
    op: Optional[str]


class WebhookDelivery(TypedDict):
    id: int
    at: str
    change: WebhookDeliveryChange
    attempt: int
    delivered: bool
    status_code: Optional[int]
    error: Optional[str]
    duration_ms: int


class Organisation(TypedDict):
    id: int
    ref: Optional[str]
    name: str
    engagements: int


class AuditEvent(TypedDict):
    id: int
    at: str
    actor: str
    person_id: Optional[int]
    key_id: Optional[int]
    key_prefix: Optional[str]
    key_label: Optional[str]
    engagement_id: Optional[int]
    action: str
    object_type: Optional[str]
    object_id: Optional[int]
    summary: str
    ip: Optional[str]
    outcome: Literal['ok', 'refused']


class AllowedPerson(TypedDict):
    id: int
    email: str
    role: Literal['admin', 'coordinator', 'viewer']
    person: Optional[EngagementOrganisation]
    created_at: str
    created_by: str


class SessionSummary(TypedDict):
    id: int
    email: str
    name: str
    role: Literal['admin', 'coordinator', 'viewer']
    address: Optional[str]
    created_at: str
    last_seen_at: str
    expires_at: str
    ends_at: str


class PackageUpload(TypedDict):
    delivery_id: int
    files: List[MediaFile]


DeliveryPackage = PackageUpload


class GrantTarget(TypedDict):
    kind: Literal['scene', 'character', 'delivery']
    id: int
    label: str
    number: Optional[str]
    episode_code: Optional[str]
    status: str


class EngagementViewSubmissionMedia(TypedDict):
    id: int
    label: str
    kind: str
    content_type: str


class EngagementViewSubmission(TypedDict):
    id: int
    delivery_id: int
    title: str
    created_at: str
    status: Literal['submitted', 'accepted', 'changes_requested']
    review: Optional[Review]
    media: List[EngagementViewSubmissionMedia]


class EngagementView(TypedDict):
    engagement: Engagement
    reaches: bool
    judged_at: str
    bundles: List[Union[SceneBundleEntry, CharacterBundleEntry]]
    turnovers: List[Turnover]
    purchase_orders: PurchaseOrders
    submissions: List[EngagementViewSubmission]


class CurrentKeyProduction(TypedDict):
    code: str
    title: str


class CurrentKeyEngagement(TypedDict):
    id: int
    ref: Optional[str]
    organisation: str


class CurrentKey(TypedDict):
    id: int
    prefix: str
    label: str
    scopes: List[Literal['read', 'write', 'submit:turnover', 'read:money', 'admin', 'metrics']]
    production: CurrentKeyProduction
    engagement: Optional[CurrentKeyEngagement]
    person_name: Optional[str]


class _ErrorBodyRequired(TypedDict):
    detail: str
    code: Literal['malformed_request', 'unauthorized', 'key_expired', 'engagement_door', 'scope_missing', 'forbidden', 'csrf_refused', 'not_found', 'route_not_found', 'conflict', 'invalid_transition', 'too_large', 'unsupported_media_type', 'method_not_allowed', 'range_not_satisfiable', 'invalid_field', 'idempotency_key_reused', 'internal', 'rate_limited', 'upstream_failed', 'unavailable', 'insufficient_storage']


class ErrorBody(_ErrorBodyRequired, total=False):
    field: str
