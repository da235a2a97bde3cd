import type { ComponentChildren } from 'preact';
import { useErrorBoundary } from 'preact/hooks';
import { abilities, useSession } from './session';
import { href, useRoute } from './router';
import { Overview } from './pages/overview';
import { Scenes, SceneDetail } from './pages/scenes';
import { Assets } from './pages/assets';
import { AssetPage } from './pages/asset';
import { DeliveryPage } from './pages/delivery';
import { Approvals, Deliveries } from './pages/workflow';
import { Vendors } from './pages/vendors';
import { EngagementPage } from './pages/engagement';
import { SeeAsVendor, OwnReach } from './pages/reach';
import { Webhooks, WebhookLog } from './pages/webhooks';
import { Audit } from './pages/audit';
import { SignInAdmin } from './pages/sign-in-admin';
import { Page } from './ui/page';

interface Section {
  path: string;
  label: string;
}

function sectionsFor({ me, person }: ReturnType<typeof useSession>): Section[] {
  const can = abilities(me, person);
  if (can.vendor) return [{ path: 'reach', label: 'What we see' }];
  const out: Section[] = [];
  if (can.browse)
    out.push(
      { path: 'overview', label: 'Overview' },
      { path: 'scenes', label: 'Scenes' },
      { path: 'assets', label: 'Assets' },
      { path: 'approvals', label: 'Approvals' },
      { path: 'deliveries', label: 'Deliveries' },
    );
  if (can.manage) out.push({ path: 'vendors', label: 'Vendors' }, { path: 'audit', label: 'Audit' });
  if (can.credentials)
    out.push({ path: 'webhooks', label: 'Webhooks' }, { path: 'sign-in', label: 'Sign-in' });
  return out;
}

function Boundary({ children }: { children: ComponentChildren }) {
  const [error, reset] = useErrorBoundary() as [unknown, () => void];
  if (error) {
    return (
      <div class="note error" role="alert">
        <p>This page stopped: {error instanceof Error ? error.message : String(error)}</p>
        <button type="button" onClick={reset}>
          Try again
        </button>
      </div>
    );
  }
  return <>{children}</>;
}

function routeTo(route: string[], sections: Section[]) {
  const [section = sections[0]?.path, id, sub] = route;
  const allowed = sections.some((s) => s.path === section);
  if (!allowed) return <NoSuchPage known={sections.length > 0} />;
  const num = id === undefined ? null : Number(id);
  if (id !== undefined && !(Number.isInteger(num) && num! > 0)) return <NoSuchPage known />;
  switch (section) {
    case 'overview':
      return <Overview />;
    case 'scenes':
      return num ? <SceneDetail id={num} /> : <Scenes />;
    case 'assets':
      return num ? <AssetPage id={num} /> : <Assets />;
    case 'approvals':
      return <Approvals />;
    case 'deliveries':
      return num ? <DeliveryPage id={num} /> : <Deliveries />;
    case 'vendors':
      if (!num) return <Vendors />;
      return sub === 'view' ? <SeeAsVendor engagementId={num} /> : <EngagementPage id={num} />;
    case 'webhooks':
      return num ? <WebhookLog id={num} /> : <Webhooks />;
    case 'audit':
      return num ? <NoSuchPage known /> : <Audit />;
    case 'reach':
      return <OwnReach />;
    case 'sign-in':
      return <SignInAdmin />;
    default:
      return <NoSuchPage known />;
  }
}

function NoSuchPage({ known }: { known: boolean }) {
  return (
    <Page title={known ? 'No such page' : 'Nothing for this key here'}>
      <p>
        {known
          ? 'This address names no page of the console, or one this key may not open.'
          : 'This key holds no scope the console uses (read, admin, or a vendor engagement). Sign out and sign in with another key.'}
      </p>
      {known && <a href="#/">Go to the start</a>}
    </Page>
  );
}

export function Shell() {
  const session = useSession();
  const { me, person, signOut } = session;
  const route = useRoute();
  const sections = sectionsFor(session);
  const active = route[0] ?? sections[0]?.path;
  return (
    <>
      <a
        class="skip"
        href="#/"
        onClick={(e) => {
          e.preventDefault();
          document.querySelector<HTMLElement>('main h1')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <span class="product">prodgraph</span> <span class="production">{me.production.title}</span>
        </div>
        <div class="who">
          {person ? (
            <span class="person">
              {person.name} <span class="role">({person.role})</span>
            </span>
          ) : (
            <span>
              {me.engagement ? `${me.engagement.organisation} (vendor key)` : me.label}{' '}
              <span class="prefix">{me.prefix}…</span>
            </span>
          )}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      {sections.length > 1 && (
        <nav class="sections" aria-label="Sections">
          <ul>
            {sections.map((s) => (
              <li key={s.path}>
                <a href={href(s.path)} aria-current={s.path === active ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <main id="main">
        <Boundary>{routeTo(route, sections)}</Boundary>
      </main>
    </>
  );
}
