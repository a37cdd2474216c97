// The operator's console: hash routes (#/packages/<id>, ...) to its pages, a navigation bar, and
// the sign-in page whenever there is no token (or the API refused the one there was).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { storedToken, storeToken } from './api.ts';
import { InstanceDetail, Instances } from './pages/instances.tsx';
import { Alarms, Subscriptions, Vims } from './pages/more.tsx';
import { OperationDetail, Operations } from './pages/operations.tsx';
import { Overview } from './pages/overview.tsx';
import { PackageDetail, Packages } from './pages/packages.tsx';
import { SignIn } from './pages/sign-in.tsx';

const NAV: Array<[string, string]> = [
  ['overview', 'Overview'],
  ['packages', 'Packages'],
  ['instances', 'Instances'],
  ['operations', 'Operations'],
  ['alarms', 'Alarms'],
  ['vims', 'VIMs'],
  ['subscriptions', 'Subscriptions'],
];

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

function useToken(): string | null {
  const [token, setToken] = useState(storedToken());
  useEffect(() => {
    const changed = () => setToken(storedToken());
    window.addEventListener('vnfm-token', changed);
    return () => window.removeEventListener('vnfm-token', changed);
  }, []);
  return token;
}

function Page({ section, id, query }: { section: string; id: string | undefined; query: URLSearchParams }) {
  switch (section) {
    case 'packages':
      return id ? <PackageDetail id={id} /> : <Packages />;
    case 'instances':
      return id ? <InstanceDetail id={id} /> : <Instances />;
    case 'operations':
      return id ? <OperationDetail id={id} /> : <Operations instance={query.get('instance') ?? undefined} />;
    case 'alarms':
      return <Alarms />;
    case 'vims':
      return <Vims />;
    case 'subscriptions':
      return <Subscriptions />;
    default:
      return <Overview />;
  }
}

function App() {
  const hash = useHash();
  const token = useToken();
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?');
  const [section = 'overview', id] = path.split('/').map(decodeURIComponent);
  useEffect(() => {
    const title = NAV.find(([name]) => name === section)?.[1] ?? 'Overview';
    document.title = token ? `${title} · VNF manager` : 'Sign in · VNF manager';
  }, [section, token]);
  // A new page: keyboard and screen reader users continue from its content, not the link they left.
  useEffect(() => {
    if (document.activeElement && document.activeElement !== document.body) document.getElementById('main')?.focus({ preventScroll: true });
  }, [section, id]);
  if (!token) return <SignIn />;
  return (
    <>
      <header>
        <span class="brand">VNF manager</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([name, label]) => (
              <li key={name}>
                <a href={`#/${name}`} aria-current={section === name ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" onClick={() => storeToken(null)}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page key={`${section}/${id ?? ''}`} section={section} id={id} query={new URLSearchParams(search)} />
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
