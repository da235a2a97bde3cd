import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { get } from './support/http.js';
import { connectClient, readTwins } from './support/mcp.js';
import { ALL_SCOPES, importRoundTrip, png, type Refs } from './support/round-trip.js';
import { addPackageFile, setDeliveryStatus } from './support/turnover-admin.js';

const TOOLS = [
  'get_production',
  'list_departments',
  'get_department',
  'list_scenes',
  'list_assets',
  'get_asset',
  'get_schedule',
  'list_deliveries',
  'list_approvals',
  'get_activity',
  'get_scene_bundle',
  'get_character_bundle',
  'list_turnovers',
  'submit_turnover',
  'get_purchase_orders',
];

const RESOURCES: Record<string, string> = {
  'prodgraph://production': '/production',
  'prodgraph://departments': '/departments',
  'prodgraph://scenes': '/scenes',
  'prodgraph://schedule': '/schedule',
  'prodgraph://approvals': '/approvals',
  'prodgraph://turnovers': '/turnovers',
};

/** What the SDK client makes of an HTTP refusal: its status, or null when the call went through. */
async function httpRefusal(work: Promise<unknown>): Promise<number | null> {
  try {
    await work;
    return null;
  } catch (err) {
    return (err as { code?: number }).code ?? -1;
  }
}

for (const dialect of DIALECTS) {
  describe(`MCP through the SDK client [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let base: string;
    const clients: Client[] = [];
    const keys: Record<'wide' | 'vendor' | 'reader', { token: string; client: Client }> = {} as never;

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      await env.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
      const mint = {
        wide: { scopes: ALL_SCOPES },
        vendor: { scopes: ALL_SCOPES, engagement: 'eng-pix' },
        reader: { scopes: ['read' as const], engagement: 'eng-read' },
      };
      for (const [name, input] of Object.entries(mint)) {
        const token = await env.mint({ production: 'film', ...input });
        const client = await connectClient(base, token);
        clients.push(client);
        keys[name as keyof typeof keys] = { token, client };
      }
    });
    after(async () => {
      for (const c of clients) await c.close();
      await env.close();
    });

    it('initialize: server info, tools/resources/prompts capabilities, instructions', () => {
      const { client } = keys.wide;
      assert.deepEqual(client.getServerVersion(), { name: 'prodgraph', version: '0.1.0' });
      const caps = client.getServerCapabilities()!;
      assert.ok(caps.tools && caps.resources && caps.prompts);
      const instructions = client.getInstructions() ?? '';
      for (const words of ['node_id', 'media_path', 'get_scene_bundle', 'ticket']) {
        assert.ok(instructions.includes(words), words);
      }
    });

    it('lists exactly 15 tools, 6 resources and 4 prompts, each tool with schemas and annotations', async () => {
      // listing makes this client check every later structuredContent against the outputSchema
      const { client } = keys.wide;
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        TOOLS,
      );
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object', t.name);
        assert.equal(t.outputSchema?.type, 'object', t.name);
        assert.ok((t.description ?? '').length > 40, t.name);
        const submit = t.name === 'submit_turnover';
        assert.equal(t.annotations?.readOnlyHint, !submit, t.name);
        if (submit)
          assert.deepEqual([t.annotations?.destructiveHint, t.annotations?.idempotentHint], [false, false]);
      }
      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri).sort(), Object.keys(RESOURCES).sort());
      assert.ok(resources.every((r) => r.mimeType === 'application/json'));
      const { prompts } = await client.listPrompts();
      assert.deepEqual(
        prompts.map((p) => p.name),
        ['scene_briefing', 'turnover_checklist', 'call_sheet', 'approvals_digest'],
      );
      // the README's catalogue is the served one
      const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
      const documented = [...readme.matchAll(/^\| `([a-z_]+)` \| `(?:GET|POST) /gm)].map((m) => m[1]);
      assert.deepEqual(documented, TOOLS);
      for (const name of [...Object.keys(RESOURCES), ...prompts.map((p) => p.name)]) {
        assert.ok(readme.includes(`\`${name}\``), name);
      }
    });

    it("every read tool answers exactly its REST twin's body, refusal or 404, for every kind of key", async () => {
      const seen = new Set<number>();
      for (const [who, { token, client }] of Object.entries(keys)) {
        for (const twin of readTwins(refs)) {
          const label = `${who} ${twin.tool} ${twin.url}`;
          const rest = await get(env.app, `/api/v1${twin.url}`, token);
          seen.add(rest.status);
          const mcp = client.callTool({ name: twin.tool, arguments: twin.args });
          if (rest.status === 403) {
            assert.equal(await httpRefusal(mcp), 403, label);
            continue;
          }
          const result = await mcp;
          if (rest.status === 404) {
            assert.equal(result.isError, true, label);
            assert.deepEqual(result.content, [{ type: 'text', text: rest.body.detail }], label);
            continue;
          }
          assert.equal(rest.status, 200, label);
          assert.equal(result.isError, undefined, label);
          const structured = result.structuredContent as Record<string, unknown>;
          assert.deepEqual(twin.listKey ? structured[twin.listKey] : structured, rest.body, label);
          assert.deepEqual(result.content, [{ type: 'text', text: JSON.stringify(structured) }], label);
        }
      }
      assert.deepEqual([...seen].sort(), [200, 403, 404]);
    });

    it('the clamp narrows both surfaces alike: a vendor sees only its granted slice', async () => {
      const vendor = await keys.vendor.client.callTool({
        name: 'get_scene_bundle',
        arguments: { node_id: refs.sc1 },
      });
      const wide = await keys.wide.client.callTool({
        name: 'get_scene_bundle',
        arguments: { node_id: refs.sc1 },
      });
      const titles = (r: typeof vendor) =>
        (r.structuredContent as { approvals: { title: string }[] }).approvals.map((a) => a.title);
      assert.deepEqual(titles(vendor), ['Ward plates']);
      assert.deepEqual(titles(wide), ['Ward plates', 'Mara look']);
      const turnovers = await keys.vendor.client.callTool({ name: 'list_turnovers' });
      assert.deepEqual(
        (turnovers.structuredContent as { turnovers: { id: number }[] }).turnovers.map((t) => t.id),
        [refs['dl-plates']],
      );
    });

    it('submit_turnover lands base64 files as media only the submitting engagement sees', async () => {
      const bytes = await png('#0a0', 16);
      const result = await keys.vendor.client.callTool({
        name: 'submit_turnover',
        arguments: {
          id: refs['dl-plates'],
          title: 'Plates v1',
          note: 'first pass',
          files: [{ filename: 'plate.png', content_base64: bytes.toString('base64') }],
        },
      });
      assert.equal(result.isError, undefined);
      const sub = result.structuredContent as {
        id: number;
        delivery_id: number;
        status: string;
        title: string;
        media: { id: number; label: string; kind: string }[];
      };
      assert.deepEqual(
        {
          delivery: sub.delivery_id,
          status: sub.status,
          title: sub.title,
          media: sub.media.map((m) => m.label),
        },
        { delivery: refs['dl-plates'], status: 'submitted', title: 'Plates v1', media: ['plate.png'] },
      );
      const media = await get(env.app, `/api/v1/media/${sub.media[0]!.id}`, keys.vendor.token);
      assert.equal(media.status, 200);
      assert.equal(media.body.work_item_id, sub.id);
      const content = await env.app.inject({
        method: 'GET',
        url: `/api/v1/media/${sub.media[0]!.id}/content`,
        headers: { authorization: `Bearer ${keys.vendor.token}` },
      });
      assert.deepEqual(content.rawPayload, bytes);
      // a read-only grant refuses exactly as REST does: HTTP 403
      const refused = keys.reader.client.callTool({
        name: 'submit_turnover',
        arguments: {
          id: refs['dl-plates'],
          files: [{ filename: 'x.png', content_base64: bytes.toString('base64') }],
        },
      });
      assert.equal(await httpRefusal(refused), 403);
    });

    it("list_turnovers carries the sent package and the key's own submissions, as GET /turnovers does", async () => {
      const plates = refs['dl-plates']!;
      const file = await addPackageFile(env, plates, 'plate.exr.png', await png('#0c0', 8));
      await setDeliveryStatus(env, plates, 'sent');
      for (const key of [keys.vendor, keys.reader]) {
        const tool = await key.client.callTool({ name: 'list_turnovers' });
        assert.equal(tool.isError, undefined);
        const rest = await get(env.app, '/api/v1/turnovers', key.token);
        const rows = (tool.structuredContent as { turnovers: unknown[] }).turnovers;
        assert.deepEqual(rows, rest.body);
        const row = rows[0] as { package: { id: number }[]; submissions: { id: number }[] };
        assert.deepEqual(
          row.package.map((f) => f.id),
          [file.id],
        );
        // the vendor's submission from the test before; the read-only engagement never sees it
        assert.equal(row.submissions.length, key === keys.vendor ? 1 : 0);
      }
    });

    it("reads every resource as its REST twin's JSON; production-surface ones refuse a vendor with 403", async () => {
      for (const [who, { token, client }] of Object.entries(keys)) {
        for (const [uri, url] of Object.entries(RESOURCES)) {
          const rest = await get(env.app, `/api/v1${url}`, token);
          const read = client.readResource({ uri });
          if (rest.status === 403) {
            assert.equal(await httpRefusal(read), 403, `${who} ${uri}`);
            continue;
          }
          const { contents } = await read;
          assert.equal(contents.length, 1);
          assert.equal(contents[0]!.uri, uri);
          assert.equal(contents[0]!.mimeType, 'application/json');
          assert.deepEqual(JSON.parse((contents[0] as { text: string }).text), rest.body, `${who} ${uri}`);
        }
      }
    });

    it("gets every prompt with live data under the caller's clamp; bad arguments are clear errors", async () => {
      const { client } = keys.wide;
      const text = async (name: string, args: Record<string, string>) => {
        const r = await client.getPrompt({ name, arguments: args });
        assert.equal(r.messages.length, 1);
        return (r.messages[0]!.content as { text: string }).text;
      };
      const briefing = await text('scene_briefing', { scene_id: String(refs.sc1) });
      assert.match(briefing, /INT\. WARD - NIGHT/);
      assert.match(briefing, /Ready, with a released version \(1\):\n- Ward/);
      assert.match(briefing, /Pending, nothing released yet \(1\):\n- Mara/);
      assert.match(briefing, /Mara look/);
      const checklist = await text('turnover_checklist', { delivery_id: String(refs['dl-plates']) });
      assert.match(
        checklist,
        /Gated by approval "[^"]+" \(\w+\)\.\nSpec entries \(1\), each to be met before submitting:\n- \[ \] format: EXR\n/,
      );
      const sheet = await text('call_sheet', { day_number: '2' });
      assert.match(sheet, /shoot day 2 on 2026-04-02/);
      assert.match(sheet, /EXT\. ROOF - DAWN[\s\S]*INT\. WARD - NIGHT/);
      const digest = await text('approvals_digest', {});
      assert.match(digest, /Digest of the 3 pending approval/);
      assert.match(digest, /Mara look on Mara \(chain\), due undated, waiting on/);

      // the vendor's briefing is its clamped bundle; an ungranted scene is a clear error
      const vendorBriefing = await keys.vendor.client.getPrompt({
        name: 'scene_briefing',
        arguments: { scene_id: String(refs.sc1) },
      });
      assert.doesNotMatch((vendorBriefing.messages[0]!.content as { text: string }).text, /Mara look/);
      await assert.rejects(
        keys.vendor.client.getPrompt({ name: 'scene_briefing', arguments: { scene_id: String(refs.sc3) } }),
        (err: { code: number; message: string }) =>
          err.code === -32602 &&
          /scene_id: scene \d+ is unknown or out of this key's reach/.test(err.message),
      );
      const vendorChecklist = await keys.vendor.client.getPrompt({
        name: 'turnover_checklist',
        arguments: { delivery_id: String(refs['dl-plates']) },
      });
      assert.match((vendorChecklist.messages[0]!.content as { text: string }).text, /may submit/);
      assert.equal(
        await httpRefusal(
          keys.vendor.client.getPrompt({ name: 'call_sheet', arguments: { day_number: '1' } }),
        ),
        403,
      );
      for (const [name, args, message] of [
        ['scene_briefing', { scene_id: 'twelve' }, /scene_id: must be a positive integer id/],
        ['scene_briefing', {}, /scene_id: is required/],
        ['call_sheet', { day_number: '9' }, /day_number: no shoot day 9 \(days run 1–3\)/],
        ['approvals_digest', { status: 'late' }, /status: must be one of/],
        ['approvals_digest', { colour: 'red' }, /colour: unknown argument/],
        ['turnover_checklist', { delivery_id: '999999' }, /delivery_id: delivery 999999 is unknown/],
      ] as const) {
        await assert.rejects(
          client.getPrompt({ name, arguments: args }),
          (err: { code: number; message: string }) => {
            assert.equal(err.code, -32602, name);
            assert.match(err.message, message);
            return true;
          },
        );
      }
    });
  });
}
