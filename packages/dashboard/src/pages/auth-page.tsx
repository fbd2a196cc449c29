import { useEffect, useState, type FormEvent } from 'react';
import * as auth from '../api/auth';
import { ApiError } from '../api/http';
import { Field } from '../components/field';
import { Brand } from '../components/layout';
import { Link } from '../components/link';
import { InlineError, Spinner } from '../components/states';
import { useSession } from '../hooks/session';

type Mode = 'login' | 'signup';

const MIN_PASSWORD = 8;

function messageFor(mode: Mode, err: unknown): string {
  if (!(err instanceof ApiError)) return 'Something went wrong. Please try again.';
  if (err.status === 0) return err.message;
  if (mode === 'login' && err.status === 401) return 'Invalid email or password. Check both and try again.';
  if (mode === 'signup' && err.status === 403) {
    return 'Sign-up is closed on this server. Ask the administrator to create an account for you.';
  }
  if (mode === 'signup' && err.status === 409) return 'An account with this email already exists. Log in instead.';
  if (err.status === 429) return 'Too many attempts. Wait a minute, then try again.';
  return err.message;
}

export function AuthPage({ mode }: { mode: Mode }) {
  const { signIn, expired } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [passwordError, setPasswordError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const isSignup = mode === 'signup';

  useEffect(() => {
    setError(null);
    setPasswordError(null);
    document.title = isSignup ? 'Sign up · Pail' : 'Log in · Pail';
  }, [isSignup]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    if (!email.trim() || !password) {
      setError('Enter your email and password.');
      return;
    }
    if (isSignup && password.length < MIN_PASSWORD) {
      setPasswordError(`Use at least ${MIN_PASSWORD} characters.`);
      return;
    }
    setPasswordError(null);
    setBusy(true);
    try {
      const user = await (isSignup ? auth.signup : auth.login)({ email: email.trim(), password });
      // The app then sends the user on to the page they came for (see app.tsx).
      signIn(user);
    } catch (err) {
      setError(messageFor(mode, err));
      setBusy(false);
    }
  };

  return (
    <div className="auth">
      <div className="auth-card">
        <div className="auth-brand">
          <Brand />
        </div>
        <h1 className="auth-title" tabIndex={-1}>
          {isSignup ? 'Create your account' : 'Log in to Pail'}
        </h1>
        <p className="auth-subtitle">{isSignup ? 'Start storing files in buckets in under a minute.' : 'Welcome back. Your buckets are waiting.'}</p>
        {expired && !isSignup ? (
          <p className="notice notice-info" role="status">
            Your session has ended. Please log in again.
          </p>
        ) : null}
        <form className="form" onSubmit={(event) => void submit(event)} noValidate>
          <Field label="Email" type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <Field
            label="Password"
            type="password"
            name="password"
            autoComplete={isSignup ? 'new-password' : 'current-password'}
            required
            minLength={isSignup ? MIN_PASSWORD : undefined}
            value={password}
            error={passwordError}
            hint={isSignup ? `At least ${MIN_PASSWORD} characters.` : undefined}
            onChange={(e) => {
              setPassword(e.target.value);
              if (passwordError && e.target.value.length >= MIN_PASSWORD) setPasswordError(null);
            }}
          />
          {error ? <InlineError>{error}</InlineError> : null}
          <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
            {busy ? <Spinner size={16} /> : null}
            {isSignup ? 'Sign up' : 'Log in'}
          </button>
        </form>
        <p className="auth-switch">
          {isSignup ? (
            <>
              Already have an account? <Link to="/login">Log in</Link>
            </>
          ) : (
            <>
              New to Pail? <Link to="/signup">Create an account</Link>
            </>
          )}
        </p>
      </div>
    </div>
  );
}
