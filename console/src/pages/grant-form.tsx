import { useEffect, useState } from 'preact/hooks';
import { must } from '../api/client';
import type { GrantTarget, NewGrant } from '../api/types';
import { useSession } from '../session';
import { useAction } from '../ui/action';
import { useLoad } from '../ui/load';
import { ErrorNote } from '../ui/notes';
import { Field } from '../ui/controls';

type Kind = NewGrant['kind'];
const KINDS: Array<[Kind, string]> = [
  ['scene', 'A scene (its bundle: assets, released versions, images)'],
  ['character', 'A character (its costumes, versions, ingredients)'],
  ['delivery', 'A delivery (a turnover to read, or to submit work on)'],
  ['own_po', 'Its own purchase orders'],
];

function useSettled<T>(value: T, ms = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

/** What the picker and its legend call each kind of target, one and many. */
const NOUNS: Record<Exclude<Kind, 'own_po'>, [string, string]> = {
  scene: ['scene', 'scenes'],
  character: ['character', 'characters'],
  delivery: ['delivery', 'deliveries'],
};

/** As many targets as the lookup answers at once: every match of a production's usual size. */
const TARGETS_AT_ONCE = 50;

/** A scene as a person reads it: its number, its episode (episodic productions), its slugline. */
export const sceneName = (number: string | null, episode: string | null, slugline: string): string =>
  `Scene ${number ?? '?'}${episode ? ` (episode ${episode})` : ''}: ${slugline}`;

const describeTarget = (t: GrantTarget) =>
  t.kind === 'scene' ? sceneName(t.number, t.episode_code, t.label) : t.label;

/** Finds the scene, character or delivery to grant, by number or name, as the coordinator types. */
function TargetPicker({
  kind,
  picked,
  onPick,
}: {
  kind: Exclude<Kind, 'own_po'>;
  picked: number | null;
  onPick: (id: number | null) => void;
}) {
  const { api } = useSession();
  const [text, setText] = useState('');
  const q = useSettled(text.trim());
  const found = useLoad(
    (signal) =>
      must(
        api.GET('/api/v1/admin/grant-targets', {
          params: { query: { kind, q, limit: TARGETS_AT_ONCE } },
          signal,
        }),
      ),
    [kind, q],
  );
  const [noun, nouns] = NOUNS[kind];
  const rows = found.data;
  // the lookup answers at most TARGETS_AT_ONCE: a full answer may leave some out
  const cut = rows?.length === TARGETS_AT_ONCE;
  return (
    <>
      <Field
        label={`Find the ${noun}`}
        id="target-q"
        hint={kind === 'scene' ? 'Its number, or words of its slugline' : 'Words of its name'}
      >
        <input
          id="target-q"
          type="search"
          aria-describedby="target-q-hint"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </Field>
      <ErrorNote error={found.error} />
      <fieldset class="targets" aria-busy={found.loading} aria-describedby="targets-count">
        <legend>Matching {nouns}</legend>
        <p id="targets-count" class="muted" role="status">
          {!rows
            ? ''
            : cut
              ? `The first ${TARGETS_AT_ONCE} ${nouns} are listed; more may match. Type more of ${kind === 'scene' ? 'its number or slugline' : 'its name'} to narrow the list.`
              : rows.length === 0
                ? ''
                : `${rows.length} ${rows.length === 1 ? noun : nouns}${q ? ` match “${q}”` : ''}, all listed.`}
        </p>
        {rows?.length === 0 && <p class="empty">Nothing matches “{q}”.</p>}
        <div class="target-list">
          {rows?.map((t) => (
            <label key={t.id}>
              <input
                type="radio"
                name="target"
                value={t.id}
                checked={picked === t.id}
                onChange={() => onPick(t.id)}
              />{' '}
              {describeTarget(t)} <span class="muted">({t.status})</span>
            </label>
          ))}
        </div>
      </fieldset>
    </>
  );
}

/** A datetime-local value (the coordinator's clock) as UTC ISO-8601, or null. */
const expiryOf = (local: string): string | null => (local ? new Date(local).toISOString() : null);

export function GrantForm({ engagementId, onGranted }: { engagementId: number; onGranted: () => void }) {
  const { api } = useSession();
  const [kind, setKind] = useState<Kind>('scene');
  const [target, setTarget] = useState<number | null>(null);
  const [access, setAccess] = useState<'read' | 'submit'>('read');
  const [expires, setExpires] = useState('');
  const action = useAction();
  const needsTarget = kind !== 'own_po';
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body: NewGrant = {
        engagement_id: engagementId,
        kind,
        ...(kind === 'scene' || kind === 'character' ? { node_id: target ?? undefined } : {}),
        ...(kind === 'delivery' ? { delivery_id: target ?? undefined, access } : {}),
        ...(expires ? { expires_at: expiryOf(expires) } : {}),
      };
      await must(api.POST('/api/v1/admin/grants', { body }));
      setTarget(null);
      setExpires('');
      onGranted();
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="grant-title">
      <h3 id="grant-title">Grant something</h3>
      <Field label="What to grant" id="grant-kind">
        <select
          id="grant-kind"
          value={kind}
          onChange={(e) => {
            setKind(e.currentTarget.value as Kind);
            setTarget(null);
          }}
        >
          {KINDS.map(([k, text]) => (
            <option key={k} value={k}>
              {text}
            </option>
          ))}
        </select>
      </Field>
      {needsTarget && <TargetPicker key={kind} kind={kind} picked={target} onPick={setTarget} />}
      {kind === 'delivery' && (
        <Field label="Access" id="grant-access">
          <select
            id="grant-access"
            value={access}
            onChange={(e) => setAccess(e.currentTarget.value as 'read' | 'submit')}
          >
            <option value="read">Read the turnover</option>
            <option value="submit">Read it and submit work on it</option>
          </select>
        </Field>
      )}
      <Field
        label="Expires (optional)"
        id="grant-expires"
        hint="Leave empty for a grant that lasts until revoked"
      >
        <input
          id="grant-expires"
          type="datetime-local"
          aria-describedby="grant-expires-hint"
          value={expires}
          onInput={(e) => setExpires(e.currentTarget.value)}
        />
      </Field>
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.busy || (needsTarget && target === null)}>
        {action.busy ? 'Granting…' : 'Grant'}
      </button>
    </form>
  );
}
