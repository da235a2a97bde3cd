/*
 * The reference's tags, in the order /docs shows them: every tag an operation names, each with
 * what it groups. A generator makes one client class or module per tag, and /docs one section.
 */

export const TAGS = [
  { name: 'service', description: 'The service itself: liveness, and the key a request was made with.' },
  {
    name: 'media',
    description:
      'Media files by ticket: a 15-minute ticket for the key, and the off-plane file route outside /api/v1 that takes it in place of a key (for `<img src>` and video players).',
  },
  {
    name: 'mcp',
    description:
      'The Model Context Protocol endpoint for AI agents: JSON-RPC over POST, whose tools, resources and prompts are the REST routes, with their scopes and reach.',
  },
  { name: 'production', description: "The key's production: its name, codes and counts." },
  { name: 'departments', description: 'Departments, with their people and asset counts.' },
  { name: 'scenes', description: 'Scenes, in script order.' },
  {
    name: 'assets',
    description:
      'Assets (every graph node but scenes): read them, create them, note them, land versions on them.',
  },
  { name: 'schedule', description: 'The shooting schedule: shoot days and their scene strips.' },
  {
    name: 'deliveries',
    description: 'Deliveries between departments and to the outside, and what gates them.',
  },
  { name: 'approvals', description: 'Approval chains and their steps: read them, decide the current step.' },
  { name: 'script-changes', description: 'Differences detected between script drafts.' },
  { name: 'activity', description: 'The activity feed: what happened, for people, newest first.' },
  {
    name: 'changes',
    description:
      'The change feed: every change to the production in commit order, for mirrors and sync (long-polls with `wait`).',
  },
  { name: 'jobs', description: 'Image and video generation jobs.' },
  { name: 'people', description: 'The crew directory, without contact details.' },
  {
    name: 'storage',
    description:
      'The storage agent: filespace events in, stand-in images, and the admin-approved file moves it carries out.',
  },
  {
    name: 'round-trip',
    description:
      'What vendors reach with an engagement-bound key, clamped to its grants: bundles, turnovers and their submissions, media by id, purchase orders. Production-wide keys reach them too.',
  },
  {
    name: 'vision',
    description: 'Image generation: provider session tokens and look briefs of released stills.',
  },
  {
    name: 'admin',
    description:
      'Administration (scope `admin`): engagements, grants, API keys, webhooks, the audit trail, and seeing the API as a vendor does.',
  },
  {
    name: 'sign-in',
    description:
      "The console's sign-in with the studio's identity provider (OpenID Connect): the browser's steps, its session, who may sign in and the live sessions.",
  },
] as const;
