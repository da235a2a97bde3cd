/** What `initialize` tells an agent about the service: read once, then it picks tools alone. */
export const INSTRUCTIONS = `
prodgraph serves one film or TV production's graph: its scenes, the assets they use
(characters, costumes, locations, props, sets, …) with their versions, the shooting schedule,
approvals, deliveries and turnovers, and the activity feed. Your key belongs to exactly one
production; everything you see is that production, nothing else.

How ids relate
- Scenes and assets are graph nodes, identified by node_id (an integer). list_scenes gives a
  scene's node_id; list_assets an asset's. A scene uses assets; a character wears costumes.
- Versions belong to an asset and are numbered from 1 per asset; each also has its own id.
  Only released versions carry media and full detail; the others are locked stubs.
- media_path values (/media/…) are files on this server. To fetch one, a production-wide key
  gets a ticket from GET /api/v1/media-ticket (REST) and requests {base_url}{media_path}?t={ticket}.
- Deliveries have ids; a turnover is a delivery seen by a vendor engagement.

Which tool answers what
- Orientation: get_production, then list_departments / get_department, list_scenes.
- One scene, everything about it: get_scene_bundle (node_id of the scene).
- One character's look and wardrobe: get_character_bundle; one asset in full: get_asset;
  many assets by department, kind, status or released: list_assets.
- When and what shoots: get_schedule. Who must sign off what: list_approvals.
  What is being delivered: list_deliveries. What changed lately: get_activity.
- Vendor keys: list_turnovers, submit_turnover, get_purchase_orders, and the two bundles.

Keys and reach
- A production-wide key reads everything its scopes allow. A vendor (engagement-bound) key
  reaches only the bundles, turnovers, submissions and purchase orders, limited to what its
  engagement was granted; other tools answer it HTTP 403. An object out of reach is "not
  found", exactly like a wrong id.
- Tool results carry the REST API's JSON (structuredContent); a list travels under one key,
  e.g. {"scenes": [...]}. A refusal comes back as a tool error naming the problem.
- Prompts: scene_briefing, turnover_checklist, call_sheet, approvals_digest. Resources:
  prodgraph://production, departments, scenes, schedule, approvals, turnovers.
`.trim();
