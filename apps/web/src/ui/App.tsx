// The shell: sign-in until a token is accepted, then the header (navigation, live status,
// sign-out) and the page the hash names. A 401 from any request or from the event stream signs out
// with a message.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { openEventStream, type StreamStatus } from '../event-stream';
import { parseHash, type Route } from '../route';
import type { ErgEvent } from '../types';
import { createApi } from './api';
import { ApiContext, LiveContext, type Live } from './context';
import { CampaignPage } from './pages/CampaignPage';
import { QueueView } from './pages/QueueView';
import { RunPage } from './pages/RunPage';
import { SignIn } from './pages/SignIn';
import { clearToken, loadToken, saveToken } from './session';

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

const STATUS_TEXT: Record<StreamStatus, string> = {
  connecting: 'connecting…',
  open: 'live',
  reconnecting: 'reconnecting…',
  unauthorized: 'signed out',
  closed: 'offline',
};

/** Fans the stream's events and resyncs out to the pages' subscribers. */
function createHub(): { live: Live; emit: (e: ErgEvent) => void; resync: () => void } {
  const listeners = new Set<(e: ErgEvent) => void>();
  const resyncs = new Set<() => void>();
  return {
    live: {
      subscribe(fn) { listeners.add(fn); return () => { listeners.delete(fn); }; },
      onResync(fn) { resyncs.add(fn); return () => { resyncs.delete(fn); }; },
    },
    emit: (e) => listeners.forEach((l) => l(e)),
    resync: () => resyncs.forEach((r) => r()),
  };
}

export function App() {
  const route = useRoute();
  const [token, setToken] = useState<string | null>(() => loadToken());
  const [message, setMessage] = useState<string | null>(null);
  const [status, setStatus] = useState<StreamStatus>('connecting');

  const signOut = useCallback((why: string | null) => {
    clearToken();
    setToken(null);
    setMessage(why);
  }, []);

  const api = useMemo(() => (token ? createApi(token, (m) => signOut(`Signed out: the API refused the token (${m}).`)) : null), [token, signOut]);

  // One stream for the whole app; pages subscribe through `hub.live`.
  const hub = useMemo(() => (token ? createHub() : null), [token]);
  const live = hub?.live ?? null;

  useEffect(() => {
    if (!token || !hub) return;
    const stream = openEventStream({
      url: '/v1/events',
      token,
      onEvent: hub.emit,
      onResync: hub.resync,
      onStatus: (s) => {
        setStatus(s);
        if (s === 'unauthorized') signOut('Signed out: the API refused the token on the event stream (401).');
      },
    });
    return () => stream.close();
  }, [token, hub, signOut]);

  if (!token || !api || !live) {
    return (
      <SignIn
        message={message}
        onSignedIn={(t) => {
          saveToken(t);
          setMessage(null);
          setToken(t);
          if (route.page === 'sign-in') location.hash = '#/queue';
        }}
      />
    );
  }

  return (
    <ApiContext.Provider value={api}>
      <LiveContext.Provider value={live}>
        <header className="top">
          <a className="brand" href="#/queue">erg</a>
          <nav aria-label="main">
            <a href="#/queue" aria-current={route.page === 'queue' ? 'page' : undefined}>Queue</a>
          </nav>
          <span className={`live live-${status}`} role="status" aria-live="polite" data-testid="live-status">
            <span aria-hidden="true">{status === 'open' ? '●' : status === 'reconnecting' ? '◌' : '○'}</span> {STATUS_TEXT[status]}
          </span>
          <button type="button" onClick={() => signOut(null)}>Sign out</button>
        </header>
        <main>
          {route.page === 'campaign' ? <CampaignPage key={route.id} id={route.id} />
            : route.page === 'run' ? <RunPage key={route.id} id={route.id} />
            : <QueueView query={route.query} />}
        </main>
      </LiveContext.Provider>
    </ApiContext.Provider>
  );
}
