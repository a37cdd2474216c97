// Sign-in: the client credentials grant at /oauth2/token, or a bearer token from elsewhere (an external issuer).
import { useState } from 'preact/hooks';
import { signIn, storeToken } from '../api.ts';
import { ErrorBox, Field } from '../ui.tsx';

export function SignIn() {
  const [error, setError] = useState<Error | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const withCredentials = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      await signIn(String(form.get('clientId') ?? '').trim(), String(form.get('clientSecret') ?? ''));
      location.hash = '#/overview';
    } catch (caught) {
      setError(caught as Error);
      setBusy(false);
    }
  };
  const withToken = (event: Event) => {
    event.preventDefault();
    const token = String(new FormData(event.currentTarget as HTMLFormElement).get('token') ?? '')
      .trim()
      .replace(/^Bearer\s+/i, '');
    if (!token) return setError(new Error('Paste an access token'));
    storeToken(token);
    location.hash = '#/overview';
  };
  return (
    <main id="main" class="sign-in">
      <h1>VNF manager console</h1>
      <p>Sign in with an OAuth 2.0 client of this VNF manager (on one machine: the client in .vnfm/credentials.json).</p>
      <ErrorBox error={error} />
      <form onSubmit={withCredentials} aria-labelledby="with-client">
        <h2 id="with-client">Client credentials</h2>
        <Field label="Client ID">
          <input name="clientId" autoComplete="username" required />
        </Field>
        <Field label="Client secret">
          <input name="clientSecret" type="password" autoComplete="current-password" required />
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      <form onSubmit={withToken} aria-labelledby="with-token">
        <h2 id="with-token">Or an access token</h2>
        <Field label="Bearer token" hint="From your own authorization server, when the deployment uses an external issuer">
          <textarea name="token" rows={3} />
        </Field>
        <button type="submit">Use token</button>
      </form>
      <p class="note">The token is kept in this tab only (sessionStorage) and is gone when the tab closes.</p>
    </main>
  );
}
