// The sign-in form: an API token (`erg_…`, e.g. from .erg/token or `erg-admin create-token`),
// checked against the API, then kept in sessionStorage only.
import { useState, type FormEvent } from 'react';
import { checkToken } from '../api';

export function SignIn({ message, onSignedIn }: { message: string | null; onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const t = token.trim();
    if (!t) { setError('Enter a token.'); return; }
    setBusy(true);
    const problem = await checkToken(t);
    setBusy(false);
    if (problem) setError(problem);
    else onSignedIn(t);
  }

  return (
    <main className="signin">
      <h1>erg</h1>
      <p>Energy studies on Slurm clusters. Sign in with an API token.</p>
      {message && <p className="notice" role="alert" data-testid="signin-message">{message}</p>}
      <form onSubmit={submit} aria-label="sign in">
        <label htmlFor="token">API token</label>
        <input id="token" name="token" type="password" autoComplete="off" spellCheck={false} placeholder="erg_…" value={token}
          onChange={(e) => setToken(e.target.value)} autoFocus />
        <button type="submit" disabled={busy}>{busy ? 'Checking…' : 'Sign in'}</button>
        {error && <p className="error" role="alert">{error}</p>}
      </form>
      <p className="hint">The token is kept in this tab only (sessionStorage) and sent as <code>Authorization: Bearer</code>. The quickstart writes one to <code>.erg/token</code>; <code>node apps/api/dist/admin.js create-token NAME</code> makes another.</p>
    </main>
  );
}
