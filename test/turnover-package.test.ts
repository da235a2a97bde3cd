import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { multipart, type FormEntry } from './support/multipart.js';
import { importRoundTrip, png, submit, type Refs } from './support/round-trip.js';
import { activitySince, changesSince, mark, nothingSince } from './support/write-trail.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const A = '/api/v1';
const LIMIT = 300_000;
const FILES = 3;

/** Bytes of a given size that sniff as nothing in particular (a plain file). */
const bytes = (size: number, fill = 7) => Buffer.alloc(size, fill);

for (const dialect of DIALECTS) {
  describe(`a delivery's package: adding and taking out files [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let admin: string;
    let wide: string;
    let vendor: string;
    before(async () => {
      env = await createEnv(dialect, {
        PRODGRAPH_MAX_UPLOAD_BYTES: String(LIMIT),
        PRODGRAPH_MAX_SUBMISSION_FILES: String(FILES),
      });
      refs = await importRoundTrip(env, 'film');
      admin = await env.mint({ production: 'film', scopes: ['admin'], label: 'Turnover desk' });
      wide = await env.mint({ production: 'film', scopes: ['read', 'write'] });
      vendor = await env.mint({
        production: 'film',
        engagement: 'eng-pix',
        scopes: ['read', 'submit:turnover'],
      });
    });
    after(() => env.close());

    const upload = (
      deliveryId: number | string,
      entries: FormEntry[],
      headers: Record<string, string> = {},
      token = admin,
    ) => {
      const form = multipart(entries);
      return env.app.inject({
        method: 'POST',
        url: `${A}/admin/deliveries/${deliveryId}/files`,
        payload: form.payload,
        headers: { ...form.headers, authorization: `Bearer ${token}`, ...headers },
      });
    };
    const remove = (deliveryId: number, mediaId: number, headers: Record<string, string> = {}) =>
      call(env.app, 'POST', `${A}/admin/deliveries/${deliveryId}/files/${mediaId}/remove`, {
        token: admin,
        headers,
      });
    const packageOf = async (deliveryId: number) =>
      ((await get(env.app, `${A}/deliveries`, wide)).body as any[]).find((d) => d.id === deliveryId).package;

    it('adds files, each labelled by the label part before it or by its file name (201)', async () => {
      const plate = await png('#135');
      const m = await mark(env);
      const r = await upload(refs['dl-plates']!, [
        { name: 'label', value: 'A001C003_plate.png' },
        { name: 'files', filename: 'upload-1.png', content: plate, contentType: 'image/png' },
        {
          name: 'files',
          filename: 'reel1.edl',
          content: Buffer.from('TITLE: REEL 1\n'),
          contentType: 'text/plain',
        },
      ]);
      assert.equal(r.statusCode, 201, r.body);
      const body = JSON.parse(r.body);
      assert.equal(body.delivery_id, refs['dl-plates']);
      const [a, b] = body.files;
      assert.deepEqual(Object.keys(a).sort(), ['content_type', 'id', 'kind', 'label', 'sha256', 'size']);
      assert.deepEqual(
        [a.label, a.kind, a.content_type, a.size],
        ['A001C003_plate.png', 'image', 'image/png', plate.length],
      );
      assert.deepEqual([b.label, b.kind, b.size], ['reel1.edl', 'file', 14]);
      // each a media object of the delivery, with no work item, fetched whole by a production-wide key
      const meta = await get(env.app, `${A}/media/${a.id}`, wide);
      assert.equal(meta.body.delivery_id, refs['dl-plates']);
      assert.equal(meta.body.work_item_id, null);
      assert.equal(meta.body.sha256, a.sha256);
      const content = await env.app.inject({
        url: `${A}/media/${a.id}/content`,
        headers: { authorization: `Bearer ${wide}` },
      });
      assert.deepEqual(content.rawPayload, plate);
      // the delivery row shows its package
      assert.deepEqual(await packageOf(refs['dl-plates']!), body.files);
      assert.deepEqual(
        await changesSince(env, m),
        [`delivery:${refs['dl-plates']}:updated`, `media:${a.id}:created`, `media:${b.id}:created`].sort(),
      );
      assert.deepEqual(await activitySince(env, m), [
        'added files: 2 files to the package of "Plates, reel 1": A001C003_plate.png, reel1.edl',
      ]);
    });

    it('takes a file out (200): the package no longer lists it, the media object stays', async () => {
      const [added] = JSON.parse(
        (
          await upload(refs['dl-plates']!, [
            { name: 'files', filename: 'lut.cube', content: Buffer.from('LUT_3D_SIZE 2\n') },
          ])
        ).body,
      ).files;
      const m = await mark(env);
      const r = await remove(refs['dl-plates']!, added.id);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.delivery_id, refs['dl-plates']);
      assert.ok(!r.body.files.some((f: any) => f.id === added.id));
      assert.deepEqual(await packageOf(refs['dl-plates']!), r.body.files);
      assert.deepEqual(await changesSince(env, m), [
        `delivery:${refs['dl-plates']}:updated`,
        `media:${added.id}:updated`,
      ]);
      assert.deepEqual(await activitySince(env, m), [
        'removed a file: "lut.cube" from the package of "Plates, reel 1"',
      ]);
      const row = await env.handle.db
        .selectFrom('media')
        .where('id', '=', added.id)
        .select('removed_at')
        .executeTakeFirstOrThrow();
      assert.ok(row.removed_at);
      assert.equal((await get(env.app, `${A}/media/${added.id}`, wide)).status, 200, 'kept for history');
      // taking it out again answers the package unchanged and records nothing
      const m2 = await mark(env);
      const again = await remove(refs['dl-plates']!, added.id);
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, r.body);
      assert.ok(await nothingSince(env, m2));
      // its label is free again
      const back = await upload(refs['dl-plates']!, [
        { name: 'files', filename: 'lut.cube', content: Buffer.from('LUT_3D_SIZE 3\n') },
      ]);
      assert.equal(back.statusCode, 201, back.body);
    });

    it('answers 404 for an unknown delivery before reading the body, and for a file not in the package', async () => {
      await env.import(smallProduction('other'));
      const otherAdmin = await env.mint({ production: 'other', scopes: ['admin'] });
      const m = await mark(env);
      const entries: FormEntry[] = [{ name: 'files', filename: 'a.bin', content: bytes(10) }];
      // an unknown id, and a delivery of another production, answer alike
      for (const [id, token] of [
        [999_999, admin],
        [refs['dl-plates']!, otherAdmin],
      ] as const) {
        const r = await upload(id, entries, {}, token);
        assert.equal(r.statusCode, 404);
        assert.deepEqual(JSON.parse(r.body), { detail: 'delivery not found', code: 'not_found' });
      }
      assert.ok(await nothingSince(env, m));
      // a submitted file, another delivery's file, an unknown id: none is a file of this package
      const sub = await submit(env, vendor, refs['dl-plates']!, [
        { name: 'files', filename: 'comp.png', content: await png('#abc') },
      ]);
      const submitted = JSON.parse(sub.body).media[0].id;
      const [other] = JSON.parse(
        (await upload(refs['dl-other']!, [{ name: 'files', filename: 'cape.bin', content: bytes(5) }])).body,
      ).files;
      const m2 = await mark(env);
      for (const media of [submitted, other.id, 999_999]) {
        const r = await remove(refs['dl-plates']!, media);
        assert.equal(r.status, 404, `media ${media}`);
        assert.deepEqual(r.body, { detail: 'media not found', code: 'not_found' });
      }
      const r = await remove(999_999, other.id);
      assert.deepEqual(r.body, { detail: 'delivery not found', code: 'not_found' });
      assert.ok(await nothingSince(env, m2));
    });

    it('refuses a bad form with 422, a taken label with 409, and writes nothing', async () => {
      await upload(refs['dl-other']!, [
        { name: 'label', value: 'taken.bin' },
        { name: 'files', filename: 'x.bin', content: bytes(3) },
      ]);
      const file = (name = 'f.bin', content = bytes(4)): FormEntry => ({
        name: 'files',
        filename: name,
        content,
      });
      const cases: Array<[FormEntry[], number, string, RegExp]> = [
        [[], 422, 'files', /^files: at least one file is required$/],
        [
          [{ name: 'label', value: 'x.bin' }],
          422,
          'label',
          /^label: "x.bin" is not followed by a file part$/,
        ],
        [
          [{ name: 'label', value: 'a' }, { name: 'label', value: 'b' }, file()],
          422,
          'label',
          /followed by another label/,
        ],
        [[{ name: 'label', value: 'plates/a.exr' }, file()], 422, 'label', /must be a file name, not a path/],
        [[{ name: 'label', value: '   ' }, file()], 422, 'label', /must not be blank/],
        [[{ name: 'title', value: 'x' }, file()], 422, 'title', /unknown field \(expected label, files\)/],
        [[{ name: 'files', value: 'not a file' }], 422, 'files', /must be a file part/],
        [[{ name: 'other', filename: 'o.bin', content: bytes(2) }], 422, 'other', /unknown file field/],
        [[file('empty.bin', Buffer.alloc(0))], 422, 'files', /"empty.bin" is empty/],
        [[file('dup.bin'), file('dup.bin')], 422, 'label', /"dup.bin" is given to two files/],
        [
          [{ name: 'label', value: 'taken.bin' }, file()],
          409,
          '',
          /^label: "taken.bin" is already in the package \(file \d+\); take that one out first/,
        ],
      ];
      for (const [entries, status, field, detail] of cases) {
        const m = await mark(env);
        const r = await upload(refs['dl-other']!, entries);
        assert.equal(r.statusCode, status, `${JSON.stringify(entries.map((e) => e.name))}: ${r.body}`);
        const body = JSON.parse(r.body);
        assert.match(body.detail, detail);
        if (status === 422) assert.equal(body.field, field);
        else assert.equal(body.code, 'conflict');
        assert.ok(await nothingSince(env, m), r.body);
      }
      // JSON instead of a form: 415; no body: 422
      const json = await call(env.app, 'POST', `${A}/admin/deliveries/${refs['dl-other']}/files`, {
        token: admin,
        body: { files: [] },
      });
      assert.equal(json.status, 415);
      const none = await call(env.app, 'POST', `${A}/admin/deliveries/${refs['dl-other']}/files`, {
        token: admin,
      });
      assert.equal(none.status, 422);
    });

    it('refuses (413) a file over the upload limit and more files than allowed, leaving no file behind', async () => {
      const m = await mark(env);
      const big = await upload(refs['dl-other']!, [
        { name: 'files', filename: 'ok.bin', content: bytes(10) },
        { name: 'files', filename: 'huge.bin', content: bytes(LIMIT + 1) },
      ]);
      assert.equal(big.statusCode, 413, big.body);
      assert.match(
        JSON.parse(big.body).detail,
        new RegExp(`^files: "huge.bin" is larger than the limit of ${LIMIT} bytes$`),
      );
      assert.ok(await nothingSince(env, m));
      const many = await upload(
        refs['dl-other']!,
        Array.from({ length: FILES + 1 }, (_, i) => ({
          name: 'files',
          filename: `n${i}.bin`,
          content: bytes(5, i + 1),
        })),
      );
      assert.equal(many.statusCode, 413);
      assert.equal(JSON.parse(many.body).code, 'too_large');
      assert.ok(await nothingSince(env, m));
    });

    it('refuses a declared Content-Length over the limits at once, before reading the body, and closes', async () => {
      const address = await env.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = new URL(address);
      const declared = 50 * 1024 * 1024;
      const m = await mark(env);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
        socket.write(
          `POST ${A}/admin/deliveries/${refs['dl-other']}/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin}\r\n` +
            `Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${declared}\r\n\r\n--b\r\n`,
        );
        // nothing more is sent: the answer comes without the body, and the server ends the connection
      });
      assert.match(answer, /^HTTP\/1\.1 413 /);
      assert.match(answer, /\r\nconnection: close\r\n/i);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.equal(body.code, 'too_large');
      assert.match(
        body.detail,
        new RegExp(
          `^the body declares ${declared} bytes, over the \\d+ that ${FILES} files of at most ${LIMIT} bytes may take$`,
        ),
      );
      assert.ok(await nothingSince(env, m));
    });

    it('replays an Idempotency-Key: the same answer and nothing stored twice; other files are 422', async () => {
      const entries: FormEntry[] = [
        { name: 'label', value: 'once.bin' },
        { name: 'files', filename: 'x.bin', content: bytes(64, 3) },
      ];
      const key = { 'idempotency-key': 'package-once' };
      const first = await upload(refs['dl-other']!, entries, key);
      assert.equal(first.statusCode, 201, first.body);
      const m = await mark(env);
      const again = await upload(refs['dl-other']!, entries, key);
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(JSON.parse(again.body), JSON.parse(first.body));
      assert.ok(await nothingSince(env, m));
      const changed = await upload(
        refs['dl-other']!,
        [entries[0]!, { name: 'files', filename: 'x.bin', content: bytes(64, 4) }],
        key,
      );
      assert.equal(changed.statusCode, 422);
      assert.equal(JSON.parse(changed.body).code, 'idempotency_key_reused');
      assert.ok(await nothingSince(env, m));
      // a removal replays too
      const id = JSON.parse(first.body).files[0].id;
      const once = await remove(refs['dl-other']!, id, { 'idempotency-key': 'remove-once' });
      const twice = await remove(refs['dl-other']!, id, { 'idempotency-key': 'remove-once' });
      assert.deepEqual(twice.body, once.body);
      assert.equal(twice.headers['idempotent-replayed'], 'true');
    });

    it('reaches the vendor granted on the delivery once it is sent, through the admin routes alone', async () => {
      const hal = await env.mint({ production: 'film', engagement: 'eng-hal', scopes: ['read'] });
      const plate = await png('#2a4');
      const added = await upload(refs['dl-plates']!, [
        { name: 'label', value: 'sent-plate.png' },
        { name: 'files', filename: 'p.png', content: plate, contentType: 'image/png' },
      ]);
      assert.equal(added.statusCode, 201, added.body);
      const [file] = JSON.parse(added.body).files;
      const status = (to: string) =>
        call(env.app, 'POST', `${A}/admin/deliveries/${refs['dl-plates']}/status`, {
          token: admin,
          body: { status: to },
        });
      const turnover = async () =>
        ((await get(env.app, `${A}/turnovers`, vendor)).body as any[]).find(
          (t) => t.id === refs['dl-plates'],
        );
      const content = (token: string) =>
        env.app.inject({
          url: `${A}/media/${file.id}/content`,
          headers: { authorization: `Bearer ${token}` },
        });
      // ready: the package is still private
      assert.deepEqual((await turnover()).package, []);
      assert.equal((await content(vendor)).statusCode, 404);
      assert.equal((await status('sent')).status, 200);
      assert.ok((await turnover()).package.some((f: any) => f.id === file.id && f.sha256 === file.sha256));
      assert.deepEqual((await content(vendor)).rawPayload, plate);
      // another vendor, with no grant on the delivery, gets exactly the answer of a missing id
      const theirs = await content(hal);
      const missing = await env.app.inject({
        url: `${A}/media/987654/content`,
        headers: { authorization: `Bearer ${hal}` },
      });
      assert.equal(theirs.statusCode, 404);
      assert.equal(theirs.body, missing.body);
      // recalled: private again
      assert.equal((await status('ready')).status, 200);
      assert.deepEqual((await turnover()).package, []);
      assert.equal((await content(vendor)).statusCode, 404);
    });

    it('needs the admin scope: a write key, a vendor key and no key are refused before the body', async () => {
      const m = await mark(env);
      const entries: FormEntry[] = [{ name: 'files', filename: 'a.bin', content: bytes(3) }];
      assert.equal((await upload(refs['dl-plates']!, entries, {}, wide)).statusCode, 403);
      assert.equal((await upload(refs['dl-plates']!, entries, {}, vendor)).statusCode, 403);
      const form = multipart(entries);
      const anon = await env.app.inject({
        method: 'POST',
        url: `${A}/admin/deliveries/${refs['dl-plates']}/files`,
        payload: form.payload,
        headers: form.headers,
      });
      assert.equal(anon.statusCode, 401);
      const [first] = await packageOf(refs['dl-plates']!);
      const r = await call(
        env.app,
        'POST',
        `${A}/admin/deliveries/${refs['dl-plates']}/files/${first.id}/remove`,
        { token: wide },
      );
      assert.equal(r.status, 403);
      assert.ok(await nothingSince(env, m));
    });
  });
}
