/**
 * Who is signed in. The session cookie is HttpOnly, so the page cannot see it;
 * a small marker in localStorage remembers that a session probably exists, so
 * a visitor who never signed in goes straight to the login form without a
 * request that is bound to fail.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { User } from '@pail/shared';
import * as auth from '../api/auth';
import { setUnauthorizedListener } from '../api/http';

const MARKER = 'pail.signed-in';

type Status = 'checking' | 'signed-in' | 'signed-out';

interface SessionValue {
  status: Status;
  user: User | null;
  /** Set when the session ended on its own (expired or revoked elsewhere). */
  expired: boolean;
  signIn: (user: User) => void;
  signOut: () => Promise<void>;
  refreshUser: () => Promise<void>;
}

const SessionContext = createContext<SessionValue | null>(null);

function readMarker(): boolean {
  try {
    return window.localStorage.getItem(MARKER) === '1';
  } catch {
    return true;
  }
}

function writeMarker(signedIn: boolean): void {
  try {
    if (signedIn) window.localStorage.setItem(MARKER, '1');
    else window.localStorage.removeItem(MARKER);
  } catch {
    // Storage disabled: we simply ask the server every time.
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<User | null>(null);
  const [status, setStatus] = useState<Status>(() => (readMarker() ? 'checking' : 'signed-out'));
  const [expired, setExpired] = useState(false);

  useEffect(() => {
    if (status !== 'checking') return;
    let cancelled = false;
    auth
      .me()
      .then((u) => {
        if (cancelled) return;
        setUser(u);
        setStatus('signed-in');
      })
      .catch(() => {
        if (cancelled) return;
        writeMarker(false);
        setStatus('signed-out');
      });
    return () => {
      cancelled = true;
    };
  }, [status]);

  useEffect(() => {
    setUnauthorizedListener(() => {
      writeMarker(false);
      setUser(null);
      setExpired(true);
      setStatus('signed-out');
    });
    return () => setUnauthorizedListener(null);
  }, []);

  const signIn = useCallback((u: User) => {
    writeMarker(true);
    setUser(u);
    setExpired(false);
    setStatus('signed-in');
  }, []);

  const signOut = useCallback(async () => {
    try {
      await auth.logout();
    } finally {
      writeMarker(false);
      setUser(null);
      setExpired(false);
      setStatus('signed-out');
    }
  }, []);

  const refreshUser = useCallback(async () => {
    try {
      setUser(await auth.me());
    } catch {
      // A 401 is handled by the listener; other failures keep the last known figures.
    }
  }, []);

  const value = useMemo(() => ({ status, user, expired, signIn, signOut, refreshUser }), [status, user, expired, signIn, signOut, refreshUser]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession must be used inside <SessionProvider>');
  return value;
}

/** For pages that render only when signed in. */
export function useUser(): User {
  const { user } = useSession();
  if (!user) throw new Error('useUser needs a signed-in user');
  return user;
}
